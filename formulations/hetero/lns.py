"""The hetero neighbourhood of the large-neighbourhood search (`edgeopt.core.lns`).

A window is a few jobs that run close in time in the incumbent. The sub-model is an exact model
of those jobs alone over

* the slots [t0, t1): t1 the last slot any of them runs in the incumbent, t0 up to ``pad`` slots
  before the first one starts (a job never starts before its arrival: (2j) holds in the window);
* the servers they use in the incumbent plus the ``extra_servers`` servers with the most capacity
  left free in those slots (a sub-instance of the servers, renumbered and mapped back);
* the capacity every other job leaves free on them, slot by slot (``prepare(free=...)``).

The sub-model is the CP-SAT model (``cpsat.py``, the capacity others take held as fixed intervals;
default: no time index, so long windows stay small) or the time-indexed MILP (``milp.py``; it
grows with the window's slots and servers and suits small instances only). The incumbent's
placements of the window's jobs are a feasible point of it and are its hints / MIP start, so the
solver starts from them; any solution it returns is feasible for the whole
instance (the other jobs are untouched and the window's jobs fit in what they leave).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from edgeopt.core import Deadline, ModelSize, Status
from edgeopt.core.lns import Neighbourhood, SubSolve, refuse_above
from formulations.common import complete_hints, solve_pyomo
from formulations.common import solve_cpsat as run_cpsat
from formulations.hetero.cpsat import build_cpsat, extract_cpsat
from formulations.hetero.data import prepare
from formulations.hetero.milp import build_milp, extract_milp
from formulations.hetero.schedule_io import to_schedule
from formulations.hetero.start import hint_cpsat, start_milp

#: Slots a window reaches before its first job's start (room to move jobs earlier).
PAD = 8
#: Servers added to those the window's jobs use (room to move them elsewhere).
EXTRA_SERVERS = 4
#: Jobs of a CP-SAT window that may change configuration and servers (the others move in time only) on an
#: instance of more than `ALL_FREE_MAX_SERVERS` servers.
PLACEMENT_FREE = 2
#: On instances of at most this many servers every job of a CP-SAT window may change configuration and servers:
#: on the ``small`` ladder of benchmarks/exact_scale.py (seed 1, ``solve --method cpsat --lns``, 60 s) 16 jobs on
#: 4 servers ended at 359 (the optimum is 358) against 377 with two free, 24 jobs on 6 servers at 476 against
#: 480. The paper preset's 150 servers are what made all-free windows fail (`reoptimise`).
ALL_FREE_MAX_SERVERS = 12
#: Share of the LNS's time the ruin and recreate search takes before the windows. After `offline_fill`'s
#: sweeps the windows are mostly a local optimum (paper_congested: 16 windows proven, none improved), while
#: ruin and recreate kept improving (ITP busiest week, 240 s: 47,790,642 -> 44,968,645; the windows in 600 s
#: reached 47,440,931).
LOCAL_SHARE = 0.8


#: CP-SAT parameters of a window's solve: the defaults. Presolve off (as for edgecloud) aborted the
#: process on a hetero paper-preset run (CP-SAT "Check failed: heuristics.fixed_search != nullptr",
#: one worker, interleaved search); with presolve on and two workers 300-job runs went through.
SUB_PARAMS: dict[str, Any] = {}


def usage(instance: Any, schedule: Any, skip: set[int], t0: int, length: int) -> np.ndarray:
    """``[H, R, length]`` capacity the jobs not in ``skip`` hold in slots [t0, t0 + length)."""
    cap = np.asarray(instance.capacity, dtype=float)
    e, z = np.asarray(instance.worker_demand, dtype=float), np.asarray(instance.ps_demand, dtype=float)
    used = np.zeros((*cap.shape, length))
    for js in schedule.jobs:
        if js.job in skip:
            continue
        spans = [(sg.start, sg.duration, sg.workers, sg.ps) for sg in js.segments] if js.segments else [
            (js.start, js.duration, js.workers, js.ps)]
        for start, dur, workers, ps in spans:
            a, b = max(start, t0) - t0, min(start + dur, t0 + length) - t0
            if a >= b:
                continue
            for h, n in workers.items():
                used[int(h), :, a:b] += n * e[js.worker_type][:, None]
            if js.ps_type is not None:
                for h, n in ps.items():
                    used[int(h), :, a:b] += n * z[js.ps_type][:, None]
    return used


def order(instance: Any, schedule: Any) -> list[int]:
    """Job indices by the incumbent's start slot (ids are positions in hetero)."""
    return [js.job for js in sorted(schedule.jobs, key=lambda js: (js.start, js.job))]


def window_size(data: Any, method: str) -> ModelSize:
    """The window model's size before it is built, counted on its prepared data: the MILP as `sizes` counts
    a whole instance's; the CP-SAT model (`cpsat.build_cpsat`) per job about 6 entries per configuration,
    R + 10 per (server, worker or PS type) (its count, the server rows, the (2h) load rows) and H x M in
    each server's (2i) bandwidth row, plus a fixed interval per server, resource and run of slots in which
    the other jobs take the same amount (`cpsat._hold_taken`). (`sizes.cpsat_size` charges every
    configuration a row per server and resource: five to ten times the built window at the paper preset.)"""
    from formulations.hetero.sizes import milp_size_of

    if method == "milp":
        return milp_size_of(data)
    J, H, R = len(data.jobs), data.n_servers, data.n_resources
    M, P = data.n_worker_types, data.n_ps_types
    configs = sum(len(jd.configs) for jd in data.jobs)
    taken = data.capacity[:, :, None] - data.free
    runs = int(H * R + (np.diff(taken, axis=2) != 0).sum()) if data.length else 0
    return ModelSize(configs * 2 + J * (H * (M + P) * 2 + 2 * H + M + P + 4) + runs,
                     configs + J * (H * (M + P + 6) + H * R + M + P + 4) + H * R,
                     configs * 6 + J * (H * (M + P) * (R + 10) + H * H * M) + 2 * runs,
                     note=f"{configs:,} configurations of {J} jobs over {H} servers")


def reoptimise(instance: Any, schedule: Any, free: Sequence[int], time_limit: float, *, method: str = "cpsat",
               pad: int = PAD, extra_servers: int = EXTRA_SERVERS, placement_free: int | None = None,
               workers: int = 2, max_nonzeros: int | None = None) -> SubSolve:
    """Re-solve the jobs ``free`` exactly in their window of time and servers; the rest stays.

    With ``method="cpsat"`` only ``placement_free`` jobs of the window (those with the largest
    weighted completion) may change configuration and servers; the others keep theirs and move in
    time only. Measured on the paper preset (300 jobs, 150 servers): with all six jobs of a window
    free CP-SAT found no solution in 14 s, even from a complete feasible hint; with two free, it
    proved the window optimal in about 4 s, with none free in 0.5 s. Default (None): every job of the
    window on instances of at most `ALL_FREE_MAX_SERVERS` servers, else `PLACEMENT_FREE`. ``max_nonzeros``: a window whose
    model (`window_size`) is above it is refused before it is built.
    """
    from edgeopt.hetero import FAMILY
    from edgeopt.hetero.schedule import Schedule

    deadline = Deadline(max(time_limit, 0.05))
    sched = schedule if isinstance(schedule, Schedule) else FAMILY.parse_schedule(schedule)
    freeset = {int(j) for j in free}
    mine = [js for js in sched.jobs if js.job in freeset]
    if not mine or any(js.segments for js in mine):
        return SubSolve(None, False)
    if placement_free is None:
        placement_free = len(mine) if len(instance.servers) <= ALL_FREE_MAX_SERVERS else PLACEMENT_FREE
    first = min(js.start for js in mine)
    t0 = max(0, first - pad)
    t1 = max(js.start + js.duration for js in mine)
    length = t1 - t0
    cap = np.asarray(instance.capacity, dtype=float)
    left = cap[:, :, None] - usage(instance, sched, freeset, t0, length)
    servers = sorted({int(h) for js in mine for h in (*js.workers, *js.ps)})
    others = [h for h in range(len(cap)) if h not in servers]
    # most capacity left, as a share of each resource's largest server, over the window's slots
    share = (left[others].min(axis=2) / np.maximum(cap.max(axis=0), 1e-12)).sum(axis=1) if others else []
    servers += [others[i] for i in np.argsort(-np.asarray(share), kind="stable")[:extra_servers]]
    servers.sort()
    renum = {h: i for i, h in enumerate(servers)}
    sub = instance.model_copy(update={"servers": [instance.servers[h] for h in servers]})
    local = Schedule(jobs=[js.model_copy(update={
        "workers": {renum[int(h)]: n for h, n in js.workers.items()},
        "ps": {renum[int(h)]: n for h, n in js.ps.items()}}) for js in mine])
    try:
        with deadline.guard("the neighbourhood model"):
            data = prepare(sub, jobs=sorted(freeset), window=(t0, length), free=np.maximum(left[servers], 0.0))
            if data.unschedulable():
                return SubSolve(None, False)
            if (refused := refuse_above(window_size(data, method), max_nonzeros)) is not None:
                return refused
            if method == "milp":
                model = build_milp(data, objective="wct")
                start = start_milp(model, local)
            else:
                # no symmetry rows: the window pins some jobs to their servers, which those rows do not know
                cm = build_cpsat(data, strengthen=False)
                ranked = sorted(mine, key=lambda js: -instance.jobs[js.job].weight * (js.start + js.duration))
                hint_cpsat(cm, local, pin={js.job for js in ranked[placement_free:]})
                complete_hints(cm.model, time_limit=deadline.remaining() / 2)
        if method == "milp":
            outcome = solve_pyomo(model, time_limit=deadline.remaining(), start=start, deadline=deadline)
            placed = extract_milp(model) if outcome.has_solution else []
        else:
            outcome, solver = run_cpsat(cm.model, time_limit=deadline.remaining(), workers=workers, deadline=deadline,
                                       params=SUB_PARAMS)
            placed = extract_cpsat(cm, solver) if outcome.has_solution else []
    except Exception:  # noqa: BLE001 - a sub-model that fails to build or solve leaves the incumbent as it is
        return SubSolve(None, False)
    if not outcome.has_solution:
        return SubSolve(None, outcome.status == Status.INFEASIBLE)
    back = to_schedule(instance, [p.__class__(**{**p.__dict__,
                                                 "workers": {servers[h]: n for h, n in p.workers.items()},
                                                 "ps": {servers[h]: n for h, n in p.ps.items()}}) for p in placed])
    merged = Schedule(jobs=sorted([js for js in sched.jobs if js.job not in freeset] + list(back.jobs),
                                  key=lambda js: js.job), rejected=list(sched.rejected))
    return SubSolve(merged, outcome.status == Status.OPTIMAL)


def neighbourhood(method: str = "cpsat") -> Neighbourhood:
    """The LNS plug-in: the LP-guided list schedule (``lpfill.py``) as the rebuild tried first, then ruin and
    recreate from the incumbent (`recreate`), then windows solved with the exact model ``method`` (``cpsat`` or
    ``milp``)."""
    import functools

    from formulations.hetero.lpfill import lp_guided_fill

    return Neighbourhood(order=order, reoptimise=functools.partial(reoptimise, method=method), window=8,
                         max_window=20, rebuild=lp_guided_fill, local=recreate, local_share=LOCAL_SHARE)


def recreate(instance: Any, schedule: Any, deadline: Deadline) -> Any | None:
    """The neighbourhood's local search: ruin and recreate with `offline_fill`'s placement search
    (`edgeopt.hetero.offline.recreate`), until it stalls (`edgeopt.core.listsched.PATIENCE_PER_JOB`) or its time
    is up; None when it improved nothing."""
    from edgeopt.core.listsched import PATIENCE_PER_JOB
    from edgeopt.hetero.offline import recreate as search

    return search(instance, schedule, deadline, patience=PATIENCE_PER_JOB * len(instance.jobs))[0]

