"""Baselines of Sec. V-A of Han et al.: FIFO, DRF (fixed worker counts, placement by Q_i^r, data
dispatched evenly at the start), and ``oasis_latency``, our stronger variant of OASiS (Bao et al., "Online
Job Scheduling in Distributed Machine Learning Clusters", IEEE INFOCOM 2018); the paper's OASiS is
``oasis`` in `edgeopt.okita.oasis`.

FIFO and DRF (Sec. V-A: "the number and the deployment of workers ... are fixed throughout the training
process, the training data ... dispatched evenly to sites in a greedy fashion once jobs arrive"):

* A job holds the same workers y^r and PS site in every slot from its start s_i to its completion, so it
  starts only when that placement fits the free resources of all those slots.
* Placement: Alg. 2 (PA) with the metric Q_i^r of eq. (6) (beta = 1) over the resources free during the
  run, evaluated when the job starts (its arrival a_i unless it had to wait).
* Dispatch: the job's chunks are split over its worker sites in proportion to their per-slot workload
  floor(rho y^r / E) (largest remainders), the split is served local-first then from the cheapest sites
  (Alg. 3 on the totals), and each site trains its share at its per-slot workload, so all sites finish
  together (within one slot). Chunks move in the slot they are trained, as (2b) requires.
* FIFO: jobs start strictly in arrival order (a job waits while an earlier one waits). N_i is drawn
  uniformly in [1, max(1, floor(0.5 A_i(a_i)))] at arrival (seeded), A_i(a_i) = workers of job i that
  fit the free resources of slot a_i over all sites; capped at the worker-slots the job needs. The
  paper's horizon is "a large time span"; ours is finite, so the draw's floor is raised to the fewest
  workers that finish by T if started at a_i (ceil(W_i / (T - a_i))): without it a draw of 1 worker
  would reject jobs only because of our horizon (seen on the small preset).
* DRF: every slot, the waiting jobs' worker counts come from progressive filling (Ghodsi et al., NSDI
  2011): one worker at a time to the waiting job of smallest dominant share max_k (N m^k + n^k) / sum_r
  C_r^k, while the aggregate free resources allow; a job then starts with that count (lowered by one
  until PA places it), in arrival order.

OASiS, two versions (both plan a job once, at its arrival, and move its data slot by slot with DTA, as
Sec. V-A says):

* ``oasis`` (module `edgeopt.okita.oasis`): OASiS as Bao et al. and Sec. V-A describe it: per-resource
  exponential prices, placement by priced (deployment) cost only, admission by payoff. See that module.
* ``oasis_latency`` (ours, `OasisScheduler` below; it was called ``oasis`` before): a stronger variant.
  For each newly arrived job (in arrival order), the schedule of least cost under exponential
  unit-resource prices: per slot t and worker count x, the cheapest placement of x workers and one PS
  (workers filled on the cheapest sites for each PS site), priced ``sum_k p_{r,k}(t) * demand_k / C_r^k
  + pi q^{r, ps}`` -- the job's true parameter-exchange cost is part of the price, which OASiS does not
  have; a dynamic program over the slots picks the per-slot worker counts that collect the
  worker-slots the job needs at least cost plus the job's true latency cost f_i at the completion. The
  plan is reserved (raising the prices). Choices of ours: (i) the price of resource k at utilisation u
  of site r in slot t is ``p(u) = L (U / L) ** (u / C_r^k)`` with one scalar U = the largest and L = a
  quarter of the smallest value per worker-slot f_i(1) / W_i over the jobs; (ii) no admission rule:
  every job with a feasible plan is admitted and a job without one is rejected (status partial);
  (iii) a job whose plan leaves chunks (a non-integer rho/E floors its workload) is planned again from
  the next slot.
"""

from __future__ import annotations

import numpy as np

from edgeopt.core import Result, register, stopwatch
from edgeopt.okita.instance import Instance
from edgeopt.okita.placement import (
    INF,
    Fill,
    JobArrays,
    dta,
    instance_arrays,
    max_workers,
    metric_q,
    pa_fill,
    usage_of,
    workload,
)
from edgeopt.okita.schedule import Schedule, SlotEntry, entry, group_entries, objective_parts
from edgeopt.okita.spec import FAMILY

BETAS = (1.0, 1.0, 1.0)


# ---- fixed placements (FIFO, DRF) ------------------------------------------------------------------

def _even_split(total: int, cap: np.ndarray) -> np.ndarray:
    """``total`` chunks over sites in proportion to ``cap`` (largest remainders, ties to lower index)."""
    S = cap.sum()
    exact = total * cap / S
    share = np.floor(exact).astype(np.int64)
    rest = total - share.sum()
    if rest > 0:
        frac = exact - share
        share[np.argsort(-frac, kind="stable")[:rest]] += 1
    return share


def fixed_run(ja: JobArrays, y: np.ndarray, src_order: np.ndarray) -> list[np.ndarray]:
    """Per-slot transfers g [R, R] of a job that keeps workers y until all its chunks are trained."""
    cap = workload(y, ja.k)
    share = _even_split(int(ja.D.sum()), cap)
    plan = dta(ja.D.copy(), share, src_order)  # totals: local first, then cheapest sources
    out = []
    left = plan.copy()
    while left.any():
        g = np.zeros_like(plan)
        for r in np.flatnonzero(left.sum(axis=0)):
            room = cap[r]
            col = left[:, r]
            srcs = [r] + [s for s in src_order[r] if s != r]
            for s in srcs:
                if room == 0:
                    break
                take = min(room, col[s])
                if take:
                    g[s, r] += take
                    col[s] -= take
                    room -= take
        out.append(g)
    return out


def _place_fixed(ja, N: int, free_window: np.ndarray, C, q, cap_workers: int):
    """PA with the Q metric on the resources free during the run; (y, ps) or None."""
    Q = metric_q(free_window, C, q, ja.D, ja.D, ja.pi, BETAS)
    fill = pa_fill(ja, free_window, Q, q, cap_workers)
    costs = fill.costs(np.array([N]))[0]
    if not np.isfinite(costs).any():
        return None
    row = len(costs) - 1 - int(np.argmin(costs[::-1]))
    return fill.workers(row, N), row


class FixedScheduler:
    """Shared bookkeeping of FIFO and DRF: reservations [T, R, K] and per-job entries."""

    def __init__(self, instance: Instance) -> None:
        self.inst = instance
        self.C, self.q, self.src_order, self.jobs = instance_arrays(instance)
        T = instance.horizon
        self.reserved = np.zeros((T,) + self.C.shape)
        self.entries: dict[int, list[SlotEntry]] = {}
        self.started: set[int] = set()
        self.rejected: set[int] = set()

    def try_start(self, ja: JobArrays, N: int, t: int) -> bool | None:
        """Start job ``ja`` at slot t with N workers: True if started, False if it must wait, None if it
        can never finish by the horizon from t."""
        T = self.inst.horizon
        W = ja.worker_slots(int(ja.D.sum()))
        l = int(np.ceil(W / N))
        for _ in range(3):  # the floors of a non-integer rho/E can lengthen the run; re-check the window
            if t + l > T:
                return None
            free = (self.C[None] - self.reserved[t:t + l]).min(axis=0)
            placed = _place_fixed(ja, N, free, self.C, self.q, N)
            if placed is None:
                return False
            y, ps = placed
            run = fixed_run(ja, y, self.src_order)
            if len(run) <= l:
                break
            l = len(run)
        else:
            return False
        if t + len(run) > T:
            return None
        u = usage_of(ja, y, ps, len(self.C))
        for dt, g in enumerate(run):
            self.reserved[t + dt] += u
            self.entries.setdefault(ja.id, []).append(entry(t + dt, y, ps, g))
        self.started.add(ja.id)
        return True

    def schedule(self) -> Schedule:
        rejected = sorted(set(self.rejected) | {ja.id for ja in self.jobs if ja.id not in self.started})
        for j in rejected:
            self.entries.pop(j, None)
        return Schedule(jobs=group_entries(self.entries), rejected=rejected)


@register("okita", "fifo", kind="baseline", randomized=True,
          summary="FIFO (Sec. V-A): arrival order, fixed worker count in [1, 0.5 A_i(a_i)], Q placement, even data")
def fifo(instance: Instance, *, seed: int = 0) -> Result:
    """FIFO of Sec. V-A (see the module docstring for every reading).

    Args:
        seed: seeds the draw of each job's fixed worker count in [1, 0.5 A_i(a_i)].
    """
    with stopwatch() as el:
        rng = np.random.default_rng(seed)
        fs = FixedScheduler(instance)
        queue = sorted(fs.jobs, key=lambda ja: (ja.arrival, ja.id))
        counts: dict[int, int] = {}
        head = 0
        for t in range(instance.horizon):
            for ja in queue:  # N_i fixed at arrival from A_i(a_i)
                if ja.arrival == t:
                    A = int(max_workers(fs.C - fs.reserved[t], ja.m, 10**9).sum())
                    hi = max(1, A // 2)
                    W = ja.worker_slots(int(ja.D.sum()))
                    lo = min(max(1, -(-W // (instance.horizon - t))), W)  # fewest that finish by T from a_i
                    hi = max(lo, min(hi, W))
                    counts[ja.id] = int(rng.integers(lo, hi + 1))
            while head < len(queue) and queue[head].arrival <= t:
                ok = fs.try_start(queue[head], counts[queue[head].id], t)
                if ok is None:
                    fs.rejected.add(queue[head].id)
                elif not ok:
                    break
                head += 1
        schedule = fs.schedule()
    return FAMILY.algorithm_result(instance, "fifo", schedule, el[0], rejected=schedule.rejected,
                                   extra={**objective_parts(instance, schedule), "worker_counts": counts})


def drf_counts(waiting: list[JobArrays], free_total: np.ndarray, total_C: np.ndarray) -> dict[int, int]:
    """Progressive filling: one worker at a time to the job of smallest dominant share that still fits."""
    N = {ja.id: 0 for ja in waiting}
    used = np.zeros_like(free_total)
    need = {ja.id: ja.worker_slots(int(ja.D.sum())) for ja in waiting}
    safe_C = np.where(total_C > 0, total_C, 1.0)
    active = list(waiting)
    while active:
        shares = [max(((N[ja.id] * ja.m + (ja.n if N[ja.id] else 0)) / safe_C).max(), 0.0) for ja in active]
        k = int(np.argmin(shares))
        ja = active[k]
        inc = ja.m + (ja.n if N[ja.id] == 0 else 0.0)
        if N[ja.id] >= need[ja.id] or np.any(used + inc > free_total + 1e-9):
            active.pop(k)
            continue
        used += inc
        N[ja.id] += 1
    return N


@register("okita", "drf", kind="baseline",
          summary="DRF (Sec. V-A): fixed worker counts by multi-resource max-min fairness, Q placement, even data")
def drf(instance: Instance, *, seed: int = 0) -> Result:
    """DRF of Sec. V-A (see the module docstring for every reading). Deterministic.

    Args:
        seed: unused (deterministic).
    """
    with stopwatch() as el:
        fs = FixedScheduler(instance)
        total_C = fs.C.sum(axis=0)
        queue = sorted(fs.jobs, key=lambda ja: (ja.arrival, ja.id))
        counts: dict[int, int] = {}
        for t in range(instance.horizon):
            waiting = [ja for ja in queue if ja.arrival <= t and ja.id not in fs.started
                       and ja.id not in fs.rejected]
            if not waiting:
                continue
            N = drf_counts(waiting, (fs.C - fs.reserved[t]).sum(axis=0), total_C)
            for ja in waiting:
                n = N[ja.id]
                while n >= 1:
                    ok = fs.try_start(ja, n, t)
                    if ok is None:  # cannot finish by T with n workers (nor fewer); it may get more later
                        break
                    if ok:
                        counts[ja.id] = n
                        break
                    n -= 1
        schedule = fs.schedule()
    return FAMILY.algorithm_result(instance, "drf", schedule, el[0], rejected=schedule.rejected,
                                   extra={**objective_parts(instance, schedule), "worker_counts": counts})


# ---- OASiS -----------------------------------------------------------------------------------------

class OasisScheduler:
    """``oasis_latency`` (ours): plans each job at arrival under exponential unit-resource prices plus the
    exchange cost, against its true latency cost; executes with DTA. Every job with a plan is admitted.

    `edgeopt.okita.oasis.OasisPrimalDual` (``oasis``) reuses the dynamic program and overrides the hooks
    ``unit_prices``, ``exchange_in_placement`` and ``admit``.
    """

    #: whether the per-worker placement price includes the exchange cost pi q^{r, ps} (OASiS has no such term)
    exchange_in_placement = True

    def __init__(self, instance: Instance) -> None:
        self.inst = instance
        self.C, self.q, self.src_order, self.jobs = instance_arrays(instance)
        T = instance.horizon
        self.reserved = np.zeros((T,) + self.C.shape)
        vals = [float(ja.f(1)) / max(1, ja.worker_slots(int(ja.D.sum()))) for ja in self.jobs] or [1.0]
        self.U = max(max(vals), 1e-6)
        self.L = max(min(vals) / 4, 1e-9)
        if self.U <= self.L:
            self.U = self.L * 4
        self.plans: dict[int, dict[int, tuple[np.ndarray, int]]] = {}
        self.M = {ja.id: ja.D.copy() for ja in self.jobs}
        self.entries: dict[int, list[SlotEntry]] = {}
        self.done: set[int] = set()
        self.rejected: set[int] = set()

    def prices(self, t: int) -> np.ndarray:
        """p [R, K] per unit of capacity share at slot t."""
        safe = np.where(self.C > 0, self.C, 1.0)
        u = np.where(self.C > 0, self.reserved[t] / safe, 1.0)
        return self.L * (self.U / self.L) ** u

    def unit_prices(self, t: int) -> np.ndarray:
        """Price [R, K] of one unit of each resource at each site in slot t."""
        safe = np.where(self.C > 0, self.C, 1.0)
        return self.prices(t) / safe

    def admit(self, ja: JobArrays, cost: float) -> bool:
        """Whether a job whose best plan costs ``cost`` (priced resources + latency) is admitted: always."""
        return True

    def slot_fill(self, ja: JobArrays, t: int, W: int) -> tuple[Fill, np.ndarray]:
        free = self.C - self.reserved[t]
        p = self.unit_prices(t)
        wprice = p @ ja.m
        psprice = p @ ja.n
        R = len(self.C)
        unit_all = wprice[None, :] + ja.pi * self.q.T if self.exchange_in_placement else np.tile(wprice, (R, 1))
        order = np.argsort(unit_all, axis=1, kind="stable")
        base = max_workers(free, ja.m, W)
        with_ps = max_workers(free - ja.n[None, :], ja.m, W)
        ps_ok = np.all(free + 1e-9 >= ja.n[None, :], axis=1)
        A_site = np.broadcast_to(base, (R, R)).copy()
        A_site[np.arange(R), np.arange(R)] = np.where(ps_ok, with_ps, 0)
        rows = np.arange(R)[:, None]
        fill = Fill(order, A_site[rows, order], unit_all[rows, order], ps_ok)
        return fill, psprice

    def plan(self, ja: JobArrays, start: int, *, admission: bool = True) -> bool:
        """The DP over slots start..T-1; reserves the best plan. False when none exists or, with
        ``admission``, when `admit` refuses it."""
        T = self.inst.horizon
        W = ja.worker_slots(int(self.M[ja.id].sum()))
        # Workers that fit per slot, ignoring the PS: when even these cannot give W worker-slots by T-1,
        # no plan exists (this also keeps the DP's [W, x] table from being built for a hopeless job).
        fit = [int(max_workers(self.C - self.reserved[t], ja.m, W).sum()) for t in range(start, T)]
        if sum(min(W, f) for f in fit) < W:
            return False
        ws = np.arange(W + 1)
        G = np.full(W + 1, INF)
        G[0] = 0.0
        choices, fills = [], []
        best, best_c = INF, None
        for t in range(start, T):
            lat = float(ja.f(t - ja.arrival + 1))
            if lat >= best:
                break
            fill, psprice = self.slot_fill(ja, t, W)
            # x above the largest fill of any PS site costs inf, so the DP only looks at x <= X
            X = min(W, int(fill.cum[fill.ps_ok, -1].max(initial=0)))
            xs = np.arange(X + 1)
            c = fill.costs(xs) + psprice[None, :]
            rows = c.shape[1] - 1 - np.argmin(c[:, ::-1], axis=1)
            cost_x = c[xs, rows]
            cost_x[0] = 0.0
            tot = G[:, None] + cost_x[None, :]  # [w, x]
            idx = np.minimum(ws[:, None] + xs[None, :], W)  # state after taking x from w
            newG = np.full(W + 1, INF)
            arg = np.zeros(W + 1, dtype=np.int64)
            prev = np.zeros(W + 1, dtype=np.int64)
            flat_t = tot.ravel()
            flat_i = idx.ravel()
            order = np.lexsort((flat_t, flat_i))
            first = np.ones(len(order), dtype=bool)
            first[1:] = flat_i[order][1:] != flat_i[order][:-1]
            sel = order[first]
            newG[flat_i[sel]] = flat_t[sel]
            arg[flat_i[sel]] = sel % (X + 1)
            prev[flat_i[sel]] = sel // (X + 1)
            G = newG
            choices.append((prev, arg))
            fills.append((fill, rows))
            if np.isfinite(G[W]) and G[W] + lat < best:
                best, best_c = G[W] + lat, t
        if best_c is None or (admission and not self.admit(ja, best)):
            return False
        # backtrack
        w = W
        plan: dict[int, tuple[np.ndarray, int]] = {}
        for t in range(best_c, start - 1, -1):
            k = t - start
            prev, arg = choices[k]
            x = int(arg[w])
            if x > 0:
                fill, rows = fills[k]
                row = int(rows[x])
                y = fill.workers(row, x)
                plan[t] = (y, row)
            w = int(prev[w])
        for t, (y, ps) in plan.items():
            self.reserved[t] += usage_of(ja, y, ps, len(self.C))
        self.plans[ja.id] = plan
        return True

    def run(self) -> Schedule:
        T = self.inst.horizon
        pending = sorted(self.jobs, key=lambda ja: (ja.arrival, ja.id))
        replan: list[JobArrays] = []
        for t in range(T):
            for ja in [j for j in replan] + [j for j in pending if j.arrival == t]:
                if not self.plan(ja, t, admission=ja not in replan):  # an admitted job is not re-admitted
                    self.rejected.add(ja.id)
            replan = []
            for ja in self.jobs:
                plan = self.plans.get(ja.id)
                if ja.id in self.done or ja.id in self.rejected or not plan or t not in plan:
                    continue
                y, ps = plan.pop(t)
                M = self.M[ja.id]
                g = dta(M, workload(y, ja.k), self.src_order)
                M -= g.sum(axis=1)
                self.entries.setdefault(ja.id, []).append(entry(t, y, ps, g))
                if M.sum() == 0:
                    self.done.add(ja.id)
                    for t2, (y2, ps2) in plan.items():  # release what is no longer needed
                        self.reserved[t2] -= usage_of(ja, y2, ps2, len(self.C))
                    plan.clear()
                elif not plan:
                    if t + 1 < T:
                        replan.append(ja)
                    else:
                        self.rejected.add(ja.id)
        rejected = sorted(self.rejected | {ja.id for ja in self.jobs if ja.id not in self.done})
        for j in rejected:
            self.entries.pop(j, None)
        return Schedule(jobs=group_entries(self.entries), rejected=rejected)


@register("okita", "oasis_latency", kind="baseline",
          summary="OASiS-like (ours, stronger than the paper's): least plan cost at arrival = exponential resource "
                  "prices + exchange cost + true latency cost, every job admitted, DTA data transfer")
def oasis_latency(instance: Instance, *, seed: int = 0) -> Result:
    """Our OASiS-like variant (module docstring): a DP over each job's true latency cost plus its priced
    resources and exchange cost, no admission rule. Not the paper's OASiS (that is ``oasis``). Deterministic.

    Args:
        seed: unused (deterministic).
    """
    with stopwatch() as el:
        sch = OasisScheduler(instance)
        schedule = sch.run()
    return FAMILY.algorithm_result(instance, "oasis_latency", schedule, el[0], rejected=schedule.rejected,
                                   extra=objective_parts(instance, schedule))
