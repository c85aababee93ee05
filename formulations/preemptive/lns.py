"""The preemptive neighbourhood of the large-neighbourhood search (`edgeopt.core.lns`).

A window is a few consecutive jobs of `order`: by default the jobs furthest above their earliest
possible JCT first (on the paper preset this beat windows of jobs that start close in time: 21,600
against 21,678, and 43,027 against 44,286 with ``far_cloud``, 240 s each). The sub-model is the CP-SAT model
of MINLP (2) (``cpsat.py``, time-indexed) of those jobs alone, with a job's chunks counted per worker
rather than named (``counted=True``: a paper-preset job has 27-115 identical chunks); every other job
keeps its chunks and PSs, which hold their edge worker slots (2d) and edge PSs (2f) as constants
(``build_cpsat(jobs=..., fixed=taken_by(...))``). The cloud's workers and PSs are unlimited, so
fixed cloud work constrains nothing.

The time-indexed model grows with the slots each job may use, and the paper's horizon is over a
million slots, so a window's jobs may train only until ``window_end``: the latest incumbent
completion among them plus ``pad`` slots (the neighbourhood is a stretch of time), and never
past the deadline that keeps every window solution at least as good as the incumbent's
(`window_deadlines`, the argument of `data.with_upper_bound` over the window's jobs). The
incumbent's placements of the window's jobs lie inside both, so they are a feasible point of the
sub-model and are its hints (completed to a full solution first,
`formulations.common.complete_hints`); any solution CP-SAT returns is feasible for the whole
instance once its labels are made distinct from the fixed jobs' (`merge`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from edgeopt.core import Deadline, ModelSize, Status
from edgeopt.core.lns import Neighbourhood, SubSolve, refuse_above
from formulations.common import complete_hints
from formulations.common import solve_cpsat as run_cpsat
from formulations.preemptive.lpfill import lp_guided_fill

#: CP-SAT parameters of a window's solve. Probing and symmetry detection off: on paper-preset windows
#: (6 jobs, 300 in all, srtf_elastic incumbent) presolve's probing took most of a 10 s limit; without
#: them three of three windows were proved optimal in 0.6-4.8 s where the defaults took 5.7-9.7 s, and a
#: far_cloud window was proved in 9.9 s where the defaults stopped at the time limit with a gap of 30%.
SUB_PARAMS: dict[str, Any] = {"cp_model_probing_level": 0, "symmetry_level": 0}

#: Slots a window's jobs may train after the latest incumbent completion among them (room to delay one
#: job so that another finishes earlier).
PAD = 8

#: Window order (`order`): "start" or "overshoot".
ORDER = "overshoot"


def order(instance: Any, schedule: Any) -> list[int]:
    """Job indices for the windows: by `ORDER` ``"start"`` (the incumbent's first training slot, then
    arrival) or ``"overshoot"`` (largest c_j - r_j - `ModelData.earliest_jct` first, ties by start)."""
    def start(js: Any) -> int:
        slots = [min(ch.slots) for ch in js.chunks if ch.slots]
        return min(slots) if slots else int(instance.jobs[js.job].arrival)

    if ORDER == "start":
        return [int(js.job) for js in sorted(schedule.jobs, key=lambda js: (start(js), int(js.job)))]
    from formulations.preemptive.data import from_instance

    data = from_instance(instance)

    def overshoot(js: Any) -> int:
        j = int(js.job)
        return completion_of(data, js) - int(data.arrival[j]) - data.earliest_jct(j)

    return [int(js.job) for js in sorted(schedule.jobs, key=lambda js: (-overshoot(js), start(js), int(js.job)))]


def window_deadlines(data: Any, schedule: Any, free: Sequence[int], pad: int = PAD) -> np.ndarray:
    """Per-job ends of the slots a window's jobs may use (`ModelData.deadline`; other jobs: the horizon).

    Job j of the window ends by ``min(window_end, r_j + UB - sum_{i != j} earliest_jct(i))``, sums over
    the window and UB its incumbent JCT: the second term cuts no window solution as good as the
    incumbent (`data.with_upper_bound`'s argument), the first confines the window to its stretch of time.
    """
    jobs = {int(js.job): js for js in schedule.jobs}
    free = sorted({int(j) for j in free})
    done = {j: completion_of(data, jobs[j]) for j in free}
    ub = sum(done[j] - int(data.arrival[j]) for j in free)
    lb = {j: data.earliest_jct(j) for j in free}
    end = max(done.values()) + int(pad)
    deadline = np.full(data.n_jobs, data.horizon, dtype=np.int64)
    for j in free:
        deadline[j] = min(data.horizon, end, int(data.arrival[j]) + ub - (sum(lb.values()) - lb[j]))
    return deadline


def completion_of(data: Any, js: Any) -> int:
    """c_j of (2j): one past a job's last training slot (its arrival when it trains nowhere), as
    `edgeopt.preemptive.schedule.completion` reads it, from `ModelData` instead of the instance."""
    ends = [max(ch.slots) + 1 for ch in js.chunks if ch.slots]
    return max(ends) if ends else int(data.arrival[int(js.job)])


def merge(data: Any, rest: Any, new_jobs: list[Any]) -> Any:
    """The fixed jobs' schedule ``rest`` plus ``new_jobs``, their labels made distinct from the fixed ones.

    The sub-model only counts edge PSs and knows nothing of the fixed jobs' labels, and `to_schedule`
    numbers cloud workers and PSs from 0: a new job's cloud chunks get cloud worker labels above every
    fixed one, its cloud PS a label above every fixed one, and in each slot its edge PS the index it
    held in the previous slot when free there, else the lowest index no other job holds (the model
    left enough: P_s minus the fixed jobs' PSs, (2f)).
    """
    from edgeopt.preemptive.schedule import PsRun, Schedule

    cloud = data.cloud
    top_worker = max((int(ch.worker) for js in rest.jobs for ch in js.chunks if int(ch.server) == cloud), default=-1)
    top_ps = max((int(r.ps) for js in rest.jobs for r in js.ps if int(r.server) == cloud), default=-1)
    used: dict[tuple[int, int], set[int]] = {}
    for js in rest.jobs:
        for r in js.ps:
            if int(r.server) != cloud:
                for t in range(int(r.start), int(r.end)):
                    used.setdefault((int(r.server), t), set()).add(int(r.ps))
    label = top_worker + 1
    out = []
    for js in sorted(new_jobs, key=lambda x: int(x.job)):
        chunks = []
        for ch in js.chunks:
            if int(ch.server) == cloud:
                ch = ch.model_copy(update={"worker": label})
                label += 1
            chunks.append(ch)
        held = sorted((t, int(r.server)) for r in js.ps for t in range(int(r.start), int(r.end)))
        runs: list[Any] = []
        prev: tuple[int, int] | None = None
        for t, s in held:
            if s == cloud:
                p = top_ps + 1 + int(js.job)
            else:
                taken = used.setdefault((s, t), set())
                p = prev[1] if prev is not None and prev[0] == s and prev[1] not in taken else next(
                    i for i in range(int(data.ps_count[s])) if i not in taken)
                taken.add(p)
            last = runs[-1] if runs else None
            if last is not None and last.server == s and last.ps == p and last.end == t:
                last.end = t + 1
            else:
                runs.append(PsRun(server=s, ps=p, start=t, end=t + 1))
            prev = (s, p)
        out.append(js.model_copy(update={"chunks": chunks, "ps": runs}))
    return Schedule(speed=rest.speed, jobs=sorted([*rest.jobs, *out], key=lambda x: int(x.job)), rejected=list(rest.rejected))


def cloud_moved(instance: Any, data: Any, schedule: Any, free: Sequence[int]) -> Any | None:
    """``schedule`` with every job of ``free`` that would finish earlier wholly on the cloud moved there, or
    None when none would.

    A job with every chunk on the cloud trains at the colocated rate from ``r_j + Delta_jc``
    (`ModelData.cloud_end` with zeta_j = 1), whatever the other jobs do: the cloud's workers and PSs are
    unlimited. So the move is feasible, delays nobody, and frees edge capacity. It is also a point
    of the window's sub-model: cloud chunks there start as early as possible, as here. On the
    ``far_cloud`` regime 37 of srtf_elastic's 300 jobs finish earlier this way, 5,249 slots in all.
    """
    if data.cloud is None:
        return None
    jobs = {int(js.job): js for js in schedule.jobs}
    move = [j for j in sorted({int(j) for j in free})
            if (end := data.cloud_end(j, True)) is not None and end < completion_of(data, jobs[j])]
    if not move:
        return None
    ids = set(move)
    keep = type(schedule)(speed=schedule.speed, jobs=[js for js in schedule.jobs if int(js.job) not in ids])
    return with_cloud(instance, data, keep, move)


def window_size(data: Any, free: Sequence[int]) -> ModelSize:
    """The counted window model's size (`cpsat.build_cpsat(counted=True)`) before it is built, from the
    window's slots (``data.end``: the window deadlines): per job, a literal per eligible worker and slot
    from its first slot (about 4 entries each: its worker's work row, the max of c_j, (2d), the slot's
    run), the ``at_least`` literals, and per slot before the cloud's PSs a run literal and one per edge
    PS server (2e)/(2f). The fixed jobs' busy slots only remove literals: an upper estimate."""
    n_ps = len(data.edge_ps_servers)
    var = rows = nnz = 0
    for j in sorted({int(j) for j in free}):
        end, p, D = int(data.end(j)), max(1, int(data.p_edge[j])), int(data.chunks[j])
        firsts = [int(data.first_slot(j, int(k))) for k in data.eligible[j]]
        slots = [max(0, end - f) for f in firsts]
        y, at_least = sum(slots), sum(min(D, n // p) for n in slots)
        ps_end = min(end, int(data.cloud_start(j))) if data.cloud is not None else end
        ps_slots = max(0, ps_end - min(firsts, default=end))
        var += y + at_least + len(slots) + ps_slots * (1 + n_ps) + 4
        rows += len(slots) + 2 * at_least + 2 * ps_slots + 6
        nnz += 4 * y + 3 * at_least + ps_slots * (2 + 3 * n_ps) + 12
    return ModelSize(var, rows, nnz, note=f"{len(free)} jobs, time-indexed until their window deadlines")


def reoptimise(instance: Any, schedule: Any, free: Sequence[int], time_limit: float, *, workers: int = 1,
               pad: int = PAD, max_nonzeros: int | None = None) -> SubSolve:
    """Re-solve the jobs ``free`` (indices) exactly with CP-SAT over what the other jobs leave.

    ``time_limit`` bounds the whole call (building, completing the hints, solving); anything that
    fails on the way returns ``SubSolve(None, False)`` and leaves the incumbent as it is. The window's
    jobs that finish earlier wholly on the cloud are moved there first (`cloud_moved`); that schedule
    is the sub-model's hint, and it is returned when CP-SAT finds nothing (the LNS loop validates it
    and keeps it only if it is better). ``max_nonzeros``: a window whose model (`window_size`) is above
    it is refused before it is built.
    """
    from ortools.sat.python import cp_model  # noqa: F401 - imported before the guard, never half-way inside it

    from edgeopt.preemptive import FAMILY
    from edgeopt.preemptive.schedule import Schedule
    from formulations.preemptive.cpsat import build_cpsat, extract_cpsat, taken_by
    from formulations.preemptive.data import from_instance
    from formulations.preemptive.plan import to_schedule
    from formulations.preemptive.start import hint_cpsat

    deadline = Deadline(max(time_limit, 0.05))
    moved = None
    try:
        sched = schedule if isinstance(schedule, Schedule) else FAMILY.parse_schedule(schedule)
        ids = {int(j) for j in free}
        listed = {int(js.job) for js in sched.jobs}
        if not ids or not ids <= listed or sched.speed != 1.0 or sched.rejected:
            return SubSolve(None, False)
        rest = Schedule(speed=sched.speed, jobs=[js for js in sched.jobs if int(js.job) not in ids])
        base = from_instance(instance)
        moved = cloud_moved(instance, base, sched, ids)
        sched = moved if moved is not None else sched
        with deadline.guard("the neighbourhood model"):
            data = dataclasses.replace(base, deadline=window_deadlines(base, sched, sorted(ids), pad))
            if (refused := refuse_above(window_size(data, ids), max_nonzeros)) is not None:
                return dataclasses.replace(refused, schedule=moved)  # the cloud moves need no model
            h = build_cpsat(data, jobs=ids, fixed=taken_by(data, rest), counted=True)
            hint_cpsat(h, data, sched)
            complete_hints(h.model, time_limit=deadline.remaining() / 2)
        outcome, solver = run_cpsat(h.model, time_limit=deadline.remaining(), workers=workers, deadline=deadline,
                                    params=SUB_PARAMS)
        if not outcome.has_solution:
            return SubSolve(moved, outcome.status == Status.INFEASIBLE and moved is None)
        new = to_schedule(instance, data, extract_cpsat(h, solver, data))
        merged = merge(data, rest, [js for js in new.jobs if int(js.job) in ids])
    except Exception:  # noqa: BLE001 - a sub-model that fails to build or solve leaves the incumbent as it is
        return SubSolve(moved, False)
    return SubSolve(merged, outcome.status == Status.OPTIMAL)


def polish(instance: Any, schedule: Any) -> Any | None:
    """Every job that finishes earlier wholly on the cloud moved there (`cloud_moved` over all jobs)."""
    from edgeopt.preemptive import FAMILY
    from edgeopt.preemptive.schedule import Schedule
    from formulations.preemptive.data import from_instance

    sched = schedule if isinstance(schedule, Schedule) else FAMILY.parse_schedule(schedule)
    if sched.speed != 1.0 or sched.rejected:
        return None
    return cloud_moved(instance, from_instance(instance), sched, range(len(instance.jobs)))


#: The list schedulers `cloud_split` re-runs on the jobs left on the edge (the family's own functions): the
#: paper's A_online and the elastic SRTF, the two best on the `paper` preset, with and without ``far_cloud``.
SPLIT_ALGORITHMS = ("online", "srtf_elastic")

#: Most of the time left (after the polish) that the local search (`local_search`: `cloud_split`, then ruin and
#: recreate) may take before the windows. From `offline_fill`'s schedule on the `paper` preset with
#: ``far_cloud`` (seed 0) 52 windows were proved optimal in a 600 s search and none improved it, while ruin and
#: recreate kept improving (37,940 -> 37,334 in 120 s).
LOCAL_SHARE = 0.8
#: The share of the local search's time `cloud_split` may take before ruin and recreate.
SPLIT_SHARE = 0.2


def cloud_jcts(instance: Any, data: Any) -> np.ndarray:
    """Per job, its JCT c_j - r_j when wholly colocated on the cloud (`ModelData.cloud_end` with zeta_j = 1),
    whatever the other jobs do; +inf where it does not fit on the cloud within the horizon (or no cloud)."""
    out = np.full(len(instance.jobs), np.inf)
    if data.cloud is None:
        return out
    for j, job in enumerate(instance.jobs):
        end = data.cloud_end(j, True)
        if end is not None and end <= data.horizon:
            out[j] = end - int(job.arrival)
    return out


def edge_schedule(instance: Any, keep: Sequence[int], algorithm: str) -> Any | None:
    """The family's list scheduler ``algorithm`` (`SPLIT_ALGORITHMS`) run on the jobs ``keep`` alone (the same
    servers; job ids renumbered for the run and mapped back), or None when it leaves a job unscheduled."""
    from edgeopt.core.registry import lookup
    from edgeopt.preemptive import FAMILY

    keep = sorted(int(j) for j in keep)
    sub = instance.model_copy(update={"jobs": [instance.jobs[j].model_copy(update={"id": n})
                                               for n, j in enumerate(keep)]})
    res = lookup(FAMILY.name, algorithm).fn(sub, seed=0)
    if res.status != Status.FEASIBLE or res.schedule is None:
        return None
    sched = FAMILY.parse_schedule(res.schedule)
    if sched.rejected:
        return None
    return sched.model_copy(update={"jobs": [js.model_copy(update={"job": keep[int(js.job)]}) for js in sched.jobs]})


def with_cloud(instance: Any, data: Any, edge: Any, on_cloud: Sequence[int]) -> Any:
    """``edge`` (a schedule of the other jobs) plus every job of ``on_cloud`` wholly colocated on the cloud from
    r_j + Delta_jc, every chunk as early as possible (the cloud's workers and PSs are unlimited); `cloud_moved`
    and `cloud_split` place their cloud jobs with it."""
    from formulations.preemptive.plan import ChunkPlan, assign_ps, to_schedule

    ids = sorted(int(j) for j in on_cloud)
    if not ids:
        return edge
    plans = [ChunkPlan(j, d, None, list(range(data.cloud_start(j), data.cloud_end(j, True))))
             for j in ids for d in range(int(data.chunks[j]))]
    moved = to_schedule(instance, data, assign_ps(data, plans, {}))
    chosen = set(ids)
    return merge(data, edge, [js for js in moved.jobs if int(js.job) in chosen])


def cloud_split(instance: Any, schedule: Any, deadline: Deadline) -> Any | None:
    """The LNS's local search (`Neighbourhood.local`): which jobs go wholly to the cloud.

    A job wholly colocated on the cloud has a fixed JCT (`cloud_jcts`) and takes nothing from the edge, so a
    schedule is a set S of cloud jobs plus a schedule of the others on the edge. For a set S this search
    schedules the others with a list scheduler of the family (`edge_schedule`, each of `SPLIT_ALGORITHMS`),
    then: (1) adds to S every job whose cloud JCT is at most its JCT in that schedule, and re-runs, until S
    stops growing (a job leaving the edge frees workers for the rest, so more jobs then finish earlier on the
    edge, and others on the cloud); (2) from the best of these, one job at a time leaves S (the costliest on
    the cloud first) and then joins it (the smallest cloud JCT above its edge JCT per chunk-slot of edge work
    first), each change kept when the total JCT falls, in passes until one keeps nothing or ``deadline``
    passes. The first set is the incumbent's own: its jobs whose cloud JCT is at most theirs.

    Why: the polish moves a job only when that alone makes it earlier, and the windows re-solve 4-8 jobs over
    the others' fixed slots, so neither lets the jobs left on the edge take the freed workers. On the `paper`
    preset with ``far_cloud`` (seed 0), from `srtf_elastic`'s 44,423, the first step gives 38,871 in 1 s of
    CPU and the passes 37,961 in 330 s; the 600 s LNS without this search had reached 38,419.

    None when no set beats the incumbent. Every candidate is a complete valid schedule by construction; the
    LNS validates what it keeps."""
    from edgeopt.preemptive import FAMILY
    from edgeopt.preemptive.schedule import Schedule
    from edgeopt.preemptive.schedule import objective as jct_objective
    from formulations.preemptive.data import from_instance

    sched = schedule if isinstance(schedule, Schedule) else FAMILY.parse_schedule(schedule)
    if sched.speed != 1.0 or sched.rejected:
        return None
    data = from_instance(instance)
    cloud = cloud_jcts(instance, data)
    if not np.isfinite(cloud).any():
        return None
    n = len(instance.jobs)
    work = np.maximum(1, data.chunks * data.p_edge)

    def jcts(edge: Any) -> dict[int, int]:
        return {int(js.job): completion_of(data, js) - int(data.arrival[int(js.job)]) for js in edge.jobs}

    took = [0.0]  # the longest run so far: none starts that the deadline could not wait for

    def evaluate(on_cloud: frozenset[int], algorithm: str) -> tuple[float, Any, dict[int, int]] | None:
        if deadline.remaining(floor=0.0) < took[0]:
            return None
        t0 = time.perf_counter()
        try:
            edge = edge_schedule(instance, [j for j in range(n) if j not in on_cloud], algorithm)
        except Exception:  # noqa: BLE001 - as in a window: a move that fails leaves the incumbent as it is
            edge = None
        took[0] = max(took[0], time.perf_counter() - t0)
        if edge is None:
            return None
        jct = jcts(edge)
        return float(sum(jct.values()) + sum(cloud[j] for j in on_cloud)), edge, jct

    start = frozenset(int(j) for j, v in jcts(sched).items() if cloud[j] <= v)
    best: tuple[float, frozenset[int], str, Any, dict[int, int]] | None = None
    for algorithm in SPLIT_ALGORITHMS:  # (1) the fixed point of "every job no later on the cloud goes there"
        on_cloud = start
        while not deadline.expired():
            got = evaluate(on_cloud, algorithm)
            if got is None:
                break
            total, edge, jct = got
            if best is None or total < best[0]:
                best = (total, on_cloud, algorithm, edge, jct)
            grown = on_cloud | {j for j, v in jct.items() if cloud[j] <= v}
            if grown == on_cloud:
                break
            on_cloud = frozenset(grown)
    if best is None:
        return None
    total, on_cloud, algorithm, edge, jct = best
    changed = True
    while changed and not deadline.expired():  # (2) one job at a time out of, then into, the cloud set
        changed = False
        leave = sorted(on_cloud, key=lambda j: (-cloud[j], j))
        join = sorted((j for j in range(n) if j not in on_cloud and np.isfinite(cloud[j])),
                      key=lambda j: ((cloud[j] - jct[j]) / work[j], j))
        for j, out in [(j, True) for j in leave] + [(j, False) for j in join]:
            if deadline.expired():
                break
            trial = on_cloud - {j} if out else on_cloud | {j}
            if trial == on_cloud:
                continue
            got = evaluate(frozenset(trial), algorithm)
            if got is not None and got[0] < total:
                total, edge, jct = got
                on_cloud, changed = frozenset(trial), True
    if total >= jct_objective(instance, sched):
        return None
    return with_cloud(instance, data, edge, on_cloud)


def neighbourhood() -> Neighbourhood:
    """The LNS plug-in (windows solved with the counted CP-SAT model), after the cloud moves (`polish`) and the
    local search (`local_search`, at most `LOCAL_SHARE` of the time left: which jobs go wholly to the cloud,
    `cloud_split`, then ruin and recreate).

    Windows start at 4 jobs and grow to 8: on the paper preset a proved window of 6 took 0.3-6.5 s, and
    the gains are spread thinly over the 300 jobs, so covering more of them beats larger windows.
    """
    return Neighbourhood(order=order, reoptimise=reoptimise, window=4, max_window=8, polish=polish,
                         rebuild=lp_guided_fill, local=local_search, local_share=LOCAL_SHARE)


def local_search(instance: Any, schedule: Any, deadline: Deadline) -> Any | None:
    """The neighbourhood's local search: `cloud_split` for at most `SPLIT_SHARE` of the time, then ruin and
    recreate (`edgeopt.preemptive.offline.recreate`: jobs of one worker type taken out together and placed
    again at their earliest completion) from the better schedule, until it stalls
    (`edgeopt.core.listsched.PATIENCE_PER_JOB` ruins in a row without a gain) or the time is up; a run that
    gained is followed by another from its result with the next seed, until one gains nothing. None when
    nothing improved.

    `cloud_split` re-schedules the edge with the online list schedulers, which gains most from their own
    schedules (from `srtf_elastic`'s 44,423 to 38,871 within 1 s on `far_cloud`); from `offline_fill`'s
    schedule it finds nothing, and ruin and recreate does the work."""
    from edgeopt.core.listsched import PATIENCE_PER_JOB
    from edgeopt.preemptive import FAMILY
    from edgeopt.preemptive.offline import recreate
    from edgeopt.preemptive.schedule import Schedule

    split = cloud_split(instance, schedule, Deadline(max(1e-3, SPLIT_SHARE * deadline.remaining(floor=0.0))))
    base = split if split is not None else schedule
    base = base if isinstance(base, Schedule) else FAMILY.parse_schedule(base)
    better = None
    seed = 0
    while not deadline.expired():  # a run that gained stalls on a new local optimum: go on from it, another draw
        out, _ = recreate(instance, base, deadline, seed=seed, patience=PATIENCE_PER_JOB * len(instance.jobs))
        if out is None:
            break
        better = base = out
        seed += 1
    return better if better is not None else split
