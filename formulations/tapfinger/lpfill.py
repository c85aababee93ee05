"""LP-guided list scheduling (ours): the LNS's ``rebuild`` for tapfinger.

The ``ti_lp`` master LP (``lpbound.py``) is solved within part of the time given; its fractional schedule
gives task orders (`edgeopt.core.lporder`: the start, end and middle of each task's columns, as a mean or an
alpha-point) and, per task, the mode (cluster, allocation) holding most of its LP weight. Each order is placed
twice by `offline_fill`'s pass (every task at its earliest completion in what the tasks before it leave):
over every option, and with each task kept to its LP mode (its earliest start in that mode; every option when
that mode fits nowhere). The improvement sweeps follow; the best complete schedule is returned.

Why the modes: at its earliest completion a task takes the allocation that finishes it first, usually the
largest, and the tasks after it wait. On the ITP busiest week (182 tasks, seed 0) the LP's orders placed that
way gave 44,062-51,766 (`offline_fill`'s fixed orders 59,457, Greedy 44,206); kept to the LP's modes and swept,
38,661-42,823 (bound 31,387 from the same master LP).

Nothing here is certified: the schedule is validated by the LNS like any neighbour.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import Deadline
from edgeopt.core.lporder import lp_guided_passes
from formulations.tapfinger.lpbound import relaxation, size, task_modes


def lp_guided_fill(instance: Any, deadline: Deadline, *, max_nonzeros: int | None = None, repairs: int = 3,
                   sweeps: int = 5) -> Any | None:
    """The best complete schedule of the LP's orders and modes (module docstring), or None: the master LP
    was refused by ``max_nonzeros`` (its starting size, `lpbound.size`) or not solved in time, or no order
    placed every task before the deadline (`edgeopt.core.lporder.lp_guided_passes`)."""
    from edgeopt.tapfinger import offline

    by_id = {int(t.id): t for t in instance.tasks}
    modes = {int(t.id): task_modes(instance, t) for t in instance.tasks}

    def mode_fill(ids: Any, lp_mode: dict[int, int]) -> Any:
        prefer = {k: modes[k][m][:2] for k, m in lp_mode.items()}
        return offline.fill(instance, [by_id[k] for k in ids], prefer)

    out = lp_guided_passes(lambda: relaxation(instance), size(instance).nonzeros, deadline,
                           lambda ids: offline.fill(instance, [by_id[k] for k in ids]),
                           lambda runs: offline.improve(instance, runs, sweeps),
                           lambda runs: offline.total(instance, runs), ids=list(by_id),
                           repairs=repairs, max_nonzeros=max_nonzeros, mode_fill=mode_fill)
    return None if out is None else offline.to_schedule(instance, out.placed)


__all__ = ["lp_guided_fill"]
