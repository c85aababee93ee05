"""LP-guided list scheduling (ours): the LNS's ``rebuild`` for preemptive.

The ``config_jct`` master LP (``configbound.py``) is solved within part of the time given; its fractional schedule
of single-job plans gives job orders (`edgeopt.core.lporder`: where each job's plans start, end or lie in the
middle, as a mean or an alpha-point; `configbound.JobPlans.span`), and each order is placed by the same pass as
``offline_fill`` (every job at its earliest completion in what the jobs before it leave, the rejected ones moved
to the front, then the improvement sweeps). The best complete schedule is returned.

Why: on the `paper` preset with ``far_cloud`` (seed 0) ``offline_fill``'s fixed orders reach 37,940 (shortest
edge run first 37,965), and ruin and recreate from it 37,334 in 120 s; the order by the plans' mean completion
gives 37,581 in 1.4 s after a 20 s master, and ruin and recreate from it 37,232 in 150 s (2026-12-07).

Nothing here is certified: the schedule is validated by the LNS like any neighbour.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import Deadline
from edgeopt.core.lporder import lp_guided_passes
from formulations.preemptive.configbound import relaxation, size


def lp_guided_fill(instance: Any, deadline: Deadline, *, max_nonzeros: int | None = None, repairs: int = 3,
                   sweeps: int = 3) -> Any | None:
    """The best complete schedule of the LP's orders (module docstring), or None: the master LP was refused
    by ``max_nonzeros`` (its starting size, `configbound.size`) or not solved in time, or no order placed every
    job before the deadline (`edgeopt.core.lporder.lp_guided_passes`)."""
    from edgeopt.preemptive import offline

    out = lp_guided_passes(lambda: relaxation(instance), size(instance).nonzeros, deadline,
                           lambda ids: offline.fill(instance, list(ids)),
                           lambda placed: offline.improve(instance, placed, sweeps),
                           lambda placed: offline.total(instance, placed), ids=list(range(len(instance.jobs))),
                           repairs=repairs, max_nonzeros=max_nonzeros)
    return None if out is None else offline.to_schedule(instance, out.placed, [])


__all__ = ["lp_guided_fill"]
