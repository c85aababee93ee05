"""BatchSche, She et al.'s baseline [8], as the reference algorithm on the edgecloud model.

Reference [8] of She et al. is Q. Zhang, R. Zhou, C. Wu, L. Jiao, Z. Li,
"Online scheduling of heterogeneous distributed machine learning jobs", Proc.
ACM MobiHoc 2020 (extended version: R. Zhou, J. Pang, Q. Zhang, C. Wu, L. Jiao,
Y. Zhong, Z. Li, "Online scheduling algorithm for heterogeneous distributed
machine learning jobs", IEEE). Its algorithm, run here on
She et al.'s model (one PS per job, fixed worker type u_j and PS type v_j,
eq. (1) rates, upload delays (2i)):

* Rounds (A_online): round i decides at slot tau_i = 2 ** (i - 1) (the same
  decision clock as She et al.'s A_online in this package) on J_i, the jobs
  that have arrived by then and are still unscheduled, in arrival order
  (then id).
* A_dual: up to alpha iterations of A_maxweight, iteration iota in the window
  ``[tau_i + (iota - 1) tau_i, tau_i + iota tau_i)`` (clipped at T), each on the
  jobs of J_i not placed yet; ``alpha = floor((ln |J_i| - ln w_min) / (ln gamma
  - ln(gamma - 1))) + 1``, ``gamma = 2 ln lambda`` (the paper's simulation rule;
  all weights are 1 here, She et al.'s objective is unweighted).
  `edgeopt.core.maxweight.dual_schedule` runs the loop.
* A_maxweight: a job is placed iff ``u_j = w_j - cost > 0`` (w_j = 1) with its
  minimum-cost placement under the current prices, which then rise.
* Min-cost placement (A_mincost1 / A_mincost2): the cheapest placement whose
  run lies inside the window, over start slots, worker counts 1..D_j, and
  both the colocated case (all workers with the PS, the colocated rate of
  eq. (1): A_mincost2) and the distributed case (A_mincost1). On this model,
  where a job's worker and PS types are fixed and it has one PS, these are
  exactly the minima COST_C / COST_D compute, so the search of
  `edgeopt.edgecloud.online.best_option` is reused with BatchSche's prices
  (same candidate start slots as A_online; see its docstring).
* Prices: eq. (11) of the reference with every resource measured in units of
  its capacity: one type-u worker on server s costs
  ``(lambda ** (f_su(t) / W_su) - 1) / W_su`` per slot, one type-v PS
  ``(lambda ** (g_sv(t) / P_sv) - 1) / P_sv`` (`edgeopt.core.maxweight.unit_prices`),
  ``lambda = 2 T H R F + 1`` with H = S servers and R = U + V resources
  (worker types and PS types). F bounds a job's weight over its resource
  consumption ``sum_t sum_s sum_r f / C``; unless given, it is taken over the
  jobs arrived so far as ``max_j 1 / (smallest consumption of any schedule of
  j)``, the smallest consumption being ``min_{w, xi} d_j(w, xi) (w / max_s W_su
  + 1 / max_s P_sv)`` (a lower bound over all placements).

Departures, stated: the schedule of round i runs from the decision slot
tau_i (the reference shifts A_dual's schedule to start at alpha * tau_i; with
this model's lambda, alpha is 100+ and the literal shift would push every job
past the horizon); this favours BatchSche, so it cannot make She et al.'s
A_online look better. Jobs still unscheduled after the last round (or
arriving after the last decision slot) are rejected, as in A_online: the
reference assumes an unbounded horizon and has no deadline rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from edgeopt.core import (
    CapacityLedger,
    OnlinePolicy,
    Result,
    geometric_rounds,
    price_base,
    register,
    run_online,
    stopwatch,
)
from edgeopt.core.maxweight import PricedLedger, dual_alpha, dual_schedule, dual_windows
from edgeopt.edgecloud.instance import Instance, Job, durations
from edgeopt.edgecloud.online import Option, best_option, finish, place
from edgeopt.edgecloud.schedule import JobRun
from edgeopt.edgecloud.state import make_ledger, reserve_run


@dataclasses.dataclass(frozen=True)
class UnitPrices:
    """BatchSche's capacity-normalised exponential prices, with the interface of `online.Prices`."""

    lam: float

    def arrays(
        self, instance: Instance, ledger: CapacityLedger, job: Job, lo: int, hi: int,
        rows_w: np.ndarray | slice = slice(None), rows_p: np.ndarray | slice = slice(None),
    ) -> tuple[np.ndarray, ...]:
        """``(price_w, price_p, free_w, free_p)`` per server and slot of ``[lo, hi)`` for ``job``'s types."""
        pl = PricedLedger(ledger, self.lam)
        u, r = job.worker_type, instance.n_worker_types + job.ps_type
        return (pl.prices(u, lo, hi, rows_w), pl.prices(r, lo, hi, rows_p),
                pl.free(u, lo, hi, rows_w), pl.free(r, lo, hi, rows_p))


def smallest_consumption(instance: Instance, job: Job) -> float:
    """``min_{w, xi} d_j(w, xi) (w / max_s W_su + 1 / max_s P_sv)``: a lower bound of any schedule's consumption."""
    wmax = float(instance.W()[:, job.worker_type].max())
    pmax = float(instance.P()[:, job.ps_type].max())
    if wmax <= 0 or pmax <= 0:
        return float("inf")
    d = durations(instance, job)  # [2, D]
    w = np.arange(1, job.chunks + 1)
    return float((d * (w / wmax + 1.0 / pmax)[None, :]).min())


class BatchScheScheduler(OnlinePolicy[Job]):
    """Geometric rounds; per round A_dual (A_maxweight over alpha windows) with unit prices."""

    def __init__(self, instance: Instance, F: float | None = None) -> None:
        super().__init__()
        self.instance = instance
        self.T = instance.horizon
        self.fixed_F = F
        self.rounds = {r.start: r for r in geometric_rounds(self.T)}
        self.ledger = make_ledger(instance)
        self.pending: list[Job] = []
        self.runs: dict[int, JobRun] = {}
        self.F_seen = 0.0
        self.shortest: dict[int, int] = {}
        self.log: list[dict] = []

    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        for job in jobs:
            self.pending.append(job)
            self.shortest[job.id] = int(durations(self.instance, job).min())
            cons = smallest_consumption(self.instance, job)
            if np.isfinite(cons) and cons > 0:
                self.F_seen = max(self.F_seen, 1.0 / cons)

    def next_wakeup(self, t: int) -> int | None:
        later = [s for s in self.rounds if s > t]
        return min(later) if later else None

    def lam(self) -> float:
        inst = self.instance
        F = self.fixed_F if self.fixed_F is not None else (self.F_seen or 1.0)
        return price_base(self.T, len(inst.servers), inst.n_worker_types + inst.n_ps_types, F)

    def on_slot(self, t: int) -> None:
        r = self.rounds.get(t)
        if r is None or not self.pending:
            return
        inst = self.instance
        jobs = sorted(self.pending, key=lambda j: (j.arrival, j.id))
        lam = self.lam()
        prices = UnitPrices(lam)
        alpha = dual_alpha(float(len(jobs)), 1.0, lam)
        windows = dual_windows(r.start, r.tau, alpha, self.T)

        def min_cost(job: Job, window: tuple[int, int]) -> tuple[float, Option] | None:
            lo, hi = window
            if self.shortest[job.id] > hi - lo:
                return None  # no run of this job fits in the window
            opt = best_option(inst, job, self.ledger, prices, lo, hi)  # type: ignore[arg-type]
            return None if opt is None else (opt.cost, opt)

        def commit(job: Job, opt: Option) -> None:
            run = place(inst, job, self.ledger, prices, opt).run(job.id)  # type: ignore[arg-type]
            reserve_run(self.ledger, inst, job, run)
            self.commit(job.id, run)
            self.runs[job.id] = run

        done, iterations = dual_schedule(jobs, windows, weight=lambda j: 1.0, min_cost=min_cost, commit=commit,
                                         key=lambda j: j.id)
        self.pending = [j for j in jobs if j.id not in done]
        self.log.append({"slot": t, "tau": r.tau, "jobs": len(jobs), "scheduled": len(done), "alpha": alpha,
                         "iterations": iterations, "lambda": lam})


@register("edgecloud", "batchsche", kind="baseline", ranges={"F": "> 0"},
          summary="BatchSche [8] (Zhang et al. MobiHoc 2020): geometric rounds, A_dual/A_maxweight, "
                  "min-cost placement, capacity-normalised exponential prices")
def batchsche(instance: Instance, *, seed: int = 0, F: float | None = None) -> Result:
    """BatchSche as its reference describes it, on She et al.'s model (deterministic).

    Args:
        F: bound of a job's weight per unit of normalised consumption (default: over the jobs seen so far)
    """
    from edgeopt.core import InputError

    if F is not None and F <= 0:
        raise InputError("F", f"must be > 0, got {F}")
    with stopwatch() as el:
        policy = BatchScheScheduler(instance, F)
        run_online(policy, instance.jobs, instance.horizon)
    return finish(instance, "batchsche", policy.runs, el[0], extra={"rounds": policy.log})
