"""Sec. 5 of Zhou et al.: the batch problem of one round, exactly and through its packing form.

* `solve_max_weight`: the maximum weighted schedule problem (7) (PS) / (16) (Ring-AllReduce) as a
  MILP (the time-indexed model of ``milp.py`` with objective ``weight``): maximise the weight of
  the jobs that complete inside the window (7a, 7b) under (2b)-(2i).
* `solve_min_cost`: the per-job cost minimisation (12)/(13) (PS) and (20)/(21) (Ring-AllReduce)
  as a MILP (objective ``cost``), optionally for one colocation case q_j -- the exact reference
  that A_mincost1/2 and A_RAmincost1/2 are checked against (Theorems 1 and 6).
* `column_generation`: the LP relaxation of the packing ILP (8)/(17) over schedules Gamma_j,
  solved with highspy (``addCol`` + warm-started ``run``, docs/solvers.md). Its pricing problem is
  exactly (12): a column l of job j improves the LP iff w_j - cost_delta(l) > u_j. The pricing
  oracle is ``search`` of ``edgeopt.hetero.mincost`` (A_mincost1/2, or A_RAmincost1/2); with
  ``certify=True`` the exact MILP of (12) prices every job once more at the end, so the LP bound
  is certified even if the oracle were not optimal. The dual values (delta_h^r(t), u_j) of (9)
  are read back from HiGHS; the integer optimum over the generated columns is solved too.

Reading of the paper (kept identical in the online algorithm, see ``edgeopt/hetero/online.py``):
a batch lives in a window [lo, hi) of absolute slots; a job may start at max(lo, a_j) (every job
of a round has arrived, so (7), which omits (2j), is the same); capacity is C_h^r minus what
earlier rounds hold (``usage``). Gamma_j is the set of schedules of j alone that satisfy
(2b)-(2g), (2i), fit the free capacity and complete by hi.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from edgeopt.core import ModelError, Status
from edgeopt.core.lpbound import highs_time_limit
from formulations.hetero.data import prepare
from formulations.hetero.milp import build_milp, extract_milp, solve_model
from formulations.hetero.schedule_io import Placement, to_schedule

TOL = 1e-7


@dataclasses.dataclass
class BatchSolution:
    """An exact solution of (7) or (12).

    Attributes:
        status: optimal / time_limit / infeasible.
        value: objective (weight of (7), or cost of (12)); None without a solution.
        bound: solver's best bound.
        placements: the scheduled jobs (absolute slots).
        runtime_s: build + solve seconds.
    """

    status: Status
    value: float | None
    bound: float | None
    placements: list[Placement]
    runtime_s: float


def _window_arrays(instance: Any, window: tuple[int, int], usage: np.ndarray | None) -> tuple[int, int, np.ndarray]:
    lo, hi = int(window[0]), int(window[1])
    if not 0 <= lo < hi <= instance.horizon:
        raise ValueError(f"window {window} must satisfy 0 <= lo < hi <= horizon {instance.horizon}")
    cap = instance.capacity
    free = np.repeat(cap[:, :, None], hi - lo, axis=2)
    if usage is not None:
        free = free - np.asarray(usage, dtype=float)[:, :, lo:hi]
    return lo, hi, free


def check_batch_schedule(instance: Any, placements: Sequence[Placement], window: tuple[int, int],
                         usage: np.ndarray | None = None) -> None:
    """Raise `ModelError` unless ``placements`` satisfy (2b)-(2i) with the free capacity and (7b).

    The family validator checks (2b)-(2j) and capacity against C_h^r; ``usage`` held by earlier
    rounds is checked here, as is completion inside the window.
    """
    from edgeopt.hetero import FAMILY
    from edgeopt.hetero.schedule import usage as usage_of

    placed = {p.job for p in placements}
    rejected = [j for j in range(len(instance.jobs)) if j not in placed]
    schedule = to_schedule(instance, list(placements), rejected=rejected)
    bad = FAMILY.validate(instance, schedule)
    lo, hi = window
    for p in placements:
        if p.start < lo or p.start + p.duration > hi:
            raise ModelError(f"batch schedule of job {p.job} runs [{p.start}, {p.start + p.duration}) outside {window}")
    if usage is not None:
        use = usage_of(instance, schedule) + np.asarray(usage, dtype=float)
        over = use > instance.capacity[:, :, None] * (1 + 1e-9) + 1e-9
        if over.any():
            h, r, t = (int(a[0]) for a in np.nonzero(over))
            raise ModelError(f"batch schedule exceeds the free capacity at server {h}, resource {r}, slot {t}")
    if bad:
        raise ModelError("batch schedule fails the validator: " + "; ".join(map(str, bad[:5])))


def solve_max_weight(instance: Any, jobs: Sequence[int], window: tuple[int, int], *,
                     usage: np.ndarray | None = None, time_limit: float = 60.0) -> BatchSolution:
    """Problem (7)/(16) exactly: the most weight of ``jobs`` completing in ``window`` = [lo, hi)."""
    t0 = time.perf_counter()
    lo, hi, free = _window_arrays(instance, window, usage)
    data = prepare(instance, jobs=list(jobs), window=(lo, hi - lo), free=free)
    if not any(jd.configs for jd in data.jobs):
        return BatchSolution(Status.OPTIMAL, 0.0, 0.0, [], time.perf_counter() - t0)
    model = build_milp(data, objective="weight")
    out = solve_model(model, time_limit=time_limit)
    placements = extract_milp(model) if out.has_solution else []
    if placements:
        check_batch_schedule(instance, placements, (lo, hi), usage)
        value = sum(instance.jobs[p.job].weight for p in placements)
        if out.objective is not None and abs(value - out.objective) > 1e-6 * max(1.0, value):
            raise ModelError(f"(7): solver weight {out.objective} != schedule weight {value}")
    elif out.has_solution:
        value = 0.0
    else:
        value = None
    bound = out.bound if out.bound is not None else value
    return BatchSolution(out.status, value, bound, placements, time.perf_counter() - t0)


def solve_min_cost(instance: Any, job: int, price: np.ndarray, window: tuple[int, int], *,
                   usage: np.ndarray | None = None, colocated: bool | None = None,
                   time_limit: float = 60.0) -> BatchSolution:
    """Problem (12)/(13) (or (20)/(21)) exactly: the cheapest schedule of one job under ``price``.

    Args:
        price: ``[H, R, T]`` delta_h^r(t) per unit of resource (>= 0).
        window: [lo, hi); the job starts at max(lo, a_j) or later and completes by hi.
        usage: ``[H, R, T]`` capacity already held (beta); free = C - usage.
        colocated: restrict to q_j = 1 (A_mincost2 / A_RAmincost1) or q_j = 0 (A_mincost1 /
            A_RAmincost2); None for both.

    Returns ``status infeasible`` with value None when no schedule fits.
    """
    t0 = time.perf_counter()
    lo, hi, free = _window_arrays(instance, window, usage)
    price = np.asarray(price, dtype=float)
    if (price < 0).any():
        raise ValueError("prices must be >= 0")
    data = prepare(instance, jobs=[job], window=(lo, hi - lo), free=free, colocated=colocated)
    if not data.jobs[0].configs:
        return BatchSolution(Status.INFEASIBLE, None, None, [], time.perf_counter() - t0)
    model = build_milp(data, objective="cost", prices=price[:, :, lo:hi])
    out = solve_model(model, time_limit=time_limit)
    if not out.has_solution:
        return BatchSolution(out.status, None, out.bound, [], time.perf_counter() - t0)
    placements = extract_milp(model)
    check_batch_schedule(instance, placements, (lo, hi), usage)
    value = placement_cost(instance, placements[0], price)
    if abs(value - out.objective) > 1e-6 * max(1.0, abs(value)):
        raise ModelError(f"(12): solver cost {out.objective} != cost of its schedule {value}")
    return BatchSolution(out.status, value, out.bound, placements, time.perf_counter() - t0)


def placement_load(instance: Any, p: Any) -> np.ndarray:
    """f_jh^r(l): ``[H, R]`` resources a schedule holds in each of its slots."""
    H, R = len(instance.servers), len(instance.resources)
    f = np.zeros((H, R))
    for h, c in p.workers.items():
        f[h] += c * instance.worker_demand[p.worker_type]
    ps_type = p.ps_type if p.ps_type is not None and p.ps_type >= 0 else None
    if ps_type is not None:
        for h, c in p.ps.items():
            f[h] += c * instance.ps_demand[ps_type]
    return f


def placement_cost(instance: Any, p: Any, price: np.ndarray) -> float:
    """sum_{t in T(l)} sum_h sum_r delta_h^r(t) f_jh^r(l) (the objective of (12))."""
    f = placement_load(instance, p)
    return float((np.asarray(price)[:, :, p.start:p.start + p.duration] * f[:, :, None]).sum())


# ---- column generation for the LP relaxation of (8) ------------------------------------------------

@dataclasses.dataclass
class Column:
    """A schedule l in Gamma_j: its job, window and per-slot load f_jh^r(l)."""

    job: int
    placement: Any
    load: np.ndarray


@dataclasses.dataclass
class ColGenResult:
    """The LP relaxation of (8)/(17) solved by column generation, with its dual (9)/(18).

    Attributes:
        lp_bound: optimum of the LP relaxation of (8) (>= OPT(7) when ``certified``).
        int_value: optimum of ILP (8) restricted to the generated columns (<= OPT(7)).
        delta: ``[H, R, hi - lo]`` dual values of the capacity rows (8a), per unit of resource.
        u: job id -> dual value of its row (8b).
        dual_objective: (9): sum_j u_j + sum_t,h,r delta_h^r(t) * free_h^r(t).
        columns: the generated columns.
        iterations: pricing rounds.
        certified: the exact pricing MILP found no improving column at the end.
        oracle_misses: columns the exact pricing found after the oracle found none (0 if the oracle is exact).
        runtime_s: seconds.
    """

    lp_bound: float
    int_value: float
    delta: np.ndarray
    u: dict[int, float]
    dual_objective: float
    columns: list[Column]
    iterations: int
    certified: bool
    oracle_misses: int
    runtime_s: float


class _Master:
    """The restricted master LP of (8) in highspy: rows (8a) per (h, r, t) and (8b) per job."""

    def __init__(self, free: np.ndarray, jobs: Sequence[int]) -> None:
        import highspy

        self.highspy = highspy
        self.H, self.R, self.L = free.shape
        self.jobs = list(jobs)
        self.row_of_job = {j: self.H * self.R * self.L + k for k, j in enumerate(self.jobs)}
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        inf = highspy.kHighsInf
        n_cap = self.H * self.R * self.L
        lower = np.concatenate([np.full(n_cap, -inf), np.full(len(self.jobs), -inf)])
        upper = np.concatenate([np.maximum(free, 0.0).ravel(), np.ones(len(self.jobs))])
        h.addRows(len(lower), lower, upper, 0, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32),
                  np.zeros(0))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h = h
        self.free = free
        self.columns: list[Column] = []

    def add(self, col: Column, weight: float, lo: int) -> None:
        t0, t1 = col.placement.start - lo, col.placement.start + col.placement.duration - lo
        idx, val = [], []
        for hh, r in zip(*np.nonzero(col.load), strict=True):
            for t in range(t0, t1):
                idx.append((hh * self.R + r) * self.L + t)
                val.append(col.load[hh, r])
        idx.append(self.row_of_job[col.job])
        val.append(1.0)
        self.h.addCol(float(weight), 0.0, self.highspy.kHighsInf, len(idx), np.array(idx, dtype=np.int32),
                      np.array(val, dtype=float))
        self.columns.append(col)

    def solve(self) -> tuple[float, np.ndarray, dict[int, float]]:
        self.h.run()
        status = self.h.getModelStatus()
        if status != self.highspy.HighsModelStatus.kOptimal:
            raise ModelError(f"master LP of (8) ended with {self.h.modelStatusToString(status)}")
        sol = self.h.getSolution()
        rd = np.asarray(sol.row_dual)
        # HiGHS reports duals of a maximisation with the sign of a minimisation of -objective:
        # take them as the non-negative multipliers of (9).
        if (rd > 1e-7).any() and (rd < -1e-7).any():
            raise ModelError("master LP duals of (8) have mixed signs")
        y = np.abs(rd)
        n_cap = self.H * self.R * self.L
        delta = y[:n_cap].reshape(self.H, self.R, self.L)
        u = {j: float(y[self.row_of_job[j]]) for j in self.jobs}
        return float(self.h.getInfo().objective_function_value), delta, u

    def solve_integer(self, time_limit: float) -> float:
        n = self.h.getNumCol()
        if n == 0:
            return 0.0
        self.h.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                                     np.full(n, self.highspy.HighsVarType.kInteger, dtype=np.uint8))
        highs_time_limit(self.h, time_limit)  # the master's LP solves count towards HiGHS's own limit
        self.h.setOptionValue("mip_rel_gap", 1e-9)
        self.h.run()
        status = self.h.getModelStatus()
        if status != self.highspy.HighsModelStatus.kOptimal:
            raise ModelError(f"integer master of (8) ended with {self.h.modelStatusToString(status)}")
        return float(self.h.getInfo().objective_function_value)


Oracle = Callable[[Any, int, np.ndarray, np.ndarray, tuple[int, int]], Any]


def mincost_oracle(instance: Any, job: int, price: np.ndarray, usage: np.ndarray, window: tuple[int, int]) -> Any:
    """A_mincost1/2 (or A_RAmincost1/2), lines 3-7 of Alg. 3: the cheapest schedule of ``job``."""
    from edgeopt.hetero.mincost import min_cost

    free = instance.capacity[:, :, None] - usage
    return min_cost(instance, job, price, free, window)


def exact_oracle(instance: Any, job: int, price: np.ndarray, usage: np.ndarray, window: tuple[int, int]) -> Any:
    """The MILP of (12): the cheapest schedule of ``job`` (exact, slower)."""
    sol = solve_min_cost(instance, job, price, window, usage=usage)
    if sol.status != Status.OPTIMAL or not sol.placements:
        if sol.status == Status.INFEASIBLE:
            return None
        raise ModelError(f"pricing MILP of job {job} ended {sol.status}")
    return sol.placements[0]


def column_generation(instance: Any, jobs: Sequence[int], window: tuple[int, int], *,
                      usage: np.ndarray | None = None, oracle: Oracle = mincost_oracle, certify: bool = True,
                      max_iterations: int = 500, int_time_limit: float = 60.0) -> ColGenResult:
    """The LP relaxation of packing ILP (8)/(17) for ``jobs`` in ``window`` by column generation.

    Each iteration prices every job with ``oracle`` under the master's duals delta and adds the
    schedule l if its reduced profit w_j - cost_delta(l) - u_j is positive. When no job prices out,
    ``certify`` re-prices each job with the exact MILP of (12); any column it finds is added
    (counted in ``oracle_misses``) and the loop goes on.
    """
    t_start = time.perf_counter()
    lo, hi, free = _window_arrays(instance, window, usage)
    H, R, T = len(instance.servers), len(instance.resources), instance.horizon
    beta = np.zeros((H, R, T)) if usage is None else np.asarray(usage, dtype=float)
    master = _Master(free, jobs)
    price = np.zeros((H, R, T))
    delta = np.zeros((H, R, hi - lo))
    u = {j: 0.0 for j in jobs}
    value = 0.0
    iterations = 0
    misses = 0
    certified = False
    seen: set[tuple] = set()

    def price_out(fn: Oracle) -> int:
        added = 0
        for j in jobs:
            pl = fn(instance, j, price, beta, (lo, hi))
            if pl is None:
                continue
            cost = placement_cost(instance, pl, price)
            if instance.jobs[j].weight - cost - u[j] > TOL * max(1.0, instance.jobs[j].weight):
                key = (j, pl.start, pl.duration, pl.worker_type, pl.ps_type, tuple(sorted(pl.workers.items())),
                       tuple(sorted(pl.ps.items())))
                if key in seen:
                    raise ModelError(f"column generation: column of job {j} priced out twice (duals inconsistent)")
                seen.add(key)
                master.add(Column(j, pl, placement_load(instance, pl)), instance.jobs[j].weight, lo)
                added += 1
        return added

    while iterations < max_iterations:
        iterations += 1
        added = price_out(oracle)
        if not added and certify:
            added = price_out(exact_oracle)
            misses += added
            certified = added == 0
        if not added:
            break
        value, delta, u = master.solve()
        price[:, :, lo:hi] = delta
    else:
        raise ModelError(f"column generation did not converge in {max_iterations} iterations")
    dual_obj = float(sum(u.values()) + (delta * np.maximum(free, 0.0)).sum())
    int_value = master.solve_integer(int_time_limit)
    return ColGenResult(value, int_value, delta, u, dual_obj, master.columns, iterations, certified, misses,
                        time.perf_counter() - t_start)


@dataclasses.dataclass
class BatchBounds:
    """The three numbers of Sec. 5 for one batch: int over columns <= OPT(7) <= LP(8)."""

    lp_bound: float
    int_over_columns: float
    optimum: float | None
    optimum_status: Status
    colgen: ColGenResult


def batch_bounds(instance: Any, jobs: Sequence[int], window: tuple[int, int], *,
                 usage: np.ndarray | None = None, time_limit: float = 60.0) -> BatchBounds:
    """LP bound of (8) (certified column generation), the integer optimum over its columns, and the
    exact optimum of (7), for ``jobs`` in ``window``."""
    cg = column_generation(instance, jobs, window, usage=usage, certify=True)
    opt = solve_max_weight(instance, jobs, window, usage=usage, time_limit=time_limit)
    return BatchBounds(cg.lp_bound, cg.int_value, opt.value, opt.status, cg)
