"""LP-guided list scheduling (ours): the LNS's ``rebuild`` for edgecloud.

The ``ti_lp`` master LP (``bound.py``, column generation in `edgeopt.core.colgen`) is solved within part of
the time given; its fractional schedule gives job orders (`edgeopt.core.lporder`: the start, end and
middle of each job's columns, as a mean or an alpha-point), and each order is placed by the same pass as
``offline_fill`` (every job at its earliest completion in what the jobs before it leave, the rejected ones
moved to the front, then the improvement sweeps). The best complete schedule is returned.

Why: on the congested ``paper_compact`` preset (200 jobs, seed 0) ``offline_fill``'s fixed orders (shortest
run, least slack, arrival) reach 21,413, and the LNS's CP-SAT windows improve that by 0.03 % in 240 s; the
LP's orders reach 18,714-19,873 in about 1 s of CPU each after the master LP (about 50 s). The LP knows
which jobs the pooled capacity lets run early; a fixed order does not.

Nothing here is certified: the schedule is validated by the LNS like any neighbour.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import Deadline
from edgeopt.core.colgen import column_generation
from edgeopt.core.limits import BuildTimeLimit
from edgeopt.core.listsched import best_of_passes
from edgeopt.core.lporder import lp_orders
from formulations.edgecloud.bound import relaxation, size

#: share of the rebuild's time the master LP may take (the orders' passes get the rest)
LP_SHARE = 0.7
#: the master's nonzeros when no size budget is given (the ``bound`` command's default)
MASTER_NONZEROS = 2_000_000


def lp_guided_fill(instance: Any, deadline: Deadline, *, max_nonzeros: int | None = None, repairs: int = 3,
                   sweeps: int = 5) -> Any | None:
    """The best complete schedule of the LP's orders (module docstring), or None: the master LP was refused
    by ``max_nonzeros`` (its starting size, `bound.size`) or not solved in time, or no order placed every
    job before the deadline."""
    from edgeopt.edgecloud import offline
    from edgeopt.edgecloud.schedule import Schedule

    if max_nonzeros is not None and size(instance).nonzeros > max_nonzeros:
        return None
    try:
        with deadline.guard("the LP-guided rebuild's relaxation"):
            rel = relaxation(instance)
        cg = column_generation(rel, deadline=Deadline(max(1e-3, LP_SHARE * deadline.remaining(floor=0.0))),
                               max_nonzeros=max_nonzeros or MASTER_NONZEROS)
    except BuildTimeLimit:
        return None
    best: tuple[float, Any] | None = None
    for label, order in lp_orders(rel, cg.primal):
        if deadline.expired():
            break
        ids = [int(instance.jobs[j].id) for j in order]
        out = best_of_passes([(label, ids, lambda ids: offline.fill(instance, [instance.jobs[k] for k in ids]))],
                             lambda runs: offline.improve(instance, runs, sweeps),
                             lambda runs: offline.total(instance, runs), repairs)
        if out.rejected:
            continue
        value = offline.total(instance, out.placed)
        if best is None or value < best[0]:
            best = (value, Schedule(jobs=[out.placed[k] for k in sorted(out.placed)], rejected=[]))
    return None if best is None else best[1]


__all__ = ["LP_SHARE", "lp_guided_fill"]
