"""A certified lower bound on program (2) from one column per (job, complete single-job plan): the
configuration LP (Dantzig-Wolfe) of okita, method ``config_lp``.

Master. Each job picks a convex combination of its plans (`singlejob.Plan`: PS site and workers per
slot, transfers), and per site r, resource k and slot t the plans' resources (m y + n s) fit C_r^k:
the capacity rows (2d), un-pooled. Prices pi[r, k, t] >= 0 on those rows give, by weak duality
(the Lagrangian of the capacity rows; Farley, Operations Research 38 (1990) 922-923),

    L(pi) = sum_i min_{plans of i} (cost + sum_{r,k,t} usage pi) - sum_{r,k,t} C_r^k pi[r, k, t]  <=  OPT,

for any pi >= 0, whatever the master has converged to. Per job the inner minimum is bounded below,
without a solver, by the larger of two numbers:

* `singlejob.lagrangian` at the job's multipliers mu_i[r] >= 0 (one per origin site; any mu is valid):
  whole workers per slot and site, one PS site per slot, the completion enumerated. Slots past the
  job's cut (`cut_length`: where the latency alone is far above any plausible cost) are bounded by the
  zero-price slot problem, which prices >= 0 can only raise;
* the ``worker_lp`` relaxation's own minimum (`lpbound.WorkerRelaxation`) at the pooled prices
  min_r pi[r, k, t]: a plan's usage priced at pi is at least its pooled usage priced at the site
  minimum, and the worker_lp column of a plan costs no more than the plan. At prices equal at every
  site, L(pi) is then at least worker_lp's value at the pooled prices: column generation starts there,
  so the bound is never below worker_lp's.

Certificate: the multipliers array holds pi (rows r * K + k) and, in the rows after them, every job's
mu (job-major, zero-padded to whole rows of T); the capacity of those extra rows is 0, so they add
nothing to L. The check (`edgeopt.core.lowerbound.check_certificate`) rebuilds this relaxation from the
instance and re-evaluates L from the stored numbers by enumeration: no LP or MIP solver.

Prices come from column generation (`ConfigRelaxation.column_generation`): worker_lp's prices first,
then a master LP (HiGHS) over generated plans (`singlejob.plan_from` and `candidate_plans` at the
priced costs), its capacity duals smoothed towards the best prices (Wentges, alpha = 0.5), the
per-job multipliers improved by subgradient steps at each point (`singlejob.best_multipliers`: the best of
three warm-started ascents, towards the new plan's cost and towards the cheapest plan of the job known so far;
each job's plans alone for 40 lengths are the first columns and targets). Every iteration's L is certified;
the best is kept. The last `DEEP_SHARE` of the time goes to a long ascent of every job's multipliers at the best
prices (`ConfigRelaxation.deepen`), whose L is certified in the same way.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

import numpy as np

from edgeopt.core.colgen import ColumnGenerationResult, _gamma, lagrangian
from edgeopt.core.colgen import column_generation as worker_colgen
from edgeopt.core.limits import BuildTimeLimit, Deadline, ModelSize
from edgeopt.core.lowerbound import BoundMethod
from edgeopt.core.lpbound import highs_time_limit
from formulations.okita import singlejob as sj
from formulations.okita.bounds import latency_bound
from formulations.okita.lpbound import WorkerRelaxation

#: A job's completions are modelled slot by slot up to the length where its latency exceeds the least
#: latency by CUT_FACTOR x a crude bandwidth bound (all chunks moved and every worker-slot exchanged at
#: the largest price), at least CUT_MIN slots; later completions use the zero-price slot bound.
CUT_FACTOR = 2.0
CUT_MIN = 4
#: Subgradient steps per job at the first point and at each later point (warm-started).
FIRST_STEPS = 30
LATER_STEPS = 8
#: The first price points: worker_lp's prices times these.
START_SCALES = (0.0, 0.5, 1.0)
#: Plan lengths per job tried at zero prices before the first price point (`singlejob.length_grid`).
TARGET_LENGTHS = 40
#: Share of the time limit for worker_lp's own column generation (its prices are the start).
WORKER_SHARE = 0.25
#: Share of the time limit kept for the deep ascent (`ConfigRelaxation.deepen`): every job's multipliers at the
#: best price point found, `DEEP_STEPS` subgradient steps each, after the master's rounds.
DEEP_SHARE = 0.3
DEEP_STEPS = 400


def cut_length(instance: Any, i: int, W: int, A: int) -> int:
    """Completion lengths modelled slot by slot for job i (deterministic: the check rebuilds it)."""
    job = instance.jobs[i]
    T, a = int(instance.horizon), int(job.arrival)
    span = T - a
    if A <= 0:
        return span
    first = max(1, math.ceil(W / A))
    q = instance.q
    qmax = float(q.max()) if q.size else 0.0
    crude = job.chunk_size_mb * qmax * job.total_chunks + job.param_size_mb * qmax * W
    f = np.asarray(job.cost(np.arange(1, span + 1)), dtype=float)
    limit = f[first - 1] + CUT_FACTOR * crude if first <= span else math.inf
    over = np.flatnonzero(f > limit)
    L = int(over[0]) + 1 if over.size else span
    return int(min(span, max(L, first + CUT_MIN)))


class ConfigRelaxation:
    """The configuration LP's Lagrangian (module docstring) with `edgeopt.core.colgen`'s pricing
    interface (``capacity``, ``price``, ``fingerprint``...) and its own ``column_generation``."""

    def __init__(self, instance: Any) -> None:
        self.instance = instance
        C = instance.capacity
        self.S, self.K = C.shape
        self.T = int(instance.horizon)
        self.J = len(instance.jobs)
        self.worker = WorkerRelaxation(instance)
        self.jobs: list[sj.SingleJob] = []
        self.tails: list[np.ndarray] = []
        for i, job in enumerate(instance.jobs):
            W, A = self.worker.limits[i]
            L = cut_length(instance, i, W, A)
            self.jobs.append(sj.of_instance(instance, i, last=int(job.arrival) + L - 1))
            span = self.T - int(job.arrival)
            self.tails.append(np.asarray(job.cost(np.arange(L + 1, span + 1)), dtype=float).reshape(-1))
        self.mu_rows = math.ceil(self.J * self.S / self.T) if self.J else 0
        self.capacity = np.zeros((self.S * self.K + self.mu_rows, self.T))
        self.capacity[:self.S * self.K] = C.reshape(-1)[:, None]

    # ---- the colgen interface ----
    @property
    def n_rows(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def horizon(self) -> int:
        return self.T

    @property
    def n_jobs(self) -> int:
        return self.J

    def empty_jobs(self) -> list[int]:
        return self.worker.empty_jobs()

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        h.update(b"config_lp-1")
        h.update(np.ascontiguousarray(self.capacity).tobytes())
        h.update(self.worker.fingerprint().encode())
        for job, tail in zip(self.jobs, self.tails, strict=True):
            for arr in job.fingerprint_arrays():
                h.update(np.ascontiguousarray(arr).tobytes())
            h.update(tail.tobytes())
        return h.hexdigest()

    def pack(self, prices: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """The multipliers array [n_rows, T]: prices [S, K, T] then mu [J, S] row-major, zero-padded."""
        out = np.zeros((self.n_rows, self.T))
        out[:self.S * self.K] = prices.reshape(self.S * self.K, self.T)
        flat = np.zeros(self.mu_rows * self.T)
        flat[:self.J * self.S] = mu.reshape(-1)
        out[self.S * self.K:] = flat.reshape(self.mu_rows, self.T)
        return out

    def unpack(self, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        prices = pi[:self.S * self.K].reshape(self.S, self.K, self.T)
        mu = pi[self.S * self.K:].reshape(-1)[:self.J * self.S].reshape(self.J, self.S)
        return prices, mu

    def job_prices(self, i: int, prices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(w, P) [slots, S] of job i's modelled slots: per worker sum_k m_k pi[r, k, t], per PS n . pi."""
        job = self.jobs[i]
        sl = slice(job.arrival, job.last + 1)
        w = np.einsum("k,rkt->tr", job.m, prices[:, :, sl])
        P = np.einsum("k,rkt->tr", job.n, prices[:, :, sl])
        return w, P

    def worker_value(self, i: int, pooled: np.ndarray, deadline: Any = None) -> float:
        """worker_lp's safe minimum for job i at pooled prices [K, T]."""
        unit = self.worker.demand[i] @ pooled
        _, v = self.worker._best(i, unit, deadline)
        W = self.worker.limits[i][0]
        return v - 2.0 * _gamma(self.K + 2) * W * float(unit.max(initial=0.0))

    def job_value(self, i: int, prices: np.ndarray, pooled: np.ndarray, mu: np.ndarray,
                  deadline: Any = None) -> float:
        """A safe lower bound on job i's least priced cost (module docstring: the larger of two)."""
        w, P = self.job_prices(i, prices)
        lag = sj.lagrangian(self.jobs[i], w, P, mu, tail=self.tails[i])
        # the prices' own rounding (K products per unit cost): a relative gamma_K of the priced usage
        return max(lag.value - self._price_error(i, w, P), self.worker_value(i, pooled, deadline))

    def _price_error(self, i: int, w: np.ndarray, P: np.ndarray) -> float:
        job = self.jobs[i]
        cap = float(np.maximum(job.cap_alone, np.maximum(job.cap_ps, 0)).max(initial=0))
        return 2.0 * _gamma(self.K + 2) * (float(w.sum(axis=0).max(initial=0.0)) * cap * self.S
                                           + float(P.sum(axis=0).max(initial=0.0)))

    def price(self, pi: np.ndarray, buckets: np.ndarray | None = None, *, deadline: Any = None,
              ) -> tuple[list[tuple[Any, float]], float]:
        prices, mu = self.unpack(pi)
        pooled = prices.min(axis=0)
        best = []
        for i in range(self.J):
            if deadline is not None:
                deadline.check("pricing")
            best.append((None, self.job_value(i, prices, pooled, mu[i], deadline)))
        return best, 0.0

    def column(self, i: int, key: Any) -> tuple[float, np.ndarray, np.ndarray]:
        """A plan's cost and its (row * T + slot) entries, rows r * K + k."""
        plan = key
        job = self.jobs[i]
        idx, val = [], []
        for t, r, use in sj.plan_usage(job, plan):
            nz = np.flatnonzero(use > 0)
            idx.extend(((r * self.K + nz) * self.T + t).tolist())
            val.extend(use[nz].tolist())
        transfer, exchange = sj.bandwidth(job, plan)
        latency = float(self.instance.jobs[i].cost(plan.completion - job.arrival + 1))
        return latency + transfer + exchange, np.array(idx, dtype=np.int64), np.array(val, dtype=float)

    def _heuristic_plans(self, deadline: Any) -> list[tuple[int, sj.Plan]]:
        """(job, plan) of every job in the schedules of ``oasis_latency`` and ``online`` (those that
        complete and fit the modelled slots); none when they fail."""
        from edgeopt.okita.baselines import oasis_latency
        from edgeopt.okita.online import online
        from edgeopt.okita.schedule import Schedule

        out = []
        for algo in (oasis_latency, online):
            deadline.check("pricing")
            try:
                res = algo(self.instance)
                sched = Schedule.model_validate(res.schedule)
            except Exception:  # noqa: BLE001, S112 - a start only: the bound does not depend on it
                continue
            for js in sched.jobs:
                i = int(js.job)
                if 0 <= i < self.J and js.completion is not None:
                    out.append((i, sj.plan_of(js)))
        return out

    # ---- prices by column generation ----
    def column_generation(self, *, deadline: Any = None, rel_tol: float = 1e-4, max_iterations: int = 500,
                          max_nonzeros: int | None = None, **_: Any) -> ColumnGenerationResult:
        """Prices and multipliers with a large certified L (module docstring)."""
        import highspy

        t_start = time.perf_counter()
        total = deadline or Deadline(600.0)
        total.check("pricing")
        # everything before the deep ascent (`deepen`), which gets the rest of ``total``
        deadline = Deadline((1.0 - DEEP_SHARE) * total.remaining(floor=0.0))
        S, K, T, J = self.S, self.K, self.T, self.J
        budget = max_nonzeros or 2_000_000
        # 1. worker_lp's prices, broadcast to every site
        sub = Deadline(max(0.5, WORKER_SHARE * total.remaining(floor=0.0)))  # its share of the whole call
        wl = worker_colgen(self.worker, deadline=sub, max_nonzeros=budget)
        start = np.repeat(np.asarray(wl.prices, float)[None, :, :], S, axis=0)
        mu = np.stack([sj.start_multipliers(job) for job in self.jobs]) if J else np.zeros((0, S))
        best_val, best_pi = -math.inf, None
        # 2. the master: one convexity row per job, one capacity row per (site, resource, slot)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        inf = highspy.kHighsInf
        none_i, none_v = np.zeros(0, np.int32), np.zeros(0)
        h.addRows(J, np.ones(J), np.ones(J), 0, none_i, none_i, none_v)
        caps = self.capacity[:S * K].ravel()
        h.addRows(S * K * T, np.full(S * K * T, -inf), caps, 0, none_i, none_i, none_v)
        seen: set[tuple[int, sj.Plan]] = set()
        columns, nnz, it, converged, reason, lp_val = 0, 0, 0, False, "iteration limit", None
        best_cost = np.full(J, math.inf)  # per job: the least cost of its columns (artificial prices)
        # per job: its plans in the master that complete within its modelled slots (the targets below;
        # an algorithm's entries may complete later, past the job's cut)
        known: list[list[sj.Plan]] = [[] for _ in range(J)]

        def add(i: int, plan: sj.Plan) -> int:
            nonlocal columns, nnz
            if (i, plan) in seen:
                return 0
            cost, ci, cv = self.column(i, plan)
            rows = np.concatenate([[i], J + ci]).astype(np.int32)
            vals = np.concatenate([[1.0], cv])
            h.addCols(1, np.array([cost]), np.zeros(1), np.full(1, inf), rows.size, np.zeros(1, np.int32), rows, vals)
            seen.add((i, plan))
            if plan.completion - self.jobs[i].arrival < self.jobs[i].slots:
                known[i].append(plan)
            columns += 1
            nnz += rows.size
            best_cost[i] = min(best_cost[i], cost)
            return 1

        def price_all(prices: np.ndarray, steps: int) -> tuple[float, list[sj.Plan | None]]:
            """Improve every job's mu at ``prices``, generate a plan per job; the certified L."""
            plans: list[sj.Plan | None] = []
            for i, job in enumerate(self.jobs):
                deadline.check("pricing")
                w, P = self.job_prices(i, prices)
                lag0 = sj.lagrangian(job, w, P, mu[i], tail=self.tails[i])
                plan = None
                if 0 <= lag0.completion < job.slots:
                    plan = sj.plan_from(job, w, lag0.completion, lag0.slot_value, lag0.slot_ps)
                if plan is None:
                    cands = sj.candidate_plans(job, w, P, deadline=deadline)
                    plan = min(cands, key=lambda p: sj.priced_cost(job, p, w, P)) if cands else None
                # Polyak's targets: the new plan's cost (the only one before) and the cheapest known plan at
                # these prices (a target far above the dual's optimum overshoots), `singlejob.best_multipliers`
                own = sj.priced_cost(job, plan, w, P) if plan is not None else None
                cheapest = min((sj.priced_cost(job, p, w, P) for p in known[i]), default=None)
                targets = [t for t in (own, cheapest) if t is not None]
                mu[i], _ = sj.best_multipliers(job, w, P, mu[i], targets=targets, steps=steps, tail=self.tails[i],
                                               deadline=deadline)
                plans.append(plan)
            value = lagrangian(self, self.pack(prices, mu), deadline=deadline).value
            return value, plans

        try:
            # worker_lp's prices as they are: per job at least worker_lp's own minimum, so this one pass
            # already certifies at least worker_lp's value (when the time runs out below, it stands)
            best_prices = start
            best_val, best_pi = lagrangian(self, self.pack(start, mu), deadline=deadline).value, self.pack(start, mu)
            # first columns, and the multipliers' first targets: each job's plans alone at zero prices for
            # `TARGET_LENGTHS` lengths (geometric, so a long job costs no more than a short one)
            for i, job in enumerate(self.jobs):
                deadline.check("pricing")
                w0 = np.zeros((job.slots, S))
                for plan in sj.candidate_plans(job, w0, w0, lengths=sj.length_grid(job.slots, TARGET_LENGTHS),
                                               deadline=deadline):
                    add(i, plan)
            # then those prices scaled by 0, 1/2 and 1 with improved multipliers: the whole-worker
            # Lagrangian often gains more at lower prices than the capacity term loses (at the paper
            # preset zero prices were best; they are also the fastest to price: one slot problem per job)
            for scale in START_SCALES:
                point = scale * start
                value, plans = price_all(point, FIRST_STEPS)
                if value > best_val:
                    best_val, best_pi, best_prices = value, self.pack(point, mu), point
                for i, plan in enumerate(plans):
                    if plan is not None:
                        add(i, plan)
            # more columns: each job's plans alone (zero prices), and every job's entries in the
            # schedules of two fast algorithms (a feasible master from the start: meaningful duals)
            for i, job in enumerate(self.jobs):
                deadline.check("pricing")
                w0 = np.zeros((job.slots, S))
                for plan in sj.candidate_plans(job, w0, w0, deadline=deadline):
                    add(i, plan)
            for plan_i in self._heuristic_plans(deadline):
                add(*plan_i)
            # "job left out" columns: dearer than any of its plans, so the master keeps them only when
            # the plans so far cannot share the capacity (their price bounds the duals)
            big = np.where(np.isfinite(best_cost), 3.0 * np.abs(best_cost) + 100.0, 1e6)
            h.addCols(J, big, np.zeros(J), np.full(J, inf), J, np.arange(J, dtype=np.int32),
                      np.arange(J, dtype=np.int32), np.ones(J))
            smooth = 0.5
            while it < max_iterations:
                it += 1
                if deadline.remaining(floor=0.0) < 1.0:
                    reason = "time limit"
                    break
                highs_time_limit(h, max(0.1, deadline.remaining(floor=0.0) - 0.5))
                h.run()
                status = h.modelStatusToString(h.getModelStatus())
                if status != "Optimal":
                    reason = "time limit" if "time limit" in status.lower() else "master LP " + status
                    break
                lp_val = float(h.getInfo().objective_function_value)
                duals = np.array(h.getSolution().row_dual)
                mu_master = duals[:J]
                pi_rmp = np.maximum(0.0, -duals[J:]).reshape(S, K, T)
                if lp_val - best_val <= rel_tol * abs(lp_val):
                    converged, reason = True, "gap below tolerance"
                    break
                sep = smooth * best_prices + (1.0 - smooth) * pi_rmp
                value, plans = price_all(sep, LATER_STEPS)
                if value > best_val:
                    best_val, best_pi, best_prices = value, self.pack(sep, mu), sep
                added = 0
                for i, plan in enumerate(plans):
                    if plan is None:
                        continue
                    cost, ci, cv = self.column(i, plan)
                    reduced = cost + float(cv @ pi_rmp.reshape(-1)[ci]) - mu_master[i]
                    if reduced < -1e-9 * max(1.0, abs(cost)):
                        if nnz + ci.size + 1 > budget:
                            reason = "master size budget"
                            break
                        added += add(i, plan)
                if reason == "master size budget":
                    break
                if not added:
                    if smooth == 0.0:
                        # the pricing is heuristic (plans from the Lagrangian's choices and `candidate_plans`), so
                        # finding no column proves nothing: converged only when L has met the master LP
                        converged = lp_val - best_val <= rel_tol * abs(lp_val)
                        reason = ("gap below tolerance" if converged else
                                  "no improving column from the heuristic pricing (the master LP is still above L)")
                        break
                    smooth = 0.0  # mispricing at the smoothed point: price the master's own duals next
                else:
                    smooth = 0.5
        except BuildTimeLimit:
            reason = "time limit"
            if best_pi is None:
                raise
        if not converged and DEEP_STEPS > 0:
            best_val, best_pi = self.deepen(best_val, best_pi, known, total)
        return ColumnGenerationResult(best_val, best_pi, lp_val, it, columns, converged, reason,
                                      time.perf_counter() - t_start, 1)

    def deepen(self, value: float, pi: np.ndarray, known: list[list[sj.Plan]], deadline: Any,
               steps: int | None = None) -> tuple[float, np.ndarray]:
        """(L, multipliers array): ``pi``'s prices with every job's mu improved by a long ascent (``steps``,
        default `DEEP_STEPS`, warm-started from ``pi``'s mu, towards the cheapest plan of ``known`` at those
        prices), the costliest jobs first, while ``deadline`` leaves time for one more evaluation of L; ``(value,
        pi)`` when L does not rise or the time runs out first.

        Why: the master's rounds give each job only `LATER_STEPS` steps per price point, far from the dual's
        optimum on large jobs. On the ITP quiet week at zero prices, 40 steps summed the jobs' floors to 123,907
        while the exact single-job optima sum to 130,728 (HiGHS; job 24: 6,467 after 40 steps, 6,849 after
        400, optimum 6,906). The value is certified as every other L: the check re-evaluates it from the stored
        prices and multipliers."""
        steps = DEEP_STEPS if steps is None else steps
        prices, mu = self.unpack(pi)
        mu = mu.copy()
        t0 = time.perf_counter()
        try:
            base = lagrangian(self, pi, deadline=deadline).value
        except BuildTimeLimit:
            return value, pi
        reserve = 2.0 * (time.perf_counter() - t0) + 0.5
        targets = []
        for i, job in enumerate(self.jobs):
            w, P = self.job_prices(i, prices)
            targets.append(min((sj.priced_cost(job, p, w, P) for p in known[i]), default=math.inf))
        for i in sorted(range(self.J), key=lambda k: (-targets[k] if math.isfinite(targets[k]) else 0.0, k)):
            if deadline.remaining(floor=0.0) < reserve:
                break  # only time for the last evaluation of L
            if not math.isfinite(targets[i]):
                continue
            w, P = self.job_prices(i, prices)
            sub = Deadline(max(0.0, deadline.remaining(floor=0.0) - reserve))
            try:
                mu[i], _ = sj.best_multipliers(self.jobs[i], w, P, mu[i], targets=[targets[i]], steps=steps,
                                               tail=self.tails[i], deadline=sub)
            except BuildTimeLimit:
                break  # this job keeps its multipliers
        candidate = self.pack(prices, mu)
        try:
            new = lagrangian(self, candidate, deadline=deadline).value
        except BuildTimeLimit:
            return value, pi
        best = max(value, base)
        return (new, candidate) if new > best else (value, pi)


def size(instance: Any) -> ModelSize:
    """The master at its start: a column per job (a few plans each), a row per job and per (site,
    resource, slot); column generation adds columns only up to the size budget, keeping a valid bound."""
    J, T = len(instance.jobs), int(instance.horizon)
    S, K = len(instance.sites), len(instance.resources)
    return ModelSize(J * 8, J + S * K * T, J * 8 * (1 + 4 * S * K),
                     note="column generation: the master holds only generated plans")


CONFIG_LP = BoundMethod(
    name="config_lp",
    summary="one column per (job, complete single-job plan), the per-site capacity rows (2d) as coupling; "
            "Lagrangian of those rows with per-job minima bounded by a whole-worker Lagrangian (and "
            "worker_lp's), prices by column generation",
    relax=ConfigRelaxation,
    trivial=latency_bound,
    step=None,
    size=size,
    bound_of="latency + bandwidth cost of program (2) over schedules of every job",
)
