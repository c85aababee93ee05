"""MINLP (2) of Wang et al. as a time-indexed MILP in Pyomo, solved by HiGHS.

The non-linearities of (2) are removed exactly (reading in ``data.py``):

* the rate n_j of eq. (1) depends on zeta_j only, so a chunk trains for
  ``p_j`` slots anywhere with zeta_j = 0 and ``p_j^c`` on the cloud with
  zeta_j = 1; zeta_j is a binary that may be 1 only if every chunk is on the
  cloud ((2g)/(2h); the PS then sits on the cloud, which has unlimited PSs);
* the completion time c_j of (2j) is an integer ``C_j >= (t+1) * (j trains in
  t)``, exact at the optimum because (2) minimises sum C_j - r_j (a
  time-limited incumbent may carry a larger C_j: `solve_milp` then reports its
  schedule's own, smaller objective and keeps the solver's in ``extra``); a
  valid inequality ``D_j C_j >= sum of chunk ends`` tightens the LP;
* PS (2e)/(2f) are per-server counts (the PSs of a server are identical), and
  only needed before the cloud's PSs become available at r_j + Delta_jc.

Chunks of one job are identical (same p_j, release, eligibility), so this
model counts them instead of naming them (which removes the symmetry between
them; the CP-SAT model names every chunk, so the two encodings differ):
n[j,k] integer, chunks of job j dispatched to edge worker k (no migration: a
chunk stays on its worker); nc[j] chunks on the cloud; Y[j,k,t] binary, worker
k trains a chunk of j in slot t, with sum_t Y[j,k,t] = p_j n[j,k] (any such
slot set splits into n[j,k] chunks of p_j slots, taken in time order); u[j]
some chunk on the cloud; zeta[j]; z[j,s,t] job j's PS on edge server s in
slot t. Y exists only for t >= r_j + Delta_js ((2i) by construction) and for
eligible k ((2a)).
"""

from __future__ import annotations

import time
from typing import Any

from edgeopt.core import Deadline, Result, Status
from edgeopt.core.limits import guard_built, size_guard_deferred
from formulations.common import deadline_bounded, finish, solve_pyomo
from formulations.preemptive.data import ModelData, from_instance
from formulations.preemptive.plan import ChunkPlan, Plan, assign_ps, to_schedule
from formulations.preemptive.sizes import milp_size_of
from formulations.preemptive.start import start_milp
from formulations.preemptive.windows import (
    WINDOW_MIN_JOBS,
    close_by_certificate,
    keep_incumbent,
    proof_record,
    proven_outcome,
    windowed,
)
from formulations.strengthen import consecutive_pairs


def build_milp(data: ModelData, *, strengthen: bool = False) -> Any:
    """The Pyomo model of MINLP (2) (never solves).

    ``strengthen``: add the symmetry-breaking rows over identical workers (``valid_symmetry_workers``).
    """
    import pyomo.core as pyo

    T = data.horizon
    J = data.n_jobs
    m = pyo.ConcreteModel(name="preemptive_minlp2")
    E = [data.end(j) for j in range(J)]  # job j's slots lie in [0, E_j)
    jk = [(j, int(k)) for j in range(J) for k in data.eligible[j] if data.first_slot(j, k) + data.p_edge[j] <= E[j]]
    y_idx = [(j, k, t) for (j, k) in jk for t in range(data.first_slot(j, k), E[j])]
    can_cloud = [j for j in range(J) if data.cloud is not None and data.cloud_end(j, True) <= E[j]]
    # PS on an edge server is needed only in slots before the cloud's PSs are reachable.
    ps_until = {j: min(E[j], data.cloud_start(j) if data.cloud is not None else T) for j in range(J)}
    z_idx = [(j, s, t) for j in range(J) for s in data.edge_ps_servers for t in range(data.ps_window(j, s), min(T, ps_until[j]))]

    m.n = pyo.Var(jk, domain=pyo.NonNegativeIntegers, bounds=lambda _m, j, k: (0, int(data.chunks[j])))
    m.nc = pyo.Var(can_cloud, domain=pyo.NonNegativeIntegers, bounds=lambda _m, j: (0, int(data.chunks[j])))
    m.u = pyo.Var(can_cloud, domain=pyo.Binary)
    m.zeta = pyo.Var(can_cloud, domain=pyo.Binary)
    m.Y = pyo.Var(y_idx, domain=pyo.Binary)
    m.z = pyo.Var(z_idx, domain=pyo.Binary)
    # c_j is a slot boundary: integer (lets the solver round bounds of the integral objective)
    m.C = pyo.Var(range(J), domain=pyo.Integers, bounds=lambda _m, j: (int(data.arrival[j]), E[j]))

    n_of: dict[int, list[int]] = {j: [] for j in range(J)}
    for j, k in jk:
        n_of[j].append(k)
    Y_of: dict[tuple[int, int], list[int]] = {}
    Y_worker_t: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    Y_job_t: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for key in y_idx:
        j, k, t = key
        Y_of.setdefault((j, k), []).append(t)
        Y_worker_t.setdefault((k, t), []).append(key)
        Y_job_t.setdefault((j, t), []).append(key)
    z_job_t: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    z_server_t: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for key in z_idx:
        j, s, t = key
        z_job_t.setdefault((j, t), []).append(key)
        z_server_t.setdefault((s, t), []).append(key)

    def dispatch(_m, j):
        terms = [m.n[j, k] for k in n_of[j]] + ([m.nc[j]] if j in m.nc else [])
        if not terms:
            return pyo.Constraint.Infeasible
        return sum(terms) == int(data.chunks[j])

    m.c2b_dispatch = pyo.Constraint(
        range(J), rule=dispatch, doc="(2b) + no migration: each of the D_j chunks is trained by exactly one worker"
    )
    m.c2b_work = pyo.Constraint(
        jk,
        rule=lambda _m, j, k: sum(m.Y[j, k, t] for t in Y_of[(j, k)]) == int(data.p_edge[j]) * m.n[j, k],
        doc="(2b) sum_t y n_j >= E_j B_j per chunk: p_j slots per chunk on its worker",
    )
    m.c2d_worker = pyo.Constraint(
        list(Y_worker_t),
        rule=lambda _m, k, t: sum(m.Y[key] for key in Y_worker_t[(k, t)]) <= 1,
        doc="(2d) sum_j y_jsw(t) <= 1: a worker trains one chunk per slot",
    )
    m.c2j_completion = pyo.Constraint(
        y_idx, rule=lambda _m, j, k, t: m.C[j] >= (t + 1) * m.Y[j, k, t],
        doc="(2j) c_j = last slot with y_jsw(t) > 0 (plus one: 0-based slots)",
    )
    m.c2j_cloud_completion = pyo.Constraint(
        can_cloud,
        rule=lambda _m, j: m.C[j]
        >= data.cloud_end(j, False) * m.u[j] - (data.cloud_end(j, False) - data.cloud_end(j, True)) * m.zeta[j],
        doc="(2j) a cloud chunk ends at r_j + Delta_jc + (p_j^c if zeta_j else p_j)",
    )
    m.c2g_cloud_used = pyo.Constraint(
        can_cloud, rule=lambda _m, j: m.nc[j] <= int(data.chunks[j]) * m.u[j], doc="(2g)/(2h) linking: u_j = 1 when some chunk of j is on the cloud"
    )
    m.c2g_colocated = pyo.Constraint(
        can_cloud, rule=lambda _m, j: m.nc[j] >= int(data.chunks[j]) * m.zeta[j],
        doc="(2g)/(2h) zeta_j = 1 only if every chunk is on the cloud",
    )

    m.c2g_colocated_forced = pyo.Constraint(
        can_cloud, rule=lambda _m, j: m.zeta[j] >= m.nc[j] - (int(data.chunks[j]) - 1),
        doc="(2g) zeta_j = 1 when every chunk (and hence every PS) is on the cloud",
    )

    def mean_completion(_m, j):
        # Valid inequality implied by (2j) (tightens the LP): a chunk's end is at least the mean end of its
        # p_j slots plus (p_j - 1)/2; c_j is at least the average of its chunks' ends.
        p = int(data.p_edge[j])
        edge = sum((t + 1) * m.Y[j, k, t] for k in n_of[j] for t in Y_of[(j, k)]) / p
        edge += (p - 1) / 2 * sum(m.n[j, k] for k in n_of[j])
        cloud = data.cloud_end(j, True) * m.nc[j] if j in m.nc else 0
        return int(data.chunks[j]) * m.C[j] >= edge + cloud

    m.c2j_mean_completion = pyo.Constraint(range(J), rule=mean_completion, doc="(2j) implied: D_j c_j >= sum of chunk ends")

    def ps_needed(_m, j, k, t):
        if t >= ps_until[j]:
            return pyo.Constraint.Skip
        zs = z_job_t.get((j, t), [])
        return (sum(m.z[key] for key in zs) >= m.Y[j, k, t]) if zs else (m.Y[j, k, t] <= 0)

    m.c2e_ps = pyo.Constraint(y_idx, rule=ps_needed, doc="(2e) sum_sp o z_jsp(t) = 1 whenever job j trains in slot t")
    m.c2e_one_ps = pyo.Constraint(
        list(z_job_t), rule=lambda _m, j, t: sum(m.z[key] for key in z_job_t[(j, t)]) <= 1,
        doc="(2e) at most one PS per job and slot",
    )
    m.c2f_ps_capacity = pyo.Constraint(
        list(z_server_t),
        rule=lambda _m, s, t: sum(m.z[key] for key in z_server_t[(s, t)]) <= int(data.ps_count[s]),
        doc="(2f) sum_j z_jsp(t) <= 1 per PS: at most P_s jobs use server s's PSs in slot t",
    )
    if strengthen:
        # Symmetry breaking: two workers of one type on one server are interchangeable (same release (2i),
        # same PSs and storage); swapping their whole slot schedules keeps every row and the objective, so
        # sorting them by busy slots keeps one optimal schedule of every orbit.
        busy: dict[int, list] = {}
        for key in y_idx:
            busy.setdefault(key[1], []).append(m.Y[key])
        m.valid_symmetry_workers = pyo.Constraint(
            [(k, k2) for k, k2 in consecutive_pairs(data.identical_workers()) if k in busy or k2 in busy],
            rule=lambda _m, k, k2: sum(busy.get(k, [])) >= sum(busy.get(k2, [])),
            doc="valid inequality (symmetry breaking): identical workers sorted by busy slots",
        )
    m.obj = pyo.Objective(expr=sum(m.C[j] - float(data.arrival[j]) for j in range(J)), sense=pyo.minimize)
    return m


def extract_milp(model: Any, data: ModelData) -> Plan:
    """The plan of a solved model: worker k's slots of job j, in time order, cut into chunks of p_j slots."""
    plans: list[ChunkPlan] = []
    slots: dict[tuple[int, int], list[int]] = {}
    for (j, k, t), var in model.Y.items():
        if var.value is not None and var.value > 0.5:
            slots.setdefault((j, k), []).append(t)
    for j in range(data.n_jobs):
        d = 0
        p = int(data.p_edge[j])
        for k in sorted({k for (jj, k) in slots if jj == j}):
            ts = sorted(slots[(j, k)])
            if len(ts) % p:
                raise RuntimeError(f"job {j} has {len(ts)} slots on worker {k}, not a multiple of p={p}")
            for i in range(0, len(ts), p):
                plans.append(ChunkPlan(j, d, k, ts[i : i + p]))
                d += 1
        if d < int(data.chunks[j]):
            colocated = j in model.zeta and model.zeta[j].value > 0.5
            for dd in range(d, int(data.chunks[j])):
                plans.append(ChunkPlan(j, dd, None, list(range(data.cloud_start(j), data.cloud_end(j, colocated)))))
    edge_ps = {(j, t): s for (j, s, t), var in model.z.items() if var.value is not None and var.value > 0.5}
    return assign_ps(data, plans, edge_ps)


def lns_improver(instance: Any) -> Any:
    """The windows' incumbent improved by the large-neighbourhood search (`formulations.preemptive.lns`, CP-SAT
    windows; left out under a deterministic work limit: `formulations.fixing.improve_incumbent`), as
    `windows.job_windows` takes it."""
    from edgeopt.preemptive import FAMILY
    from formulations.fixing import improve_incumbent
    from formulations.preemptive.lns import neighbourhood

    def improve(incumbent: Any, seconds: float, timings: dict[str, float]) -> Any:
        return improve_incumbent(FAMILY, instance, incumbent, None, neighbourhood(), seconds, timings)

    return improve


@deadline_bounded("preemptive", "milp")
def solve_milp(instance: Any, *, time_limit: float = 60.0, threads: int = 1, rel_gap: float = 1e-6,
               upper_bound: float | None = None, strengthen: bool = True, deadline: Deadline | None = None,
               hint: Any = None, fix: bool = True, fix_min_jobs: int = WINDOW_MIN_JOBS, **_: Any) -> Result:
    """Solve MINLP (2) exactly with HiGHS; the schedule is checked by the family's validator.

    ``strengthen`` (default): add the symmetry-breaking rows over identical workers; False builds the
    model without them. (The objective floor of `formulations.strengthen` is not added here: it slowed
    HiGHS down.) With a ``hint`` the symmetry rows are left out: a MIP start need not be the
    representative they keep, and HiGHS drops a start that violates a row.
    ``hint``: a schedule (a `Schedule` or its JSON) handed to HiGHS as a MIP start (``start.py``).

    ``upper_bound``: the objective of any feasible schedule (e.g. an algorithm's); it shrinks each
    job's time window without changing the optimum (`data.with_upper_bound`).

    ``fix`` (default; instances of ``fix_min_jobs`` jobs or more, `windows.WINDOW_MIN_JOBS`): reduced-cost
    fixing per job. The best of the hint and the list schedulers (`windows.INCUMBENT_ALGORITHMS`), improved by the
    large-neighbourhood search for at most a fifth of the time and 12 s (`lns_improver`), is the upper
    bound, and the certified LP's duals bound the other jobs' JCT below (`windows.job_windows`), so each job's
    slots stop well before the horizon and no schedule as good as the incumbent is lost. The incumbent is
    returned when the search ends with nothing better. ``extra["windows"]`` records what was cut.
    """
    from edgeopt.preemptive import FAMILY

    t0 = time.perf_counter()
    deadline = deadline or Deadline(time_limit)
    with deadline.guard():
        full = from_instance(instance)
        # below fix_min_jobs the windows are cut only where the unfixed model is above the size budget
        windows = fix and (full.n_jobs >= fix_min_jobs or size_guard_deferred())
        data, cut = windowed(instance, full, fix=windows, upper_bound=upper_bound,
                             hint=hint, deadline=deadline, improve=lns_improver(instance))
        windows_s = time.perf_counter() - t0
        if cut is not None and cut.proof() is not None:  # the certified bound meets the incumbent: no model
            return finish(FAMILY, instance, "milp", proven_outcome(cut), cut.incumbent.schedule,
                          extra={"model": "MINLP (2), time-indexed MILP (not built)", "upper_bound": upper_bound,
                                 "strengthen": strengthen, "fix": fix, **proof_record(cut, full, windows_s)},
                          build_s=time.perf_counter() - t0)
        # a size guard deferred to the windowed model (`edgeopt.core.limits.guard_built`; a no-op otherwise)
        guard_built(milp_size_of(data) if cut is not None else None)
        model = build_milp(data, strengthen=strengthen and hint is None)
        start = start_milp(model, data, instance, FAMILY.parse_schedule(hint)) if hint is not None else None
    build_s = time.perf_counter() - t0
    outcome = solve_pyomo(model, time_limit=time_limit, rel_gap=rel_gap, threads=threads, deadline=deadline,
                          start=start)
    if hint is not None:
        extra_start = {"mip_start_values": outcome.start_values}
    else:
        extra_start = {}
    schedule = to_schedule(instance, data, extract_milp(model, data)) if outcome.has_solution else None
    extra_note: dict[str, Any] = {}
    if schedule is not None and outcome.status != Status.OPTIMAL:
        # C_j >= (t+1) Y is tight only at an optimum: a time-limited incumbent may carry C_j above its
        # schedule's completion. Its schedule (validated by finish) is then better than the incumbent's
        # value; report the schedule's objective and keep the solver's figure for the record.
        extra_note["solver_incumbent"] = outcome.objective
        outcome.objective = FAMILY.objective(instance, schedule)
    if cut is not None:
        outcome, schedule, returned = keep_incumbent(outcome, schedule, cut)
        outcome, proof = close_by_certificate(outcome, cut)
        extra_note.update(proof)
        extra_note["windows"] = {**cut.record(full), "returned_incumbent": returned}
        extra_note["timings"] = {"windows_s": round(windows_s, 6)}  # of build_s: the incumbent and the LP
    return finish(
        FAMILY, instance, "milp", outcome, schedule,
        extra={"model": "MINLP (2), time-indexed MILP", "variables": model.nvariables(),
               "constraints": model.nconstraints(), "upper_bound": upper_bound, "strengthen": strengthen,
               "fix": fix, **extra_note, **extra_start},
        build_s=build_s,
    )
