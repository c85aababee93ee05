"""A certified lower bound on program (2) that scales to the paper presets (method ``worker_lp``).

Relaxation. Sites are pooled per resource k (capacity sum_r C_r^k per slot). Job i needs
W_i = ceil(E_i D_i / rho_i) worker-slots in total ((2a)+(2b) summed over sites) and can have at
most A_i workers in one slot (the most that fit all sites with its PS at the best site:
``bounds.worker_limits``). Every slot with workers also holds a PS (2c); since y_i(t) <= A_i, the
PS's demand n_i in that slot is at least n_i y_i(t) / A_i. So each worker-slot of job i demands at
least ``e_i = m_i + n_i / A_i`` of the pooled resources. The cost of a schedule of job i with last
worker slot c is at least

* latency f_i(c - a_i + 1);
* exchange: in a slot with y workers at most g_i of them share the PS's site (g_i: the most type-i
  workers one site holds next to the PS), every other one pays at least
  x_i = pi_i * min_{r != r'} q^{r r'}: at least x_i * max(0, y - g_i) per slot (convex in y);
* transfer: chunks trained at their origin site r move nowhere; within [a_i, c] at most
  floor(k_i w_ir (c - a_i + 1)) of them can be (w_ir: the most workers site r holds alone,
  k_i = rho_i / E_i chunks per worker-slot), every other chunk of origin r pays at least
  delta_i * min_{r' != r} q^{r r'}.

* PS-site floor (on transfer + exchange together): in slot t the job's PS sits at one site p_t, so in
  L = c - a_i + 1 slots it uses a set P of at most L sites. A chunk of origin r trained at site r' in
  slot t pays delta_i q^{r r'} to move (0 when r' = r) and, as its worker pays pi_i q^{r' p_t} per
  slot and trains at most k_i chunks, a share of at least (pi_i / k_i) q^{r' p_t} of the exchange; so
  it costs at least h_i(r, p_t) with h_i(r, p) = min_{r'} (delta_i q^{r r'} + (pi_i / k_i) q^{r' p})
  (q^{rr} taken as 0), and the job's bandwidth is at least the L-median value
  min_{|P| <= L} sum_r D_i^r min_{p in P} h_i(r, p). `ps_site_floor` bounds that from below by the
  Lagrangian relaxation of the assignment rows (any multipliers are valid: Cornuejols, Fisher &
  Nemhauser, "Location of bank accounts to optimize float", Management Science 23 (1977) 789-810),
  made non-increasing in L (the L-median value is) and lowered by its float error. The two bandwidth
  floors overlap, so a column's cost takes their maximum: latency + max(transfer floor + exchange
  floor, PS-site floor).

A schedule therefore gives, per job, a completion c and integer worker counts 0 <= y(t) <= A_i on
[a_i, c] summing to >= W_i, with sum_i e_i y_i(t) <= pooled capacity in every slot, at no more than
its cost: a relaxation. Its Lagrangian (prices pi[k, t] >= 0 on the pooled rows,
`edgeopt.core.colgen.lagrangian`) is

    L(pi) = sum_i min_c [ f_i(c - a_i + 1) + transfer floor(c) + cheapest W_i worker-units in [a_i, c] ]
            - sum_{k, t} cap_k pi[k, t],

where slot t offers g_i units at e_i . pi_t and A_i - g_i more at e_i . pi_t + x_i; taking the
cheapest units first is optimal (per-slot costs are convex and separable). With the PS-site floor
B_i(L) the inner minimum over worker counts of f_i + max(transfer + fill with exchange, B_i) is at
least f_i + max(transfer + [cheapest W_i units with exchange], [cheapest W_i units at e_i . pi_t alone]
+ B_i) (a max of minima is below the minimum of a max), which is what the pricing evaluates. Every c
is tried (no monotonicity of f_i needed: c is the schedule's own last slot). The floor of the result
is ``bounds.latency_bound``.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from edgeopt.core.colgen import _gamma
from edgeopt.core.limits import ModelSize
from edgeopt.core.lowerbound import BoundMethod
from edgeopt.core.lpbound import UNIT_ROUNDOFF
from edgeopt.okita.placement import max_workers
from formulations.okita import kernels
from formulations.okita.bounds import latency_bound, worker_limits

#: PS-site floor: most completion lengths L computed per job past the shortest (0, a valid floor, beyond),
#: subgradient steps, and the largest site count it is computed for (the arrays are [L, sites, sites]).
FLOOR_SPAN = 48
FLOOR_STEPS = 60
FLOOR_MAX_SITES = 200
#: run the floor's subgradient loop in numpy (the reference) instead of the compiled kernels of
#: ``kernels.py``, which give bitwise the same floor (tests compare them)
REFERENCE = False


def site_costs(q: np.ndarray, chunk_mb: float, exchange_per_chunk_mb: float) -> np.ndarray:
    """h[r, p] = min_{r'} (chunk_mb q[r, r'] + exchange_per_chunk_mb q[r', p]) with q[r, r] taken as 0,
    lowered by a few units in the last place so that the float value never exceeds the exact one."""
    q0 = np.array(q, dtype=float)
    np.fill_diagonal(q0, 0.0)
    h = (chunk_mb * q0[:, :, None] + exchange_per_chunk_mb * q0[None, :, :]).min(axis=1)
    return np.maximum(0.0, h * (1.0 - 8.0 * UNIT_ROUNDOFF))


def ps_site_floor(chunks: np.ndarray, h: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """For each L in ``lengths`` a lower bound on min_{|P| <= L} sum_r chunks[r] min_{p in P} h[r, p].

    Lagrangian relaxation of "each origin assigned once" with multipliers lam[r]:
    L(lam) = sum_r lam_r + (sum of the L smallest rho_p), rho_p = sum_r min(0, chunks_r h[r, p] - lam_r),
    a lower bound for ANY lam (weak duality); lam by a deterministic subgradient ascent, the best value
    kept, minus a bound on its float error, clipped at 0, then made non-increasing in L (the exact value
    is, so max over L' >= L of a lower bound at L' is one at L)."""
    used = chunks > 0
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(lengths.size)
    S = int(used.sum())
    live = lengths < S  # with L >= S every origin can hold the PS itself: the floor is 0
    if S == 0 or not live.any():
        return out
    c = chunks[used][:, None] * h[used, :]  # [origin, site]
    Ls = lengths[live]
    n = Ls.size
    srt = np.sort(c, axis=1)
    lam = np.repeat(srt[:, min(1, srt.shape[1] - 1)][None, :], n, axis=0)  # start: second-cheapest site
    scale = float(c[c > 0].mean()) if (c > 0).any() else 1.0
    best = np.full(n, -np.inf)
    err_unit = 4.0 * _gamma(2 * c.shape[1] + c.shape[0] + 8)
    within = np.arange(c.shape[1])[None, :] < Ls[:, None]  # [L, site]: the first L places of a site order
    for step in range(FLOOR_STEPS):
        if REFERENCE:
            red = np.minimum(0.0, c[None, :, :] - lam[:, :, None])  # [L, origin, site]
            rho = red.sum(axis=1)  # [L, site]
            rank = np.argsort(np.argsort(rho, axis=1, kind="stable"), axis=1, kind="stable")
            opened = rank < Ls[:, None]
        else:  # the same numbers (kernels.py); the L cheapest sites by one stable sort instead of ranks
            rho = kernels.reduced_sums(c, lam)
            opened = np.zeros(rho.shape, dtype=bool)
            np.put_along_axis(opened, np.argsort(rho, axis=1, kind="stable"), within, axis=1)
        value = lam.sum(axis=1) + np.where(opened, rho, 0.0).sum(axis=1)
        margin = err_unit * (np.abs(lam).sum(axis=1) * (1 + c.shape[1]) + np.abs(c).sum())
        best = np.maximum(best, value - margin)
        if REFERENCE:
            assigned = (opened[:, None, :] & (c[None, :, :] < lam[:, :, None])).sum(axis=2)
        else:
            assigned = kernels.assigned_counts(c, lam, opened)
        g = 1.0 - assigned
        norm = np.sqrt((g * g).sum(axis=1, keepdims=True))
        lam = lam + 2.0 * scale * (0.95 ** step) * g / np.maximum(norm, 1.0)
    out[live] = np.maximum(best, 0.0)
    return np.maximum.accumulate(out[::-1])[::-1]


class WorkerRelaxation:
    """The pooled worker-slot relaxation (module docstring) with the pricing interface of `colgen`."""

    def __init__(self, instance: Any) -> None:
        T = int(instance.horizon)
        C = instance.capacity  # [sites, resources]
        q = instance.q
        S = len(C)
        off = ~np.eye(S, dtype=bool)
        qmin = float(q[off].min()) if S > 1 else 0.0
        qout = np.where(off, q, np.inf).min(axis=1) if S > 1 else np.zeros(S)
        self.capacity = np.repeat(C.sum(axis=0)[:, None], T, axis=1)
        self.limits = worker_limits(instance)
        self.arrival = np.array([int(j.arrival) for j in instance.jobs], dtype=np.int64)
        self.demand = []  # e_i per resource
        self.base = []  # f_i(L) + transfer floor(L) for L = c - a_i + 1 = 1 .. T - a_i
        self.shared = []  # g_i: workers that may share the PS's site in one slot
        self.remote = []  # x_i: least exchange cost of a worker away from the PS
        self.latency = []  # f_i(L), L = 1 .. T - a_i
        self.transfer = []  # transfer floor(L)
        self.site_floor = []  # PS-site floor B_i(L) on transfer + exchange (0 where not computed)
        for job, (W, A) in zip(instance.jobs, self.limits, strict=True):
            m, n = np.asarray(job.worker_demand, float), np.asarray(job.ps_demand, float)
            self.demand.append(m + n / A if A > 0 else m + n)
            L = np.arange(1, T - int(job.arrival) + 1)
            fits = np.all(C + 1e-9 >= n, axis=1)
            g = int(max((max_workers((C[r] - n)[None, :], m, W)[0] for r in range(S) if fits[r]), default=0))
            self.shared.append(min(g, A))
            self.remote.append(float(job.param_size_mb) * qmin)
            w_alone = max_workers(C, m, W).astype(float)  # per site
            at_origin = np.floor(job.chunks_per_worker * w_alone[None, :] * L[:, None] + 1e-9)
            moved = np.maximum(0.0, np.asarray(job.data_chunks, float)[None, :] - at_origin)
            transfer = float(job.chunk_size_mb) * (moved * np.where(np.isfinite(qout), qout, 0.0)[None, :]).sum(axis=1)
            latency = np.asarray(job.cost(L), dtype=float)
            self.base.append(latency + transfer)
            self.latency.append(latency)
            self.transfer.append(np.asarray(transfer, dtype=float))
            floor = np.zeros(L.size)
            if 1 < S <= FLOOR_MAX_SITES and A > 0:
                first = max(1, math.ceil(W / A))
                lengths = np.arange(first, min(L.size, first + FLOOR_SPAN) + 1)
                if lengths.size:
                    h = site_costs(q, float(job.chunk_size_mb), float(job.param_size_mb) / job.chunks_per_worker)
                    floor[lengths - 1] = ps_site_floor(np.asarray(job.data_chunks, float), h, lengths)
            self.site_floor.append(floor)

    @property
    def n_rows(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def horizon(self) -> int:
        return int(self.capacity.shape[1])

    @property
    def n_jobs(self) -> int:
        return len(self.limits)

    def empty_jobs(self) -> list[int]:
        """Jobs that can never run, or not within the horizon even alone."""
        return [i for i, (W, A) in enumerate(self.limits)
                if A == 0 or self.arrival[i] + math.ceil(W / A) > self.horizon]

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.capacity).tobytes())
        h.update(np.array(self.limits, dtype=np.int64).tobytes())
        h.update(self.arrival.tobytes())
        for e, f in zip(self.demand, self.base, strict=True):
            h.update(e.tobytes())
            h.update(f.tobytes())
        h.update(np.array(self.shared, dtype=np.int64).tobytes())
        h.update(np.array(self.remote, dtype=float).tobytes())
        for f, tr, b in zip(self.latency, self.transfer, self.site_floor, strict=True):
            h.update(f.tobytes())
            h.update(tr.tobytes())
            h.update(b.tobytes())
        return h.hexdigest()

    def _best(self, i: int, unit: np.ndarray, deadline: Any = None) -> tuple[Any, float]:
        """Job i's cheapest (c, slots, counts) at unit prices ``unit[t]`` and its value (module docstring:
        latency + max(transfer + fill with exchange, fill at unit prices + PS-site floor)), lowered by a
        bound on its own float rounding error (so the minimum over c is a safe lower bound).

        Every completion c is tried, each with a sort of its window: O(T^2 log T) per job, minutes on
        a horizon of 10^5 slots, so ``deadline`` (a `Deadline` or None) is checked for every c."""
        W, A = self.limits[i]
        g, x = self.shared[i], self.remote[i]
        a, T = int(self.arrival[i]), self.horizon
        gamma = 4.0 * _gamma(2 * W + self.n_rows + 8)
        best_v, best_key = math.inf, None
        full, rest = divmod(W, A)
        for c in range(a + math.ceil(W / A) - 1, T):
            if deadline is not None:
                deadline.check("pricing")
            window = unit[a:c + 1]
            L = window.size
            price = np.concatenate([window, window + x])  # g cheap units per slot, then A - g dearer ones
            cap = np.concatenate([np.full(L, g), np.full(L, A - g)])
            order = np.argsort(price, kind="stable")
            take = np.minimum(cap[order], np.maximum(0, W - np.concatenate([[0], np.cumsum(cap[order])[:-1]])))
            used = take > 0
            fill = float(take[used] @ price[order][used])
            # the same W units at the unit prices alone: A per slot, cheapest slots first
            by_price = np.argsort(window, kind="stable")
            plain_counts = np.zeros(L, dtype=np.int64)
            plain_counts[by_price[:full]] = A
            if rest:
                plain_counts[by_price[full]] = rest
            plain = float(plain_counts @ window)
            latency = float(self.latency[i][c - a])
            transfer = float(self.transfer[i][c - a])
            floor = float(self.site_floor[i][c - a])
            with_exchange, with_floor = transfer + fill, plain + floor
            v = latency + max(with_exchange, with_floor) - gamma * (
                abs(latency) + abs(transfer) + abs(fill) + abs(plain) + abs(floor))
            if v < best_v:
                if with_floor > with_exchange:
                    per_slot = plain_counts.astype(float)
                else:
                    per_slot = np.bincount(order[used] % L, weights=take[used], minlength=L)
                slots = np.flatnonzero(per_slot)
                best_v = v
                best_key = (c, tuple(int(a + s) for s in slots), tuple(int(per_slot[s]) for s in slots))
        return best_key, best_v

    def price(self, pi: np.ndarray, buckets: np.ndarray | None = None, *, deadline: Any = None,
              ) -> tuple[list[tuple[Any, float]], float]:
        """Per job its cheapest column and safe value; the unit prices e_i . pi_t carry a relative error of
        at most gamma_K, covered by lowering each job's value by that much of its fill cost. ``deadline``:
        checked in `_best`'s loop (`BuildTimeLimit` when it passes)."""
        best, margin = [], 0.0
        for i in range(self.n_jobs):
            unit = self.demand[i] @ pi
            key, v = self._best(i, unit, deadline)
            if key is None:
                raise ValueError(f"job {i} has no column")
            best.append((key, v))
            W = self.limits[i][0]
            margin += 2.0 * _gamma(self.n_rows + 2) * W * float(unit.max(initial=0.0))
        return best, margin

    def column(self, i: int, key: Any) -> tuple[float, np.ndarray, np.ndarray]:
        c, slots, counts = key
        T, K = self.horizon, self.n_rows
        slots_a, counts_a = np.array(slots, dtype=np.int64), np.array(counts, dtype=float)
        idx = (np.arange(K)[:, None] * T + slots_a[None, :]).ravel()
        val = (self.demand[i][:, None] * counts_a[None, :]).ravel()
        nz = val > 0
        k = c - int(self.arrival[i])
        exchange = self.remote[i] * float(np.maximum(0.0, counts_a - self.shared[i]).sum())
        cost = float(self.latency[i][k]) + max(float(self.transfer[i][k]) + exchange, float(self.site_floor[i][k]))
        return cost, idx[nz], val[nz]


def size(instance: Any) -> ModelSize:
    """The starting master (one column per job and a slack per pooled row); column generation then
    adds columns only up to the size budget and stops there, keeping a valid bound."""
    J, T, K = len(instance.jobs), int(instance.horizon), len(instance.resources)
    return ModelSize(J * T, J + K * T, J + K * T + J * (1 + K * T),
                     note="column generation: the master holds only generated columns")


WORKER_LP = BoundMethod(
    name="worker_lp",
    summary="sites pooled per resource, per job W_i worker-slots of demand m_i + n_i / A_i, at most A_i per "
            "slot, latency at the last slot plus the larger of (exchange + transfer floors) and the PS-site "
            "(L-median) floor; Lagrangian of the pooled rows, prices by column generation",
    relax=WorkerRelaxation,
    trivial=latency_bound,
    step=None,
    size=size,
    bound_of="latency + bandwidth cost of program (2) over schedules of every job",
)
