"""A_online (Alg. 1) with A_dual (Alg. 2) and A_maxweight (Alg. 3) of Zhou et al.;
the per-job cost minimisers A_mincost1/2 and A_RAmincost1/2 live in
`edgeopt.hetero.mincost` and are re-exported here.

Interpretations and departures (each needed to run the listing on a finite
horizon with real numbers; none changes what is computed when the paper's
assumptions hold):

* Prices (eq. 11) are taken in units of each server's capacity:
  ``delta_h^r(t) = (lambda ** (beta_h^r(t) / C_h^r) - 1) / C_h^r`` per natural
  unit, i.e. eq. (11) with resource r of server h measured in units of C_h^r.
  The dual (9) is unit-free under this change, and it makes F ("a job's weight
  over its resource consumption", Sec. 5.1) a unit-free number:
  consumption = sum_t sum_h sum_r f_jh^r(l) / C_h^r. Resources with zero
  capacity are priced 0 (nothing that needs them fits there anyway).
* ``lambda = 2 T H R F + 1``. F and w_min (Theorem 5) are not known to an
  online algorithm; unless F is given as a parameter, both are taken over the
  jobs arrived so far (F = max_j w_j / smallest consumption of any schedule of
  j, computed on the idle cluster with one PS). gamma = 2 ln(lambda); alpha per
  round = floor((ln w(J_i) - ln w_min) / (ln gamma - ln(gamma - 1))) + 1 (the
  simulation rule of Sec. 5.3, natural logarithms).
* Clock: the paper's slots are 1..T with tau_1 = 1, so round 1 decides
  before the first slot. On this 0-based clock round i decides at slot
  ``ceil(stretch * tau_i) - 1`` (0, 1, 3, 7, ... with the default
  ``stretch = 1``), tau_i = 2**(i-1), on the jobs arrived by then and not yet
  scheduled (J_i). A lone job arriving at slot 0 on an idle cluster can thus
  start at slot 0, as it can in every baseline and in the optimum.
* Window start (parameter ``window``): A_dual's iteration iota uses the window
  [S_i + (iota-1) tau_i, S_i + iota tau_i) clipped at T, where
  - ``window="tau"`` (default): S_i = the decision slot tau_i - 1;
  - ``window="alpha_tau"``: S_i = ceil(alpha_i tau_i) - 1, the paper's rule
    (Sec. 4: round i's schedule runs from alpha tau_i to alpha tau_{i+1}),
    with alpha_i the round's alpha below.
  The paper starts at alpha tau_i only so that the schedules of different
  rounds never overlap (each round then has the whole cluster). Here every
  decision is taken against one global capacity ledger and A_maxweight's
  beta_h^r(t) is the ledger's usage (jobs of earlier rounds included), so
  rounds may overlap without breaking capacity, and starting at tau_i - 1 is
  feasible. That default is a departure IN THE ALGORITHM'S FAVOUR: with the
  simulation rule for alpha (tens on the presets) the literal start lies far
  beyond the arrivals (round 1 at slot ~alpha - 1), usually beyond T = 20 of
  the small preset, so the literal reading rejects most jobs on a finite
  horizon. Both readings are reported (docs/reproduction/hetero.md).
  ``stretch`` (default 1) delays the decision slots.
* A_maxweight's job order (parameter ``order``; the paper does not fix it):
  ``"arrival"`` (default; arrival slot, then id) or ``"density"`` (largest
  w_j / shortest possible duration first, then arrival, then id).
* A_dual stops early when J_i is all scheduled (Sec. 5.3) or when its window
  passes T.
* Deadline rule (not in the paper, whose horizon is unbounded): a job that
  would no longer fit if deferred to the next round (next decision slot +
  its shortest duration > T) is scheduled now at its cheapest placement in
  [S_i, T) without the u_j > 0 test (S_i = the round's window start, so under
  ``window="alpha_tau"`` never before alpha_i tau_i - 1); if none fits it is
  rejected. Jobs arriving after the last decision slot get this rule at their
  arrival.
* ``online_every_slot`` (NOT in the paper; ours, to measure what the
  geometric batching costs): A_maxweight on the waiting jobs at every slot
  where some wait, over the window [t, T) (so a job is never held back for a
  round boundary or for a round long enough for it); jobs with u_j <= 0 wait
  for the next slot; the same prices, lambda, order and deadline rule.
* Jobs that fit nowhere even on the idle cluster (within [a_j, T)) are
  rejected on arrival.
* Inside A_online A_maxweight stops pricing a job once no schedule can cost less than w_j
  (``exact_costs=False``): the same decisions, far fewer evaluations.

Speed (benchmarks/hetero_online_speed.py, paper preset, 150 servers, T = 300, seed 0, process CPU
seconds on 2 shared cores): 250 / 500 / 1,000 / 2,000 / 4,000 jobs in 0.56 / 1.10 / 3.46 / 10.5 / 21.0 s
(2.2 / 2.2 / 3.5 / 5.2 / 5.2 ms per job), 5.6-6.1x faster than git a78fcc3 (3.2 / 6.4 / 19.3 / 61.6 /
127 s), the same objectives. The per-job search (`edgeopt.hetero.mincost.search`) runs in one compiled
kernel (`edgeopt.hetero.kernels`; the numpy reference is kept, ``mincost.REFERENCE``); a process loads it
from numba's disk cache in about 0.3 s CPU, or compiles it in about 13 s the first time. The paper preset
itself (300 jobs, T = 150): 0.56 s (a78fcc3: 2.6-3.7 s). The cost per job still grows with the jobs
(2.4x from 250 to 4,000): on a fuller cluster more (configuration, start) pairs pass the first lower
bound, and the kernel evaluates them in the reference's order (per search at 250 / 1,000 / 2,000 jobs:
1.0 / 136 / 267 second-stage bound checks, 1.8 / 14.8 / 27.8 colocated group evaluations).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from edgeopt.core import (
    CapacityLedger,
    OnlinePolicy,
    Result,
    register,
    run_online,
    stopwatch,
)
from edgeopt.hetero import mincost
from edgeopt.hetero.instance import Instance, Job
from edgeopt.hetero.mincost import (
    Configs,
    Placement,
    PricedWindow,
    check_search_size,
    fits_idle,
    idle_window,
    job_configs,
    min_cost,
    min_cost_colocated,
    min_cost_distributed,
    ra_min_cost_colocated,
    ra_min_cost_distributed,
    search,
)
from edgeopt.hetero.schedule import Schedule
from edgeopt.hetero.spec import FAMILY

__all__ = [
    "Decision",
    "MaxWeightOutcome",
    "Placement",
    "decision_slots",
    "dual_schedule",
    "lambda_of",
    "max_weight_batch",
    "min_cost",
    "min_cost_colocated",
    "min_cost_distributed",
    "online",
    "online_every_slot",
    "prices",
    "ra_min_cost_colocated",
    "ra_min_cost_distributed",
    "smallest_consumption",
]


# ---- prices -------------------------------------------------------------------------------------

def prices(usage: np.ndarray, capacity: np.ndarray, lam: float) -> np.ndarray:
    """delta per natural unit: ``(lam ** (beta / C) - 1) / C`` [H, R, T] (0 where C = 0)."""
    cap = np.asarray(capacity, dtype=float)[:, :, None]
    safe = np.where(cap > 0, cap, 1.0)
    frac = np.where(cap > 0, usage / safe, 0.0)
    return np.where(cap > 0, np.expm1(frac * math.log(lam)) / safe, 0.0)


def smallest_consumption(instance: Instance, job: Job, configs: Configs | None = None) -> float:
    """Smallest sum_t sum_h sum_r f/C of any schedule of ``job`` (one PS; the largest C_h^r per resource).

    A lower bound of the consumption of every schedule of the job, so that
    ``w_j / smallest_consumption`` bounds the paper's ratio w_j / consumption from above.
    """
    cf = configs if configs is not None else job_configs(instance, job)
    cmax = instance.capacity.max(axis=0)
    inv = np.where(cmax > 0, 1.0 / np.where(cmax > 0, cmax, 1.0), 0.0)
    we = instance.worker_demand @ inv
    wz = instance.ps_demand @ inv if len(instance.ps_types) else np.zeros(1)
    per = cf.d * (cf.n * we[cf.m] + np.where(cf.p >= 0, wz[np.maximum(cf.p, 0)], 0.0))
    return float(per.min()) if len(per) else math.inf


def lambda_of(instance: Instance, F: float) -> float:
    """lambda = 2 T H R F + 1 (eq. 11)."""
    return 2.0 * instance.horizon * len(instance.servers) * len(instance.resources) * max(F, 1e-12) + 1.0


# ---- A_maxweight (Alg. 3) -----------------------------------------------------------------------

@dataclasses.dataclass
class MaxWeightOutcome:
    """What A_maxweight built: the primal schedules and the dual values of (9).

    Attributes:
        placements: scheduled job id -> its schedule l_j (x_jl = 1).
        u: every input job id -> u_j = max(0, w_j - cost_j) (eq. 10), cost at the time j was considered.
        cost: every input job id -> its minimum cost at that time (inf if nothing fitted).
        delta: final prices [H, R, T] per natural unit (dual variables of (8a)); only the window's slots change.
        usage: beta_h^r(t) after the batch [H, R, T] (includes what was there before).
        window: (lo, hi) of the batch.
        lam: lambda of the price function.
    """

    placements: dict[int, Placement]
    u: dict[int, float]
    cost: dict[int, float]
    delta: np.ndarray
    usage: np.ndarray
    window: tuple[int, int]
    lam: float

    def dual_objective(self, instance: Instance) -> float:
        """(9): sum_j u_j + sum_{t in window} sum_h sum_r delta_h^r(t) C_h^r."""
        lo, hi = self.window
        return float(sum(self.u.values()) + (self.delta[:, :, lo:hi] * instance.capacity[:, :, None]).sum())


def max_weight_batch(instance: Instance, jobs: Sequence[Job | int], window: tuple[int, int], *,
                     usage: np.ndarray | None = None, lam: float | None = None, F: float | None = None,
                     configs: dict[int, Configs] | None = None, exact_costs: bool = True,
                     incremental: bool | None = None) -> MaxWeightOutcome:
    """A_maxweight (Alg. 3) on the jobs ``jobs`` (phi) within ``window`` = [lo, hi).

    Each job, in the given order, is priced by `min_cost` (A_mincost1/2 or
    A_RAmincost1/2) under the current prices; it is scheduled iff
    u_j = w_j - cost > 0, and then the prices of the slots and servers it uses
    rise by eq. (11). ``usage`` is beta before the batch (default: idle);
    ``lam`` defaults to `lambda_of` with F (default: max over ``jobs`` of
    w_j / `smallest_consumption`). With ``exact_costs=False`` the search for a
    job stops as soon as no schedule can cost less than w_j (the decisions and
    u_j are the same; ``cost[j]`` is then inf for every job left unscheduled). ``incremental=False``
    rebuilds the window's prices from scratch after every accepted job (the reference) instead of updating
    them for the accepted job's servers and slots (`PricedWindow.update`); the decisions are the same.
    The default (None) follows `edgeopt.hetero.mincost.REFERENCE`.
    """
    if incremental is None:
        incremental = not mincost.REFERENCE
    js = [instance.jobs[j] if isinstance(j, (int, np.integer)) else j for j in jobs]
    configs = configs if configs is not None else {}
    for j in js:
        if j.id not in configs:
            configs[j.id] = job_configs(instance, j)
    if lam is None:
        if F is None:
            F = max((j.weight / smallest_consumption(instance, j, configs[j.id]) for j in js), default=1.0)
        lam = lambda_of(instance, F)
    H, R, T = len(instance.servers), len(instance.resources), instance.horizon
    beta = np.zeros((H, R, T)) if usage is None else np.array(usage, dtype=float, copy=True)
    cap = instance.capacity
    delta = prices(beta, cap, lam)
    placements: dict[int, Placement] = {}
    u: dict[int, float] = {}
    costs: dict[int, float] = {}
    ctx = None
    free = cap[:, :, None] - beta  # kept current below, only in the slots a placement changed
    for j in js:
        if ctx is None:
            ctx = PricedWindow(instance, delta, free, int(window[0]), int(window[1]))
        pl = search(instance, j, delta, None, window, configs=configs[j.id], ctx=ctx,
                    cutoff=math.inf if exact_costs else j.weight)
        cost = pl.cost if pl is not None else math.inf
        costs[j.id] = cost
        u[j.id] = max(0.0, j.weight - cost)
        if pl is not None and j.weight - cost > 0:
            placements[j.id] = pl
            _reserve(instance, beta, pl)
            lo, hi = pl.start, pl.end
            # prices and free capacity changed only on the placement's servers and slots
            rows = np.array(sorted(set(pl.workers) | set(pl.ps)), dtype=np.int64)
            delta[rows, :, lo:hi] = prices(beta[rows, :, lo:hi], cap[rows], lam)
            free[rows, :, lo:hi] = cap[rows, :, None] - beta[rows, :, lo:hi]
            if incremental:
                ctx.update(delta, free, lo, hi, rows)
            else:
                ctx = None
    return MaxWeightOutcome(placements, u, costs, delta, beta, (int(window[0]), int(window[1])), lam)


def _reserve(instance: Instance, usage: np.ndarray, pl: Placement) -> None:
    rows = np.array(sorted(set(pl.workers) | set(pl.ps)), dtype=np.int64)  # the others add zero
    usage[rows, :, pl.start:pl.end] += pl.demand(instance)[rows, :, None]


# ---- A_dual (Alg. 2) ----------------------------------------------------------------------------

@dataclasses.dataclass
class DualOutcome:
    """A_dual's schedule: placements of J_i^s, the iterations run, and beta after them."""

    placements: dict[int, Placement]
    iterations: int
    usage: np.ndarray


def dual_schedule(instance: Instance, jobs: Sequence[Job | int], round_start: int, tau: int, alpha: int, *,
                  usage: np.ndarray | None = None, lam: float | None = None, F: float | None = None,
                  configs: dict[int, Configs] | None = None, exact_costs: bool = True) -> DualOutcome:
    """A_dual (Alg. 2): A_maxweight up to ``alpha`` times on the still unscheduled jobs,
    iteration iota in [round_start + (iota-1) tau, round_start + iota tau) (clipped at T).
    Stops early when every job is scheduled or the window passes T."""
    js = [instance.jobs[j] if isinstance(j, (int, np.integer)) else j for j in jobs]
    H, R, T = len(instance.servers), len(instance.resources), instance.horizon
    beta = np.zeros((H, R, T)) if usage is None else np.array(usage, dtype=float, copy=True)
    configs = configs if configs is not None else {}
    done: dict[int, Placement] = {}
    it = 0
    for iota in range(1, alpha + 1):
        lo = round_start + (iota - 1) * tau
        hi = min(T, round_start + iota * tau)
        if lo >= T or len(done) == len(js):
            break
        rest = [j for j in js if j.id not in done]
        # a job whose shortest schedule is longer than the window cannot be placed: skip the pricing
        rest = [j for j in rest if _shortest(instance, j, configs) <= hi - max(lo, j.arrival)]
        it = iota
        if not rest:
            continue
        out = max_weight_batch(instance, rest, (lo, hi), usage=beta, lam=lam, F=F, configs=configs,
                               exact_costs=exact_costs)
        done.update(out.placements)
        beta = out.usage
    return DualOutcome(done, it, beta)


def _shortest(instance: Instance, job: Job, configs: dict[int, Configs]) -> int:
    if job.id not in configs:
        configs[job.id] = job_configs(instance, job)
    cf = configs[job.id]
    return int(cf.d.min()) if len(cf) else 10**9


# ---- A_online (Alg. 1) --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Decision:
    """One decision slot of A_online: round ``index`` (i >= 1), ``tau`` = tau_i, decided at ``slot``."""

    index: int
    tau: int
    slot: int


def decision_slots(horizon: int, stretch: float = 1.0) -> list[Decision]:
    """The rounds deciding before ``horizon``: round i at slot ``ceil(stretch * tau_i) - 1`` (0-based clock;
    the paper's round i waits until time tau_i of the clock 1..T)."""
    if stretch < 1:
        raise ValueError(f"stretch must be >= 1, got {stretch}")
    out: list[Decision] = []
    i = 1
    while True:
        tau = 2 ** (i - 1)
        slot = math.ceil(stretch * tau) - 1
        if slot >= horizon:
            return out
        if not out or slot > out[-1].slot:
            out.append(Decision(i, tau, slot))
        i += 1


Window = Literal["tau", "alpha_tau"]
Order = Literal["arrival", "density"]


class OnlineScheduler(OnlinePolicy[Job]):
    """A_online: geometric rounds, A_dual per round, one global capacity ledger.

    ``every_slot=True`` is the `online_every_slot` variant (ours): A_maxweight at every slot over [t, T).
    """

    def __init__(self, instance: Instance, *, F: float | None = None, stretch: float = 1.0,
                 window: Window = "tau", order: Order = "arrival", every_slot: bool = False) -> None:
        super().__init__()
        self.inst = instance
        self.T = instance.horizon
        self.fixed_F = F
        self.window = window
        self.order = order
        self.every_slot = every_slot
        self.rounds = decision_slots(self.T, stretch)
        self.round_at = {r.slot: r for r in self.rounds}
        self.last_start = self.rounds[-1].slot if self.rounds else -1
        self.ledger = CapacityLedger(instance.capacity, self.T, instance.resources)
        self.idle = idle_window(instance)
        self.pending: list[Job] = []
        self.configs: dict[int, Configs] = {}
        self.placements: dict[int, Placement] = {}
        self.rejected: list[int] = []
        self.w_min = math.inf
        self.F_seen = 0.0
        self.log: list[dict[str, Any]] = []

    # discipline: everything below only reads jobs handed over by on_arrival
    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        for j in jobs:
            cf = job_configs(self.inst, j)
            self.configs[j.id] = cf
            if not fits_idle(self.inst, j, cf.select(cf.d <= self.T - j.arrival), self.idle):
                self.rejected.append(j.id)
                self.commit(j.id, {"rejected": True, "reason": "fits nowhere on the idle cluster"})
                continue
            self.w_min = min(self.w_min, j.weight)
            self.F_seen = max(self.F_seen, j.weight / smallest_consumption(self.inst, j, cf))
            self.pending.append(j)

    def next_wakeup(self, t: int) -> int | None:
        if self.every_slot:
            return t + 1 if self.pending and t + 1 < self.T else None
        later = [r.slot for r in self.rounds if r.slot > t]
        return later[0] if later else None

    def _lam(self) -> float:
        return lambda_of(self.inst, self.fixed_F if self.fixed_F is not None else self.F_seen)

    def on_slot(self, t: int) -> None:
        if not self.pending:
            return
        if self.every_slot:
            self._every_slot(t)
        elif t in self.round_at:
            self._round(t, self.round_at[t].tau)
        elif t > self.last_start:
            self._deadline(t, next_start=None, window_start=t)

    def ordered(self, jobs: Sequence[Job]) -> list[Job]:
        """A_maxweight's job order (``order``): arrival, or largest w_j / shortest duration first."""
        if self.order == "density":
            return sorted(jobs, key=lambda j: (-j.weight / _shortest(self.inst, j, self.configs), j.arrival, j.id))
        return sorted(jobs, key=lambda j: (j.arrival, j.id))

    def _round(self, slot: int, tau: int) -> None:
        jobs = self.ordered(self.pending)
        lam = self._lam()
        alpha = self._alpha(jobs, lam, slot, tau)
        start = slot if self.window == "tau" else max(slot, math.ceil(self._alpha(jobs, lam, slot, tau, cap=False)
                                                                      * tau) - 1)
        out = dual_schedule(self.inst, jobs, start, tau, alpha, usage=self.ledger.usage, lam=lam,
                            configs=self.configs, exact_costs=False)
        for jid in sorted(out.placements, key=lambda k: (out.placements[k].start, k)):
            self._commit(out.placements[jid])
        self.pending = [j for j in jobs if j.id not in out.placements]
        self.log.append({"slot": slot, "window_start": start, "tau": tau, "jobs": len(jobs),
                         "scheduled": len(out.placements), "alpha": alpha, "iterations": out.iterations,
                         "lambda": lam})
        nxt = self.next_wakeup(slot)
        self._deadline(slot, next_start=nxt, window_start=min(start, self.T))

    def _every_slot(self, t: int) -> None:
        jobs = self.ordered(self.pending)
        lam = self._lam()
        out = max_weight_batch(self.inst, jobs, (t, self.T), usage=self.ledger.usage, lam=lam,
                               configs=self.configs, exact_costs=False)
        for jid in sorted(out.placements, key=lambda k: (out.placements[k].start, k)):
            self._commit(out.placements[jid])
        self.pending = [j for j in jobs if j.id not in out.placements]
        if out.placements:
            self.log.append({"slot": t, "jobs": len(jobs), "scheduled": len(out.placements), "lambda": lam})
        self._deadline(t, next_start=t + 1 if t + 1 < self.T else None, window_start=t)

    def _alpha(self, jobs: Sequence[Job], lam: float, start: int, tau: int, cap: bool = True) -> int:
        """floor((ln w(J_i) - ln w_min) / (ln gamma - ln(gamma - 1))) + 1, gamma = 2 ln lambda (Sec. 5.3),
        capped (``cap``) at the number of windows left before T (later iterations would be empty)."""
        most = max(1, math.ceil((self.T - start) / tau))
        gamma = 2.0 * math.log(lam)
        if gamma <= 1.0 + 1e-12:
            return most if cap else 1
        wj = sum(j.weight for j in jobs)
        alpha = math.floor((math.log(wj) - math.log(self.w_min)) / (math.log(gamma) - math.log(gamma - 1))) + 1
        return max(1, min(alpha, most)) if cap else max(1, alpha)

    def _deadline(self, t: int, next_start: int | None, window_start: int) -> None:
        keep = []
        cap, lam = self.inst.capacity, self._lam()
        delta = free = ctx = None  # prices, free capacity and their window, built once and kept current
        for j in sorted(self.pending, key=lambda j: (j.arrival, j.id)):
            shortest = _shortest(self.inst, j, self.configs)
            if next_start is not None and next_start + shortest <= self.T:
                keep.append(j)
                continue
            usage = self.ledger.usage
            if delta is None or mincost.REFERENCE:  # the reference prices the whole ledger for every job
                delta = prices(usage, cap, lam)
                free = cap[:, :, None] - usage
                ctx = None
            if ctx is None and window_start < self.T:
                ctx = PricedWindow(self.inst, delta, free, window_start, self.T)
            pl = search(self.inst, j, delta, free, (window_start, self.T), configs=self.configs[j.id], ctx=ctx)
            if pl is None:
                self.rejected.append(j.id)
                self.commit(j.id, {"rejected": True, "reason": "no room before the horizon"})
            else:
                self._commit(pl, forced=True)
                if not mincost.REFERENCE:  # only the placement's servers and slots changed
                    rows = np.array(sorted(set(pl.workers) | set(pl.ps)), dtype=np.int64)
                    delta[rows, :, pl.start:pl.end] = prices(usage[rows, :, pl.start:pl.end], cap[rows], lam)
                    free[rows, :, pl.start:pl.end] = cap[rows, :, None] - usage[rows, :, pl.start:pl.end]
                    if ctx is not None:
                        ctx.update(delta, free, pl.start, pl.end, rows)
        self.pending = keep

    def _commit(self, pl: Placement, forced: bool = False) -> None:
        for h, c in pl.workers.items():
            self.ledger.reserve(h, c * self.inst.worker_demand[pl.worker_type], pl.start, pl.end)
        if pl.ps_type is not None:
            for h, c in pl.ps.items():
                self.ledger.reserve(h, c * self.inst.ps_demand[pl.ps_type], pl.start, pl.end)
        self.placements[pl.job] = pl
        payload = pl.to_schedule().model_dump(mode="json")
        payload["forced"] = forced
        self.commit(pl.job, payload)


@register("hetero", "online", kind="online", paper=True, ranges={"F": "> 0", "stretch": ">= 1"},
          summary="A_online (Alg. 1): geometric rounds, A_dual + A_maxweight with exponential prices (Zhou et al.)")
def online(instance: Instance, *, seed: int = 0, F: float | None = None, stretch: float = 1.0,
           window: Window = "tau", order: Order = "arrival") -> Result:
    """A_online of Zhou et al. through `run_online` (jobs are revealed at arrival). Deterministic.

    Args:
        F: the bound F of eq. (11) (largest weight over consumption); default: over the jobs seen so far.
        stretch: decision slots at ceil(stretch * tau_i) - 1 (>= 1; 1 is the paper's tau_i).
        window: round i's schedule starts at its decision slot tau_i - 1 ("tau", default) or at alpha_i tau_i - 1 ("alpha_tau", the paper's literal rule).
        order: A_maxweight's job order: "arrival" (default) or "density" (largest w_j / shortest duration first).
    """
    return _run_online(instance, "online", F=F, stretch=stretch, window=window, order=order, every_slot=False)


@register("hetero", "online_every_slot", kind="online", ranges={"F": "> 0"},
          summary="NOT in the paper (ours): A_maxweight at every slot over [t, T), no geometric rounds")
def online_every_slot(instance: Instance, *, seed: int = 0, F: float | None = None,
                      order: Order = "arrival") -> Result:
    """A variant of A_online that is not in the paper: no geometric batching. At every slot with waiting
    jobs, A_maxweight (same prices and lambda as `online`) prices each waiting job over [t, T) and schedules
    it iff u_j > 0; the rest wait for the next slot. It measures what waiting for round boundaries and for
    rounds long enough costs A_online. Online (jobs revealed at arrival), like `online`.

    Args:
        F: the bound F of eq. (11); default: over the jobs seen so far.
        order: A_maxweight's job order: "arrival" (default) or "density" (largest w_j / shortest duration first).
    """
    return _run_online(instance, "online_every_slot", F=F, stretch=1.0, window="tau", order=order,
                       every_slot=True)


def _run_online(instance: Instance, name: str, *, F: float | None, stretch: float, window: Window,
                order: Order, every_slot: bool) -> Result:
    from edgeopt.core import InputError

    check_search_size(instance)  # its windows reach the horizon: refused now, not after hours of rounds
    if stretch < 1:
        raise InputError("stretch", f"must be >= 1, got {stretch}")
    if window not in ("tau", "alpha_tau"):
        raise InputError("window", f"must be 'tau' or 'alpha_tau', got {window!r}")
    if order not in ("arrival", "density"):
        raise InputError("order", f"must be 'arrival' or 'density', got {order!r}")
    with stopwatch() as el:
        pol = OnlineScheduler(instance, F=F, stretch=stretch, window=window, order=order, every_slot=every_slot)
        late = run_online(pol, instance.jobs, instance.horizon)
        rejected = sorted(set(pol.rejected) | {int(x) for x in late} | {j.id for j in pol.pending})
        sched = Schedule(jobs=[pol.placements[k].to_schedule() for k in sorted(pol.placements)], rejected=rejected)
    forced = sum(1 for d in pol.decisions if isinstance(d.payload, dict) and d.payload.get("forced"))
    extra: dict[str, Any] = {"rounds": pol.log, "forced": forced, "order": order}
    if not every_slot:
        extra["window"] = window
    return FAMILY.algorithm_result(instance, name, sched, el[0], rejected=rejected, extra=extra)
