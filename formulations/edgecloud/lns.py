"""The edgecloud neighbourhood of the large-neighbourhood search (`edgeopt.core.lns`).

A window is a few jobs that start close in time in the incumbent. The sub-model is the CP-SAT
model of MINLP (2) (``cpsat.py``, no time index, so the horizon of thousands of slots costs
nothing) of those jobs alone; every other job keeps its run, and the workers and PSs it holds are
fixed intervals in the (2g) / (2h) cumulatives (``build_cpsat(taken=...)``). The incumbent's runs of
the window's jobs are feasible in it and are its hints (completed to a full solution first,
`formulations.common.complete_hints`); any solution CP-SAT returns is feasible for the whole
instance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edgeopt.core import Deadline, ModelSize, Status
from edgeopt.core.lns import Neighbourhood, SubSolve, refuse_above
from formulations.common import complete_hints
from formulations.common import solve_cpsat as run_cpsat
from formulations.edgecloud.cpsat import build_cpsat, extract_cpsat
from formulations.edgecloud.data import prepare
from formulations.edgecloud.lpfill import lp_guided_fill
from formulations.edgecloud.schedule_io import to_schedule
from formulations.edgecloud.start import hint_cpsat

#: CP-SAT parameters of a window's solve. Presolve off: on an edgecloud paper-preset window (8 jobs,
#: 200 other jobs' runs as fixed intervals) presolve took about 3.4 s of a 5 s limit, and the search
#: from the hint without it found a window objective of 363 where the default stopped at 483.
SUB_PARAMS = {"cp_model_presolve": False}
#: Share of the LNS's time left after the rebuild that the ruin and recreate search takes before the windows.
LOCAL_SHARE = 0.5


def order(instance: Any, schedule: Any) -> list[int]:
    """Job indices (positions in ``instance.jobs``) by the incumbent's start slot."""
    pos = {int(job.id): j for j, job in enumerate(instance.jobs)}
    return [pos[int(r.job)] for r in sorted(schedule.jobs, key=lambda r: (r.start, r.job))]


def taken_by(instance: Any, schedule: Any, skip: set[int]) -> dict[tuple[str, int, int], list[tuple[int, int, int]]]:
    """Workers and PSs the runs of jobs not in ``skip`` (ids) hold, as `build_cpsat`'s ``taken``."""
    job_of = {int(job.id): job for job in instance.jobs}
    out: dict[tuple[str, int, int], list[tuple[int, int, int]]] = {}
    for run in schedule.jobs:
        if int(run.job) in skip:
            continue
        job = job_of[int(run.job)]
        spans = [(sg.start, sg.end, sg.workers, sg.ps_server) for sg in run.segments] if run.segments else [
            (run.start, run.end, run.workers, run.ps_server)]
        for a, b, workers, ps in spans:
            for s, n in workers.items():
                out.setdefault(("w", int(s), int(job.worker_type)), []).append((int(a), int(b), int(n)))
            out.setdefault(("p", int(ps), int(job.ps_type)), []).append((int(a), int(b), 1))
    return out


def window_size(instance: Any, data: Any, taken: dict[tuple[str, int, int], list[tuple[int, int, int]]]) -> ModelSize:
    """The window model's size before it is built: `sizes.cpsat_size`'s count for the window's jobs (``data``)
    plus two entries per fixed interval of the other jobs in the cumulatives (``taken``)."""
    J, S = len(data.jobs), len(instance.servers)
    modes = sum(len(jd.modes) for jd in data.jobs)
    fixed = sum(len(v) for v in taken.values())
    return ModelSize(modes + J * S * 6 + fixed, J * (S * 4 + 4) + 2 * S, modes * 4 + J * S * 16 + 2 * fixed,
                     note=f"{modes:,} modes of {J} jobs, {fixed:,} fixed intervals")


def reoptimise(instance: Any, schedule: Any, free: Sequence[int], time_limit: float, *, workers: int = 1,
               max_nonzeros: int | None = None) -> SubSolve:
    """Re-solve the jobs ``free`` (indices) exactly with CP-SAT over what the other jobs leave; a window
    whose model (`window_size`) is above ``max_nonzeros`` is refused before it is built."""
    from edgeopt.edgecloud import FAMILY
    from edgeopt.edgecloud.schedule import Schedule

    deadline = Deadline(max(time_limit, 0.05))
    sched = schedule if isinstance(schedule, Schedule) else FAMILY.parse_schedule(schedule)
    idx = sorted({int(j) for j in free})
    ids = {int(instance.jobs[j].id) for j in idx}
    if not idx or any(r.segments for r in sched.jobs if int(r.job) in ids):
        return SubSolve(None, False)
    try:
        with deadline.guard("the neighbourhood model"):
            data = prepare(instance, jobs=idx)
            if data.unschedulable():
                return SubSolve(None, False)
            taken = taken_by(instance, sched, ids)
            if (refused := refuse_above(window_size(instance, data, taken), max_nonzeros)) is not None:
                return refused
            cm = build_cpsat(instance, data, taken=taken)
            hint_cpsat(cm, instance, sched)
            complete_hints(cm.model, time_limit=deadline.remaining() / 2)
        outcome, solver = run_cpsat(cm.model, time_limit=deadline.remaining(), workers=workers, deadline=deadline,
                                       params=SUB_PARAMS)
        placed = extract_cpsat(cm, solver) if outcome.has_solution else []
    except Exception:  # noqa: BLE001 - a sub-model that fails to build or solve leaves the incumbent as it is
        return SubSolve(None, False)
    if not outcome.has_solution:
        return SubSolve(None, outcome.status == Status.INFEASIBLE)
    new = to_schedule(instance, placed)
    merged = Schedule(jobs=sorted([r for r in sched.jobs if int(r.job) not in ids] + list(new.jobs),
                                  key=lambda r: int(r.job)))
    return SubSolve(merged, outcome.status == Status.OPTIMAL)


def neighbourhood() -> Neighbourhood:
    """The LNS plug-in: the LP-guided list schedule (``lpfill.py``) as the rebuild tried first, then ruin and
    recreate from the incumbent (`recreate`), then windows solved with the CP-SAT model."""
    return Neighbourhood(order=order, reoptimise=reoptimise, window=8, max_window=24, rebuild=lp_guided_fill,
                         local=recreate, local_share=LOCAL_SHARE)


def recreate(instance: Any, schedule: Any, deadline: Deadline) -> Any | None:
    """The neighbourhood's local search: ruin and recreate with `offline_fill`'s earliest-completion placement
    (`edgeopt.edgecloud.offline.recreate`), until it stalls (`edgeopt.core.listsched.PATIENCE_PER_JOB`) or its time
    is up; None when it improved nothing."""
    from edgeopt.core.listsched import PATIENCE_PER_JOB
    from edgeopt.edgecloud.offline import recreate as search

    return search(instance, schedule, deadline, patience=PATIENCE_PER_JOB * len(instance.jobs))[0]
