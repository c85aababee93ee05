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
"""

from __future__ import annotations

import time
from typing import Any

from edgeopt.core import Deadline, Result
from formulations.common import deadline_bounded, finish
from formulations.common import solve_cpsat as _solve_cpsat
from formulations.preemptive.data import ModelData, from_instance, with_upper_bound
from formulations.preemptive.plan import ChunkPlan, Plan, assign_ps, to_schedule
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


def build_cpsat(data: ModelData, *, strengthen: bool = False) -> CpModelHandle:
    """The CP-SAT model of MINLP (2) (never solves).

    ``strengthen``: add the symmetry-breaking rows over identical workers and over the chunks of a job
    (`_break_symmetry`).
    """
    h = CpModelHandle()
    mdl = h.model
    T = data.horizon
    per_worker_slot: dict[tuple[int, int], list[Any]] = {}
    per_job_slot: dict[tuple[int, int], list[Any]] = {}
    ends: dict[int, list[Any]] = {j: [] for j in range(data.n_jobs)}
    for j in range(data.n_jobs):
        E = data.end(j)  # job j's slots lie in [0, E)
        cloud_ok = data.cloud is not None and data.cloud_end(j, True) <= E
        if cloud_ok:
            h.colocated[j] = mdl.NewBoolVar(f"zeta_{j}")
        for d in range(int(data.chunks[j])):
            e = mdl.NewIntVar(0, E, f"end_of_chunk_{j}_{d}")
            ends[j].append(e)
            end_terms: list[Any] = []  # e = max of these: exact at every incumbent, not only at the optimum
            modes: dict[int | None, Any] = {}
            for k in data.eligible[j]:
                k = int(k)
                lo = data.first_slot(j, k)
                if lo + int(data.p_edge[j]) > E:
                    continue
                a = mdl.NewBoolVar(f"chunk_{j}_{d}_on_worker_{k}")
                modes[k] = a
                lits = {}
                for t in range(lo, E):
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
                ce = mdl.NewIntVar(0, T, f"cloud_end_of_chunk_{j}_{d}")
                mdl.Add(ce == data.cloud_end(j, True)).OnlyEnforceIf(zeta)
                mdl.Add(ce == data.cloud_end(j, False)).OnlyEnforceIf([a, zeta.Not()])
                mdl.Add(ce == 0).OnlyEnforceIf(a.Not())
                end_terms.append(ce)
            if not modes:
                mdl.AddBoolOr([])  # no way to train this chunk within the horizon: infeasible
            mdl.AddExactlyOne(list(modes.values()))  # no migration: one worker per chunk
            mdl.AddMaxEquality(e, end_terms or [0])
            h.mode[(j, d)] = modes
            h.end[(j, d)] = e
    for j, zeta in h.colocated.items():
        # (2g): zeta_j = 1 when every chunk (and hence every PS) is on the cloud
        mdl.AddBoolOr([zeta] + [h.mode[(j, d)][None].Not() for d in range(int(data.chunks[j]))])
    for lits in per_worker_slot.values():
        mdl.AddAtMostOne(lits)  # (2d)
    # PS (2e)/(2f): before r_j + Delta_jc a training job holds exactly one edge PS.
    per_server_slot: dict[tuple[int, int], list[Any]] = {}
    for (j, t), lits in per_job_slot.items():
        if data.cloud is not None and t >= data.cloud_start(j):
            continue
        run = mdl.NewBoolVar(f"job_{j}_trains_in_{t}")
        mdl.AddMaxEquality(run, lits)
        holders = []
        for s in data.edge_ps_servers:
            if t >= data.ps_window(j, s):
                p = mdl.NewBoolVar(f"ps_of_job_{j}_on_{s}_at_{t}")
                h.ps[(j, s, t)] = p
                holders.append(p)
                per_server_slot.setdefault((s, t), []).append(p)
        mdl.Add(sum(holders) == run)
    for (s, _t), lits in per_server_slot.items():
        mdl.Add(sum(lits) <= int(data.ps_count[s]))
    total = []
    for j in range(data.n_jobs):
        c = mdl.NewIntVar(int(data.arrival[j]), data.end(j), f"completion_{j}")
        mdl.AddMaxEquality(c, ends[j])
        total.append(c - int(data.arrival[j]))
    if strengthen:
        _break_symmetry(h, data, per_worker_slot)
    mdl.Minimize(sum(total))
    return h


def _break_symmetry(h: CpModelHandle, data: ModelData, per_worker_slot: dict[tuple[int, int], list[Any]]) -> None:
    """Valid inequalities that keep one optimal schedule of every orbit of two symmetries.

    * Identical workers (same server and type: same release (2i), PSs and storage): swapping two
      workers' whole slot schedules keeps every row and the objective, so they are sorted by busy slots.
    * Chunks of one job (same p_j, eligibility, cloud option and PS): relabelling them keeps every
      row, so chunk d's key (its worker's rank, the cloud last; then its end) is at most chunk d+1's.
      Relabelling chunks does not change any worker's busy slots, so both orders hold together.
    """
    mdl, T = h.model, data.horizon
    busy: dict[int, list[Any]] = {}
    for (k, _t), lits in per_worker_slot.items():
        busy.setdefault(k, []).extend(lits)
    for k, k2 in consecutive_pairs(data.identical_workers()):
        mdl.Add(sum(busy.get(k, [])) >= sum(busy.get(k2, []))).WithName(f"valid_symmetry_workers_{k}_{k2}")
    cloud_rank = data.n_workers  # edge workers rank by index
    for j in range(data.n_jobs):
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
    edge_ps = {(j, t): s for (j, s, t), p in h.ps.items() if solver.BooleanValue(p)}
    return assign_ps(data, plans, edge_ps)


@deadline_bounded("preemptive", "cpsat")
def solve_cpsat(instance: Any, *, time_limit: float = 60.0, workers: int = 2, upper_bound: float | None = None,
                strengthen: bool = True, deadline: Deadline | None = None, **_: Any) -> Result:
    """Solve MINLP (2) exactly with CP-SAT; the schedule is checked by the family's validator.

    ``strengthen`` (default): add the valid inequalities (symmetry breaking over identical workers and
    over a job's chunks, objective >= the certified bound of `formulations.strengthen`); False builds
    the model without them.

    ``upper_bound``: the objective of any feasible schedule; shrinks each job's time window
    without changing the optimum (`data.with_upper_bound`).
    """
    from edgeopt.preemptive import FAMILY

    t0 = time.perf_counter()
    deadline = deadline or Deadline(time_limit)
    floor = certified_floor(instance, deadline) if strengthen else None
    with deadline.guard():
        data = from_instance(instance)
        if upper_bound is not None:
            data = with_upper_bound(data, upper_bound)
        h = build_cpsat(data, strengthen=strengthen)
        if floor is not None:  # the model's objective is (2) itself
            add_cpsat_floor(h.model, floor_in_model_units(floor))
    build_s = time.perf_counter() - t0
    outcome, solver = _solve_cpsat(h.model, time_limit=time_limit, workers=workers, deadline=deadline)
    schedule = to_schedule(instance, data, extract_cpsat(h, solver, data)) if outcome.has_solution else None
    return finish(
        FAMILY, instance, "cpsat", outcome, schedule,
        extra={"model": "MINLP (2), CP-SAT modes + slot literals", "upper_bound": upper_bound,
               "strengthen": strengthen, "objective_floor": floor}, build_s=build_s,
    )
