"""LP-guided list scheduling (ours): the LNS's ``rebuild`` for edgecloud.

The ``ti_lp`` master LP (``bound.py``) is solved within part of the time given; its fractional schedule
gives job orders (`edgeopt.core.lporder`: the start, end and middle of each job's columns, as a mean or an
alpha-point), and each order is placed by the same pass as ``offline_fill`` (every job at its earliest
completion in what the jobs before it leave, the rejected ones moved to the front, then the improvement
sweeps). The best complete schedule is returned.

Why: on the congested ``paper_compact`` preset (200 jobs, seed 0) ``offline_fill``'s fixed orders (shortest
run, least slack, arrival) reach 21,413, and the LNS's CP-SAT windows improve that by 0.03 % in 240 s; the
LP's orders reach 18,693-19,927 in about 1 s of CPU each after the master LP (about 50 s). The LP knows
which jobs the pooled capacity lets run early; a fixed order does not.

Nothing here is certified: the schedule is validated by the LNS like any neighbour.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import Deadline
from edgeopt.core.lporder import lp_guided_passes
from formulations.edgecloud.bound import relaxation, size


def lp_guided_fill(instance: Any, deadline: Deadline, *, max_nonzeros: int | None = None, repairs: int = 3,
                   sweeps: int = 5) -> Any | None:
    """The best complete schedule of the LP's orders (module docstring), or None: the master LP was refused
    by ``max_nonzeros`` (its starting size, `bound.size`) or not solved in time, or no order placed every
    job before the deadline (`edgeopt.core.lporder.lp_guided_passes`)."""
    from edgeopt.edgecloud import offline
    from edgeopt.edgecloud.schedule import Schedule

    out = lp_guided_passes(lambda: relaxation(instance), size(instance).nonzeros, deadline,
                           lambda ids: offline.fill(instance, [instance.jobs[k] for k in ids]),
                           lambda runs: offline.improve(instance, runs, sweeps),
                           lambda runs: offline.total(instance, runs), ids=[int(x.id) for x in instance.jobs],
                           repairs=repairs, max_nonzeros=max_nonzeros)
    return None if out is None else Schedule(jobs=[out.placed[k] for k in sorted(out.placed)], rejected=[])


__all__ = ["lp_guided_fill"]
