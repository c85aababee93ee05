"""The batch problem of one round of A_online: ILP (3)/(4), its LP relaxation and dual (5).

She et al. turn total JCT into a series of batch problems: at round i, the
jobs J_i that have arrived and wait are to be run inside the round's window
(tau_i, tau_{i+1}], as many as possible (3). (4) is the same problem written
over *schedules*: chi_j^l = 1 if job j runs by schedule l in L_j, with the
capacities (4a, 4b) and one schedule per job (4c). Its LP relaxation has the
dual (5): prices lambda_su(t), mu_sv(t) >= 0 on the capacities and eta_j >= 0
with eta_j >= 1 - cost_j(l) for every schedule l (5a), where cost_j(l) is the
price of the workers and PS that l holds.

Here, in slots, a round's window is the half-open ``[lo, hi)``; a schedule
of job j runs inside it, starts at or after every used server's release
a_j + Delta_js (2i), and holds its workers and PS fixed (2c, 2d). The
capacities a round sees are what earlier rounds left free:
``free_workers [S, U, T]`` = W_su - f_su(t), ``free_ps [S, V, T]`` = P_sv - g_sv(t).
A schedule in L_j must fit these alone (9a, 9b); that is what makes the
column set finite and the LP a relaxation of (3).

What is computed:

* `solve_batch_ilp`: the optimum of (3) by the time-indexed MILP
  (``milp.build_milp(max_jobs=True)``), exact.
* `price_exact`: the pricing problem (9): the cheapest schedule of one job at
  given prices, exact (enumerates modes and starts, vectorised over servers
  and starts; workers greedily on the cheapest servers, which is optimal for
  unit workers with per-server caps and linear prices).
* `column_generation`: the LP bound of (4), master in highspy (addCol + run);
  columns from a pricing oracle (the paper's COST_C / COST_D through
  ``oracle=``, or `price_exact`). When the oracle is a heuristic it may stop
  early; the exact oracle then finishes, so the final value is the LP
  optimum, and the gap the heuristic oracle left is reported.
* `dual_value`: the objective of (5) at any prices lambda, mu >= 0, with the
  smallest feasible eta (eq. 6: eta_j = max(0, 1 - min_l cost_j(l)), by exact
  pricing). By weak duality it is >= the LP value >= the optimum of (3).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from formulations.edgecloud.data import JobData, prepare
from formulations.edgecloud.schedule_io import Placement

#: A column of (4) must improve the master by more than this to be added.
REDUCED_COST_TOL = 1e-9


@dataclasses.dataclass
class BatchProblem:
    """Round data of problem (3): jobs (positions in ``instance.jobs``), window [lo, hi), free capacity."""

    instance: Any
    jobs: list[int]
    window: tuple[int, int]
    free_workers: np.ndarray
    free_ps: np.ndarray

    @classmethod
    def fresh(cls, instance: Any, jobs: list[int], window: tuple[int, int]) -> BatchProblem:
        """A round on idle servers (the paper's rounds use disjoint windows, so each starts idle)."""
        T = int(instance.horizon)
        W = np.array([list(s.workers) for s in instance.servers], dtype=float)
        P = np.array([list(s.ps) for s in instance.servers], dtype=float)
        return cls(instance, list(jobs), window, np.repeat(W[:, :, None], T, 2), np.repeat(P[:, :, None], T, 2))


@dataclasses.dataclass(frozen=True)
class Column:
    """A schedule l of job j (a column of ILP (4)) and its cost at the prices it was priced at."""

    job: int
    start: int
    end: int
    workers: dict[int, int]
    ps_server: int
    colocated: bool
    cost: float

    def placement(self) -> Placement:
        return Placement(self.job, self.start, self.end, dict(self.workers), self.ps_server, self.colocated)


PricingOracle = Callable[[BatchProblem, int, np.ndarray, np.ndarray], "Column | None"]


def _windowed(a: np.ndarray, d: int, starts: np.ndarray, how: str) -> np.ndarray:
    """``[S, len(starts)]`` sum or min of ``a[S, T]`` over [h, h + d) for each start h."""
    if how == "sum":
        c = np.concatenate([np.zeros((a.shape[0], 1)), np.cumsum(a, axis=1)], axis=1)
        return c[:, starts + d] - c[:, starts]
    return sliding_window_view(a, d, axis=1).min(axis=2)[:, starts]


def price_exact(problem: BatchProblem, j: int, lam: np.ndarray, mu: np.ndarray) -> Column | None:
    """Cheapest schedule of job ``j`` in the window at prices ``lam [S, U, T]``, ``mu [S, V, T]`` (>= 0).

    Exact for problem (9). Distributed runs are priced with workers greedy on
    the cheapest servers and the PS on the cheapest PS server, independently;
    when that relaxation lands every worker on the PS's server (not a valid
    distributed run) it is dropped: the colocated run of the same server and
    start is no longer and so, at prices >= 0, no dearer, and is priced too.
    """
    lo, hi = problem.window
    jd: JobData = prepare(problem.instance, jobs=[j], window=(lo, hi)).jobs[0]
    u, v = jd.worker_type, jd.ps_type
    lam_j, mu_j = lam[:, u, :], mu[:, v, :]
    fw, fp = problem.free_workers[:, u, :], problem.free_ps[:, v, :]
    best: Column | None = None
    for md in jd.modes:
        d, w = md.duration, md.workers
        starts = np.arange(max(lo, int(jd.release.min())), hi - d + 1)
        if starts.size == 0:
            continue
        released = starts[None, :] >= jd.release[:, None]
        capw = np.where(released, np.minimum(np.floor(_windowed(fw, d, starts, "min") + 1e-9), jd.worker_cap[:, None]), 0)
        psok = released & jd.ps_ok[:, None] & (_windowed(fp, d, starts, "min") >= 1 - 1e-9)
        cw = _windowed(lam_j, d, starts, "sum")
        cp = np.where(psok, _windowed(mu_j, d, starts, "sum"), np.inf)
        if md.colocated:
            cost = np.where((capw >= w) & psok, w * cw + cp, np.inf)
            s_best, h_idx = np.unravel_index(np.argmin(cost), cost.shape)
            c = float(cost[s_best, h_idx])
            if np.isfinite(c) and (best is None or c < best.cost):
                h = int(starts[h_idx])
                best = Column(j, h, h + d, {int(s_best): w}, int(s_best), True, c)
            continue
        order = np.argsort(cw, axis=0, kind="stable")
        caps = np.take_along_axis(capw, order, 0)
        take = np.clip(w - (np.cumsum(caps, 0) - caps), 0, caps)
        wcost = (take * np.take_along_axis(cw, order, 0)).sum(0)
        ps = np.argmin(cp, axis=0)
        taken = np.zeros_like(capw)
        np.put_along_axis(taken, order, take, 0)
        on_ps = taken[ps, np.arange(starts.size)]
        total = np.where((caps.sum(0) >= w) & (on_ps < w), wcost + cp[ps, np.arange(starts.size)], np.inf)
        h_idx = int(np.argmin(total))
        c = float(total[h_idx])
        if np.isfinite(c) and (best is None or c < best.cost):
            h = int(starts[h_idx])
            workers = {int(s): int(n) for s, n in enumerate(taken[:, h_idx]) if n > 0}
            best = Column(j, h, h + d, workers, int(ps[h_idx]), False, c)
    return best


def column_cost(problem: BatchProblem, col: Column, lam: np.ndarray, mu: np.ndarray) -> float:
    """Price of the workers and PS that ``col`` holds (the sums in (5a))."""
    job = problem.instance.jobs[col.job]
    u, v = int(job.worker_type), int(job.ps_type)
    t = slice(col.start, col.end)
    return float(sum(n * lam[s, u, t].sum() for s, n in col.workers.items()) + mu[col.ps_server, v, t].sum())


def dual_value(problem: BatchProblem, lam: np.ndarray, mu: np.ndarray) -> tuple[float, dict[int, float]]:
    """Objective of dual (5) at prices ``lam``, ``mu`` >= 0 with the least feasible eta (eq. 6).

    Returns the value and eta per job. Valid upper bound on LP (4) and ILP (3)
    for any nonnegative prices (weak duality).
    """
    if (lam < 0).any() or (mu < 0).any():
        raise ValueError("dual (5b) needs prices >= 0")
    lo, hi = problem.window
    eta = {}
    for j in problem.jobs:
        col = price_exact(problem, j, lam, mu)
        eta[j] = 0.0 if col is None else max(0.0, 1.0 - col.cost)
    types_w = sorted({int(problem.instance.jobs[j].worker_type) for j in problem.jobs})
    types_p = sorted({int(problem.instance.jobs[j].ps_type) for j in problem.jobs})
    # Only the rows of (4a)/(4b) some column can touch matter; prices elsewhere add >= 0 and are dropped.
    value = sum(eta.values())
    value += float((lam[:, types_w, lo:hi] * problem.free_workers[:, types_w, lo:hi]).sum())
    value += float((mu[:, types_p, lo:hi] * problem.free_ps[:, types_p, lo:hi]).sum())
    return value, eta


@dataclasses.dataclass
class ColumnGenerationResult:
    """LP relaxation of (4) by column generation.

    Attributes:
        lp_value: the LP optimum (certified by exact pricing when ``certified``).
        oracle_value: the value where the given oracle alone stopped.
        columns: every column added, with the master's weight chi of each.
        lam, mu: the final duals of (4a), (4b) ``[S, U, T]``, ``[S, V, T]`` (zero outside the window).
        eta: the final duals of (4c).
        dual_value: objective of (5) at ``lam``, ``mu`` (eq. 6 eta); equals ``lp_value`` at the optimum.
        iterations, columns_from_oracle, columns_from_exact, runtime_s: bookkeeping.
        certified: exact pricing found no improving column at the end.
    """

    lp_value: float
    oracle_value: float
    columns: list[tuple[Column, float]]
    lam: np.ndarray
    mu: np.ndarray
    eta: dict[int, float]
    dual_value: float
    iterations: int
    columns_from_oracle: int
    columns_from_exact: int
    runtime_s: float
    certified: bool


class _Master:
    """Restricted master LP of (4) in highspy: min -sum chi over the columns added so far."""

    def __init__(self, problem: BatchProblem) -> None:
        import highspy

        self.problem = problem
        inst = problem.instance
        lo, hi = problem.window
        self.lo, self.L = lo, hi - lo
        self.S = len(inst.servers)
        self.U = problem.free_workers.shape[1]
        self.V = problem.free_ps.shape[1]
        self.job_row = {j: k for k, j in enumerate(problem.jobs)}
        self.n_w = self.S * self.U * self.L
        self.n_p = self.S * self.V * self.L
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        inf = highspy.kHighsInf
        ub = np.concatenate([
            problem.free_workers[:, :, lo:hi].reshape(-1),
            problem.free_ps[:, :, lo:hi].reshape(-1),
            np.ones(len(problem.jobs)),
        ])
        n = ub.size
        h.addRows(n, np.full(n, -inf), ub, 0, np.zeros(n + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        self.h = h
        self.ub = ub
        self.columns: list[Column] = []

    def add(self, col: Column) -> None:
        job = self.problem.instance.jobs[col.job]
        u, v = int(job.worker_type), int(job.ps_type)
        ts = np.arange(col.start - self.lo, col.end - self.lo)
        idx, val = [], []
        for s, n in sorted(col.workers.items()):
            idx.append((s * self.U + u) * self.L + ts)
            val.append(np.full(ts.size, float(n)))
        idx.append(self.n_w + (col.ps_server * self.V + v) * self.L + ts)
        val.append(np.ones(ts.size))
        idx.append(np.array([self.n_w + self.n_p + self.job_row[col.job]]))
        val.append(np.ones(1))
        ii = np.concatenate(idx).astype(np.int32)
        self.h.addCol(-1.0, 0.0, 1.0, ii.size, ii, np.concatenate(val))
        self.columns.append(col)

    def solve(self) -> tuple[float, np.ndarray, np.ndarray, dict[int, float], np.ndarray]:
        self.h.run()
        sol = self.h.getSolution()
        # HiGHS duals of <= rows of a minimisation are <= 0; the prices of (5) are their negatives.
        y = -np.asarray(sol.row_dual)
        y = np.maximum(y, 0.0)
        T = int(self.problem.instance.horizon)
        lam = np.zeros((self.S, self.U, T))
        mu = np.zeros((self.S, self.V, T))
        lam[:, :, self.lo : self.lo + self.L] = y[: self.n_w].reshape(self.S, self.U, self.L)
        mu[:, :, self.lo : self.lo + self.L] = y[self.n_w : self.n_w + self.n_p].reshape(self.S, self.V, self.L)
        eta = {j: float(y[self.n_w + self.n_p + k]) for j, k in self.job_row.items()}
        chi = np.asarray(sol.col_value) if self.columns else np.zeros(0)
        value = float(chi.sum())
        return value, lam, mu, eta, chi


def column_generation(
    problem: BatchProblem, *, oracle: PricingOracle | None = None, max_iterations: int = 10_000
) -> ColumnGenerationResult:
    """LP relaxation of (4): price every job at the master's duals, add improving columns, repeat.

    ``oracle`` (default `price_exact`) proposes columns; once it finds none,
    `price_exact` continues until no column improves, so the returned
    ``lp_value`` is the LP optimum whichever oracle was given.
    """
    t0 = time.perf_counter()
    master = _Master(problem)
    oracles: list[tuple[str, PricingOracle]] = [("exact", price_exact)]
    if oracle is not None:
        oracles.insert(0, ("oracle", oracle))
    counts = {"oracle": 0, "exact": 0}
    value, lam, mu, eta, chi = master.solve()
    oracle_value = value
    iterations = 0
    for name, price in oracles:
        while iterations < max_iterations:
            iterations += 1
            added = 0
            for j in problem.jobs:
                col = price(problem, j, lam, mu)
                if col is None:
                    continue
                cost = column_cost(problem, col, lam, mu)
                if 1.0 - cost - eta[j] > REDUCED_COST_TOL:
                    master.add(dataclasses.replace(col, cost=cost))
                    added += 1
            counts[name] += added
            if not added:
                break
            value, lam, mu, eta, chi = master.solve()
        if name == "oracle":
            oracle_value = value
    if oracle is None:
        oracle_value = value
    certified = iterations < max_iterations
    dv, _ = dual_value(problem, lam, mu)
    return ColumnGenerationResult(
        lp_value=value,
        oracle_value=oracle_value,
        columns=list(zip(master.columns, map(float, chi))),
        lam=lam,
        mu=mu,
        eta=eta,
        dual_value=dv,
        iterations=iterations,
        columns_from_oracle=counts["oracle"],
        columns_from_exact=counts["exact"],
        runtime_s=time.perf_counter() - t0,
        certified=certified,
    )


def solve_batch_ilp(problem: BatchProblem, *, time_limit: float = 60.0) -> tuple[Any, list[Placement]]:
    """Optimum of (3) (= ILP (4)) by the time-indexed MILP; returns the solver outcome and the runs."""
    from formulations.common import solve_pyomo
    from formulations.edgecloud.milp import build_milp, extract_milp

    data = prepare(problem.instance, jobs=problem.jobs, window=problem.window)
    m = build_milp(problem.instance, data, free_workers=problem.free_workers, free_ps=problem.free_ps, max_jobs=True)
    if not len(m.x):
        from edgeopt.core import Status
        from formulations.common import SolverOutcome

        return SolverOutcome(Status.OPTIMAL, 0.0, 0.0, 0.0, "no job fits the window", False), []
    outcome = solve_pyomo(m, time_limit=time_limit)
    return outcome, (extract_milp(m) if outcome.has_solution else [])


def paper_oracle(problem: BatchProblem, j: int, lam: np.ndarray, mu: np.ndarray) -> Column | None:
    """Pricing by the paper's subroutines: Alg. 2's loops over starts and D_u, calling COST_C and COST_D.

    For every start h in the window and every worker count D_u = 1..D_j, the
    family's `cost_colocated` (Alg. 3) and `cost_distributed` (Alg. 4) price
    the cheapest placement at the master's duals; the cheapest over all wins.
    """
    from edgeopt.edgecloud.online import cost_colocated, cost_distributed

    inst = problem.instance
    job = inst.jobs[j]
    lo, hi = problem.window
    u, v = int(job.worker_type), int(job.ps_type)
    arrays = {"price_w": lam[:, u, lo:hi], "price_p": mu[:, v, lo:hi],
              "free_w": problem.free_workers[:, u, lo:hi], "free_p": problem.free_ps[:, v, lo:hi], "t0": lo}
    best: Column | None = None
    for start in range(lo, hi):
        for w in range(1, int(job.chunks) + 1):
            for cost_fn in (cost_colocated, cost_distributed):
                cost, pl = cost_fn(inst, job, workers=w, start=start, **arrays)
                if pl is not None and (best is None or cost < best.cost):
                    best = Column(j, pl.start, pl.end, dict(pl.workers), pl.ps_server, pl.colocated, float(cost))
    return best
