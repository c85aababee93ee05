"""The okita neighbourhood of the large-neighbourhood search (`edgeopt.core.lns`).

A window is a few jobs that start close in time in the incumbent. The sub-model is the time-indexed
CP-SAT model of program (2) (``cpsat.py``) of those jobs alone; every other job keeps its entries, whose
workers and PSs hold their resources as constants in the (2d) rows (``build_cpsat(jobs=..., fixed=...)``),
so any solution CP-SAT returns, merged with them, is feasible for the whole instance. Two choices keep a
window of paper-scale jobs (R = 50 sites) small:

* the transfers are the exact totals reformulation (``per_slot_transfers=False``): R^2 = 2,500 variables
  per job instead of per job and slot;
* each free job is modelled from its arrival to ``EXTRA_SLOTS`` slots after its incumbent completion
  (``last_slot``), a restriction: a job may finish later than it did (fewer workers, less data moved),
  but not arbitrarily late.

The incumbent's entries of the window's jobs are feasible in that model and are its complete hint
(`start.hint_cpsat`), so the incumbent is the window's first solution. Measured on the paper preset
(seed 0, oasis_latency start, 5 s per window, one worker): windows of one job gained 375 over eight
windows, windows of two jobs 7, so the search starts at one job; no window was proved optimal (CP-SAT's
bound of a single job alone stays far below its incumbent: the big-M exchange rows (1) relax to nothing).

So each window first re-optimises its jobs one at a time with every other job fixed
(`reoptimise_single`: the single-job solver of ``singlejob.py`` over what the others leave, its plan
kept only when it costs less than the job's incumbent entries), and CP-SAT then starts from that
schedule with what is left of the window's time, on instances of at most `CPSAT_MAX_SITES` sites
(above, the window is the single-job moves alone).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from edgeopt.core import Deadline, ModelSize, Status
from edgeopt.core.lns import Neighbourhood, SubSolve, refuse_above
from formulations.common import solve_cpsat as run_cpsat

#: CP-SAT parameters of a window's solve (`formulations.common.solve_cpsat`). The defaults: without
#: interleaving, or without presolve, the paper-preset windows above gained no more.
SUB_PARAMS: dict[str, Any] = {}
#: Share of a window's time for the single-job re-optimisations before CP-SAT (the rest, at least).
SINGLE_SHARE = 0.6
#: Above this many sites a window is the single-job moves alone: CP-SAT improves no window there (paper
#: preset, 50 sites: single-job passes alone reached 94,376 in 304 s CPU and 92,831 in 470 s; with 2 s of
#: CP-SAT after each window's moves, 96,321 in 577 s).
CPSAT_MAX_SITES = 12
#: Seconds per fixed-PS MILP of the single-job solver (`singlejob.fixed_ps_plan`).
SINGLE_MILP_LIMIT = 0.5
#: Seconds of the exact single-job MILP (`singlejob.exact`) per job of a window, hinted with the incumbent's plan
#: and run before the heuristic planner, on instances of at most `EXACT_MAX_SITES` sites. Measured from the
#: sequential insertion's schedules (seed 0), each job re-planned over what the others hold: on the ITP quiet week
#: (11 sites; 184,561) 5 s each made the 12 costliest jobs 10,951 cheaper in all (0-35 % each), the heuristic
#: planner 76; at the `paper` preset (50 sites; 96,097) the 8 costliest gained 155 with 44 s of CPU, the
#: heuristic 151 with 10 s.
EXACT_LIMIT = 5.0
EXACT_MAX_SITES = 12
#: The exact single-job MILP is built only for a job of at most this many worker variables (modelled slots x
#: R^2 sites): its model is built in Python before HiGHS's own limit applies.
EXACT_MAX_WORKERS = 100_000
#: Seconds per worker variable to build that model (1.0-1.5 s for 100,000 on the ITP quiet week, under load):
#: the MILP is skipped when less time than twice its build is left, so the call's time limit holds.
EXACT_BUILD_S = 1.5e-5
#: Slots modelled after a free job's incumbent completion (it may finish later than it did, by this much);
#: 6 gained a little more than 2 on the paper-preset windows above, and a slot costs only ~4 R variables.
EXTRA_SLOTS = 6


def order(instance: Any, schedule: Any) -> list[int]:
    """Job indices by the incumbent's first slot, then arrival (a job without entries goes by its arrival)."""
    first = {int(js.job): min((e.slot for e in js.slots), default=None) for js in schedule.jobs}

    def key(i: int) -> tuple[int, int, int]:
        a = instance.jobs[i].arrival
        s = first.get(i)
        return (a if s is None else s, a, i)

    return sorted(range(len(instance.jobs)), key=key)


def last_slots(instance: Any, schedule: Any, free: Sequence[int]) -> dict[int, int]:
    """The last slot modelled per free job: its incumbent completion plus ``EXTRA_SLOTS`` (at most T-1)."""
    done = {int(js.job): js.completion for js in schedule.jobs}
    out = {}
    for i in free:
        a, c = instance.jobs[i].arrival, done.get(i)
        out[i] = min(instance.horizon - 1, (a if c is None else c) + EXTRA_SLOTS)
    return out


def window_size(instance: Any, last: dict[int, int]) -> ModelSize:
    """The window model's size (`build_cpsat` with ``per_slot_transfers=False``), before it is built: per
    job and modelled slot, act, y, s, h and the exchange (3R + 2 variables) in 3R + 3 rows with about
    R^2 + 8R + 2RK + 6 nonzeros (the exchange rows are R x R), plus R^2 transfer totals per job."""
    R, K = len(instance.sites), len(instance.resources)
    slots = sum(max(0, int(c) - int(instance.jobs[i].arrival) + 1) for i, c in last.items())
    n = len(last)
    return ModelSize(slots * (3 * R + 2) + n * (R * R + 4), slots * (3 * R + 3 + R * K) + n * (2 * R + 4),
                     slots * (R * R + 8 * R + 2 * R * K + 6) + n * 3 * R * R,
                     note=f"{n} jobs over {slots:,} slots and {R} sites")


def reoptimise(instance: Any, schedule: Any, free: Sequence[int], time_limit: float, *, workers: int = 1,
               max_nonzeros: int | None = None) -> SubSolve:
    """Re-solve the jobs ``free`` (indices) exactly with CP-SAT over what the other jobs leave.

    ``time_limit`` bounds the whole call (building, hinting, solving). Any failure leaves the incumbent
    as it is: ``SubSolve(None, False)``. ``max_nonzeros``: a window whose model (`window_size`) is above
    it is refused before anything is built, the single-job moves included; when the moves lengthen the
    window so that its CP-SAT model goes above it, the moves are kept and CP-SAT is skipped.
    """
    from edgeopt.okita import FAMILY
    from edgeopt.okita.schedule import Schedule
    from formulations.okita.cpsat import build_cpsat, extract_cpsat
    from formulations.okita.start import hint_cpsat

    deadline = Deadline(max(time_limit, 0.05))
    idx = sorted({int(j) for j in free})
    if not idx:
        return SubSolve(None, False)
    sched = None
    try:
        sched = schedule if isinstance(schedule, Schedule) else FAMILY.parse_schedule(schedule)
        # the budget bounds every model the window builds, its single-job MILPs too: a window whose
        # CP-SAT model is above it is refused whole, before any move (the LNS then shrinks its windows)
        if (refused := refuse_above(window_size(instance, last_slots(instance, sched, idx)),
                                    max_nonzeros)) is not None:
            return SubSolve(None, False, refused=refused.refused)
        alone = len(instance.sites) > CPSAT_MAX_SITES
        single = Deadline(max(0.01, (1.0 if alone else SINGLE_SHARE) * deadline.remaining(floor=0.0)))
        for i in idx:
            if single.expired():
                break
            sched = reoptimise_single(instance, sched, i, deadline=single) or sched
        if alone:
            return SubSolve(sched if sched is not schedule else None, False)
        rest = [js for js in sched.jobs if int(js.job) not in idx]
        last = last_slots(instance, sched, idx)
        if (refused := refuse_above(window_size(instance, last), max_nonzeros)) is not None:
            return SubSolve(sched, False, refused=refused.refused)  # the single-job moves need no model
        with deadline.guard("the neighbourhood model"):
            model, V = build_cpsat(instance, deadline=deadline, jobs=idx, fixed=Schedule(jobs=rest),
                                   last_slot=last, per_slot_transfers=False)
            hint_cpsat(model, V, instance, sched)
        outcome, solver = run_cpsat(model, time_limit=deadline.remaining(), workers=workers, deadline=deadline,
                                       params=SUB_PARAMS)
        new = extract_cpsat(solver, V, instance) if outcome.has_solution else None
    except Exception:  # noqa: BLE001 - a sub-model that fails to build or solve leaves the incumbent as it is
        return SubSolve(sched if sched is not None and sched is not schedule else None, False)
    if new is None:
        return SubSolve(sched if sched is not schedule else None, outcome.status == Status.INFEASIBLE)
    merged = Schedule(jobs=sorted(rest + list(new.jobs), key=lambda js: int(js.job)),
                      rejected=[j for j in sched.rejected if j not in idx])
    return SubSolve(merged, outcome.status == Status.OPTIMAL)


def neighbourhood() -> Neighbourhood:
    """The LNS plug-in (windows solved with the CP-SAT model), started from `rebuild` (the sequential insertion)
    when that is better than the warm start, then `exact_pass` before the windows."""
    return Neighbourhood(order=order, reoptimise=reoptimise, window=1, max_window=4, rebuild=rebuild,
                         rebuild_margin=REBUILD_MARGIN, local=exact_pass, local_share=LOCAL_SHARE)


#: Most of the time left (after the sequential insertion) that `exact_pass` may take before the windows.
LOCAL_SHARE = 0.8


def exact_pass(instance: Any, schedule: Any, deadline: Deadline) -> Any | None:
    """The LNS's local search (`Neighbourhood.local`), on instances of at most `EXACT_MAX_SITES` sites: every
    job re-planned by the exact single-job MILP alone (`reoptimise_single` without the heuristic planner, at
    most `EXACT_LIMIT` seconds each), the costliest jobs of the incumbent first, in passes until one improves
    nothing or ``deadline`` passes. The windows, which follow, take the jobs in time order and may not reach
    the costliest within their time. None when no job improved (or above `EXACT_MAX_SITES` sites)."""
    from edgeopt.okita import FAMILY
    from edgeopt.okita.schedule import Schedule, job_parts

    if len(instance.sites) > EXACT_MAX_SITES:
        return None
    sched = schedule if isinstance(schedule, Schedule) else FAMILY.parse_schedule(schedule)
    improved = False
    while not deadline.expired():
        cost = {int(js.job): sum(job_parts(instance, js).values()) for js in sched.jobs if js.completion is not None}
        moved = False
        for i in sorted(cost, key=lambda k: (-cost[k], k)):
            if deadline.expired():
                break
            try:
                new = reoptimise_single(instance, sched, i, heuristic=False,
                                        deadline=Deadline(max(0.01, min(EXACT_LIMIT, deadline.remaining(floor=0.0)))))
            except Exception:  # noqa: BLE001 - as in a window: a move that fails leaves the incumbent as it is
                new = None
            if new is not None:
                sched, moved = new, True
        improved = improved or moved
        if not moved:
            break
    return sched if improved else None


#: `sequential_insertion` replaces the warm start only when at least this much better (measured, seed 0, 600 s
#: searches: paper preset 97,148 against 125,478, then 90,886 against 94,301 without it; 150 jobs 262,927
#: against 263,099, where the windows from it ended at 249,667 but from the warm start at 234,006)
REBUILD_MARGIN = 0.05
#: `sequential_insertion` judges its pace after this many jobs (of each planner): their time per unit of work
#: says whether the rest will fit before the deadline
PACE_JOBS = 5


def latency_steps(instance: Any) -> list[tuple[float | None, int]]:
    """Per job, (f_i(L_i + 1) - f_i(L_i), W_i): what one slot of delay costs at its least latency L_i =
    ceil(W_i / A_i) (`bounds.worker_limits`), and its work; None for a job that fits nowhere (A_i = 0). The step
    is +inf where both costs overflow (inf - inf)."""
    from formulations.okita.bounds import worker_limits

    out: list[tuple[float | None, int]] = []
    for job, (W, A) in zip(instance.jobs, worker_limits(instance), strict=True):
        if A <= 0:
            out.append((None, W))
            continue
        L = -(-W // A)
        step = float(job.cost(L + 1)) - float(job.cost(L))
        out.append((math.inf if math.isnan(step) else step, W))
    return out


def smith_ratios(instance: Any) -> list[float]:
    """Per job, f_i(L_i + 1) - f_i(L_i) per worker-slot of work W_i (`latency_steps`): Smith's ratio
    (`insertion_order`); -inf for a job that fits nowhere (A_i = 0), +inf where both costs overflow."""
    return [-math.inf if step is None else step / max(W, 1) for step, W in latency_steps(instance)]


def insertion_order(instance: Any, priority: str = "ratio") -> list[int]:
    """The order in which `sequential_insertion` plans the jobs. ``"arrival"``: by arrival, ties by index.
    ``"ratio"`` (Smith's ratio rule; W. E. Smith, "Various optimizers for single-stage production", Naval
    Research Logistics Quarterly 3 (1956) 59-66): the largest f_i(L_i + 1) - f_i(L_i) per worker-slot of work
    W_i first, L_i = ceil(W_i / A_i) the job's least latency (`bounds.worker_limits`): what one slot of delay
    costs at the job's fastest completion, per unit of the capacity it takes (for the linear costs of the ITP
    mapping, the cost per slot over the work); ties by arrival, then index. A job that fits nowhere (A_i = 0)
    comes last. Interpretation: the paper plans jobs online, in arrival order; this offline order is ours."""
    jobs = instance.jobs
    if priority == "arrival":
        return sorted(range(len(jobs)), key=lambda k: (int(jobs[k].arrival), k))
    if priority != "ratio":
        raise ValueError(f"priority: expected 'arrival' or 'ratio', got {priority!r}")
    ratio = smith_ratios(instance)
    return sorted(range(len(jobs)), key=lambda k: (-ratio[k], int(jobs[k].arrival), k))


def sequential_insertion(instance: Any, deadline: Deadline, *, max_nonzeros: int | None = None,
                         exact_workers: bool | None = None, priority: str = "ratio",
                         prices: np.ndarray | None = None, clock: Any = time.perf_counter) -> Any | None:
    """A schedule built from nothing: the jobs in `insertion_order` (``priority``: Smith's ratio rule by
    default, or arrival; with costs that are not linear the ratio order can be far worse, which is why the LNS's
    `rebuild` tries both there), each planned alone by the single-job solver over what the jobs before it hold
    (`singlejob.best_plan`, as `reoptimise_single`: L-median PS sites, whole workers by a fixed-PS MILP). Every
    plan fits what is left, so the schedule is feasible. ``max_nonzeros``: the LNS's size budget; as for a
    window, a job whose one-job window model (`window_size`, modelled to the horizon) is above it refuses the
    whole rebuild (None) before any model is built.

    ``exact_workers`` None (the default) starts with the whole-worker MILP and, as soon as the time per unit of
    work (W_i worker-slots) of the jobs planned so far (after `PACE_JOBS`) says the rest will not fit before the
    deadline, plans the rest without it (the flow plans rounded up to whole workers, no multiplier steps: on the
    ITP typical week's first 8 jobs 2.3 s of CPU, against 19.6 s with the MILP given 2 s per job, and 2 %
    dearer); True or False keeps one planner throughout. None when a job finds no plan, when the deadline passes first, or when the faster
    planner's pace says it will not finish either. ``prices`` [T, sites, resources] (None: zero): each job's
    plan minimises its cost plus its resources at these prices (`negotiate`); the schedule's objective is
    still the plain one. ``clock``: seconds for the pace (a test passes its own).

    Measured (seed 0) in arrival order: the `paper` preset 97,148 (`oasis_latency` 125,478) in 130 s of CPU;
    the ITP quiet week (111 jobs, 11 sites) 184,377, where the best algorithm (`online`) gives 329,202; the ITP
    typical week (212 jobs), where the MILP's pace gives up, 740,320 with the faster planner throughout (81 s
    of CPU; `online` 804,105); the busiest week (182 jobs) ran out of time. In ratio order: `paper` 91,353
    (129 s), with the faster planner throughout the quiet week 178,316, the typical 426,771 and the busiest
    875,449 (152 s; `online` 2,441,444)."""
    from edgeopt.core.limits import BuildTimeLimit
    from edgeopt.okita.schedule import JobSchedule, Schedule, usage_per_slot
    from formulations.okita import singlejob as sj
    from formulations.okita.bounds import worker_limits

    T = int(instance.horizon)
    if max_nonzeros is not None and any(refuse_above(window_size(instance, {i: T - 1}), max_nonzeros) is not None
                                        for i in range(len(instance.jobs))):
        return None
    used = np.zeros((T, len(instance.sites), len(instance.resources)))
    placed = []
    order = insertion_order(instance, priority)
    exact = exact_workers is not False
    # the pace of the current planner, since its first job, in seconds per worker-slot of the jobs' work W_i: a
    # job's planning time grows with it (fast planner, ITP busiest week: correlation 0.99 over the 182 jobs), and
    # in ratio order the small jobs come first, so a pace per job would promise far too much (3.5 s for the
    # 130 s the busiest week's jobs took)
    work = np.array([max(1, W) for W, _ in worker_limits(instance)], dtype=float)
    left = np.cumsum(work[order][::-1])[::-1]  # left[n]: the work of the jobs from the n-th on
    t0, n0 = clock(), 0
    for n, i in enumerate(order):
        if deadline.expired():
            return None
        # a rebuild that will not finish in time gives nothing: switch to the faster planner (where allowed),
        # or stop, as soon as the pace says so, and leave the time to the windows (ITP weeks of 182-212 jobs)
        if n - n0 >= PACE_JOBS and (clock() - t0) / (left[n0] - left[n]) * left[n] > deadline.remaining(floor=0.0):
            if not (exact and exact_workers is None):
                return None
            exact, t0, n0 = False, clock(), n
        job = sj.of_instance(instance, i, used=used)
        w = P = None
        if prices is not None:  # per worker and per PS of this job, over its slots a_i .. T - 1
            local = np.asarray(prices, dtype=float)[job.arrival:job.last + 1]
            w, P = local @ job.m, local @ job.n
        try:
            plan, _, _, _ = sj.best_plan(job, w, P, exact_workers=exact, steps=10 if exact else 0, deadline=deadline,
                                         time_limit=max(0.01, min(SINGLE_MILP_LIMIT, deadline.remaining(floor=0.0))))
        except BuildTimeLimit:
            return None
        if plan is None:
            return None
        js = JobSchedule(job=i, slots=sj.plan_entries(job, plan))
        placed.append(js)
        used += usage_per_slot(instance, Schedule(jobs=[js]))
    return Schedule(jobs=sorted(placed, key=lambda js: int(js.job)))


def rebuild(instance: Any, deadline: Deadline, *, max_nonzeros: int | None = None,
            clock: Any = time.perf_counter) -> Any | None:
    """The LNS's rebuild: `sequential_insertion` in Smith's ratio order and, unless every job's latency cost is
    linear (where the rule is Smith's), in arrival order too when the time left is at least twice what the first
    took; the cheaper schedule (None when neither finished). With linear costs the ratio order's schedule is
    improved by `negotiate` instead.

    Why both: the ratio at the least latency does not see a convex cost's growth. At the `paper` preset
    (exponential costs, 100 jobs) the ratio order gave 91,353 against 96,106 in arrival order, but with 150 jobs
    on the same 150 slots it delayed the last jobs so far that it gave 321,335,577 against 256,249. On the ITP
    weeks (linear costs) it gave 178,316 / 426,771 / 875,449 against 186,231 / 740,320 / none."""
    from edgeopt.okita.schedule import objective

    t0 = clock()
    first = sequential_insertion(instance, deadline, max_nonzeros=max_nonzeros, priority="ratio", clock=clock)
    took = clock() - t0
    if all(job.latency_cost.kind == "linear" for job in instance.jobs) and first is not None:
        return negotiate(instance, deadline, first, took, max_nonzeros=max_nonzeros, clock=clock)
    if first is not None and deadline.remaining(floor=0.0) < 2.0 * took:
        return first
    second = sequential_insertion(instance, deadline, max_nonzeros=max_nonzeros, priority="arrival", clock=clock)
    found = [s for s in (first, second) if s is not None]
    return min(found, key=lambda s: objective(instance, s)) if found else None


#: `negotiate`: the most insertions at congestion prices after the first
NEGOTIATION_ROUNDS = 2
#: `negotiate`: a round starts only with this many times the last insertion's time left (a round that still
#: runs short is abandoned by the insertion's own pace, and the best schedule so far is kept). 1.2 changed
#: nothing measured: 600 s searches of 392,134 on the ITP typical week (391,504 at 1.5) and 840,550 on the
#: busiest (839,546 before `negotiate`), whose first insertion leaves too little time for a round either way
ROUND_ROOM = 1.5
#: `negotiate`: a cell counts as saturated from this share of its capacity used
SATURATED = 0.95
#: `negotiate`: a saturated cell's price per unit of a site's capacity, per time it was saturated, as a share of
#: the median f_i(L_i + 1) - f_i(L_i) over the jobs (ITP typical week: a third of 58.5; 20 measured best of 5, 20)
NEGOTIATION_WEIGHT = 1.0 / 3.0


def congestion_prices(instance: Any, history: np.ndarray) -> np.ndarray:
    """[T, sites, resources]: ``history`` (how many of the schedules so far saturated each cell, `SATURATED`)
    times `NEGOTIATION_WEIGHT` x the median finite latency step (`latency_steps`) per unit of the
    site's capacity of that resource (zero where the capacity is zero)."""
    finite = [step for step, _ in latency_steps(instance) if step is not None and math.isfinite(step)]
    scale = NEGOTIATION_WEIGHT * (float(np.median(finite)) if finite else 0.0)
    C = np.asarray(instance.capacity, dtype=float)
    per_unit = np.divide(scale, C, out=np.zeros_like(C), where=C > 0)
    return np.asarray(history, dtype=float) * per_unit[None, :, :]


def negotiate(instance: Any, deadline: Deadline, first: Any, took: float, *, max_nonzeros: int | None = None,
              clock: Any = time.perf_counter) -> Any:
    """The cheapest of ``first`` (a `sequential_insertion` in ratio order, which took ``took`` seconds) and up to
    `NEGOTIATION_ROUNDS` insertions in the same order at congestion prices (`congestion_prices`): after each
    schedule, the (slot, site, resource) cells it uses to `SATURATED` of their capacity count once more, and
    the next insertion prices each cell by its count. A round starts only when the time left is at least
    `ROUND_ROOM` times what the last one took. Why: each job takes the plan cheapest for itself over what the
    jobs before it hold, so the first jobs fill the cells the later ones need and those wait; a price on the
    cells that were full makes an early job pay for them, as in negotiated-congestion routing (L. McMurchie and
    C. Ebeling, "PathFinder: a negotiation-based performance-driven router for FPGAs", FPGA 1995). Ours, not
    the paper's.
    Measured on the ITP typical week (seed 0, fast planner): 426,771, then 421,677 and 418,988 (60-100 s of CPU
    per insertion); the exact pass (200 s) from the third gives 390,941 against 398,502 from the first."""
    from edgeopt.okita.schedule import objective, usage_per_slot

    best, best_obj = first, objective(instance, first)
    C = np.asarray(instance.capacity, dtype=float)
    history = np.zeros((int(instance.horizon),) + C.shape)
    sched = first
    for _ in range(NEGOTIATION_ROUNDS):
        if deadline.expired() or deadline.remaining(floor=0.0) < ROUND_ROOM * took:
            break
        used = usage_per_slot(instance, sched)
        history += (used >= SATURATED * C[None, :, :]) & (C[None, :, :] > 0)
        t0 = clock()
        sched = sequential_insertion(instance, deadline, max_nonzeros=max_nonzeros, priority="ratio",
                                     prices=congestion_prices(instance, history), clock=clock)
        took = clock() - t0
        if sched is None:
            break
        if (value := objective(instance, sched)) < best_obj:
            best, best_obj = sched, value
    return best


def reoptimise_single(instance: Any, schedule: Any, i: int, *, deadline: Deadline, exact: bool = True,
                      heuristic: bool = True) -> Any | None:
    """``schedule`` with job i re-planned alone over what every other job leaves, or None when no plan found
    costs less than job i's incumbent entries. The others' entries are unchanged, so the result stays feasible.

    Two planners, the cheaper plan kept: first (``exact``, on instances of at most `EXACT_MAX_SITES` sites,
    where the job's model has at most `EXACT_MAX_WORKERS` worker variables and ``deadline`` leaves time to build
    it, `EXACT_BUILD_S`) the exact single-job MILP (`singlejob.exact`) over the slots up to
    the incumbent completion plus `EXTRA_SLOTS`, hinted with the incumbent's own plan and stopped after
    `EXACT_LIMIT` seconds (its best plan then, not necessarily optimal); then (``heuristic``), with what is
    left of ``deadline``, the heuristic `singlejob.best_plan` (L-median PS sites, whole workers by a fixed-PS
    MILP) over every slot to the horizon."""
    from edgeopt.core.limits import BuildTimeLimit
    from edgeopt.okita.schedule import JobSchedule, Schedule, job_parts, usage_per_slot
    from formulations.okita import singlejob as sj

    mine = next((js for js in schedule.jobs if int(js.job) == i), None)
    if mine is None or mine.completion is None:
        return None
    others = Schedule(jobs=[js for js in schedule.jobs if int(js.job) != i])
    used = usage_per_slot(instance, others)
    current = sum(job_parts(instance, mine).values())
    tol = 1e-9 * max(1.0, abs(current))
    best: tuple[sj.SingleJob, sj.Plan] | None = None
    best_cost = current
    last = min(int(instance.horizon) - 1, int(mine.completion) + EXTRA_SLOTS)
    R = len(instance.sites)
    workers = (last - int(instance.jobs[i].arrival) + 1) * R * R
    if (exact and R <= EXACT_MAX_SITES and workers <= EXACT_MAX_WORKERS
            and deadline.remaining(floor=0.0) > 2.0 * EXACT_BUILD_S * workers):
        short = sj.of_instance(instance, i, used=used, last=last)
        found = sj.exact(short, time_limit=min(EXACT_LIMIT, deadline.remaining(floor=0.0)), hint=sj.plan_of(mine),
                         rel_gap=1e-4)
        if found.plan is not None and found.value < best_cost - tol:
            best, best_cost = (short, found.plan), found.value
    if heuristic and not deadline.expired():
        job = sj.of_instance(instance, i, used=used)
        try:
            plan, cost, _, _ = sj.best_plan(job, exact_workers=True, steps=10, deadline=deadline,
                                            time_limit=min(SINGLE_MILP_LIMIT, deadline.remaining()))
        except BuildTimeLimit:
            plan = None
        if plan is not None and cost < best_cost - tol:
            best, best_cost = (job, plan), cost
    if best is None:
        return None
    new = JobSchedule(job=i, slots=sj.plan_entries(*best))
    return Schedule(jobs=sorted(others.jobs + [new], key=lambda js: int(js.job)), rejected=list(schedule.rejected))
