"""One okita job alone, at given prices or beside fixed other jobs: its exact model, a solver-free lower
bound, and a fast primal plan.

The problem (program (2) for one job i, costs (1)): choose the completion slot c in [a_i, last], per slot
t in [a_i, c] either nothing or a PS site p_t and integer workers y_{r',t} (slot c has workers), and the
chunks x_{r,r'} of origin r trained at r' (sum_{r'} x_{r,r'} = D_i^r; at r' in slot t at most
floor(k_i y_{r',t}) of them, k_i = rho_i / E_i, (2b)). It pays

    f_i(c - a_i + 1) + sum_{r,r'} delta_i q^{r r'} x_{r,r'}
    + sum_{t active} [ P(p_t, t) + sum_{r'} (w(r', t) + pi_i q^{r' p_t}) y_{r',t} ],

where w(r', t) (per worker) and P(p, t) (for the PS) are prices: sum_k price[r', k, t] m_i^k and
sum_k price[p, k, t] n_i^k. Per slot the job's own resources must fit the site (``cap_alone[t, r']``
workers at a site without its PS, ``cap_ps[t, p]`` at the PS's site, -1 where the PS does not fit):
the sites' capacities (a bound's pricing problem, prices > 0) or what the other jobs leave (the
large-neighbourhood move, prices 0). A chunk can be trained in any slot, so only the totals x matter
for the transfer cost (as in `cpsat._add_total_transfers`).

Four solvers share the data (`SingleJob`):

* `exact` -- a MILP solved by HiGHS (highspy): the workers disaggregated by PS site, y_{t,p,r'} <=
  cap u_{t,p}, so the exchange cost is linear and needs no big-M row (the relaxation of CP-SAT's
  epigraph rows is what makes one job hard for it). Exact (tested against brute force); sized for
  small sites x slots, a time limit otherwise.
* `exact_grouped` -- the same problem with the slots of equal caps and prices counted instead of named (one
  MILP per completion): exact when k = rho / E is an integer, a lower bound with a feasible plan otherwise.
  It removes `exact`'s symmetry between equal slots; at 50 sites it still proves no job in 60 s (what is
  left is the workers' integrality, docs/families/okita.md).
* `lagrangian` -- a lower bound that needs no solver: relax "every chunk of origin r is trained exactly
  once" with multipliers mu_r >= 0 (one per origin site; any mu is valid). The rest splits into one
  problem per slot: min over PS sites p of P(p, t) + sum_{r'} min over whole workers y <= cap of
  ((w(r', t) + pi q^{r' p}) y - F_{r'}(y)), F_{r'}(y) the best profit mu_r - delta q^{r r'} of k y chunks
  (or nothing), and the completion c is enumerated (the function's docstring). Counting k y chunks for
  floor(k y) only lowers it. `improve_multipliers` finds good mu by a projected subgradient ascent
  (Polyak steps towards a known plan's cost). The value is lowered by a bound on its own float
  rounding, so the minimum it states is below the exact one.
* `plan` -- a complete plan from the Lagrangian's choices (completion, active slots, PS sites), then
  the transfers and workers by a min-cost flow LP with the PS sites fixed, rounded up to whole workers
  per site (cheapest slots first). Feasible, not always optimal.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from edgeopt.core.colgen import _gamma
from edgeopt.okita.placement import max_workers
from formulations.okita.bounds import worker_slots

#: Multipliers tried per `improve_multipliers` call when none is given.
SUBGRADIENT_STEPS = 40
#: Steps in a row without a better value before `improve_multipliers` halves its step length and goes back
#: to the best multipliers found (its default), and the longer patience `best_multipliers` also tries.
STALL_PATIENCE = 3
LONG_PATIENCE = 20


@dataclasses.dataclass(frozen=True)
class Plan:
    """One job's complete schedule: per active slot (t, PS site, ((site, workers), ...)) and the transfer
    totals ((origin, site, chunks), ...) with the chunks each slot trains at each site."""

    slots: tuple[tuple[int, int, tuple[tuple[int, int], ...]], ...]
    moves: tuple[tuple[int, int, int], ...]
    trained: tuple[tuple[int, int, int], ...]  # (slot, site, chunks)

    @property
    def completion(self) -> int:
        return max(t for t, _, _ in self.slots)


@dataclasses.dataclass
class SingleJob:
    """The data of job ``index`` alone over slots ``arrival .. last`` (arrays indexed by t - arrival)."""

    index: int
    arrival: int
    last: int
    latency: np.ndarray  # f(L), L = 1 .. last - arrival + 1
    epochs: int
    rho: float
    chunks: np.ndarray  # D [R] ints
    m: np.ndarray  # [K]
    n: np.ndarray  # [K]
    param_mb: float
    chunk_mb: float
    q: np.ndarray  # [R, R], zero diagonal
    cap_alone: np.ndarray  # [L, R] ints
    cap_ps: np.ndarray  # [L, R] ints, -1: the PS does not fit

    def __post_init__(self) -> None:
        R = self.q.shape[0]
        self.k = self.rho / self.epochs
        q0 = np.array(self.q, dtype=float)
        np.fill_diagonal(q0, 0.0)
        self.xq = self.param_mb * q0.T  # [p, r']: exchange of one worker at r' with the PS at p
        self.dq = self.chunk_mb * q0  # [r, r']: moving one chunk from r to r'
        self.n_sites = R
        self.slots = self.last - self.arrival + 1
        # chunk capacity of a full slot of workers, exact in E and rho: floor(rho y / E)
        self.train_alone = self.trainable(self.cap_alone)
        self.train_ps = self.trainable(np.maximum(self.cap_ps, 0))

    def trainable(self, y: np.ndarray) -> np.ndarray:
        """floor(rho y / E): the chunks y workers train in a slot (2b)."""
        return np.floor(self.rho * np.asarray(y, dtype=float) / self.epochs + 1e-9).astype(np.int64)

    def workers_for(self, chunks: int) -> int:
        """The fewest workers that train ``chunks`` chunks in one slot (rho y >= E chunks)."""
        y = math.ceil(chunks * self.epochs / self.rho - 1e-12)
        while self.rho * y < self.epochs * chunks - 1e-9:
            y += 1
        while y > 0 and self.rho * (y - 1) >= self.epochs * chunks - 1e-9:
            y -= 1
        return y

    @property
    def total_chunks(self) -> int:
        return int(self.chunks.sum())

    def cap_matrix(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """[slots, p, r']: the most workers at r' with the PS at p (0 where the PS does not fit at p)."""
        ca = self.cap_alone[rows]
        cp = self.cap_ps[rows]
        R = self.n_sites
        cm = np.repeat(ca[:, None, :], R, axis=1).astype(float)
        idx = np.arange(R)
        cm[:, idx, idx] = np.maximum(cp, 0)
        cm[cp < 0] = 0.0
        return cm

    def fingerprint_arrays(self) -> list[np.ndarray]:
        return [np.array([self.index, self.arrival, self.last, self.epochs, self.rho, self.param_mb, self.chunk_mb],
                         dtype=float), self.latency, self.chunks, self.m, self.n, self.q, self.cap_alone, self.cap_ps]


def of_instance(instance: Any, i: int, *, used: np.ndarray | None = None, last: int | None = None) -> SingleJob:
    """Job i of ``instance`` alone; ``used`` [T, R, K]: resources the other jobs hold (None: empty sites);
    ``last``: the last slot modelled (default T - 1)."""
    job = instance.jobs[i]
    C = instance.capacity
    T = int(instance.horizon)
    a = int(job.arrival)
    last = T - 1 if last is None else max(a, min(T - 1, int(last)))
    m, n = np.asarray(job.worker_demand, float), np.asarray(job.ps_demand, float)
    W = worker_slots(job)
    L = last - a + 1
    if used is None:
        avail = np.broadcast_to(C, (L,) + C.shape)
    else:
        avail = np.maximum(0.0, C[None, :, :] - np.asarray(used, float)[a:last + 1])
    R = C.shape[0]
    cap_alone = np.zeros((L, R), dtype=np.int64)
    cap_ps = np.full((L, R), -1, dtype=np.int64)
    seen: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
    for s in range(L):
        key = avail[s].tobytes()
        if key not in seen:
            ca = max_workers(avail[s], m, W)
            fits = np.all(avail[s] + 1e-9 >= n[None, :], axis=1)
            cp = np.where(fits, max_workers(np.maximum(avail[s] - n[None, :], 0.0), m, W), -1)
            seen[key] = (ca, cp)
        cap_alone[s], cap_ps[s] = seen[key]
    latency = np.asarray(job.cost(np.arange(1, L + 1)), dtype=float).reshape(L)
    return SingleJob(i, a, last, latency, int(job.epochs), float(job.worker_chunks_per_slot),
                     np.asarray(job.data_chunks, dtype=np.int64), m, n, float(job.param_size_mb),
                     float(job.chunk_size_mb), instance.q, cap_alone, cap_ps)


# ---- costs of a plan -------------------------------------------------------------------------------

def bandwidth(job: SingleJob, plan: Plan) -> tuple[float, float]:
    """(transfer, exchange) of ``plan``, bandwidth cost (1)."""
    transfer = float(sum(job.dq[r, r2] * c for r, r2, c in plan.moves))
    exchange = float(sum(job.xq[p, r] * y for _, p, ys in plan.slots for r, y in ys))
    return transfer, exchange


def plan_cost(job: SingleJob, plan: Plan) -> tuple[float, float, float]:
    """(latency, transfer, exchange) of ``plan`` (completing within the modelled slots): its cost (2)."""
    return (float(job.latency[plan.completion - job.arrival]),) + bandwidth(job, plan)


def plan_usage(job: SingleJob, plan: Plan) -> list[tuple[int, int, np.ndarray]]:
    """Per (slot, site) with anything, the job's resources there [K]: m y, plus n at the PS's site."""
    out: dict[tuple[int, int], np.ndarray] = {}
    for t, p, ys in plan.slots:
        for r, y in ys:
            out[t, r] = out.get((t, r), 0.0) + job.m * y
        out[t, p] = out.get((t, p), 0.0) + job.n
    return [(t, r, v) for (t, r), v in sorted(out.items())]


def priced_cost(job: SingleJob, plan: Plan, w: np.ndarray, P: np.ndarray) -> float:
    """The plan's cost plus its priced resources (``w``, ``P`` [slots, R] per worker and per PS)."""
    base = sum(plan_cost(job, plan))
    a = job.arrival
    extra = 0.0
    for t, p, ys in plan.slots:
        extra += float(P[t - a, p]) + sum(float(w[t - a, r]) * y for r, y in ys)
    return base + extra


def plan_of(js: Any) -> Plan:
    """A job's schedule entries (`edgeopt.okita.schedule.JobSchedule`) as a `Plan`."""
    slots, moves, trained = [], {}, []
    for e in js.slots:
        if e.n_workers > 0 and e.ps_site is not None:
            slots.append((int(e.slot), int(e.ps_site),
                          tuple(sorted((int(r), int(y)) for r, y in e.workers.items() if y))))
        for a, b, c in e.transfers:
            moves[int(a), int(b)] = moves.get((int(a), int(b)), 0) + int(c)
        trained.extend((int(e.slot), int(r), int(c)) for r, c in sorted(e.trained.items()) if c)
    return Plan(tuple(sorted(slots)), tuple((a, b, c) for (a, b), c in sorted(moves.items()) if c), tuple(trained))


def plan_entries(job: SingleJob, plan: Plan) -> list[Any]:
    """The plan as the schedule's `SlotEntry` list (per-slot transfers split from the totals)."""
    from edgeopt.okita.schedule import entry, split_transfers

    R = job.n_sites
    totals = np.zeros((R, R), dtype=np.int64)
    for r, r2, c in plan.moves:
        totals[r, r2] += c
    trained: dict[int, np.ndarray] = {}
    for t, r, c in plan.trained:
        trained.setdefault(t, np.zeros(R, dtype=np.int64))[r] += c
    for t, _, _ in plan.slots:
        trained.setdefault(t, np.zeros(R, dtype=np.int64))
    g = split_transfers(totals, trained)
    out = []
    for t, p, ys in sorted(plan.slots):
        y = np.zeros(R, dtype=np.int64)
        for r, c in ys:
            y[r] += c
        out.append(entry(t, y, p, g[t]))
    return out


# ---- a primal plan ---------------------------------------------------------------------------------

def _flow(job: SingleJob, slots: Sequence[int], ps: Sequence[int], w: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Transfers x [R, R] and chunks trained n [len(slots), R] of least cost with these active slots
    (indices) and PS sites, workers fractional (cost per chunk = worker cost / k): a min-cost flow LP,
    integral at a vertex. None when the slots cannot train every chunk."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    R = job.n_sites
    D = job.chunks
    cm = job.cap_matrix(np.asarray(slots, dtype=np.int64))
    cap = job.trainable(cm[np.arange(len(slots)), np.asarray(ps, dtype=np.int64)])  # [A, R] chunks
    if cap.sum() < D.sum():
        return None
    origins = np.flatnonzero(D > 0)
    no, A = origins.size, len(slots)
    sl = np.asarray(slots, dtype=np.int64)
    alpha = w[sl] + job.xq[np.asarray(ps, dtype=np.int64)]  # [A, R] per worker
    live = cap > 0
    ti, ri = np.nonzero(live)
    nx, nn = no * R, ti.size
    cost = np.concatenate([job.dq[origins].ravel(), alpha[ti, ri] / job.k])
    rows_a = np.repeat(np.arange(no), R)  # supply rows
    cols_a = np.arange(nx)
    rows_b = no + np.tile(np.arange(R), no)  # balance rows: + x into r'
    rows_c = no + ri  # - n at r'
    data = np.concatenate([np.ones(nx), np.ones(nx), -np.ones(nn)])
    rows = np.concatenate([rows_a, rows_b, rows_c])
    cols = np.concatenate([cols_a, cols_a, nx + np.arange(nn)])
    Aeq = sp.csr_matrix((data, (rows, cols)), shape=(no + R, nx + nn))
    beq = np.concatenate([D[origins].astype(float), np.zeros(R)])
    bounds = np.column_stack([np.zeros(nx + nn), np.concatenate([np.repeat(D[origins], R).astype(float),
                                                                 cap[ti, ri].astype(float)])])
    res = linprog(cost, A_eq=Aeq, b_eq=beq, bounds=bounds, method="highs")
    if res.status != 0:
        return None
    x = np.zeros((R, R), dtype=np.int64)
    x[origins] = np.rint(res.x[:nx]).reshape(no, R).astype(np.int64)
    if not np.array_equal(x.sum(axis=1), D):
        return None  # not integral (cannot happen at a vertex of this network LP): give up on this plan
    n = np.zeros((A, R), dtype=np.int64)
    n[ti, ri] = np.rint(res.x[nx:]).astype(np.int64)
    return x, n


def build_plan(job: SingleJob, slots: Sequence[int], ps: Sequence[int], w: np.ndarray, *,
               reference: bool = False) -> Plan | None:
    """A complete plan with these active slots (indices) and PS sites: the flow of `_flow`, then per site
    its chunks packed into whole workers in its cheapest slots first (never more than a slot holds).
    ``reference``: the packing and the plan's assembly slot by slot (`_pack_reference`,
    `_assemble_reference`) instead of on whole arrays (`_pack`, `_assemble`); the two make the same plans and
    are tested against each other."""
    got = _flow(job, slots, ps, w)
    if got is None:
        return None
    x, n = got
    sl = np.asarray(slots, dtype=np.int64)
    ps_a = np.asarray(ps, dtype=np.int64)
    cap_y = job.cap_matrix(sl)[np.arange(sl.size), ps_a].astype(np.int64)  # [A, R] workers
    alpha = w[sl] + job.xq[ps_a]
    packed = (_pack_reference if reference else _pack)(job, n.sum(axis=0), cap_y, alpha)
    if packed is None:
        return None
    return (_assemble_reference if reference else _assemble)(job, sl, ps_a, x, *packed)


def _pack(job: SingleJob, need: np.ndarray, cap_y: np.ndarray, alpha: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray] | None:
    """(workers y, chunks trained) [A, R]: each site's ``need`` chunks in its cheapest slots (``alpha``) first,
    as many as the slot's ``cap_y`` workers train; None when they do not fit. Per site a cumulative sum over
    the slots in price order gives what the slot-by-slot loop (`_pack_reference`) takes from each."""
    cap_tr = np.maximum(job.trainable(cap_y), 0)
    y = np.zeros(cap_y.shape, dtype=np.int64)
    tr = np.zeros(cap_y.shape, dtype=np.int64)
    for r in np.flatnonzero(need > 0):
        order = np.argsort(alpha[:, r], kind="stable")
        caps = cap_tr[order, r]
        took_before = np.cumsum(caps) - caps  # what the cheaper slots took (all of it, while any is left)
        take = np.minimum(caps, np.maximum(int(need[r]) - took_before, 0))
        if int(take.sum()) < int(need[r]):
            return None
        used = take > 0
        for s, k in zip(order[used].tolist(), take[used].tolist(), strict=True):
            tr[s, r] = k
            y[s, r] = job.workers_for(k)
    return y, tr


def _pack_reference(job: SingleJob, need: np.ndarray, cap_y: np.ndarray, alpha: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray] | None:
    """`_pack` slot by slot (the reference)."""
    y = np.zeros(cap_y.shape, dtype=np.int64)
    tr = np.zeros(cap_y.shape, dtype=np.int64)
    for r in range(cap_y.shape[1]):
        left = int(need[r])
        for s in np.argsort(alpha[:, r], kind="stable"):
            if left <= 0:
                break
            take = min(left, int(job.trainable(cap_y[s, r])))
            if take <= 0:
                continue
            tr[s, r] = take
            y[s, r] = job.workers_for(take)
            left -= take
        if left > 0:
            return None
    return y, tr


def lmedian(cost: np.ndarray, L: int, allowed: np.ndarray, swaps: int = 2) -> list[int]:
    """At most L sites p (``allowed``) with a small sum_r min_{p chosen} cost[r, p]: greedy, then swaps."""
    cand = np.flatnonzero(allowed)
    if cand.size == 0:
        return []
    chosen: list[int] = []
    cur = np.full(cost.shape[0], np.inf)
    for _ in range(min(L, cand.size)):
        tot = np.minimum(cur[:, None], cost[:, cand]).sum(axis=0)
        tot[np.isin(cand, chosen)] = np.inf
        p = int(cand[int(np.argmin(tot))])
        chosen.append(p)
        cur = np.minimum(cur, cost[:, p])
    best = float(cur.sum())
    for _ in range(swaps):
        improved = False
        for i in range(len(chosen)):
            rest = chosen[:i] + chosen[i + 1:]
            base = cost[:, rest].min(axis=1) if rest else np.full(cost.shape[0], np.inf)
            tot = np.minimum(base[:, None], cost[:, cand]).sum(axis=0)
            tot[np.isin(cand, chosen)] = np.inf
            j = int(np.argmin(tot))
            if tot[j] < best - 1e-9:
                chosen[i], best, improved = int(cand[j]), float(tot[j]), True
        if not improved:
            break
    return chosen


def _assign_ps(job: SingleJob, slots: Sequence[int], medians: Sequence[int], cost: np.ndarray) -> list[int] | None:
    """A PS site per slot: the medians in turn (most chunk-mass first), skipping a slot where one does not fit
    for the next median that does, else the allowed site of least cost."""
    if not medians:
        return None
    weight = np.bincount(np.argmin(cost[:, list(medians)], axis=1), weights=job.chunks, minlength=len(medians))
    order = [medians[j] for j in np.argsort(-weight, kind="stable")]
    out = []
    for j, s in enumerate(slots):
        ok = job.cap_ps[s] >= 0
        pick = next((p for p in order[j % len(order):] + order[:j % len(order)] if ok[p]), None)
        if pick is None:
            if not ok.any():
                return None
            pick = int(np.flatnonzero(ok)[np.argmin(cost[:, ok].sum(axis=0))])
        out.append(int(pick))
    return out


def plan_from(job: SingleJob, w: np.ndarray, completion: int, slot_value: np.ndarray,
              slot_ps: np.ndarray) -> Plan | None:
    """A plan from a Lagrangian's choices: its completion (slot index), the slots before it that gain
    (S_t < 0) and their PS sites; when they cannot train every chunk, more slots by increasing S_t."""
    S = slot_value
    c = completion if completion >= 0 else int(np.argmin(S))
    if not np.isfinite(S[c]):
        return None
    order = [int(s) for s in np.argsort(S, kind="stable") if np.isfinite(S[s])]
    chosen = sorted({s for s in range(c) if S[s] < 0} | {c})
    for _ in range(len(order) + 1):
        plan = build_plan(job, chosen, [int(slot_ps[s]) for s in chosen], w)
        if plan is not None:
            return plan
        more = [s for s in order if s not in chosen]
        if not more:
            return None
        within = [s for s in more if s <= max(chosen)]
        chosen = sorted(set(chosen) | {(within or more)[0]})
    return None


def length_grid(slots: int, n: int) -> list[int]:
    """At most ``n`` plan lengths in [1, ``slots``], geometric (every length when ``slots`` <= ``n``)."""
    if slots < 1:
        return []
    return sorted({max(1, min(slots, round(float(x)))) for x in np.geomspace(1, slots, max(1, n))})


def candidate_plans(job: SingleJob, w: np.ndarray, P: np.ndarray, *, lengths: Sequence[int] | None = None,
                    exact_workers: bool = False, time_limit: float = 1.0, deadline: Any = None,
                    ends: Sequence[int] = (), prune: bool = True) -> list[Plan]:
    """Plans with L active slots for each L in ``lengths`` (default: while the latency alone stays below the
    best plan found): the L slots ending at the earliest completion (and at each slot index in ``ends``),
    PS sites from an L-median of the per-chunk costs h[r, p] = min_{r'} (delta q^{r r'} + (pi q^{r' p} +
    mean worker price at r') / k), and separately one median for every slot. Workers and transfers by
    `fixed_ps_plan` (``exact_workers``, a MILP per candidate within ``time_limit``) or `build_plan`.
    ``prune``: skip a window whose slots cannot train the job's chunks whatever the PS sites (no plan exists
    there, so the plans are the same as with ``prune=False``, which tries every window: the reference)."""
    L_all = job.slots
    wbar = w.mean(axis=0) if w.size else np.zeros(job.n_sites)
    h = (job.dq[:, :, None] + (job.xq.T[None, :, :] + wbar[None, :, None]) / job.k).min(axis=1)  # [r, p]
    cost = job.chunks[:, None].astype(float) * h
    allowed = (job.cap_ps >= 0).any(axis=0)
    # the most chunks slots s0..s1 can train with any PS sites: a window below the job's chunks has no plan
    # (`_flow` and `fixed_ps_plan` find none), so it is skipped before its medians are computed
    most = np.concatenate([[0], np.cumsum(job.trainable(job.cap_matrix()).sum(axis=2).max(axis=1))])
    out: list[Plan] = []
    best = math.inf
    todo = list(lengths) if lengths is not None else list(range(1, L_all + 1))
    for L in todo:
        if deadline is not None and deadline.expired():
            break
        if L < 1 or L > L_all:
            continue
        if lengths is None and float(job.latency[L - 1]) >= best:
            break
        for end in sorted({L - 1} | {e for e in ends if L - 1 <= e < L_all}):
            if prune and most[end + 1] - most[end - L + 1] < job.total_chunks:
                continue
            slots = list(range(end - L + 1, end + 1))
            for meds in (lmedian(cost, L, allowed), lmedian(cost, 1, allowed)):
                ps = _assign_ps(job, slots, meds, cost)
                if ps is None:
                    continue
                plan = (fixed_ps_plan(job, slots, ps, w, time_limit=time_limit) if exact_workers
                        else build_plan(job, slots, ps, w))
                if plan is not None:
                    out.append(plan)
                    best = min(best, priced_cost(job, plan, w, P))
                if L == 1:
                    break
    return out


# ---- the exact model -------------------------------------------------------------------------------

def _highs_mip(cost: np.ndarray, lo: np.ndarray, hi: np.ndarray, integer: np.ndarray, mat: Any, lower: np.ndarray,
               upper: np.ndarray, *, time_limit: float, rel_gap: float, abs_gap: float | None = None) -> Any:
    """A HiGHS model (not run) of min cost x, lo <= x <= hi, lower <= mat x <= upper (a CSR matrix), x integer
    where ``integer``: one thread, quiet, the time limit and gaps given. The single-job MILPs' common set-up."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", float(max(0.01, time_limit)))
    h.setOptionValue("mip_rel_gap", float(rel_gap))
    if abs_gap is not None:
        h.setOptionValue("mip_abs_gap", float(abs_gap))
    n = len(cost)
    h.addVars(n, np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(cost, dtype=float))
    cols = np.flatnonzero(integer).astype(np.int32)
    h.changeColsIntegrality(cols.size, cols, np.full(cols.size, highspy.HighsVarType.kInteger))
    h.addRows(mat.shape[0], np.asarray(lower, dtype=float), np.asarray(upper, dtype=float), mat.nnz,
              mat.indptr[:-1].astype(np.int32), mat.indices.astype(np.int32), np.asarray(mat.data, dtype=float))
    return h


@dataclasses.dataclass
class Exact:
    plan: Plan | None
    value: float  # priced cost of the plan (inf without one)
    bound: float  # HiGHS's dual bound
    optimal: bool


def exact(job: SingleJob, w: np.ndarray | None = None, P: np.ndarray | None = None, *, time_limit: float = 60.0,
          rel_gap: float = 1e-9, hint: Plan | None = None) -> Exact:
    """The job's cheapest plan by a MILP (HiGHS), workers disaggregated by PS site (module docstring).

    Variables per slot t and allowed PS site p: u_{t,p} binary and y_{t,p,r'} in [0, cap]; chunks trained
    n_{t,r'}, transfer totals x_{r,r'} (integers); z_t binary (t is the completion). Rows: one PS per
    slot, y <= cap u, u <= sum y (a PS has a worker), E n <= rho sum_p y (2b), supplies and balances of the
    chunks, sum z = 1, sum_p u_{t,p} <= sum_{t' >= t} z_{t'}, z_t <= sum_p u_{t,p}."""
    import highspy

    R, L, a = job.n_sites, job.slots, job.arrival
    w = np.zeros((L, R)) if w is None else np.asarray(w, float)
    P = np.zeros((L, R)) if P is None else np.asarray(P, float)
    cm = job.cap_matrix()
    inf = highspy.kHighsInf
    cost, lo, hi, integ = [], [], [], []

    def var(c: float, lb: float, ub: float, is_int: bool = True) -> int:
        cost.append(float(c))
        lo.append(float(lb))
        hi.append(float(ub))
        integ.append(is_int)
        return len(cost) - 1

    u: dict[tuple[int, int], int] = {}
    y: dict[tuple[int, int, int], int] = {}
    for s in range(L):
        for p in range(R):
            if job.cap_ps[s, p] < 0 or cm[s, p].sum() <= 0:
                continue
            u[s, p] = var(P[s, p], 0, 1)
            for r in range(R):
                if cm[s, p, r] > 0:
                    y[s, p, r] = var(w[s, r] + job.xq[p, r], 0, cm[s, p, r])
    nv = {(s, r): var(0.0, 0, job.total_chunks) for s in range(L) for r in range(R)}
    xv = {(r, r2): var(job.dq[r, r2], 0, int(job.chunks[r])) for r in range(R) if job.chunks[r] > 0 for r2 in range(R)}
    z = {s: var(job.latency[s], 0, 1) for s in range(L)}
    rows: list[tuple[float, float, list[int], list[float]]] = []
    for s in range(L):
        us = [u[s, p] for p in range(R) if (s, p) in u]
        rows.append((-inf, 1.0, us, [1.0] * len(us)))
        later = [z[t] for t in range(s, L)]
        rows.append((-inf, 0.0, us + later, [1.0] * len(us) + [-1.0] * len(later)))
        rows.append((-inf, 0.0, [z[s]] + us, [1.0] + [-1.0] * len(us)))
        for p in range(R):
            if (s, p) not in u:
                continue
            ys = [y[s, p, r] for r in range(R) if (s, p, r) in y]
            rows.append((-inf, 0.0, [u[s, p]] + ys, [1.0] + [-1.0] * len(ys)))
            for r in range(R):
                if (s, p, r) in y:
                    rows.append((-inf, 0.0, [y[s, p, r], u[s, p]], [1.0, -float(cm[s, p, r])]))
        for r in range(R):
            ys = [y[s, p, r] for p in range(R) if (s, p, r) in y]
            rows.append((-inf, 0.0, [nv[s, r]] + ys, [float(job.epochs)] + [-job.rho] * len(ys)))
    for r in range(R):
        if job.chunks[r] > 0:
            xs = [xv[r, r2] for r2 in range(R)]
            rows.append((float(job.chunks[r]), float(job.chunks[r]), xs, [1.0] * len(xs)))
    for r2 in range(R):
        xs = [xv[r, r2] for r in range(R) if (r, r2) in xv]
        ns = [nv[s, r2] for s in range(L)]
        rows.append((0.0, 0.0, xs + ns, [1.0] * len(xs) + [-1.0] * len(ns)))
    rows.append((1.0, 1.0, list(z.values()), [1.0] * L))
    import scipy.sparse as sp

    nvar = len(cost)
    lower = np.array([r[0] for r in rows])
    upper = np.array([r[1] for r in rows])
    starts = np.cumsum([0] + [len(r[2]) for r in rows]).astype(np.int32)
    index = np.array([i for r in rows for i in r[2]], dtype=np.int32)
    value = np.array([c for r in rows for c in r[3]], dtype=float)
    mat = sp.csr_matrix((value, index, starts), shape=(len(rows), nvar))
    h = _highs_mip(np.array(cost), np.array(lo), np.array(hi), np.array(integ, dtype=bool), mat, lower, upper,
                   time_limit=time_limit, rel_gap=rel_gap, abs_gap=1e-9)
    if hint is not None:
        sol = np.zeros(nvar)
        ok = True
        for t, p, ys in hint.slots:
            s = t - a
            if (s, p) not in u:
                ok = False
                break
            sol[u[s, p]] = 1.0
            for r, c in ys:
                if (s, p, r) not in y:
                    ok = False
                    break
                sol[y[s, p, r]] = c
        for t, r, c in hint.trained:
            sol[nv[t - a, r]] += c
        for r, r2, c in hint.moves:
            sol[xv[r, r2]] += c
        sol[z[hint.completion - a]] = 1.0
        if ok:
            h.setSolution(_solution(h, sol))
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    bound = float(info.mip_dual_bound) if math.isfinite(info.mip_dual_bound) else -math.inf
    if info.primal_solution_status != 2:  # no feasible solution
        return Exact(None, math.inf, bound if status != "Infeasible" else math.inf, status == "Infeasible")
    x = np.array(h.getSolution().col_value)
    slots_out, trained = [], []
    for s in range(L):
        for p in range(R):
            if (s, p) in u and x[u[s, p]] > 0.5:
                ys = tuple((r, round(x[y[s, p, r]])) for r in range(R)
                           if (s, p, r) in y and round(x[y[s, p, r]]) > 0)
                if ys:
                    slots_out.append((a + s, p, ys))
        for r in range(R):
            c = round(x[nv[s, r]])
            if c:
                trained.append((a + s, r, c))
    moves = tuple((r, r2, round(x[i])) for (r, r2), i in xv.items() if round(x[i]) > 0)
    plan = Plan(tuple(slots_out), moves, tuple(trained))
    return Exact(plan, priced_cost(job, plan, w, P), bound, status == "Optimal")


def _solution(h: Any, values: np.ndarray) -> Any:
    import highspy

    sol = highspy.HighsSolution()
    sol.col_value = list(map(float, values))
    sol.value_valid = True
    return sol


# ---- fixed PS sites: the workers and transfers exactly ------------------------------------------------

def whole_chunks_per_worker(job: SingleJob) -> bool:
    """Whether k = rho / E is a whole number: then a worker trains exactly k chunks a slot and (2b) summed
    over the slots at a site loses nothing (every generated and ITP job so far)."""
    return abs(job.k - round(job.k)) <= 1e-9 and round(job.k) >= 1 and job.rho == round(job.k) * job.epochs


def fixed_ps_plan(job: SingleJob, slots: Sequence[int], ps: Sequence[int], w: np.ndarray | None = None, *,
                  time_limit: float = 5.0) -> Plan | None:
    """The cheapest plan whose PS sits at ``ps[j]`` in slot ``slots[j]`` (indices t - a) whenever that slot
    has workers (a slot may stay empty); exact for these PS sites (the PS's own price is left out: the
    caller prices the plan). None without a feasible plan in time.

    With whole chunks per worker (`whole_chunks_per_worker`) the per-site model `fixed_ps_plan_by_site`,
    else (or when its solution does not split back into whole numbers) `fixed_ps_plan_by_slot`."""
    if whole_chunks_per_worker(job):
        plan = fixed_ps_plan_by_site(job, slots, ps, w, time_limit=time_limit)
        if plan is not _SPLIT_FAILED:
            return plan
    return fixed_ps_plan_by_slot(job, slots, ps, w, time_limit=time_limit)


#: `fixed_ps_plan_by_site`'s answer when its solution did not split back into whole numbers
_SPLIT_FAILED: Any = object()


def _fixed_ps_setup(job: SingleJob, slots: Sequence[int], ps: Sequence[int], w: np.ndarray | None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """What both fixed-PS models start from: (slot indices, PS sites, workers cap [A, R], a worker's cost
    alpha [A, R] (its price plus the exchange with that slot's PS), origin sites); None when there are no
    slots or they cannot train every chunk."""
    sl = np.asarray(slots, dtype=np.int64)
    psa = np.asarray(ps, dtype=np.int64)
    if sl.size == 0:
        return None
    cm = job.cap_matrix(sl)[np.arange(sl.size), psa].astype(np.int64)
    if int(job.trainable(cm).sum()) < job.total_chunks:
        return None
    w = np.zeros((job.slots, job.n_sites)) if w is None else w
    return sl, psa, cm, w[sl] + job.xq[psa], np.flatnonzero(job.chunks > 0)


def _supply_rows(job: SingleJob, origins: np.ndarray) -> tuple[list[int], list[int], list[float], list[float],
                                                                list[float]]:
    """(row, column, value, lower, upper) lists holding the supply rows sum_r' x[r, r'] = D_r, one per origin,
    with the transfer totals x as the first columns (origin-major)."""
    R = job.n_sites
    rows_i: list[int] = []
    rows_j: list[int] = []
    vals: list[float] = []
    lower: list[float] = []
    upper: list[float] = []
    for o, r in enumerate(origins):
        rows_i.extend([o] * R)
        rows_j.extend(range(o * R, o * R + R))
        vals.extend([1.0] * R)
        lower.append(float(job.chunks[r]))
        upper.append(float(job.chunks[r]))
    return rows_i, rows_j, vals, lower, upper


def fixed_ps_plan_by_site(job: SingleJob, slots: Sequence[int], ps: Sequence[int], w: np.ndarray | None = None, *,
                          time_limit: float = 5.0) -> Plan | None:
    """`fixed_ps_plan_by_slot`'s optimum for a job with whole chunks per worker (k = rho / E), from a MILP with
    one integer per site instead of two per (slot, site).

    Why it is the same optimum: with the PS sites fixed, a worker at site r' in slot s costs
    alpha[s, r'] (its price plus the exchange with that slot's PS) and trains exactly k chunks, so what a
    site's workers train depends only on their total W_{r'}, and the cheapest W_{r'} workers there are its
    cheapest worker-slots. The model: integer W_{r'}, continuous N_{s,r'} in [0, cap] summing to W_{r'} (its LP
    fills the cheapest slots first), transfer totals x_{r,r'} with sum_r x_{r,r'} <= k W_{r'}. Every plan
    of the slot model is one of these with the same cost, and back: N is refilled cheapest slot first in whole
    workers, and the chunks split over the slots by their capacity k N. (At the `paper` preset's 50 sites the
    slot model needed its whole 0.5 s on most calls of the search; this one needs a few milliseconds.)"""
    R = job.n_sites
    k = round(job.k)
    setup = _fixed_ps_setup(job, slots, ps, w)
    if setup is None:
        return None
    sl, psa, cm, alpha, origins = setup
    A = sl.size
    no = origins.size
    si, ri = np.nonzero(cm > 0)
    nN = si.size
    nx = no * R
    sites = np.flatnonzero(cm.sum(axis=0) > 0)
    nW = sites.size
    col_of_site = np.full(R, -1, dtype=np.int64)
    col_of_site[sites] = nx + nN + np.arange(nW)
    # columns: x (no*R), N (nN, continuous), W (nW, integer)
    cost = np.concatenate([job.dq[origins].ravel(), alpha[si, ri], np.zeros(nW)])
    lo = np.zeros(nx + nN + nW)
    hi = np.concatenate([np.repeat(job.chunks[origins], R).astype(float), cm[si, ri].astype(float),
                         cm[:, sites].sum(axis=0).astype(float)])
    rows_i, rows_j, vals, lower, upper = _supply_rows(job, origins)
    for r2 in range(R):  # (2b) summed over the slots: sum_r x[r, r'] - k W_{r'} <= 0
        row = len(lower)
        for o in range(no):
            rows_i.append(row)
            rows_j.append(o * R + r2)
            vals.append(1.0)
        if col_of_site[r2] >= 0:
            rows_i.append(row)
            rows_j.append(int(col_of_site[r2]))
            vals.append(-float(k))
        lower.append(-math.inf)
        upper.append(0.0)
    for r2 in sites:  # W_{r'} = sum_s N[s, r']
        row = len(lower)
        for e in np.flatnonzero(ri == r2):
            rows_i.append(row)
            rows_j.append(nx + int(e))
            vals.append(1.0)
        rows_i.append(row)
        rows_j.append(int(col_of_site[r2]))
        vals.append(-1.0)
        lower.append(0.0)
        upper.append(0.0)
    import scipy.sparse as sp

    nv = nx + nN + nW
    mat = sp.csr_matrix((vals, (rows_i, rows_j)), shape=(len(lower), nv))
    integer = np.zeros(nv, dtype=bool)
    integer[nx + nN:] = True
    h = _highs_mip(cost, lo, hi, integer, mat, np.array(lower), np.array(upper), time_limit=time_limit,
                   rel_gap=1e-9)
    h.run()
    if h.getInfo().primal_solution_status != 2:
        return None
    x = np.array(h.getSolution().col_value)
    X = np.zeros((R, R), dtype=np.int64)
    X[origins] = np.rint(x[:nx]).reshape(no, R).astype(np.int64)
    if np.abs(x[:nx] - np.rint(x[:nx])).max(initial=0.0) > 1e-6:
        return _SPLIT_FAILED
    N = np.zeros((A, R), dtype=np.int64)
    n = np.zeros((A, R), dtype=np.int64)
    trained = X.sum(axis=0)
    for r2 in sites:
        W = round(float(x[int(col_of_site[r2])]))
        left = trained[r2]
        for s in np.argsort(alpha[:, r2], kind="stable"):  # the cheapest worker-slots first
            if W <= 0:
                break
            N[s, r2] = min(W, int(cm[s, r2]))
            W -= int(N[s, r2])
        for s in np.flatnonzero(N[:, r2]):  # the chunks by the slots' capacity k N
            n[s, r2] = min(left, k * int(N[s, r2]))
            left -= int(n[s, r2])
        if W > 0 or left > 0:
            return _SPLIT_FAILED
        # workers without chunks are dropped (they only cost): the solver's W may exceed what is trained
        keep_chunks = n[:, r2] > 0
        N[~keep_chunks, r2] = 0
        N[keep_chunks, r2] = np.minimum(N[keep_chunks, r2], -(-n[keep_chunks, r2] // k))
    plan = _assemble(job, sl, psa, X, N, n)
    return _SPLIT_FAILED if plan is None else plan


def fixed_ps_plan_by_slot(job: SingleJob, slots: Sequence[int], ps: Sequence[int], w: np.ndarray | None = None, *,
                          time_limit: float = 5.0) -> Plan | None:
    """The cheapest plan whose PS sits at ``ps[j]`` in slot ``slots[j]`` (indices t - a) whenever that slot
    has workers (a slot may stay empty): a small MILP (HiGHS) over integer workers N_{s,r'}, integer chunks
    trained n_{s,r'} (E n <= rho N, (2b)) and transfer totals x_{r,r'}. Exact for these PS sites (the
    PS's own price is left out: the caller prices the plan). None without a feasible plan in time. The
    reference `fixed_ps_plan_by_site` is tested against, and the model for any k = rho / E."""
    import highspy

    R = job.n_sites
    setup = _fixed_ps_setup(job, slots, ps, w)
    if setup is None:
        return None
    sl, psa, cm, alpha, origins = setup
    no = origins.size
    si, ri = np.nonzero(cm > 0)
    nN = si.size
    nx = no * R
    # columns: x (no*R), N (nN), n (nN)
    cost = np.concatenate([job.dq[origins].ravel(), alpha[si, ri], np.zeros(nN)])
    lo = np.zeros(nx + 2 * nN)
    hi = np.concatenate([np.repeat(job.chunks[origins], R).astype(float), cm[si, ri].astype(float),
                         job.trainable(cm[si, ri]).astype(float)])
    rows_i, rows_j, vals, lower, upper = _supply_rows(job, origins)
    # balances: sum_r x[r, r'] - sum_s n[s, r'] = 0
    for r2 in range(R):
        row = len(lower)
        for o in range(no):
            rows_i.append(row)
            rows_j.append(o * R + r2)
            vals.append(1.0)
        for e in np.flatnonzero(ri == r2):
            rows_i.append(row)
            rows_j.append(nx + nN + e)
            vals.append(-1.0)
        lower.append(0.0)
        upper.append(0.0)
    # (2b): E n - rho N <= 0
    for e in range(nN):
        row = len(lower)
        rows_i.extend([row, row])
        rows_j.extend([nx + nN + e, nx + e])
        vals.extend([float(job.epochs), -job.rho])
        lower.append(-highspy.kHighsInf)
        upper.append(0.0)
    import scipy.sparse as sp

    nv = nx + 2 * nN
    mat = sp.csr_matrix((vals, (rows_i, rows_j)), shape=(len(lower), nv))
    h = _highs_mip(cost, lo, hi, np.arange(nv) >= nx, mat, np.array(lower), np.array(upper),
                   time_limit=time_limit, rel_gap=1e-9)
    h.run()
    if h.getInfo().primal_solution_status != 2:
        return None
    x = np.array(h.getSolution().col_value)
    X = np.zeros((R, R), dtype=np.int64)
    X[origins] = np.rint(x[:nx]).reshape(no, R).astype(np.int64)
    N = np.zeros(cm.shape, dtype=np.int64)
    N[si, ri] = np.rint(x[nx:nx + nN]).astype(np.int64)
    n = np.zeros(cm.shape, dtype=np.int64)
    n[si, ri] = np.rint(x[nx + nN:]).astype(np.int64)
    return _assemble(job, sl, psa, X, N, n)


def _adds_up(job: SingleJob, X: np.ndarray, N: np.ndarray, n: np.ndarray) -> bool:
    """Whether transfers X move every chunk once to where n trains it, and workers N train what n says (2b)."""
    return (np.array_equal(X.sum(axis=1), job.chunks) and np.array_equal(X.sum(axis=0), n.sum(axis=0))
            and not np.any(job.epochs * n > job.rho * N + 1e-9))


def _assemble(job: SingleJob, sl: np.ndarray, psa: np.ndarray, X: np.ndarray, N: np.ndarray,
              n: np.ndarray) -> Plan | None:
    """A `Plan` from slot indices, PS sites, transfer totals X, workers N and chunks trained n (slots
    without workers dropped); None when the numbers do not add up (a float solution rounded wrongly).
    Whole arrays at once; `_assemble_reference` (slot by slot) is the reference it is tested against."""
    a = job.arrival
    if not _adds_up(job, X, N, n):
        return None
    active = N.any(axis=1)
    if not active.any() or (n.any(axis=1) & ~active).any():
        return None
    t_of = (a + np.asarray(sl, dtype=np.int64)).tolist()
    ps_of = np.asarray(psa).tolist()
    ws, wr = np.nonzero(N)  # row-major: slots ascending, sites ascending within a slot
    wn = N[ws, wr].astype(np.int64).tolist()
    per_slot: dict[int, list[tuple[int, int]]] = {}
    for s_, r_, k_ in zip(ws.tolist(), wr.tolist(), wn, strict=True):
        per_slot.setdefault(s_, []).append((r_, k_))
    slots_out = tuple((t_of[s_], int(ps_of[s_]), tuple(ys)) for s_, ys in per_slot.items())
    ts, tr_ = np.nonzero(n)
    trained = tuple(zip([t_of[s_] for s_ in ts.tolist()], tr_.tolist(), n[ts, tr_].astype(np.int64).tolist(), strict=True))
    mr, mc = np.nonzero(X)
    moves = tuple(zip(mr.tolist(), mc.tolist(), X[mr, mc].astype(np.int64).tolist(), strict=True))
    return Plan(slots_out, moves, trained)


def _assemble_reference(job: SingleJob, sl: np.ndarray, psa: np.ndarray, X: np.ndarray, N: np.ndarray,
                        n: np.ndarray) -> Plan | None:
    """`_assemble` slot by slot (the reference)."""
    a = job.arrival
    if not _adds_up(job, X, N, n):
        return None
    slots_out, trained = [], []
    for s in range(sl.size):
        if N[s].any():
            ys = tuple((int(r), int(N[s, r])) for r in np.flatnonzero(N[s]))
            slots_out.append((int(a + sl[s]), int(psa[s]), ys))
            trained.extend((int(a + sl[s]), int(r), int(n[s, r])) for r in np.flatnonzero(n[s]))
        elif n[s].any():
            return None
    if not slots_out:
        return None
    moves = tuple((int(r), int(r2), int(X[r, r2])) for r, r2 in zip(*np.nonzero(X), strict=True))
    return Plan(tuple(slots_out), moves, tuple(trained))


# ---- the Lagrangian lower bound: whole workers per slot ---------------------------------------------

@dataclasses.dataclass
class Lagrangian:
    """The bound at one mu: the safe minimum over completions and what attains it."""

    value: float  # safe: min over c of the per-completion values, each lowered by its rounding bound
    completion: int  # slot index (t - a) of the minimum; >= slots: a completion in the tail; -1: none
    slot_value: np.ndarray  # [slots] S_t
    slot_ps: np.ndarray  # [slots] the PS site attaining S_t
    bought: np.ndarray  # [R] chunks of each origin the active slots train (the subgradient's other half)
    #: the relaxed solution's slots: (slot index, PS site, workers [R]) of every active slot (with
    #: ``want_subgradient``): its resource use is the supergradient with respect to the prices
    active: list = dataclasses.field(default_factory=list)


def _slot_groups(job: SingleJob, w: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first slot of each distinct slot, group of every slot): slots with the same prices and caps give
    the same slot problem, solved once (all of them at zero prices)."""
    key = np.concatenate([w, P, job.cap_alone.astype(float), job.cap_ps.astype(float)], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _profit_tables(job: SingleJob, mu: np.ndarray, ymax: int) -> tuple[np.ndarray, np.ndarray, list]:
    """Per training site r': F[r', y] = the most profit mu_r - delta q^{r r'} that k y chunks can earn
    (origins best first, at most D_r from each; linear between whole chunks, so F is concave in y),
    the marginal gains F[y] - F[y - 1] (non-increasing), and per site the (origin order, cumulative
    chunks) that recover what was bought."""
    R = job.n_sites
    gain = mu[:, None] - job.dq  # [r, r']
    F = np.zeros((R, ymax + 1))
    orders = []
    ks = job.k * np.arange(ymax + 1)
    for r2 in range(R):
        g = gain[:, r2]
        order = np.flatnonzero((g > 0) & (job.chunks > 0))
        order = order[np.argsort(-g[order], kind="stable")]
        cum = np.concatenate([[0.0], np.cumsum(job.chunks[order].astype(float))])
        val = np.concatenate([[0.0], np.cumsum(job.chunks[order] * g[order])])
        F[r2] = np.interp(ks, cum, val) if order.size else 0.0  # flat past the last chunk
        orders.append((order, cum))
    return F, np.diff(F, axis=1), orders


def _slot_problems(job: SingleJob, cm: np.ndarray, wu: np.ndarray, Pu: np.ndarray, F: np.ndarray,
                   marg: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct slot u: S_u = min_p [P(p) + sum_{r'} min_{y <= cap} ((w + pi q^{r' p}) y - F_{r'}(y))],
    the PS site attaining it and the workers y* [u, p, r']. The inner minimum is convex in y (F concave):
    y* = the number of marginal gains above the worker's cost, clipped to the cap."""
    alpha = wu[:, None, :] + job.xq[None, :, :]  # [U, p, r']
    ystar = np.empty(cm.shape, dtype=np.int64)
    for r2 in range(job.n_sites):  # marg[r2] is non-increasing: count the gains above alpha
        ystar[:, :, r2] = np.searchsorted(-marg[r2], -alpha[:, :, r2], side="left")
    ystar = np.minimum(ystar, cm)
    Fy = F[np.arange(job.n_sites)[None, None, :], ystar]
    val = Pu + (alpha * ystar - Fy).sum(axis=2)
    val[(Pu < -1) | ~np.isfinite(Pu)] = np.inf  # (prices are >= 0; a guard against junk)
    return val, ystar, alpha


def lagrangian(job: SingleJob, w: np.ndarray, P: np.ndarray, mu: np.ndarray, *, tail: np.ndarray | None = None,
               groups: tuple[np.ndarray, np.ndarray] | None = None, want_subgradient: bool = False) -> Lagrangian:
    """A lower bound on the job's least priced cost that keeps whole workers, for any mu >= 0 (clipped).

    Relax "every chunk of origin r is trained exactly once" with multipliers mu_r. What is left splits
    per slot and training site: y workers at r' (PS at p) cost (w(r', t) + pi q^{r' p}) y and earn at most
    F_{r'}(y), the best profit mu_r - delta q^{r r'} of k y chunks taking at most D_r from origin r. So

        L(mu) = sum_r mu_r D_r + min_c [ f(c) + sum_{t < c} min(0, S_t) + S_c ],
        S_t = min_p [ P(p, t) + sum_{r'} min_{0 <= y <= cap} ((w(r', t) + pi q^{r' p}) y - F_{r'}(y)) ],

    is below every plan (weak duality: a plan's chunks give each slot a feasible purchase; F uses
    k y >= floor(k y) chunks, linear between whole chunks, so it only overestimates the profit).

    ``tail``: f(L) for the completions after the modelled slots (L = slots + 1, ...): there every slot is
    bounded below by the zero-price slot problem S^0 <= S_t (prices >= 0 only add cost; the caps must be
    the modelled slots' last), so those completions cost at least f(L) + sum_r mu_r D_r + the modelled
    slots' gains + (further slots) min(0, S^0) + S^0. Each value is lowered by a bound on its own
    float rounding, so the minimum is safe."""
    mu = np.maximum(np.nan_to_num(np.asarray(mu, dtype=float), nan=0.0, posinf=0.0, neginf=0.0), 0.0)
    R, L = job.n_sites, job.slots
    first, inv = groups if groups is not None else _slot_groups(job, w, P)
    cm = job.cap_matrix(first).astype(np.int64)  # [U, p, r']
    if tail is not None and tail.size:
        cm = np.concatenate([cm, job.cap_matrix(np.array([L - 1])).astype(np.int64)])
        wu = np.concatenate([w[first], np.zeros((1, R))])
        Pu = np.concatenate([P[first], np.zeros((1, R))])
    else:
        wu, Pu = w[first], P[first]
    blocked = np.concatenate([job.cap_ps[first], job.cap_ps[[L - 1]]])[:cm.shape[0]] < 0
    blocked |= cm.sum(axis=2) <= 0  # no PS, or no worker beside it
    ymax = int(cm.max(initial=0))
    F, marg, orders = _profit_tables(job, mu, ymax)
    val, ystar, _ = _slot_problems(job, cm, wu, Pu, F, marg)
    val[blocked] = np.inf
    ps_all = np.argmin(val, axis=1)
    S_all = val[np.arange(val.shape[0]), ps_all]
    nU = first.size
    S, ps = S_all[:nU][inv], ps_all[:nU][inv]
    base = float(mu @ job.chunks)
    neg = np.where(np.isfinite(S), np.minimum(S, 0.0), 0.0)
    before = np.concatenate([[0.0], np.cumsum(neg)[:-1]])
    per_c = job.latency + base + before + S
    capmax = cm.max(axis=(0, 1)).astype(float)
    mag_all = (np.abs(Pu).max(axis=1) + (np.abs(wu) + job.xq.max(axis=0)[None, :]) @ capmax
               + float(np.abs(F).max(axis=1).sum()))
    gam = 4.0 * _gamma(2 * R + len(job.m) + L + ymax + 24 + (0 if tail is None else tail.size))
    slot_mag = np.cumsum(mag_all[:nU][inv])
    safe = per_c - gam * (np.abs(job.latency) + 2.0 * base + slot_mag)
    if tail is not None and tail.size and np.isfinite(S_all[-1]):
        S0 = float(S_all[-1])
        j = np.arange(tail.size, dtype=float)
        tail_c = np.asarray(tail, float) + base + float(neg.sum()) + j * min(0.0, S0) + S0
        tail_safe = tail_c - gam * (np.abs(tail) + 2.0 * base + slot_mag[-1] + (j + 1) * mag_all[-1])
        safe = np.concatenate([safe, tail_safe])
    finite = np.isfinite(safe)
    if finite.any():
        c = int(np.argmin(np.where(finite, safe, np.inf)))
        value = float(safe[c])
    else:
        c, value = -1, math.inf
    bought = np.zeros(R)
    used = []

    def buy(u: int, p: int, times: float = 1.0) -> None:
        for r2 in np.flatnonzero(ystar[u, p] > 0):
            order, cum = orders[r2]
            if order.size:
                bought[order] += times * np.clip(job.k * ystar[u, p, r2] - cum[:-1], 0.0, job.chunks[order])

    if want_subgradient and c >= 0:
        # the purchases of the minimising completion: the modelled slots before it that gain, then the slot
        # it ends in; a completion in the tail (c >= L) also buys in each of its c - L tail slots before the
        # last when the zero-price slot gains (S0 < 0), and in its last slot, all at the zero-price slot's
        # solution (the tail's value above). Without the tail's purchases the subgradient said "buy nothing"
        # and the ascent stalled wherever the minimum lay in the tail.
        ends = c < L
        active = np.flatnonzero((np.arange(L) < c) & (S < 0))
        for s in (np.append(active, c) if ends else active):
            u, p = inv[s], ps[s]
            used.append((int(s), int(p), ystar[u, p]))
            buy(u, p)
        if not ends:
            extra = c - L
            buy(nU, int(ps_all[-1]), float((extra if S_all[-1] < 0 else 0) + 1))
    return Lagrangian(value, c, S, ps, bought, used)


def start_multipliers(job: SingleJob) -> np.ndarray:
    """A first mu: a chunk is worth the cheapest exchange share of a worker away from the PS."""
    return np.full(job.n_sites, float(job.xq[job.xq > 0].min(initial=0.0)) / job.k)


def improve_multipliers(job: SingleJob, w: np.ndarray, P: np.ndarray, mu0: np.ndarray | None, *,
                        target: float | None = None, steps: int = SUBGRADIENT_STEPS, tail: np.ndarray | None = None,
                        deadline: Any = None, patience: int = STALL_PATIENCE) -> tuple[np.ndarray, Lagrangian]:
    """The best mu found by a projected subgradient ascent from ``mu0`` (Polyak steps towards ``target``,
    the priced cost of a known plan, when given; the subgradient is D_r - chunks of r bought). After
    ``patience`` steps in a row without a better value the step length is halved, from the best mu."""
    groups = _slot_groups(job, w, P)
    mu = start_multipliers(job) if mu0 is None else np.maximum(np.asarray(mu0, float), 0.0)
    cur = lagrangian(job, w, P, mu, tail=tail, groups=groups, want_subgradient=True)
    best_mu, best = mu, cur
    theta, stall = 1.0, 0
    scale = max(1.0, float(np.abs(job.dq).max()) + float(job.xq.max()) / job.k)
    for _ in range(steps):
        if deadline is not None:
            deadline.check("pricing")
        if not math.isfinite(cur.value):
            break
        g = job.chunks - cur.bought
        norm2 = float(g @ g)
        if norm2 <= 1e-12:
            break
        if target is not None and math.isfinite(target) and target > cur.value:
            step = theta * (target - cur.value) / norm2
        else:
            step = theta * scale / math.sqrt(norm2)
        mu = np.maximum(0.0, mu + step * g)
        cur = lagrangian(job, w, P, mu, tail=tail, groups=groups, want_subgradient=True)
        if cur.value > best.value + 1e-9 * max(1.0, abs(best.value)):
            best_mu, best, stall = mu, cur, 0
        else:
            stall += 1
            if stall >= patience:
                theta, stall = theta / 2.0, 0
                mu, cur = best_mu, best
            if theta < 1e-3:
                break
        if target is not None and best.value >= target - 1e-9 * max(1.0, abs(target)):
            break
    return best_mu, best


def best_multipliers(job: SingleJob, w: np.ndarray, P: np.ndarray, mu0: np.ndarray | None, *,
                     targets: Sequence[float], steps: int, tail: np.ndarray | None = None,
                     deadline: Any = None) -> tuple[np.ndarray, Lagrangian]:
    """The best of several `improve_multipliers` runs from ``mu0``: towards each of ``targets`` (costs of known
    plans, at most the first two are used) with patience `STALL_PATIENCE`, and towards the lowest with
    `LONG_PATIENCE`.

    No single run wins everywhere. Measured at zero prices, 30 steps, summed over every job of a week (as
    `config_lp` cuts them): towards the plan of the Lagrangian's own completion with patience 3 (the only run
    before), towards the cheapest of 40 plan lengths with patience 3, and with 20: ITP quiet week 102,295 /
    104,358 / 105,671, the best of the three per job 114,640; typical week 182,523 / 187,746 / 159,038, best
    191,575 (these sums were measured while the subgradient still left out the tail's purchases, see
    `lagrangian`; since then the ascent no longer stalls on the cut jobs). At the `paper` preset (50 sites)
    patience 3 is within 1-3 % of the dual's optimum (a derivative-free search over mu), and 20 is worse
    (14,166 against 13,494 on every fourth job).
    """
    finite = [float(t) for t in targets if t is not None and math.isfinite(t)]
    if not finite:
        return improve_multipliers(job, w, P, mu0, steps=steps, tail=tail, deadline=deadline)
    runs = [(t, STALL_PATIENCE) for t in dict.fromkeys(finite[:2])] + [(min(finite), LONG_PATIENCE)]
    best: tuple[np.ndarray, Lagrangian] | None = None
    for target, patience in runs:
        out = improve_multipliers(job, w, P, mu0, target=target, steps=steps, tail=tail, deadline=deadline,
                                  patience=patience)
        if best is None or out[1].value > best[1].value:
            best = out
    return best


def best_plan(job: SingleJob, w: np.ndarray | None = None, P: np.ndarray | None = None, *,
              mu: np.ndarray | None = None, steps: int = SUBGRADIENT_STEPS, exact_workers: bool = False,
              time_limit: float = 1.0, deadline: Any = None, extra: Sequence[Plan] = ()) -> tuple[Plan | None, float, Lagrangian, np.ndarray]:
    """(cheapest plan found, its priced cost, the best Lagrangian found, its mu): the candidates of
    `candidate_plans`, the Lagrangian's own plan and ``extra`` (e.g. the incumbent's), then multipliers
    improved with the best plan's cost as the target, so the Lagrangian says how far the plan can be
    from the optimum."""
    R = job.n_sites
    w = np.zeros((job.slots, R)) if w is None else w
    P = np.zeros((job.slots, R)) if P is None else P
    mu0 = start_multipliers(job) if mu is None else mu
    lag0 = lagrangian(job, w, P, mu0)
    plans = list(extra)
    first = plan_from(job, w, lag0.completion, lag0.slot_value, lag0.slot_ps) if 0 <= lag0.completion < job.slots else None
    if first is not None:
        plans.append(first)
    plans += candidate_plans(job, w, P, deadline=deadline,
                             ends=[lag0.completion] if 0 <= lag0.completion < job.slots else ())
    costs = [priced_cost(job, p, w, P) for p in plans]
    if exact_workers and costs:
        # the integer workers of the two best candidates' slots and PS sites, exactly (a MILP each)
        for k in np.argsort(costs, kind="stable")[:2]:
            if deadline is not None and deadline.expired():
                break
            slots = sorted({t - job.arrival for t, _, _ in plans[k].slots})
            ps = [{t - job.arrival: p for t, p, _ in plans[k].slots}[s] for s in slots]
            better = fixed_ps_plan(job, slots, ps, w, time_limit=time_limit)
            if better is not None:
                plans.append(better)
                costs.append(priced_cost(job, better, w, P))
    k = int(np.argmin(costs)) if costs else -1
    plan, ub = (plans[k], costs[k]) if k >= 0 else (None, math.inf)
    mu1, lag = improve_multipliers(job, w, P, mu0, target=ub if plan is not None else None, steps=steps,
                                   deadline=deadline)
    if 0 <= lag.completion < job.slots:
        other = plan_from(job, w, lag.completion, lag.slot_value, lag.slot_ps)
        if other is not None and priced_cost(job, other, w, P) < ub:
            plan, ub = other, priced_cost(job, other, w, P)
    return plan, ub, lag, mu1


# ---- the exact model over groups of equal slots -------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Grouped:
    """`exact_grouped`'s answer: the cheapest plan found, its priced cost, a lower bound on the job's least
    priced cost (over every completion), and whether the two meet."""

    plan: Plan | None
    value: float
    bound: float
    optimal: bool
    completions: int  # completions whose model was solved


def _grouped_model(job: SingleJob, w: np.ndarray, P: np.ndarray, end: int, time_limit: float):
    """The aggregated MILP over slots 0 .. ``end`` (indices t - a), without the latency (see `exact_grouped`):
    (its HiGHS solve, the groups' slot lists, the variables' index maps)."""
    import highspy
    import scipy.sparse as sp

    R = job.n_sites
    first, inverse = _slot_groups(job, w, P)
    members = [np.flatnonzero(inverse[:end + 1] == g) for g in range(first.size)]
    cm = job.cap_matrix(first)  # [G, p, r']
    cost, hi = [], []
    U: dict[tuple[int, int], int] = {}
    Y: dict[tuple[int, int, int], int] = {}
    for g, f in enumerate(first):
        size = members[g].size
        if size == 0:
            continue
        for p in range(R):
            if job.cap_ps[f, p] < 0 or cm[g, p].sum() <= 0:
                continue
            U[g, p] = len(cost)
            cost.append(float(P[f, p]))
            hi.append(float(size))
            for r in np.flatnonzero(cm[g, p] > 0):
                Y[g, p, int(r)] = len(cost)
                cost.append(float(w[f, r] + job.xq[p, r]))
                hi.append(float(cm[g, p, r] * size))
    groups = [g for g in range(first.size) if members[g].size]
    n = {}
    for g in groups:
        for r in range(R):
            n[g, r] = len(cost)
            cost.append(0.0)
            hi.append(float(job.total_chunks))
    origins = np.flatnonzero(job.chunks > 0)
    x = {}
    for r in origins:
        for r2 in range(R):
            x[int(r), r2] = len(cost)
            cost.append(float(job.dq[r, r2]))
            hi.append(float(job.chunks[r]))
    ri, ci, vals, lo_r, up_r = [], [], [], [], []
    inf = highspy.kHighsInf

    def row(cols: list[int], coefs: list[float], lo: float, up: float) -> None:
        k = len(lo_r)
        ri.extend([k] * len(cols))
        ci.extend(cols)
        vals.extend(coefs)
        lo_r.append(lo)
        up_r.append(up)

    for g in groups:
        us = [U[g, p] for p in range(R) if (g, p) in U]
        if us:
            row(us, [1.0] * len(us), -inf, float(members[g].size))  # one PS per slot
    for (g, p), u in U.items():
        ys = [Y[g, p, r] for r in range(R) if (g, p, r) in Y]
        row([u] + ys, [1.0] + [-1.0] * len(ys), -inf, 0.0)  # a slot with a PS has a worker
        for r in range(R):
            if (g, p, r) in Y:
                row([Y[g, p, r], u], [1.0, -float(cm[g, p, r])], -inf, 0.0)  # at most cap workers per slot
    for g in groups:
        for r in range(R):
            ys = [Y[g, p, r] for p in range(R) if (g, p, r) in Y]
            row([n[g, r]] + ys, [float(job.epochs)] + [-job.rho] * len(ys), -inf, 0.0)  # (2b), summed
    for r in origins:
        row([x[int(r), r2] for r2 in range(R)], [1.0] * R, float(job.chunks[r]), float(job.chunks[r]))
    for r2 in range(R):
        cols = [x[int(r), r2] for r in origins] + [n[g, r2] for g in groups]
        row(cols, [1.0] * origins.size + [-1.0] * len(groups), 0.0, 0.0)
    nv = len(cost)
    mat = sp.csr_matrix((vals, (ri, ci)), shape=(len(lo_r), nv))
    h = _highs_mip(np.array(cost), np.zeros(nv), np.array(hi), np.ones(nv, dtype=bool), mat, np.array(lo_r),
                   np.array(up_r), time_limit=time_limit, rel_gap=1e-9, abs_gap=1e-9)
    h.run()
    return h, members, U, Y, n, x


def _spread(total: int, slots: int, start: int) -> np.ndarray:
    """``total`` units over ``slots`` slots round robin from slot ``start``: each slot gets floor or ceil of
    total / slots."""
    out = np.full(slots, total // slots, dtype=np.int64)
    extra = total % slots
    out[(start + np.arange(extra)) % slots] += 1
    return out


def _grouped_plan(job: SingleJob, w: np.ndarray, members: list[np.ndarray], U: dict, Y: dict, n: dict, x: dict,
                  sol: np.ndarray, time_limit: float = 5.0) -> Plan | None:
    """The aggregated solution as a plan: each group's slots handed to its PS sites in order, every site's
    workers spread round robin over the slots of one PS site (so no slot exceeds the cap and each gets a
    worker), the chunks trained filled slot by slot. When a slot's floor(k y) cannot hold them (k not an
    integer), the workers and transfers are redone exactly for those slots and PS sites (`fixed_ps_plan`)."""
    R = job.n_sites
    val = np.rint(sol).astype(np.int64)
    sl, psa, rows = [], [], []
    trained_of: list[np.ndarray] = []
    fits = True
    for g, slots_g in enumerate(members):
        taken = 0
        mine_rows: list[np.ndarray] = []
        for p in range(R):
            u = int(val[U[g, p]]) if (g, p) in U else 0
            if u <= 0:
                continue
            mine = slots_g[taken:taken + u]
            taken += u
            N = np.zeros((u, R), dtype=np.int64)
            pointer = 0
            for r in range(R):
                if (g, p, r) in Y and val[Y[g, p, r]] > 0:
                    N[:, r] = _spread(int(val[Y[g, p, r]]), u, pointer)
                    pointer = (pointer + int(val[Y[g, p, r]])) % u
            sl.extend(mine.tolist())
            psa.extend([p] * u)
            mine_rows.append(N)
        if taken == 0:
            continue
        Ng = np.concatenate(mine_rows, axis=0)
        rows.append(Ng)
        room = job.trainable(Ng)  # [slots of g, R]
        left = np.array([int(val[n[g, r]]) for r in range(R)], dtype=np.int64)
        cum = np.cumsum(room, axis=0)
        if np.any(cum[-1] < left):
            fits = False
        take = np.minimum(room, np.maximum(0, left[None, :] - (cum - room)))
        trained_of.append(take)
    if not sl:
        return None
    order = np.argsort(sl, kind="stable")
    sl_a = np.asarray(sl, dtype=np.int64)[order]
    ps_a = np.asarray(psa, dtype=np.int64)[order]
    if not fits:
        return fixed_ps_plan(job, sl_a.tolist(), ps_a.tolist(), w, time_limit=time_limit)
    N_all = np.concatenate(rows, axis=0)[order]
    n_all = np.concatenate(trained_of, axis=0)[order]
    X = np.zeros((R, R), dtype=np.int64)
    for (r, r2), i in x.items():
        X[r, r2] = val[i]
    return _assemble(job, sl_a, ps_a, X, N_all, n_all)


def exact_grouped(job: SingleJob, w: np.ndarray | None = None, P: np.ndarray | None = None, *,
                  time_limit: float = 60.0, upper: float = math.inf) -> Grouped:
    """The job's cheapest plan by one MILP per completion over groups of equal slots.

    `exact`'s model names each slot's workers, so the slots of equal caps and prices (every slot of a job
    alone at zero prices) are interchangeable and its search explores each plan once per ordering; at 50
    sites it proves no job in 400 s. Here, for a completion c, the slots 0 .. c with equal (caps, prices)
    form one group of s slots, and the model counts: U_{g,p} slots of the group with the PS at p (sum_p <= s),
    Y_{g,p,r'} <= cap_{p,r'} U_{g,p} workers at r' summed over them (U <= sum_r' Y: each has a worker),
    n_{g,r'} chunks trained with E n <= rho sum_p Y (2b, summed over the slots), and the transfer totals x.
    A count solution splits back into slots (round robin, `_grouped_plan`), and with k = rho / E an integer
    floor(k y) = k y, so the model is exact; otherwise the summed (2b) relaxes floor(k y_t) per slot and the
    model is a lower bound, its plan redone for its slots and PS sites (`fixed_ps_plan`).

    The completions are tried in order; the latency f(c) plus the model is the cheapest plan ending by c
    (a cheaper one ending earlier is found at its own c). Prices are >= 0, so every cost is, and once f(c)
    reaches the best plan (or ``upper``) no later completion can beat it: the bound is the least of
    f(c) + each model's dual bound and that f(c). Each completion gets an equal share of the time left over
    the completions whose latency is below ``upper`` (one more when it is infinite); one stopped by its share
    adds f(c) + its dual bound and the search goes on. ``optimal`` when the best plan meets the bound (1e-9
    relative); the time limit bounds the whole call."""
    import time

    R, L = job.n_sites, job.slots
    w = np.zeros((L, R)) if w is None else np.asarray(w, float)
    P = np.zeros((L, R)) if P is None else np.asarray(P, float)
    if np.any(w < 0) or np.any(P < 0):
        raise ValueError("exact_grouped: prices w and P must be >= 0")
    stop = time.monotonic() + max(0.0, time_limit)
    best_plan, best = None, math.inf
    bound = math.inf
    solved = 0
    for end in range(L):
        f = float(job.latency[end])
        cap = min(best, upper)
        left = stop - time.monotonic()
        if f >= cap or left <= 0:
            bound = min(bound, f)  # this completion and every later one: at least its latency
            break
        ahead = int(np.count_nonzero(job.latency[end:] < cap)) if math.isfinite(cap) else 2
        h, members, U, Y, n, x = _grouped_model(job, w, P, end, left / max(1, ahead))
        info = h.getInfo()
        status = h.modelStatusToString(h.getModelStatus())
        if status == "Infeasible":
            solved += 1
            continue
        dual = float(info.mip_dual_bound) if math.isfinite(info.mip_dual_bound) else 0.0
        bound = min(bound, f + max(0.0, dual))
        if info.primal_solution_status == 2:
            plan = _grouped_plan(job, w, members, U, Y, n, x, np.array(h.getSolution().col_value),
                                 time_limit=min(5.0, max(0.01, stop - time.monotonic())))
            if plan is not None:
                cost = priced_cost(job, plan, w, P)
                if cost < best:
                    best_plan, best = plan, cost
        solved += status == "Optimal"
    bound = min(bound, best)
    optimal = best_plan is not None and best <= bound + 1e-9 * max(1.0, abs(best))
    return Grouped(best_plan, best, bound, optimal, solved)
