"""LP-guided list scheduling (ours): the LNS's ``rebuild`` for hetero.

The ``ti_lp`` master LP (``bound.py``) is solved within part of the time given; its fractional schedule
gives job orders (`edgeopt.core.lporder`: the start, end and middle of each job's columns, as a mean or an
alpha-point), and each order is placed by ``offline_fill``'s pass under its earliest-completion rule (every
job at its earliest completion over every configuration in what the jobs before it leave, the rejected ones
moved to the front, then the improvement sweeps). The best complete schedule is returned.

Why: ``offline_fill``'s fixed orders (Smith's rule, least slack, arrival) and the moves of ruin and recreate
stay in one basin. On the ``paper_congested`` generator cut to 20 jobs and 10 servers (seed 0) they reach
3,476,881 and 3,424,239 after ruin and recreate (3,451,520 after a 120 s LNS), while the LP's start 0.5-point
order gives 3,288,603 and ruin and recreate takes that to 3,265,871 (the certified bound is 3,125,604). At
the full preset (300 jobs) the LP's orders are 2-6 % worse than ``offline_fill``'s, so the rebuild is not kept
there: the LNS keeps a rebuild only when it is better than its start.

Nothing here is certified: the schedule is validated by the LNS like any neighbour.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import Deadline
from edgeopt.core.lporder import lp_guided_passes
from formulations.hetero.bound import relaxation, size


def lp_guided_fill(instance: Any, deadline: Deadline, *, max_nonzeros: int | None = None, repairs: int = 3,
                   sweeps: int = 5) -> Any | None:
    """The best complete schedule of the LP's orders (module docstring), or None: the master LP was refused
    by ``max_nonzeros`` (its starting size, `bound.size`) or not solved in time, or no order placed every
    job before the deadline (`edgeopt.core.lporder.lp_guided_passes`)."""
    from edgeopt.hetero import offline
    from edgeopt.hetero.mincost import job_configs
    from edgeopt.hetero.schedule import Schedule

    configs = {j.id: job_configs(instance, j) for j in instance.jobs}
    out = lp_guided_passes(lambda: relaxation(instance), size(instance).nonzeros, deadline,
                           lambda ids: offline.fill(instance, [instance.jobs[k] for k in ids], "completion", configs),
                           lambda placed: offline.improve(instance, placed, configs, sweeps),
                           lambda placed: offline.total(instance, placed), ids=[int(j.id) for j in instance.jobs],
                           repairs=repairs, max_nonzeros=max_nonzeros)
    if out is None:
        return None
    return Schedule(jobs=[out.placed[k].to_schedule() for k in sorted(out.placed)], rejected=[])


__all__ = ["lp_guided_fill"]
