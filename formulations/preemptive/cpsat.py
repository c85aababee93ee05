"""MINLP (2) of Wang et al. as an OR-Tools CP-SAT model, written independently of ``milp.py``.

Same reading of the paper (``data.py``), different encoding, so that a
mistake in one model shows up as a disagreement with the other:

* a chunk picks exactly one *mode*: one eligible edge worker, or the cloud
  (`AddExactlyOne`); its training slots on edge worker k are literals
  ``b[j,d,k,t]`` whose number is p_j when the mode is chosen and 0 otherwise;
* each chunk's end is ``e[j,d] = max((t+1) b[j,d,k,t], cloud end)`` and
  ``c_j = max_d e[j,d]`` (`AddMaxEquality`), (2j): exact at every incumbent,
  so a time-limited solve reports its schedule's true objective;
* ``run[j,t] = OR b[j,.,.,t]`` and, before the cloud's PSs are reachable,
  exactly ``run[j,t]`` edge PSs are held by job j (an equality rather than
  the MILP's covering inequality), each edge server holding at most P_s.

The large-neighbourhood search (``lns.py``) builds the same model for a few jobs over what the
others leave (`build_cpsat`'s ``jobs`` / ``fixed``, `taken_by`), with a job's chunks counted per
worker (``counted``, the MILP's encoding in CP-SAT) instead of named.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from typing import Any

from edgeopt.core import Deadline, Result
from edgeopt.core.limits import guard_built, size_guard_deferred
from formulations.common import deadline_bounded, finish
from formulations.common import solve_cpsat as _solve_cpsat
from formulations.preemptive.data import ModelData, from_instance
from formulations.preemptive.plan import ChunkPlan, Plan, assign_ps, to_schedule
from formulations.preemptive.sizes import cpsat_size_of
from formulations.preemptive.windows import (
    WINDOW_MIN_JOBS,
    close_by_certificate,
    keep_incumbent,
    proof_record,
    proven_outcome,
    windowed,
)
from formulations.strengthen import add_cpsat_floor, certified_floor, consecutive_pairs, floor_in_model_units


class CpModelHandle:
    """The CP-SAT model and the literals needed to read a solution back."""

    def __init__(self) -> None:
        from ortools.sat.python import cp_model

        self.model = cp_model.CpModel()
        self.mode: dict[tuple[int, int], dict[int | None, Any]] = {}
        self.train: dict[tuple[int, int, int], dict[int, Any]] = {}
        self.colocated: dict[int, Any] = {}
        self.ps: dict[tuple[int, int, int], Any] = {}
        self.end: dict[tuple[int, int], Any] = {}
        self.completion: dict[int, Any] = {}
        self.jobs: list[int] = []
        #: ``counted=True`` (`_counted_job`): chunks per (job, worker) and on the cloud per job;
        #: ``train[(j, -1, k)]`` are then job j's slot literals on worker k.
        self.counted = False
        self.count: dict[tuple[int, int], Any] = {}
        self.cloud_count: dict[int, Any] = {}
        #: ``counted``: the earliest job j can complete in this model (its first worker's p_j-th free slot
        #: + 1, or its colocated cloud end): the lower bound of c_j's domain.
        self.earliest: dict[int, int] = {}


@dataclasses.dataclass(frozen=True)
class Taken:
    """What the jobs kept fixed hold, as constants of a sub-model (`build_cpsat`'s ``fixed``).

    Attributes:
        busy: edge worker slots ``(k, t)`` in which a fixed job trains (2d: no other chunk there).
        ps: ``{(s, t): n}`` edge PSs of server s the fixed jobs hold in slot t ((2f): P_s - n left).
    """

    busy: frozenset[tuple[int, int]]
    ps: dict[tuple[int, int], int]


def taken_by(data: ModelData, schedule: Any, skip: Iterable[int] = ()) -> Taken:
    """Edge worker slots and edge PSs the jobs of ``schedule`` (a preemptive `Schedule`) not in ``skip`` hold.

    Cloud chunks and cloud PSs hold nothing: the cloud's workers and PSs are unlimited.
    """
    worker_of = {(int(s), int(w)): k for k, (s, w) in enumerate(zip(data.worker_server, data.worker_slot, strict=True))}
    skipped = {int(j) for j in skip}
    busy: set[tuple[int, int]] = set()
    ps: dict[tuple[int, int], int] = {}
    for js in schedule.jobs:
        if int(js.job) in skipped:
            continue
        for ch in js.chunks:
            k = worker_of.get((int(ch.server), int(ch.worker)))
            if k is not None:
                busy.update((k, int(t)) for t in ch.slots)
        for run in js.ps:
            if int(run.server) != data.cloud:
                for t in range(int(run.start), int(run.end)):
                    ps[(int(run.server), t)] = ps.get((int(run.server), t), 0) + 1
    return Taken(frozenset(busy), ps)


def build_cpsat(data: ModelData, *, strengthen: bool = False, jobs: Iterable[int] | None = None,
                fixed: Taken | None = None, counted: bool = False) -> CpModelHandle:
    """The CP-SAT model of MINLP (2) (never solves).

    ``strengthen``: add the symmetry-breaking rows over identical workers and over the chunks of a job
    (`_break_symmetry`).

    ``jobs`` / ``fixed`` (the large-neighbourhood search, ``lns.py``): model only the jobs ``jobs``
    (indices; None: all) and let them use only what the other jobs leave, ``fixed`` (`taken_by` of
    the incumbent): a chunk gets no literal in a worker slot a fixed job trains in, so (2d) holds
    against the fixed jobs by construction, and a worker with fewer than p_j such slots in the job's
    window is no mode of it; each edge server's PS row (2f) has P_s minus the PSs fixed jobs hold in
    that slot as its right-hand side. Any solution, merged with the fixed jobs' placements, is then
    feasible for the whole instance. The fixing is done here rather than as residual capacities of
    `ModelData`, because the residual of an edge worker is a set of free slots (a worker is one
    machine, not a count): it is cheaper to leave those literals out than to carry a mask per worker
    through every model of ``data.py``. The objective is the JCT (2) of the modelled jobs only; with
    ``fixed`` the symmetry rows over identical workers are left out (the fixed jobs tell two such
    workers apart).

    ``counted``: count a job's chunks per worker instead of naming them (`_counted_job`), as the
    MILP does; D_j times fewer literals and no symmetry between a job's chunks. Exact too (same
    optimum as the named model: ``tests/bounds/test_lns_preemptive.py``); the LNS's windows use it. On a
    window of four 60-chunk testbed jobs the named model had 84k literals and found nothing better
    than its hint in 10 s; the counted one had 1.4k and proved the window optimal in 0.4 s.
    """
    h = CpModelHandle()
    h.counted = counted
    mdl = h.model
    modelled = list(range(data.n_jobs)) if jobs is None else sorted({int(j) for j in jobs})
    h.jobs = modelled
    busy = fixed.busy if fixed is not None else frozenset()
    per_worker_slot: dict[tuple[int, int], list[Any]] = {}
    per_job_slot: dict[tuple[int, int], list[Any]] = {}
    ends: dict[int, list[Any]] = {}
    for j in modelled:
        open_slots = {int(k): _free_slots(data, j, int(k), data.end(j), busy) for k in data.eligible[j]}
        encode = _counted_job if counted else _named_job
        ends[j] = encode(h, data, j, open_slots, per_worker_slot, per_job_slot)
    if not counted:
        for j, zeta in h.colocated.items():
            # (2g): zeta_j = 1 when every chunk (and hence every PS) is on the cloud
            mdl.AddBoolOr([zeta] + [h.mode[(j, d)][None].Not() for d in range(int(data.chunks[j]))])
    for lits in per_worker_slot.values():
        mdl.AddAtMostOne(lits)  # (2d)
    _add_ps(h, data, per_job_slot, fixed.ps if fixed is not None else {})
    total = []
    for j in modelled:
        c = mdl.NewIntVar(max(int(data.arrival[j]), h.earliest.get(j, 0)), data.end(j), f"completion_{j}")
        mdl.AddMaxEquality(c, ends[j])
        h.completion[j] = c
        total.append(c - int(data.arrival[j]))
    if strengthen:
        _break_symmetry(h, data, per_worker_slot, workers=fixed is None)
    mdl.Minimize(sum(total))
    return h


def _named_job(h: CpModelHandle, data: ModelData, j: int, open_slots: dict[int, list[int]],
               per_worker_slot: dict[tuple[int, int], list[Any]], per_job_slot: dict[tuple[int, int], list[Any]]) -> list[Any]:
    """Job j with every chunk named: a mode per chunk, slot literals per chunk and worker. Returns its chunk ends."""
    mdl, T = h.model, data.horizon
    E = data.end(j)  # job j's slots lie in [0, E)
    cloud_ok = data.cloud is not None and data.cloud_end(j, True) <= E
    if cloud_ok:
        h.colocated[j] = mdl.NewBoolVar(f"zeta_{j}")
    ends = []
    for d in range(int(data.chunks[j])):
        e = mdl.NewIntVar(0, E, f"end_of_chunk_{j}_{d}")
        ends.append(e)
        end_terms: list[Any] = []  # e = max of these: exact at every incumbent, not only at the optimum
        modes: dict[int | None, Any] = {}
        for k, slots in open_slots.items():
            if len(slots) < int(data.p_edge[j]):
                continue
            a = mdl.NewBoolVar(f"chunk_{j}_{d}_on_worker_{k}")
            modes[k] = a
            lits = {}
            for t in slots:
                b = mdl.NewBoolVar(f"train_{j}_{d}_{k}_{t}")
                mdl.AddImplication(b, a)
                end_terms.append((t + 1) * b)  # (2j)
                mdl.Add(e >= t + 1).OnlyEnforceIf(b)  # redundant with the max below; helps propagation
                per_worker_slot.setdefault((k, t), []).append(b)
                per_job_slot.setdefault((j, t), []).append(b)
                lits[t] = b
            h.train[(j, d, k)] = lits
            mdl.Add(sum(lits.values()) == int(data.p_edge[j]) * a)  # (2b): p_j slots on its worker
        if cloud_ok:
            a = mdl.NewBoolVar(f"chunk_{j}_{d}_on_cloud")
            modes[None] = a
            zeta = h.colocated[j]
            mdl.AddImplication(zeta, a)  # (2g)/(2h)
            end_terms.append(_cloud_end(mdl, data, j, zeta, a, f"cloud_end_of_chunk_{j}_{d}", T))
        if not modes:
            mdl.AddBoolOr([])  # no way to train this chunk within the horizon: infeasible
        mdl.AddExactlyOne(list(modes.values()))  # no migration: one worker per chunk
        mdl.AddMaxEquality(e, end_terms or [0])
        h.mode[(j, d)] = modes
        h.end[(j, d)] = e
    return ends


def _cloud_end(mdl: Any, data: ModelData, j: int, zeta: Any, on_cloud: Any, name: str, T: int) -> Any:
    """End of job j's cloud work: p_j^c after its first cloud slot if colocated (2g)/(2h), p_j if not, 0 if none."""
    ce = mdl.NewIntVar(0, T, name)
    mdl.Add(ce == data.cloud_end(j, True)).OnlyEnforceIf(zeta)
    mdl.Add(ce == data.cloud_end(j, False)).OnlyEnforceIf([on_cloud, zeta.Not()])
    mdl.Add(ce == 0).OnlyEnforceIf(on_cloud.Not())
    return ce


def _counted_job(h: CpModelHandle, data: ModelData, j: int, open_slots: dict[int, list[int]],
                 per_worker_slot: dict[tuple[int, int], list[Any]], per_job_slot: dict[tuple[int, int], list[Any]]) -> list[Any]:
    """Job j with its chunks counted: ``n[j,k]`` chunks on worker k, ``nc[j]`` on the cloud.

    ``y[j,k,t]``: worker k trains a chunk of j in slot t, with ``sum_t y[j,k,t] = p_j n[j,k]`` (2b);
    any such slot set splits into n[j,k] chunks of p_j slots taken in time order, one worker each (no
    migration) and one slot at a time on a worker (2d), so this is exact (the MILP's argument, ``milp.py``).
    ``sum_k n[j,k] + nc[j] = D_j``; zeta_j (2g)/(2h) iff nc[j] = D_j. Returns the terms whose max is c_j (2j).
    """
    mdl, T = h.model, data.horizon
    D, p, E = int(data.chunks[j]), int(data.p_edge[j]), data.end(j)
    end_terms: list[Any] = []
    counts = []
    for k, slots in open_slots.items():
        if len(slots) < p:
            continue
        n = mdl.NewIntVar(0, min(D, len(slots) // p), f"chunks_of_{j}_on_worker_{k}")
        lits = {}
        for t in slots:
            y = mdl.NewBoolVar(f"train_{j}_{k}_{t}")
            end_terms.append((t + 1) * y)  # (2j)
            per_worker_slot.setdefault((k, t), []).append(y)
            per_job_slot.setdefault((j, t), []).append(y)
            lits[t] = y
        mdl.Add(sum(lits.values()) == p * n).WithName(f"c2b_work_{j}_{k}")
        for m in range(1, min(D, len(slots) // p) + 1):
            # m chunks on k end no earlier than its (m p)-th free slot: a term of the max that never sets
            # it (so c_j stays exact) but lifts the LP's weak (t+1) y terms
            at_least = mdl.NewBoolVar(f"at_least_{m}_chunks_of_{j}_on_worker_{k}")
            mdl.Add(n >= m).OnlyEnforceIf(at_least)
            mdl.Add(n <= m - 1).OnlyEnforceIf(at_least.Not())
            end_terms.append((slots[m * p - 1] + 1) * at_least)
        h.earliest[j] = min(h.earliest.get(j, E), slots[p - 1] + 1)
        h.count[(j, k)] = n
        h.train[(j, -1, k)] = lits
        counts.append(n)
    if data.cloud is not None and data.cloud_end(j, True) <= E:
        nc = mdl.NewIntVar(0, D, f"chunks_of_{j}_on_cloud")
        u = mdl.NewBoolVar(f"job_{j}_on_cloud")
        zeta = mdl.NewBoolVar(f"zeta_{j}")
        mdl.Add(nc >= 1).OnlyEnforceIf(u)
        mdl.Add(nc == 0).OnlyEnforceIf(u.Not())
        mdl.Add(nc == D).WithName(f"c2g_colocated_{j}").OnlyEnforceIf(zeta)  # (2g)/(2h)
        mdl.Add(nc <= D - 1).WithName(f"c2g_not_colocated_{j}").OnlyEnforceIf(zeta.Not())
        end_terms.append(_cloud_end(mdl, data, j, zeta, u, f"cloud_end_of_{j}", T))
        h.earliest[j] = min(h.earliest.get(j, E), int(data.cloud_end(j, True)))
        h.colocated[j] = zeta
        h.cloud_count[j] = nc
        counts.append(nc)
    if counts:
        mdl.Add(sum(counts) == D).WithName(f"c2b_dispatch_{j}")  # every chunk dispatched once, to one worker
    else:
        mdl.AddBoolOr([])  # no way to train this job within its window: infeasible
    return end_terms or [0]


def _free_slots(data: ModelData, j: int, k: int, end: int, busy: frozenset[tuple[int, int]]) -> list[int]:
    """Slots in which a chunk of job j may train on edge worker k: from its release (2i) to ``end``, less ``busy``.

    Empty when even an idle worker could not fit p_j slots there (checked first, so the full model
    skips such a worker exactly as it always did, without scanning its slots).
    """
    lo = data.first_slot(j, k)
    if lo + int(data.p_edge[j]) > end:
        return []
    if not busy:
        return list(range(lo, end))
    return [t for t in range(lo, end) if (k, t) not in busy]


def _add_ps(h: CpModelHandle, data: ModelData, per_job_slot: dict[tuple[int, int], list[Any]],
            taken: dict[tuple[int, int], int]) -> None:
    """PS (2e)/(2f): before r_j + Delta_jc a training job holds exactly one edge PS.

    ``taken[(s, t)]``: edge PSs of server s that fixed jobs hold in slot t; a server with none left
    gets no literal in that slot.
    """
    mdl = h.model
    per_server_slot: dict[tuple[int, int], list[Any]] = {}
    for (j, t), lits in per_job_slot.items():
        if data.cloud is not None and t >= data.cloud_start(j):
            continue
        run = mdl.NewBoolVar(f"job_{j}_trains_in_{t}")
        mdl.AddMaxEquality(run, lits)
        holders = []
        for s in data.edge_ps_servers:
            if t >= data.ps_window(j, s) and taken.get((s, t), 0) < int(data.ps_count[s]):
                p = mdl.NewBoolVar(f"ps_of_job_{j}_on_{s}_at_{t}")
                h.ps[(j, s, t)] = p
                holders.append(p)
                per_server_slot.setdefault((s, t), []).append(p)
        mdl.Add(sum(holders) == run)  # (2e)
    for (s, t), lits in per_server_slot.items():
        mdl.Add(sum(lits) <= int(data.ps_count[s]) - taken.get((s, t), 0))  # (2f)


def _break_symmetry(h: CpModelHandle, data: ModelData, per_worker_slot: dict[tuple[int, int], list[Any]], *,
                    workers: bool = True) -> None:
    """Valid inequalities that keep one optimal schedule of every orbit of two symmetries.

    * Identical workers (same server and type: same release (2i), PSs and storage): swapping two
      workers' whole slot schedules keeps every row and the objective, so they are sorted by busy slots.
    * Chunks of one job (same p_j, eligibility, cloud option and PS): relabelling them keeps every
      row, so chunk d's key (its worker's rank, the cloud last; then its end) is at most chunk d+1's.
      Relabelling chunks does not change any worker's busy slots, so both orders hold together.

    ``workers=False``: only the chunk order (a sub-model whose fixed jobs tell workers apart).
    """
    mdl, T = h.model, data.horizon
    busy: dict[int, list[Any]] = {}
    for (k, _t), lits in per_worker_slot.items():
        busy.setdefault(k, []).extend(lits)
    for k, k2 in consecutive_pairs(data.identical_workers()) if workers else ():
        mdl.Add(sum(busy.get(k, [])) >= sum(busy.get(k2, []))).WithName(f"valid_symmetry_workers_{k}_{k2}")
    cloud_rank = data.n_workers  # edge workers rank by index
    for j in h.jobs:
        keys = []
        for d in range(int(data.chunks[j])):
            modes = h.mode.get((j, d))
            if not modes:
                break
            where = sum((cloud_rank if k is None else int(k)) * a for k, a in modes.items())
            keys.append(where * (T + 1) + h.end[(j, d)])
        for d in range(len(keys) - 1):
            mdl.Add(keys[d] <= keys[d + 1]).WithName(f"valid_symmetry_chunks_{j}_{d}")


def extract_cpsat(h: CpModelHandle, solver: Any, data: ModelData) -> Plan:
    """The plan of a solution: chunks, then each job's edge PS in each slot before the cloud's (``h.ps``)."""
    plans = _counted_chunks(h, solver, data) if h.counted else _named_chunks(h, solver, data)
    edge_ps = {(j, t): s for (j, s, t), p in h.ps.items() if solver.BooleanValue(p)}
    return assign_ps(data, plans, edge_ps)


def _named_chunks(h: CpModelHandle, solver: Any, data: ModelData) -> list[ChunkPlan]:
    plans: list[ChunkPlan] = []
    for (j, d), modes in h.mode.items():
        chosen = [k for k, a in modes.items() if solver.BooleanValue(a)]
        if len(chosen) != 1:
            raise RuntimeError(f"chunk ({j},{d}) has modes {chosen}")
        k = chosen[0]
        if k is None:
            colocated = solver.BooleanValue(h.colocated[j])
            plans.append(ChunkPlan(j, d, None, list(range(data.cloud_start(j), data.cloud_end(j, colocated)))))
        else:
            slots = [t for t, b in h.train[(j, d, k)].items() if solver.BooleanValue(b)]
            plans.append(ChunkPlan(j, d, k, sorted(slots)))
    return plans


def _counted_chunks(h: CpModelHandle, solver: Any, data: ModelData) -> list[ChunkPlan]:
    """Chunks of a counted model: each worker's slots of a job cut into chunks of p_j slots in time order."""
    plans: list[ChunkPlan] = []
    for j in h.jobs:
        d, p = 0, int(data.p_edge[j])
        for (jj, k), n in h.count.items():
            if jj != j:
                continue
            slots = sorted(t for t, y in h.train[(j, -1, k)].items() if solver.BooleanValue(y))
            if len(slots) != p * solver.Value(n):
                raise RuntimeError(f"job {j} trains {len(slots)} slots on worker {k}, not {p} x {solver.Value(n)}")
            for i in range(0, len(slots), p):
                plans.append(ChunkPlan(j, d, k, slots[i:i + p]))
                d += 1
        if j in h.cloud_count:
            colocated = solver.BooleanValue(h.colocated[j])
            for _ in range(solver.Value(h.cloud_count[j])):
                plans.append(ChunkPlan(j, d, None, list(range(data.cloud_start(j), data.cloud_end(j, colocated)))))
                d += 1
        if d != int(data.chunks[j]):
            raise RuntimeError(f"job {j} has {d} chunks placed, not {int(data.chunks[j])}")
    return plans


@deadline_bounded("preemptive", "cpsat")
def solve_cpsat(instance: Any, *, time_limit: float = 60.0, workers: int = 2, upper_bound: float | None = None,
                strengthen: bool = True, deadline: Deadline | None = None, hint: Any = None, fix: bool = True,
                fix_min_jobs: int = WINDOW_MIN_JOBS, **_: Any) -> Result:
    """Solve MINLP (2) exactly with CP-SAT; the schedule is checked by the family's validator.

    ``strengthen`` (default): add the valid inequalities (symmetry breaking over identical workers and
    over a job's chunks, objective >= the certified bound of `formulations.strengthen`); False builds
    the model without them.

    ``upper_bound``: the objective of any feasible schedule; shrinks each job's time window
    without changing the optimum (`data.with_upper_bound`).

    ``hint``: a schedule (e.g. a registered algorithm's, `edgeopt solve --warm-start`) given to CP-SAT
    as solution hints (`start.hint_cpsat`, completed by `formulations.common.complete_hints`); the
    worker-symmetry rows are then left out (a warm start need not be the representative they keep).
    What the search proves is unchanged.

    ``fix`` (default; instances of ``fix_min_jobs`` jobs or more): per-job windows from the list schedulers'
    incumbent and the certified LP's duals, as the ``milp``'s (`windows.job_windows`); the incumbent is returned
    when the search ends with nothing better, and ``extra["windows"]`` records what was cut.
    """
    from edgeopt.preemptive import FAMILY
    from edgeopt.preemptive.schedule import Schedule

    t0 = time.perf_counter()
    deadline = deadline or Deadline(time_limit)
    floor = certified_floor(instance, deadline) if strengthen else None
    with deadline.guard():
        full = from_instance(instance)
        # below fix_min_jobs the windows are cut only where the unfixed model is above the size budget
        windows = fix and (full.n_jobs >= fix_min_jobs or size_guard_deferred())
        data, cut = windowed(instance, full, fix=windows, upper_bound=upper_bound,
                             hint=hint, deadline=deadline)
        windows_s = time.perf_counter() - t0
        if cut is not None and cut.proof() is not None:  # the certified bound meets the incumbent: no model
            return finish(FAMILY, instance, "cpsat", proven_outcome(cut), cut.incumbent.schedule,
                          extra={"model": "MINLP (2), CP-SAT modes + slot literals (not built)",
                                 "upper_bound": upper_bound, "strengthen": strengthen, "objective_floor": floor,
                                 "fix": fix, **proof_record(cut, full, windows_s)},
                          build_s=time.perf_counter() - t0)
        # a size guard deferred to the windowed model (`edgeopt.core.limits.guard_built`; a no-op otherwise)
        guard_built(cpsat_size_of(data) if cut is not None else None)
        h = build_cpsat(data, strengthen=strengthen and hint is None)
        if floor is not None:  # the model's objective is (2) itself
            add_cpsat_floor(h.model, floor_in_model_units(floor))
    hinted = None
    if hint is not None:
        from formulations.common import complete_hints
        from formulations.preemptive.start import hint_cpsat

        sched = hint if isinstance(hint, Schedule) else Schedule.model_validate(hint)
        hinted = hint_cpsat(h, data, sched)
        complete_hints(h.model, time_limit=min(5.0, max(0.1, deadline.remaining() / 4)))
    build_s = time.perf_counter() - t0
    outcome, solver = _solve_cpsat(h.model, time_limit=time_limit, workers=workers, deadline=deadline)
    schedule = to_schedule(instance, data, extract_cpsat(h, solver, data)) if outcome.has_solution else None
    fixed: dict[str, Any] = {}
    if cut is not None:
        outcome, schedule, returned = keep_incumbent(outcome, schedule, cut)
        outcome, proof = close_by_certificate(outcome, cut)
        fixed = {"windows": {**cut.record(full), "returned_incumbent": returned},
                 "timings": {"windows_s": round(windows_s, 6)}, **proof}  # of build_s: the incumbent and the LP
    return finish(
        FAMILY, instance, "cpsat", outcome, schedule,
        extra={"model": "MINLP (2), CP-SAT modes + slot literals", "upper_bound": upper_bound,
               "strengthen": strengthen, "objective_floor": floor, "fix": fix,
               **({"hinted_jobs": hinted} if hinted is not None else {}), **fixed}, build_s=build_s,
    )
