"""ILP (4) of Wang et al. (average fractional flow time), its LP relaxation, and the dual LP (6).

These are lower bounds on MINLP (2) (Lemma 1), not schedules: ILP (4) lets a
chunk move between workers from slot to slot (only (4e) "one worker per
chunk and slot" holds), so its solutions are not schedules of (2).

* `build_ilp4(data, relax=False)`: ILP (4) literally, with (3) in slot units
  (``data.py``): y[j,d,k,t] on edge workers, yc[j,d,t] on the cloud at the
  rate of zeta_j = 0, and zeta_j (every chunk of j on the cloud at the
  colocated rate, from r_j + Delta_jc: the cloud has no capacity, so its
  chunks start at once). PS constraints (4c)/(4d) as in ``milp.py``.
  ``relax=True`` is its LP relaxation; ``ps=False`` drops (4c)/(4d).
* `build_p6(data)`: the LP whose dual is (6): relaxed (4) without (4c),
  (4d), (4e), (4f), (4g) (the paper's Sec. IV-C), with fixed rates: p_j on
  edge workers and the colocated p_j^c on the cloud (the faster of the two
  rates zeta may give, so P6 <= LP(4): a valid lower bound). The cloud has
  unlimited workers, hence no capacity row and no beta for it.
* `build_dual6(data)`: the dual (6) as an explicit LP: max sum alpha - sum
  beta s.t. (6a) alpha_jd / p <= (t + 1 - r_j) / (D_j p) + beta_k(t) for every
  eligible edge worker k and slot t >= r_j + Delta_js, and alpha_jd <= (t + 1
  - r_j) / D_j on the cloud (no beta there), alpha, beta >= 0 (6b).

Interpretation: (6a) is stated in the paper for all t >= r_j, but (4h)
defines y only for t >= r_j + Delta_js; the dual of the LP has constraints only
where the primal has columns, so (6a) is imposed for t >= r_j + Delta_js.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from edgeopt.core import ModelError, Result, Status
from edgeopt.core.family import instance_sha256
from formulations.common import solve_pyomo
from formulations.preemptive.data import ModelData, from_instance


def build_ilp4(data: ModelData, *, relax: bool = False, ps: bool = True) -> Any:
    """Pyomo model of ILP (4) (``relax``: its LP relaxation; ``ps=False``: without (4c)/(4d))."""
    import pyomo.core as pyo

    T = data.horizon
    dom = pyo.UnitInterval if relax else pyo.Binary
    m = pyo.ConcreteModel(name="preemptive_ilp4" + ("_lp" if relax else ""))
    chunks = data.chunk_list()
    y_idx = [(j, d, int(k), t) for (j, d) in chunks for k in data.eligible[j] for t in range(data.first_slot(j, k), T)]
    yc_idx = (
        [(j, d, t) for (j, d) in chunks for t in range(data.cloud_start(j), T)] if data.cloud is not None else []
    )
    colocated = [j for j in range(data.n_jobs) if data.cloud is not None and data.cloud_end(j, True) <= T]
    m.y = pyo.Var(y_idx, domain=dom)
    m.yc = pyo.Var(yc_idx, domain=dom)
    m.zeta = pyo.Var(colocated, domain=dom)

    by_chunk: dict[tuple[int, int], list[Any]] = {c: [] for c in chunks}
    by_chunk_t: dict[tuple[int, int, int], list[Any]] = {}
    by_worker_t: dict[tuple[int, int], list[Any]] = {}
    edge_by_chunk_t: dict[tuple[int, int, int], list[Any]] = {}
    for key in y_idx:
        j, d, k, t = key
        by_chunk[(j, d)].append(m.y[key])
        by_chunk_t.setdefault((j, d, t), []).append(m.y[key])
        edge_by_chunk_t.setdefault((j, d, t), []).append(m.y[key])
        by_worker_t.setdefault((k, t), []).append(m.y[key])
    for key in yc_idx:
        j, d, t = key
        by_chunk[(j, d)].append(m.yc[key])
        by_chunk_t.setdefault((j, d, t), []).append(m.yc[key])

    def zeta_of(j: int) -> Any:
        return m.zeta[j] if j in m.zeta else 0  # noqa: SIM401 (a Pyomo IndexedVar has no .get)

    m.c4a_work = pyo.Constraint(
        chunks,
        rule=lambda _m, j, d: sum(by_chunk[(j, d)]) >= int(data.p_edge[j]) * (1 - zeta_of(j)),
        doc="(4a) sum_t sum_sw y_jdsw(t) n_jsw >= E_j B_j: p_j slots unless the job is colocated on the cloud",
    )
    m.c4b_worker = pyo.Constraint(
        list(by_worker_t),
        rule=lambda _m, k, t: sum(by_worker_t[(k, t)]) <= 1,
        doc="(4b) sum_jd y_jdsw(t) <= 1",
    )
    m.c4e_4g_one_worker = pyo.Constraint(
        list(by_chunk_t),
        rule=lambda _m, j, d, t: sum(by_chunk_t[(j, d, t)]) <= 1 - zeta_of(j),
        doc="(4e) sum_sw y_jdsw(t) <= 1; (4f)/(4g): none of it at the non-colocated rate when zeta_j = 1",
    )
    if ps:
        ps_until = {j: (data.cloud_start(j) if data.cloud is not None else T) for j in range(data.n_jobs)}
        z_idx = [
            (j, s, t)
            for j in range(data.n_jobs)
            for s in data.edge_ps_servers
            for t in range(data.ps_window(j, s), min(T, ps_until[j]))
        ]
        m.z = pyo.Var(z_idx, domain=dom)
        z_job_t: dict[tuple[int, int], list[Any]] = {}
        z_server_t: dict[tuple[int, int], list[Any]] = {}
        for key in z_idx:
            j, s, t = key
            z_job_t.setdefault((j, t), []).append(m.z[key])
            z_server_t.setdefault((s, t), []).append(m.z[key])

        def ps_needed(_m, j, d, t):
            if t >= ps_until[j]:
                return pyo.Constraint.Skip
            zs = z_job_t.get((j, t), [])
            lhs = sum(edge_by_chunk_t[(j, d, t)])
            return (sum(zs) >= lhs) if zs else (lhs <= 0)

        m.c4c_ps = pyo.Constraint(
            list(edge_by_chunk_t), rule=ps_needed, doc="(4c) one PS for job j in every slot it trains"
        )
        m.c4c_one_ps = pyo.Constraint(
            list(z_job_t), rule=lambda _m, j, t: sum(z_job_t[(j, t)]) <= 1, doc="(4c) at most one PS per job and slot"
        )
        m.c4d_ps_capacity = pyo.Constraint(
            list(z_server_t),
            rule=lambda _m, s, t: sum(z_server_t[(s, t)]) <= int(data.ps_count[s]),
            doc="(4d) each PS serves at most one job per slot",
        )
    flow = sum(data.edge_flow_coef(j, t) * m.y[j, d, k, t] for (j, d, k, t) in y_idx)
    flow += sum(data.edge_flow_coef(j, t) * m.yc[j, d, t] for (j, d, t) in yc_idx)
    flow += sum(float(data.chunks[j]) * data.cloud_flow(j, True) * m.zeta[j] for j in colocated)
    m.obj = pyo.Objective(expr=flow, sense=pyo.minimize, doc="(4) sum_jd f_jd(y), f of (3)")
    return m


def build_p6(data: ModelData) -> Any:
    """Pyomo LP whose dual is (6) (see module docstring); rows ``c4a_work``, ``c4b_worker``."""
    import pyomo.core as pyo

    T = data.horizon
    m = pyo.ConcreteModel(name="preemptive_p6")
    chunks = data.chunk_list()
    y_idx = [(j, d, int(k), t) for (j, d) in chunks for k in data.eligible[j] for t in range(data.first_slot(j, k), T)]
    yc_idx = (
        [(j, d, t) for (j, d) in chunks for t in range(data.cloud_start(j), T)] if data.cloud is not None else []
    )
    m.y = pyo.Var(y_idx, domain=pyo.NonNegativeReals)
    m.yc = pyo.Var(yc_idx, domain=pyo.NonNegativeReals)
    work: dict[tuple[int, int], list[Any]] = {c: [] for c in chunks}
    by_worker_t: dict[tuple[int, int], list[Any]] = {}
    for key in y_idx:
        j, d, k, t = key
        work[(j, d)].append(m.y[key] / float(data.p_edge[j]))
        by_worker_t.setdefault((k, t), []).append(m.y[key])
    for key in yc_idx:
        j, d, t = key
        work[(j, d)].append(m.yc[key] / float(data.p_cloud[j]))
    m.c4a_work = pyo.Constraint(
        chunks, rule=lambda _m, j, d: sum(work[(j, d)]) >= 1,
        doc="(4a) sum y n_jsw / (E_j B_j) >= 1 (dual: alpha_jd)",
    )
    m.c4b_worker = pyo.Constraint(
        list(by_worker_t), rule=lambda _m, k, t: sum(by_worker_t[(k, t)]) <= 1, doc="(4b) (dual: beta_sw(t))"
    )
    obj = sum(data.edge_flow_coef(j, t) * m.y[j, d, k, t] for (j, d, k, t) in y_idx)
    obj += sum(
        (t + 1 - float(data.arrival[j])) / (float(data.chunks[j]) * float(data.p_cloud[j])) * m.yc[j, d, t]
        for (j, d, t) in yc_idx
    )
    m.obj = pyo.Objective(expr=obj, sense=pyo.minimize)
    return m


def build_dual6(data: ModelData) -> Any:
    """The dual LP (6) as an explicit Pyomo model (variables ``alpha``, ``beta``)."""
    import pyomo.core as pyo

    T = data.horizon
    m = pyo.ConcreteModel(name="preemptive_dual6")
    chunks = data.chunk_list()
    rows = [(j, d, int(k), t) for (j, d) in chunks for k in data.eligible[j] for t in range(data.first_slot(j, k), T)]
    beta_idx = sorted({(k, t) for (_j, _d, k, t) in rows})
    m.alpha = pyo.Var(chunks, domain=pyo.NonNegativeReals)
    m.beta = pyo.Var(beta_idx, domain=pyo.NonNegativeReals)
    m.c6a = pyo.Constraint(
        rows,
        rule=lambda _m, j, d, k, t: m.alpha[j, d] / float(data.p_edge[j])
        <= data.edge_flow_coef(j, t) + m.beta[k, t],
        doc="(6a) alpha_jd n_jsw/(E_j B_j) <= n_jsw/(E_j D_j B_j) (t - r_j) + beta_sw(t)",
    )
    if data.cloud is not None:
        cloud_rows = [(j, d) for (j, d) in chunks if data.cloud_start(j) < T]
        m.c6a_cloud = pyo.Constraint(
            cloud_rows,
            rule=lambda _m, j, d: m.alpha[j, d]
            <= (data.cloud_start(j) + 1 - float(data.arrival[j])) / float(data.chunks[j]),
            doc="(6a) on the cloud (unlimited workers, beta = 0), tightest at t = r_j + Delta_jc",
        )
    m.obj = pyo.Objective(
        expr=sum(m.alpha[c] for c in chunks) - sum(m.beta[b] for b in beta_idx), sense=pyo.maximize, doc="(6)"
    )
    return m


@dataclasses.dataclass
class Duals6:
    """A solution of (6): alpha[(j, d)] and beta[(k, t)] (k: global edge worker)."""

    alpha: dict[tuple[int, int], float]
    beta: dict[tuple[int, int], float]

    @property
    def value(self) -> float:
        return float(sum(self.alpha.values()) - sum(self.beta.values()))


def dual6_violations(data: ModelData, alpha: dict[tuple[int, int], float], beta: Any, *, tol: float = 1e-7) -> list[str]:
    """Every violated constraint (6a)/(6b) of (alpha, beta); ``beta(k, t)`` is a callable or a dict.

    Only edge workers are checked here (the cloud's rows are `cloud_dual6_violations`).
    """
    get = beta if callable(beta) else (lambda k, t: float(beta.get((k, t), 0.0)))
    out = []
    for (j, d), a in alpha.items():
        if a < -tol:
            out.append(f"(6b) alpha[{j},{d}] = {a} < 0")
        p = float(data.p_edge[j])
        for k in data.eligible[j]:
            k = int(k)
            ts = np.arange(data.first_slot(j, k), data.horizon)
            if ts.size == 0:
                continue
            b = np.array([get(k, int(t)) for t in ts], dtype=float)
            slack = (ts + 1 - float(data.arrival[j])) / (float(data.chunks[j]) * p) + b - a / p
            bad = np.flatnonzero(slack < -tol * max(1.0, abs(a)))
            if bad.size:
                t = int(ts[bad[0]])
                out.append(f"(6a) chunk ({j},{d}) worker {k} slot {t}: alpha/p={a / p:.6g} > rhs={a / p + slack[bad[0]]:.6g}")
    return out


def _bound_result(instance: Any, name: str, outcome: Any, build_s: float, extra: dict[str, Any]) -> Result:
    timings = {"build_s": round(build_s, 6), "solve_s": round(outcome.runtime_s, 6)}
    if outcome.status == Status.INFEASIBLE:
        return Result("preemptive", name, Status.INFEASIBLE, None, None, outcome.runtime_s + build_s, None,
                      instance_sha256(instance), {**extra, "timings": timings,
                                                  "reason": f"HiGHS proved {name} infeasible ({outcome.message})"})
    bound = outcome.bound if outcome.status != Status.OPTIMAL else outcome.objective
    return Result(
        family="preemptive", algorithm=name, status=outcome.status, objective=None, bound=bound,
        runtime_s=outcome.runtime_s + build_s, schedule=None, instance_sha256=instance_sha256(instance),
        extra={**extra, "value": outcome.objective, "solver_message": outcome.message, "timings": timings},
    )


def solve_ilp4(instance: Any, *, time_limit: float = 60.0, relax: bool = False, ps: bool = True,
               speed: float = 1.0, threads: int = 1, **_: Any) -> Result:
    """Lower bound on (2) from ILP (4) (``relax=True``: its LP relaxation). No schedule: ``bound`` holds it.

    ``bound`` is the optimum of the model when solved to optimality, else the solver's best bound.
    """
    t0 = time.perf_counter()
    data = from_instance(instance, speed=speed)
    model = build_ilp4(data, relax=relax, ps=ps)
    build_s = time.perf_counter() - t0
    outcome = solve_pyomo(model, time_limit=time_limit, threads=threads)
    name = "lp4" if relax else "ilp4"
    return _bound_result(instance, name, outcome, build_s,
                         {"model": ("LP relaxation of " if relax else "") + "ILP (4)", "ps_constraints": ps,
                          "speed": speed, "bound_of": "MINLP (2) (Lemma 1)"})


def solve_lp4(instance: Any, *, time_limit: float = 60.0, **options: Any) -> Result:
    """LP relaxation of ILP (4): a lower bound on ILP (4) and on MINLP (2)."""
    return solve_ilp4(instance, time_limit=time_limit, relax=True, **options)


def solve_p6(data: ModelData, *, time_limit: float = 60.0) -> tuple[float, Duals6]:
    """Solve the primal of (6) and read (alpha, beta) back from HiGHS's row duals.

    Sign convention (docs/solvers.md): a minimisation's >= rows have duals >= 0, its <= rows duals <= 0,
    so alpha = dual(c4a_work) and beta = -dual(c4b_worker).
    """
    import pyomo.core as pyo

    m = build_p6(data)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    from pyomo.contrib.solver.solvers.highs import Highs

    res = Highs().solve(m, time_limit=time_limit, raise_exception_on_nonoptimal_result=False, load_solutions=False)
    if res.incumbent_objective is None:
        raise ModelError(f"P6 LP not solved: {res.termination_condition}")
    res.solution_loader.load_vars()
    duals = res.solution_loader.get_duals()
    alpha = {idx: float(duals[m.c4a_work[idx]]) for idx in m.c4a_work}
    beta = {idx: -float(duals[m.c4b_worker[idx]]) for idx in m.c4b_worker}
    return float(res.incumbent_objective), Duals6(alpha, beta)


def solve_dual6(data: ModelData, *, time_limit: float = 60.0) -> tuple[float, Duals6]:
    """Solve the explicit dual (6); returns its optimum and the optimal (alpha, beta)."""
    m = build_dual6(data)
    outcome = solve_pyomo(m, time_limit=time_limit)
    if outcome.status != Status.OPTIMAL:
        raise ModelError(f"dual (6) not solved to optimality: {outcome.message}")
    alpha = {idx: float(m.alpha[idx].value) for idx in m.alpha}
    beta = {idx: float(m.beta[idx].value or 0.0) for idx in m.beta}
    return float(outcome.objective), Duals6(alpha, beta)
