"""Okita (Han et al., Sec. IV): Alg. 1 (framework: preprocessing with OSF, priority O_i(t) of eq. (4),
deployment with migrate-or-delay), Alg. 2 (PA, in `placement`) and Alg. 3 (DTA, in `placement`).

Readings of the listing (kept consistent with the validator and the exact models):

* Slots are decided one at a time; a job is seen only from its arrival slot (online).
* Preprocessing (lines 4-10): for every uncompleted job and every worker count N = 1 ..
  ceil(E_i M_i(t) / rho_i), l_i = ceil(E_i M_i(t) / rho_i / N) and OSF(i, t, l_i, C, N) with the full
  capacities C (line 7), cost ``bcost + f_i(t + l_i - a_i)`` (= f_i(completion - a_i + 1) for a run in
  slots t .. t+l_i-1, the latency reading of instance.py); the smallest wins, ties to the smaller N.
  OSF's bcost is PA's ``l_i * exchange cost`` (Alg. 2 line 12) plus DTA's transfer cost of slot t
  (line 36). The enumeration is exact but pruned: candidates are evaluated in increasing order of
  their lower bound ``PA cost + latency`` (DTA's cost is >= 0) and the search stops once the bound
  exceeds the best total found, which returns the same N as evaluating every N.
* Priority (eq. (4)): ``alpha1 tau_i (t - a_i) / max_j tau_j (t - a_j) - alpha2 M_i(t) / sum_r D_i^r``
  (first term 0 when the max is 0). tau_i is the cost's tau (exponential, linear), its mean slope
  (table). For the piecewise cost, Sec. V-C replaces the first term by the garbled
  ``alpha1 min((t - a_i - c_i) / max_j (t - a_j - c_j), 0)`` and says: the closer t - a_i is to c_i,
  the higher the priority; once c_i has passed, the latency need not be considered.
  ``piecewise_priority="step"`` (default) implements that intent: with L_i = c_i - (t - a_i + 1) the
  slots left before the step (if the job completed in slot t), the term is 1 - (L_i - 1) / max_j L_j
  for L_i > 0 (1 for the job with one slot left) and 0 once the step has passed. ``"literal"`` is the
  formula with |.| in the denominator (always <= 0, so piecewise jobs rank below every other kind in
  a mixed instance; on the small preset it lost deadlines that the optimum meets, ratio 2.4);
  ``"off"`` uses eq. (4) with tau = tau1.
* Deployment (lines 13-21), in decreasing priority (ties to the smaller job id): a job whose
  tentative placement does not fit the available resources Av(t) is migrated (OSF with Av) or delayed.
  ``delay_rule="listing"`` compares line 16 with line 17 literally: cost2 = cost1 - f(t + l - a) +
  f(t + 2l - a) >= cost1 for a non-decreasing f, so a job is delayed only when migration is
  infeasible. ``delay_rule="tentative"`` is the reading where delaying keeps the tentative placement's
  bandwidth: cost2 = bcost* + bcost(tentative) + f(t + 2l - a).
* Workload (line 22): d_i^r(t) = floor(rho_i y_i^r(t) / E_i); DTA moves what is missing (line 23).
* Horizon rule (ours; the paper's T is "a large time span"): the enumeration keeps only the N whose
  run ends by T-1 (t + l_i <= T) when there is one. Without it a job whose latency cost has become
  flat (a piecewise cost past its step c) picks the cheapest bandwidth, N = 1, and runs past T.
* A job whose worker and PS cannot be placed even in empty sites, or that is not finished at T-1,
  is rejected (status ``partial``); its slots are dropped from the schedule.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from edgeopt.core import Result, progress, register, stopwatch
from edgeopt.okita.instance import Instance, PiecewiseCost
from edgeopt.okita.placement import (
    INF,
    JobArrays,
    dta,
    dta_cost,
    instance_arrays,
    max_workers,
    metric_q,
    pa_fill,
    slot_cost,
    usage_of,
    workload,
)
from edgeopt.okita.schedule import Schedule, SlotEntry, entry, group_entries, objective_parts
from edgeopt.okita.spec import FAMILY

DelayRule = Literal["listing", "tentative"]
PiecewisePriority = Literal["step", "literal", "off"]


def most_workers(C: np.ndarray, ja: JobArrays, W: int) -> int:
    """The most workers of ``ja`` that sites of capacity ``C`` hold together (each site capped at W, as
    `pa_fill` caps it): every fill of `osf` over such sites places at most this many."""
    return int(max_workers(C, ja.m, W).sum())


class Plan:
    """A job's tentative schedule for slot t (Alg. 1 line 9): N*, l*, y, PS site, bandwidth cost."""

    __slots__ = ("N", "bcost", "l", "ps", "total", "y")

    def __init__(self, N: int, l: int, y: np.ndarray, ps: int, bcost: float, total: float) -> None:
        self.N, self.l, self.y, self.ps, self.bcost, self.total = N, l, y, ps, bcost, total


class OkitaScheduler:
    """State of Alg. 1 over the slots: remaining data M_i^r(t), bcost*_i, the schedule L."""

    def __init__(self, instance: Instance, *, alpha1: float, alpha2: float, betas: tuple[float, float, float],
                 delay_rule: DelayRule, piecewise_priority: PiecewisePriority) -> None:
        self.inst = instance
        self.C, self.q, self.src_order, self.jobs = instance_arrays(instance)
        self.alpha1, self.alpha2, self.betas = alpha1, alpha2, betas
        self.delay_rule = delay_rule
        self.piecewise_priority = piecewise_priority
        self.M = {ja.id: ja.D.copy() for ja in self.jobs}
        self.bcost = {ja.id: 0.0 for ja in self.jobs}
        self.entries: dict[int, list[SlotEntry]] = {}
        self.done: dict[int, int] = {}
        self.rejected: set[int] = set()
        self.stats = {"migrations": 0, "delays": 0, "osf_calls": 0}

    # ---- OSF (lines 32-38) for many N at once ------------------------------------------------
    def osf(self, ja: JobArrays, t: int, U: np.ndarray, Ns: np.ndarray, ls: np.ndarray,
            latency: np.ndarray | None) -> Plan | None:
        """The best of OSF(i, t, l, U, N) over the candidates (N, l): PA + DTA, plus latency if given."""
        M = self.M[ja.id]
        cap = int(Ns.max())
        Q = metric_q(U, self.C, self.q, M, ja.D, ja.pi, self.betas)
        fill = pa_fill(ja, U, Q, self.q, cap)
        costs = fill.costs(Ns)  # [nN, R] exchange cost of one slot per PS site
        best_rows = costs.shape[1] - 1 - np.argmin(costs[:, ::-1], axis=1)  # last tie, as best_ps
        pa_cost = ls * costs[np.arange(len(Ns)), best_rows]
        lb = pa_cost + (latency if latency is not None else 0.0)
        best: Plan | None = None
        for idx in np.argsort(lb, kind="stable"):
            if not np.isfinite(lb[idx]) or (best is not None and lb[idx] > best.total):
                break
            self.stats["osf_calls"] += 1
            y = fill.workers(int(best_rows[idx]), int(Ns[idx]))
            transfer = dta_cost(ja, self.q, M, workload(y, ja.k), self.src_order)
            total = lb[idx] + transfer
            if best is None or total < best.total - 1e-12 or (abs(total - best.total) <= 1e-12 and Ns[idx] < best.N):
                best = Plan(int(Ns[idx]), int(ls[idx]), y, int(best_rows[idx]), float(pa_cost[idx] + transfer),
                            float(total))
        return best

    def preprocess(self, ja: JobArrays, t: int) -> Plan | None:
        """Lines 5-9: enumerate N_i(t), keep the cheapest bcost + f_i(t + l_i - a_i).

        N runs up to the most workers empty sites hold (`most_workers`), not up to W: a larger N has no fill
        in `osf` (infinite cost), so it is never chosen, and a job of millions of chunks would otherwise
        enumerate millions of N per slot. ``ceil(W / N)`` falls with N, so some N of 1..W meets the horizon
        rule exactly when N = W does (the rule then keeps only the N that meet it)."""
        W = ja.worker_slots(int(self.M[ja.id].sum()))
        Ns = np.arange(1, min(W, most_workers(self.C, ja, W)) + 1)
        ls = np.ceil(W / Ns).astype(np.int64)
        if t + 1 <= self.inst.horizon:  # horizon rule (module docstring): N = W takes one slot
            fits = t + ls <= self.inst.horizon
            Ns, ls = Ns[fits], ls[fits]
        if not Ns.size:
            return None
        latency = np.asarray(ja.f(t + ls - ja.arrival), dtype=float)
        return self.osf(ja, t, self.C, Ns, ls, latency)

    # ---- priority (eq. 4) ------------------------------------------------------------------------
    def priorities(self, t: int, active: list[JobArrays]) -> np.ndarray:
        wait = np.array([t - ja.arrival for ja in active], dtype=float)
        remaining = np.array([self.M[ja.id].sum() / ja.D.sum() for ja in active])
        pw = np.array([self.piecewise_priority != "off" and isinstance(ja.job.latency_cost, PiecewiseCost)
                       for ja in active])
        first = np.zeros(len(active))
        tau = np.array([ja.job.latency_cost.slope for ja in active])
        lat = tau * wait
        mask = ~pw
        if mask.any() and lat[mask].max() > 0:
            first[mask] = lat[mask] / lat[mask].max()
        if pw.any():
            c = np.array([ja.job.latency_cost.c if isinstance(ja.job.latency_cost, PiecewiseCost) else 0.0
                          for ja in active])
            if self.piecewise_priority == "literal":
                gap = wait - c
                scale = np.abs(gap[pw]).max()
                if scale > 0:
                    first[pw] = np.minimum(gap[pw] / scale, 0.0)
            else:  # "step": slots left before f jumps, if the job completed in this slot
                left = c - (wait + 1)
                cheap = pw & (left > 0)
                if cheap.any():
                    first[cheap] = 1.0 - (left[cheap] - 1) / left[cheap].max()
        return self.alpha1 * first - self.alpha2 * remaining

    # ---- one slot of Alg. 1 ------------------------------------------------------------------
    def step(self, t: int, active: list[JobArrays]) -> None:
        plans: dict[int, Plan] = {}
        for ja in active:
            plan = self.preprocess(ja, t)
            if plan is None:  # no worker + PS fits even in empty sites: the job can never run
                self.rejected.add(ja.id)
            else:
                plans[ja.id] = plan
        active = [ja for ja in active if ja.id in plans]
        if not active:
            return
        prio = self.priorities(t, active)
        order = sorted(range(len(active)), key=lambda k: (-prio[k], active[k].id))
        Av = self.C.copy()
        R = len(self.C)
        for k in order:
            ja = active[k]
            plan = plans[ja.id]
            y, ps = plan.y, plan.ps
            if np.any(Av - usage_of(ja, y, ps, R) < -1e-9):  # line 14: conflict
                mig = self.osf(ja, t, Av, np.array([plan.N]), np.array([plan.l]), None)
                f_l = float(ja.f(t + plan.l - ja.arrival))
                f_2l = float(ja.f(t + 2 * plan.l - ja.arrival))
                cost1 = INF if mig is None else self.bcost[ja.id] + mig.bcost + f_l
                if self.delay_rule == "listing":
                    cost2 = cost1 - f_l + f_2l if mig is not None else INF
                else:
                    cost2 = self.bcost[ja.id] + plan.bcost + f_2l
                if mig is None or cost1 > cost2:
                    self.stats["delays"] += 1
                    continue
                self.stats["migrations"] += 1
                y, ps = mig.y, mig.ps
            M = self.M[ja.id]
            g = dta(M, workload(y, ja.k), self.src_order)
            transfer, exchange = slot_cost(ja, self.q, y, ps, g)
            self.bcost[ja.id] += transfer + exchange
            M -= g.sum(axis=1)
            Av -= usage_of(ja, y, ps, R)
            self.entries.setdefault(ja.id, []).append(entry(t, y, ps, g))
            if M.sum() == 0:
                self.done[ja.id] = t

    def run(self) -> Schedule:
        T = self.inst.horizon
        by_arrival = sorted(self.jobs, key=lambda ja: (ja.arrival, ja.id))
        for t in range(T):
            active = [ja for ja in by_arrival if ja.arrival <= t and ja.id not in self.done
                      and ja.id not in self.rejected]
            if active:
                self.step(t, active)
            progress.report(t + 1, T)
        for ja in self.jobs:
            if ja.id not in self.done:
                self.rejected.add(ja.id)
        for j in self.rejected:
            self.entries.pop(j, None)
        return Schedule(jobs=group_entries(self.entries), rejected=sorted(self.rejected))


@register("okita", "online", kind="online", paper=True,
          ranges={"alpha1": ">= 0", "alpha2": ">= 0", "beta1": ">= 0", "beta2": ">= 0", "beta3": ">= 0"},
          summary="Okita (Alg. 1-3): per-slot worker count by OSF, priority O_i(t), PA placement, greedy DTA")
def online(instance: Instance, *, seed: int = 0, alpha1: float = 1.0, alpha2: float = 1.0, beta1: float = 1.0,
           beta2: float = 1.0, beta3: float = 1.0, delay_rule: DelayRule = "listing",
           piecewise_priority: PiecewisePriority = "step") -> Result:
    """Okita of Han et al. (Alg. 1 with OSF, PA and DTA), slot by slot. Deterministic.

    The paper gives no numeric defaults for its proportional factors (Fig. 11-12 vary them around
    equal weights); we use 1 for each.

    Args:
        seed: unused (the algorithm is deterministic).
        alpha1: weight of the latency term of the priority O_i(t) (eq. 4).
        alpha2: weight of the remaining-data term of O_i(t) (eq. 4).
        beta1: weight of the available-resource term of the deployment metric Q_i^r(t) (eq. 6).
        beta2: weight of the bandwidth-cost term of Q_i^r(t) (eq. 6).
        beta3: weight of the local-remaining-data term of Q_i^r(t) (eq. 6).
        delay_rule: how line 17 prices a delay: listing (literal) or tentative (keeps the tentative placement's bandwidth).
        piecewise_priority: Sec. V-C's priority for piecewise costs: step (our reading), literal, or off (eq. 4).
    """
    with stopwatch() as el:
        sch = OkitaScheduler(instance, alpha1=alpha1, alpha2=alpha2, betas=(beta1, beta2, beta3),
                             delay_rule=delay_rule, piecewise_priority=piecewise_priority)
        schedule = sch.run()
    return FAMILY.algorithm_result(instance, "online", schedule, el[0], rejected=schedule.rejected,
                                   extra={**objective_parts(instance, schedule), **sch.stats})
