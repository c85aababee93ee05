"""The tapfinger neighbourhood of the large-neighbourhood search (`edgeopt.core.lns`).

A window is a few tasks that start close in time in the incumbent. The sub-model is the CP-SAT model of
(1)-(8) (``cpsat.py``: optional intervals, no time index) of those tasks alone; every other task keeps its
placement, which holds its resources as a fixed interval in the (5) cumulatives and its start in the (2)
no-overlap of its cluster (``build_cpsat(tasks=..., fixed=...)``). The incumbent's placements of the
window's tasks are feasible in it and are its hints; any solution CP-SAT returns is feasible for the
whole instance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edgeopt.core import Deadline, ModelSize, Status
from edgeopt.core.lns import Neighbourhood, SubSolve, refuse_above
from formulations.common import solve_cpsat as run_cpsat
from formulations.tapfinger.lpfill import lp_guided_fill

#: Share of the LNS's time (after its bound) the ruin and recreate search takes before the windows.
LOCAL_SHARE = 0.5


def order(instance: Any, schedule: Any) -> list[int]:
    """Task indices (positions in ``instance.tasks``) by the incumbent's start slot."""
    pos = {int(t.id): j for j, t in enumerate(instance.tasks)}
    return [pos[int(p.task)] for p in sorted(schedule.placements, key=lambda p: (p.start, p.task))]


def window_size(instance: Any, free: Sequence[int], rest: Any) -> ModelSize:
    """The window model's size before it is built: an optional interval per (task, cluster, Pareto
    allocation), at most, for the window's tasks (as `data.cpsat_size`), plus the other tasks' placements
    as fixed intervals in the cumulatives and the one-start no-overlap (R + 2 entries each)."""
    R = len(instance.resources)
    opts = sum(len(instance.pareto_allocations(instance.tasks[j].id, n))
               for j in free for n in instance.tasks[j].reachable_clusters)
    fixed = sum(len(pl.runs()) for pl in rest.placements)
    n = len(free)
    # per option: its presence literal, interval, (5) entries, end row and the task's sums (R + 8 entries);
    # per task its start, end and one-start rows (10)
    return ModelSize(opts + 2 * n + fixed, n * 3 + len(instance.clusters) * (R + 1),
                     opts * (R + 8) + 10 * n + fixed * (R + 2),
                     note=f"{opts:,} allocation options of {n} tasks, {fixed:,} fixed placements")


def reoptimise(instance: Any, schedule: Any, free: Sequence[int], time_limit: float, *, workers: int = 1,
               max_nonzeros: int | None = None) -> SubSolve:
    """Re-solve the tasks ``free`` (indices) exactly with CP-SAT over what the other tasks leave; a window
    whose model (`window_size`) is above ``max_nonzeros`` is refused before it is built."""
    from edgeopt.tapfinger.schedule import Schedule
    from formulations.tapfinger.cpsat import add_hint, build_cpsat, extract

    deadline = Deadline(max(time_limit, 0.05))
    sched = schedule if isinstance(schedule, Schedule) else Schedule.model_validate(schedule)
    ids = {int(instance.tasks[j].id) for j in free}
    if not ids or any(p.segments for p in sched.placements):
        return SubSolve(None, False)
    rest = Schedule(placements=[p for p in sched.placements if int(p.task) not in ids])
    if (refused := refuse_above(window_size(instance, free, rest), max_nonzeros)) is not None:
        return refused
    try:
        with deadline.guard("the neighbourhood model"):
            model, h = build_cpsat(instance, deadline, tasks=ids, fixed=rest)
            add_hint(instance, h, model, Schedule(placements=[p for p in sched.placements if int(p.task) in ids]))
        outcome, solver = run_cpsat(model, time_limit=deadline.remaining(), workers=workers, deadline=deadline)
    except Exception:  # noqa: BLE001 - a sub-model that fails to build or solve leaves the incumbent as it is
        return SubSolve(None, False)
    if not outcome.has_solution:
        return SubSolve(None, outcome.status == Status.INFEASIBLE)
    merged = Schedule(placements=sorted(list(rest.placements) + extract(instance, h, solver), key=lambda q: q.task))
    return SubSolve(merged, outcome.status == Status.OPTIMAL)


def neighbourhood() -> Neighbourhood:
    """The LNS plug-in: the LP-guided list schedule (``lpfill.py``) as the rebuild tried first, then ruin and
    recreate from the incumbent (`recreate`), then windows solved with the CP-SAT model."""
    return Neighbourhood(order=order, reoptimise=reoptimise, window=8, max_window=24, rebuild=lp_guided_fill,
                         local=recreate, local_share=LOCAL_SHARE)


def recreate(instance: Any, schedule: Any, deadline: Deadline) -> Any | None:
    """The neighbourhood's local search: ruin and recreate with `offline_fill`'s earliest-completion placement
    (`edgeopt.tapfinger.offline.recreate`), until it stalls (`edgeopt.core.listsched.PATIENCE_PER_JOB`) or its time
    is up; None when it improved nothing."""
    from edgeopt.core.listsched import PATIENCE_PER_JOB
    from edgeopt.tapfinger.offline import recreate as search

    return search(instance, schedule, deadline, patience=PATIENCE_PER_JOB * len(instance.tasks))[0]
