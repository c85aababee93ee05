"""A_online (Alg. 1) with A_maxsche (Alg. 2), COST_C (Alg. 3) and COST_D (Alg. 4) of She et al.

Framework (Alg. 1, Sec. IV-B). Rounds ``i = 1, 2, ...`` start at
``tau_i = 2 ** (i - 1)`` (`edgeopt.core.geometric_rounds`). At slot ``tau_i`` the
jobs that have arrived (arrival <= tau_i) and are not scheduled yet form J_i;
`max_schedule` (A_maxsche) tries to run each of them inside the round's window
``[tau_i, tau_{i+1})`` (0-based slots; the paper's ``(tau_i, tau_{i+1}]``), i.e.
start >= tau_i and completion c_j <= tau_{i+1}; jobs it does not take wait for
the next round. Jobs still waiting when the rounds reach the horizon are
rejected. A_online runs through `edgeopt.core.run_online`, so it sees a job
only from its arrival on, and commits each job's schedule once, at ``tau_i``.

Prices (7)-(8), read from the garbled print as: ``lambda_su(t) = theta1 ** (f_su(t) / W_su) - 1``
and ``mu_sv(t) = theta2 ** (g_sv(t) / P_sv) - 1`` with ``theta1 = 2 T S U F1 + 1``,
``theta2 = 2 T S V F2 + 1`` (`edgeopt.core.price_base`), f/g the workers/PSs
already reserved at slot t. F1 and F2 ("upper bounds of the unit price",
"estimated from historical experiments") bound a job's utility per unit of
resource. A job's utility is 1 (all weights are 1) and any schedule uses at
least one worker-slot and one PS-slot, so ``F1 = F2 = 1`` is a valid bound
known before any job arrives; that is the default (deriving F from the jobs
would let future jobs change today's prices). Both can be passed as
parameters ``f1``, ``f2`` (Fig. 5 varies F).

A_maxsche (Alg. 2). For each job of J_i (in arrival order, then id) and every
completion time c in the window and worker count D_u = 1..D_j, COST_C and
COST_D price the cheapest colocated / distributed placement running in
``[c - d, c)``; the cheapest over all (c, D_u, xi) wins, ties to the earlier c,
then fewer workers, then colocated (the loops' order and the strict
comparisons of lines 7 and 11). If its utility ``eta_j = 1 - cost > 0`` (6)
the job is scheduled and the prices of the resources it takes rise (line 18);
otherwise it waits for the next round.

Interpretations and departures from the listings (all keep the validator's
constraints):

* Completion times. Lines 2 of Alg. 3/4 set ``c_j = tau_i + d_j``, i.e. start at
  tau_i, which makes Alg. 2's loop over c_j void. We take the loop as meant:
  a job may start at any slot ``h >= tau_i`` of the window with
  ``h + d <= tau_{i+1}``. For speed the starts evaluated are the window start,
  the slots where a server becomes usable for the job (a_j + Delta_js, 2i) and
  the slots where a worker of type u_j or a PS of type v_j is released on some
  server (a reservation ends). Between two such slots no capacity frees up and
  no price falls, so a later start cannot become feasible and can only finish
  later; it can be cheaper only by avoiding a price rise at its end, which we
  do not search for.
* Eligible servers (line 3): servers with ``a_j + Delta_js <= h`` for the start
  h considered (the paper's ``< tau_i`` when h = tau_i), with enough free
  capacity over the whole run ``[h, h + d)``.
* COST_C sorts by the run's total cost ``sum_t (D_u lambda_su(t) + mu_sv(t))``
  rather than by its value at tau_i (the quantity line 8 returns).
* COST_D, as its stated intent: workers are filled greedily on the
  servers with the cheapest run cost per worker (lines 3-7; optimal for the
  worker part since the cost is linear per worker), and the PS goes to the
  server with the cheapest PS run cost among those with a free type-v_j PS
  (lines 13-17 and 18-33). Moving workers onto the PS's server (lines 18-33)
  never lowers the cost: the greedy fill already holds the cheapest workers,
  and the rate of eq. (1) changes only when ALL workers join the PS, which is
  COST_C's case. If the greedy fill puts all workers on one server, the PS
  goes elsewhere or one worker moves off that server (2f), whichever is
  cheaper; so COST_D is the exact minimum of (9) over distributed placements.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from edgeopt.core import (
    CapacityLedger,
    OnlinePolicy,
    Result,
    exponential_price,
    geometric_rounds,
    price_base,
    register,
    run_online,
    stopwatch,
)
from edgeopt.core.maxweight import max_weight_batch
from edgeopt.edgecloud.instance import Instance, Job, duration_slots, durations
from edgeopt.edgecloud.schedule import JobRun, Schedule
from edgeopt.edgecloud.spec import FAMILY
from edgeopt.edgecloud.state import make_ledger, reserve_run

INF = math.inf


@dataclasses.dataclass(frozen=True)
class Placement:
    """A priced placement of one job: run ``[start, end)``, workers per server, PS server."""

    start: int
    end: int
    workers: dict[int, int]
    ps_server: int
    colocated: bool
    cost: float

    def run(self, job_id: int) -> JobRun:
        return JobRun(job=job_id, start=self.start, end=self.end, workers=dict(self.workers),
                      ps_server=self.ps_server, colocated=self.colocated)


# ---- COST_C and COST_D: plain functions, usable as pricing oracles ------------------------
def cost_colocated(
    instance: Instance,
    job: Job,
    *,
    workers: int,
    start: int,
    price_w: np.ndarray,
    price_p: np.ndarray,
    free_w: np.ndarray,
    free_p: np.ndarray,
    t0: int = 0,
) -> tuple[float, Placement | None]:
    """COST_C (Alg. 3): cheapest placement of ``workers`` workers and the PS all on one server.

    The job runs in ``[start, start + d_j(workers, xi=1))``.

    Args:
        instance, job: the job (its type u_j / v_j, release times a_j + Delta_js, duration rule).
        workers: D_u, 1 <= D_u <= D_j.
        start: first slot of the run (absolute).
        price_w: ``[S, T']`` price of ONE type-u_j worker on server s in slot t0 + k (lambda_su(t)).
        price_p: ``[S, T']`` price of one type-v_j PS (mu_sv(t)).
        free_w, free_p: ``[S, T']`` free type-u_j workers / type-v_j PSs per server and slot.
        t0: the absolute slot of column 0 of the four arrays.
    Returns:
        ``(cost, placement)`` or ``(inf, None)`` when no server can host the run
        (release, capacity over the whole run, or the run passes column T').
    """
    d = duration_slots(instance, job, workers, True)
    end = start + d
    a, b = start - t0, end - t0
    if a < 0 or b > price_w.shape[1]:
        return INF, None
    rel = instance.release(job.id)
    ok = (rel <= start) & (free_w[:, a:b].min(axis=1) >= workers) & (free_p[:, a:b].min(axis=1) >= 1)
    if not ok.any():
        return INF, None
    cost = workers * price_w[:, a:b].sum(axis=1) + price_p[:, a:b].sum(axis=1)
    cost = np.where(ok, cost, INF)
    s = int(np.argmin(cost))
    return float(cost[s]), Placement(start, end, {s: workers}, s, True, float(cost[s]))


def cost_distributed(
    instance: Instance,
    job: Job,
    *,
    workers: int,
    start: int,
    price_w: np.ndarray,
    price_p: np.ndarray,
    free_w: np.ndarray,
    free_p: np.ndarray,
    t0: int = 0,
) -> tuple[float, Placement | None]:
    """COST_D (Alg. 4): cheapest placement of ``workers`` workers NOT all together with the PS.

    The job runs in ``[start, start + d_j(workers, xi=0))``. Workers fill the
    servers in non-decreasing order of their run cost per worker
    ``sum_t lambda_su(t)`` (ties: lower index); the PS goes to the eligible
    server with the least ``sum_t mu_sv(t)``. If all workers land on one server
    s1, the placement would be colocated (2f); then the cheaper of (a) the PS
    on the cheapest other server and (b) the PS on s1 with one worker moved to
    the next cheapest server is taken (ties: a). This is the exact minimum of
    (9) over non-colocated placements of ``workers`` workers for this run.
    Arguments as in `cost_colocated`. Returns ``(inf, None)`` when infeasible.
    """
    d = duration_slots(instance, job, workers, False)
    end = start + d
    a, b = start - t0, end - t0
    if a < 0 or b > price_w.shape[1]:
        return INF, None
    rel = instance.release(job.id)
    avail = np.where(rel <= start, np.floor(free_w[:, a:b].min(axis=1) + 1e-9), 0).astype(np.int64)
    avail = np.clip(avail, 0, workers)
    if avail.sum() < workers:
        return INF, None
    unit = price_w[:, a:b].sum(axis=1)
    order = np.lexsort((np.arange(len(unit)), unit))
    taken: dict[int, int] = {}
    need = workers
    wcost = 0.0
    for s in order:
        if need == 0:
            break
        k = int(min(avail[s], need))
        if k > 0:
            taken[int(s)] = k
            wcost += k * float(unit[s])
            need -= k
    ps_ok = (rel <= start) & (free_p[:, a:b].min(axis=1) >= 1)
    pcost = np.where(ps_ok, price_p[:, a:b].sum(axis=1), INF)
    if len(taken) > 1:
        p = int(np.argmin(pcost))
        if not np.isfinite(pcost[p]):
            return INF, None
        total = wcost + float(pcost[p])
        return total, Placement(start, end, taken, p, False, total)
    # All workers landed on one server s1: (a) the PS elsewhere, or (b) the PS on s1 and one
    # worker moved to the next cheapest server (2f forbids all of them together with the PS).
    s1 = next(iter(taken))
    others = np.where(np.arange(len(pcost)) == s1, INF, pcost)
    pa = int(np.argmin(others))
    cost_a = wcost + float(others[pa])
    second = [int(s) for s in order if s != s1 and avail[s] >= 1]
    cost_b = INF
    if second and np.isfinite(pcost[s1]):
        s2 = second[0]
        cost_b = wcost - float(unit[s1]) + float(unit[s2]) + float(pcost[s1])
    if not np.isfinite(min(cost_a, cost_b)):
        return INF, None
    if cost_a <= cost_b:
        return cost_a, Placement(start, end, taken, pa, False, cost_a)
    moved = {s1: workers - 1, s2: 1} if workers > 1 else {s2: 1}
    return cost_b, Placement(start, end, dict(sorted(moved.items())), s1, False, cost_b)


# ---- prices --------------------------------------------------------------------------------
def _price(used: np.ndarray, cap: np.ndarray, theta: float) -> np.ndarray:
    """`exponential_price` computed on the used entries only (most are idle, and an idle one prices at
    exactly ``theta ** 0 - 1 = 0``); elementwise the same numbers (tests compare them bitwise)."""
    out = np.zeros(np.broadcast_shapes(used.shape, cap.shape))
    busy = used != 0
    if busy.any():
        out[busy] = exponential_price(used[busy], np.broadcast_to(cap, out.shape)[busy], theta)
    return out


@dataclasses.dataclass(frozen=True)
class Prices:
    """theta1 / theta2 of (7)-(8)."""

    theta1: float
    theta2: float

    @classmethod
    def for_instance(cls, instance: Instance, f1: float = 1.0, f2: float = 1.0) -> Prices:
        """theta1 = 2 T S U F1 + 1, theta2 = 2 T S V F2 + 1 (T, S, U, V: known before any job arrives)."""
        T, S = instance.horizon, len(instance.servers)
        return cls(price_base(T, S, instance.n_worker_types, f1), price_base(T, S, instance.n_ps_types, f2))

    def arrays(
        self, instance: Instance, ledger: CapacityLedger, job: Job, lo: int, hi: int,
        rows_w: np.ndarray | slice = slice(None), rows_p: np.ndarray | slice = slice(None),
    ) -> tuple[np.ndarray, ...]:
        """``(price_w, price_p, free_w, free_p)`` for ``job``'s types over slots ``[lo, hi)``.

        Each is ``[S, hi - lo]``, or only the servers ``rows_w`` (worker arrays) /
        ``rows_p`` (PS arrays) when given.
        """
        u, r = job.worker_type, instance.n_worker_types + job.ps_type
        cap_w, cap_p = ledger.capacity[rows_w, u, None], ledger.capacity[rows_p, r, None]
        used_w, used_p = ledger.usage[rows_w, u, lo:hi], ledger.usage[rows_p, r, lo:hi]
        return (_price(used_w, cap_w, self.theta1), _price(used_p, cap_p, self.theta2),
                cap_w - used_w, cap_p - used_p)


# ---- vectorised search over (completion time, worker count, xi) -----------------------------
def _range_min_table(a: np.ndarray) -> np.ndarray:
    """Sparse table ``[levels, R, L]``: ``t[k, r, i] = min(a[r, i : i + 2**k])`` (valid where it fits)."""
    R, L = a.shape
    levels = max(1, int(L).bit_length())
    t = np.full((levels, R, L), np.inf)
    t[0] = a
    for k in range(1, levels):
        h = 1 << (k - 1)
        n = L - (1 << k) + 1
        if n <= 0:
            break
        t[k, :, :n] = np.minimum(t[k - 1, :, :n], t[k - 1, :, h : h + n])
    return t


def _range_min(t: np.ndarray, o: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``[N, R]`` minima over ``[o_n, e_n)`` (e > o) from a `_range_min_table`."""
    length = e - o
    k = np.floor(np.log2(length)).astype(np.int64)
    # log2 in floats can be off by one at powers of two: correct it.
    k = np.where((1 << (k + 1)) <= length, k + 1, k)
    k = np.where((1 << k) > length, k - 1, k)
    out = np.empty((len(o), t.shape[1]))
    for kk in np.unique(k).tolist():  # one gather of whole columns per level: far fewer index computations
        sel = np.flatnonzero(k == kk)
        lvl = t[kk]
        out[sel] = np.minimum(lvl[:, o[sel]], lvl[:, e[sel] - (1 << kk)]).T
    return out


#: Run the reference implementation (True): `best_option` rebuilds its whole-window prices, prefix sums
#: and range-min tables for every job, instead of reading them from a `WindowCache` that A_maxsche updates
#: after each accepted job. Both take the same decisions (tests run them against each other).
REFERENCE = False


def _int_dtype(capacity: np.ndarray) -> type:
    """The smallest of int8 / int16 / int32 / int64 that holds every free count (capacities are integers)."""
    top = float(capacity.max(initial=0))
    return np.int8 if top < 2**7 else np.int16 if top < 2**15 else np.int32 if top < 2**31 else np.int64


class _Side:
    """One resource (a worker type or a PS type) of a `WindowCache`, in the compiled kernels' layout (slot
    major: ``[slot, column]``, one column per server that has the resource): per-slot prices and free
    capacity over the window, prefix sums of the prices, the range-min table ``[level, slot, column]`` of
    the free capacity and, per slot boundary, how many servers gain free capacity there (the candidate
    starts)."""

    def __init__(self, ledger: CapacityLedger, resource: int, theta: float, lo: int, hi: int) -> None:
        from edgeopt.edgecloud import kernels

        self.r, self.theta, self.lo, self.hi = resource, theta, lo, hi
        self.rows = np.flatnonzero(ledger.capacity[:, resource] > 0)
        self.cap = ledger.capacity[self.rows, resource, None]
        self.dtype = _int_dtype(self.cap)
        used = ledger.usage[self.rows, resource, lo:hi]
        L, n = hi - lo, len(self.rows)
        col, slot = np.nonzero(used)
        busy = exponential_price(used[col, slot], self.cap[col, 0], theta)  # what `_price` computes there
        self.price = np.zeros((L, n))
        self.prefix = np.zeros((L + 1, n))
        self.free = np.empty((L, n), dtype=self.dtype)
        self.table = np.empty((max(1, int(L).bit_length()), L, n), dtype=self.dtype)
        self.up = np.zeros(max(0, L - 1), dtype=np.int64)
        kernels.init_side(used, self.cap[:, 0], col, slot, busy, self.price, self.prefix, self.free, self.table,
                          self.up)

    def update(self, ledger: CapacityLedger, servers: np.ndarray, s: int, e: int) -> None:
        """The ledger changed on ``servers`` in the window's slots ``[s, e)`` (window offsets)."""
        from edgeopt.edgecloud import kernels

        pos = np.searchsorted(self.rows, servers)
        pos = pos[(pos < len(self.rows)) & (self.rows[np.minimum(pos, len(self.rows) - 1)] == servers)]
        if not len(pos):
            return
        used = ledger.usage[self.rows[pos], self.r, self.lo + s:self.lo + e]
        price = _price(used, self.cap[pos], self.theta)
        free = (self.cap[pos] - used).astype(self.dtype)
        kernels.update_side(pos, s, e, price, free, self.price, self.prefix, self.free, self.table, self.up)


class WindowCache:
    """What `best_option` reads for every job of one A_maxsche pass over the window ``[lo, hi)``, built once
    per resource and then updated only for the servers and slots an accepted job reserved (`update`), so a
    job costs O(its candidates), not O(servers x window) of rebuilt prices and tables. Every array is
    bitwise what `best_option`'s reference path computes from the ledger (tests check this); the search
    over them runs in a compiled kernel (`edgeopt.edgecloud.kernels.search`)."""

    def __init__(self, instance: Instance, ledger: CapacityLedger, prices: Prices, lo: int, hi: int) -> None:
        self.instance, self.ledger, self.prices, self.lo, self.hi = instance, ledger, prices, lo, hi
        self._sides: dict[int, _Side] = {}
        self._pairs: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        L = hi - lo
        self.lg = np.zeros(L + 1, dtype=np.int64)  # floor(log2 x)
        for k in range(1, max(1, int(L).bit_length())):
            self.lg[1 << k:] += 1

    def side(self, resource: int) -> _Side:
        got = self._sides.get(resource)
        if got is None:
            theta = self.prices.theta1 if resource < self.instance.n_worker_types else self.prices.theta2
            got = self._sides[resource] = _Side(self.ledger, resource, theta, self.lo, self.hi)
        return got

    def pairs(self, rw: int, rp: int) -> tuple[np.ndarray, np.ndarray]:
        """Columns (worker side, PS side) of the servers that have both resources (COST_C's servers)."""
        got = self._pairs.get((rw, rp))
        if got is None:
            a, b = self.side(rw).rows, self.side(rp).rows
            rc = np.intersect1d(a, b)
            got = self._pairs[(rw, rp)] = (np.searchsorted(a, rc), np.searchsorted(b, rc))
        return got

    def update(self, servers: Sequence[int], start: int, end: int, resources: Sequence[int]) -> None:
        """The ledger's usage of ``resources`` changed on ``servers`` over the absolute slots ``[start, end)``."""
        s, e = max(start, self.lo) - self.lo, min(end, self.hi) - self.lo
        if s >= e:
            return
        rows = np.array(sorted({int(x) for x in servers}), dtype=np.int64)
        for r in set(resources):
            side = self._sides.get(int(r))
            if side is not None:
                side.update(self.ledger, rows, s, e)


@dataclasses.dataclass(frozen=True)
class Option:
    """The best option found for a job in a window: ``xi``, ``workers``, absolute ``start``, its cost."""

    cost: float
    start: int
    workers: int
    colocated: bool
    duration: int


def best_option(
    instance: Instance,
    job: Job,
    ledger: CapacityLedger,
    prices: Prices,
    lo: int,
    hi: int,
    *,
    window_start_only: bool = False,
    colocation: bool = True,
    cache: WindowCache | None = None,
    limit: float = INF,
) -> Option | None:
    """The cheapest (cost, earliest completion, fewest workers, colocated first) option in ``[lo, hi)``.

    Vectorised over servers, candidate starts, worker counts and xi; the
    costs are those `cost_colocated` / `cost_distributed` compute.
    ``window_start_only`` evaluates only runs starting at ``lo`` (Alg. 3/4's
    literal ``c_j = tau_i + d_j``); ``colocation=False`` evaluates COST_D only.
    ``cache``: a `WindowCache` of the same ledger and window (the fast path: a compiled search over the
    cache's arrays; None: the reference, which rebuilds the window's prices and tables from the ledger
    and evaluates every triple with numpy). ``limit``: only an option cheaper than it is returned (None
    otherwise); A_maxsche passes the job's weight, which lets the fast path prune.
    """
    L = hi - lo
    if L <= 0:
        return None
    if cache is not None:
        if (cache.lo, cache.hi) != (lo, hi) or cache.ledger is not ledger:
            raise ValueError("the cache is of another window or ledger")
        return _best_option_cached(instance, job, cache, window_start_only, colocation, limit)
    # Only servers that have the job's worker / PS type at all can host it.
    rw = np.flatnonzero(ledger.capacity[:, job.worker_type] > 0)
    rp = np.flatnonzero(ledger.capacity[:, instance.n_worker_types + job.ps_type] > 0)
    if len(rw) == 0 or len(rp) == 0:
        return None
    lam, mu, fw, fp = prices.arrays(instance, ledger, job, lo, hi, rw, rp)
    rel = instance.release(job.id) - lo
    dd = durations(instance, job)  # [2, D]
    D = job.chunks
    # candidate starts (offsets in the window)
    cands = [np.zeros(1, dtype=np.int64)]
    for arr in (fw, fp):
        if L > 1:
            up = np.any(np.diff(arr, axis=1) > 0, axis=0)
            cands.append(np.flatnonzero(up) + 1)
    rr = rel[(rel > 0) & (rel < L)]
    cands.append(rr.astype(np.int64))
    cand = np.zeros(1, dtype=np.int64) if window_start_only else np.unique(np.concatenate(cands))
    # triples (xi, w, o) with o + d <= L
    xi_g, w_g, o_g = np.meshgrid(np.arange(2), np.arange(1, D + 1), cand, indexing="ij")
    d_g = dd[xi_g, w_g - 1]
    e_g = o_g + d_g
    valid = e_g <= L
    if not valid.any():
        return None
    xi_t, w_t, o_t, e_t, d_t = (a[valid] for a in (xi_g, w_g, o_g, e_g, d_g))

    Cl = np.zeros((len(rw), L + 1))
    np.cumsum(lam, axis=1, out=Cl[:, 1:])
    Cm = np.zeros((len(rp), L + 1))
    np.cumsum(mu, axis=1, out=Cm[:, 1:])
    tw = _range_min_table(fw)
    tp = _range_min_table(fp)

    costs = np.full(len(xi_t), INF)
    rc = np.intersect1d(rw, rp)

    def evaluate(part: np.ndarray) -> None:
        """Fill ``costs[part]`` (each triple's cost depends on that triple alone)."""
        # -- colocated (COST_C): servers with both the worker type and the PS type
        sel = part[xi_t[part] == 1] if colocation else np.zeros(0, dtype=np.int64)
        if len(rc) and len(sel):
            iw = np.searchsorted(rw, rc)
            ip = np.searchsorted(rp, rc)
            o, e, w = o_t[sel], e_t[sel], w_t[sel]
            mw = _range_min(tw, o, e)[:, iw]
            mp = _range_min(tp, o, e)[:, ip]
            ok = (rel[rc][None, :] <= o[:, None]) & (mw >= w[:, None]) & (mp >= 1)
            c = w[:, None] * (Cl[:, e][iw] - Cl[:, o][iw]).T + (Cm[:, e][ip] - Cm[:, o][ip]).T
            costs[sel] = np.where(ok, c, INF).min(axis=1)
        # -- distributed (COST_D)
        sel = part[xi_t[part] == 0]
        if len(sel):
            o, e, w = o_t[sel], e_t[sel], w_t[sel]
            mw = _range_min(tw, o, e)  # [N, |rw|]
            avail = np.where(rel[rw][None, :] <= o[:, None], np.floor(mw + 1e-9), 0.0)
            avail = np.clip(avail, 0, w[:, None])
            unit = (Cl[:, e] - Cl[:, o]).T  # [N, |rw|]
            order = np.argsort(unit, axis=1, kind="stable")
            a_s = np.take_along_axis(avail, order, axis=1)
            u_s = np.take_along_axis(unit, order, axis=1)
            before = np.cumsum(a_s, axis=1) - a_s
            take = np.clip(w[:, None] - before, 0, a_s)
            feasible = a_s.sum(axis=1) >= w
            wcost = (take * u_s).sum(axis=1)
            used = take > 0
            single = used.sum(axis=1) == 1
            first = np.argmax(used, axis=1)  # sorted position of the first (only, if single) worker server
            only = rw[np.take_along_axis(order, first[:, None], axis=1)[:, 0]]
            u_only = np.take_along_axis(u_s, first[:, None], axis=1)[:, 0]
            # next cheapest server with a free worker (sorted position of the 2nd server with avail >= 1)
            has = a_s >= 1
            pos2 = np.argmax(np.cumsum(has, axis=1) == 2, axis=1)
            ok2 = has.sum(axis=1) >= 2
            u_second = np.where(ok2, np.take_along_axis(u_s, pos2[:, None], axis=1)[:, 0], INF)
            mp = _range_min(tp, o, e)
            pok = (rel[rp][None, :] <= o[:, None]) & (mp >= 1)
            pc = np.where(pok, (Cm[:, e] - Cm[:, o]).T, INF)  # [N, |rp|]
            at_only = rp[None, :] == only[:, None]
            # (a) PS not on the only worker server (all together would be colocated, 2f)
            pc_a = np.where(single[:, None] & at_only, INF, pc).min(axis=1)
            # (b) PS on the only worker server, one worker moved to the next cheapest server
            pc_only = np.where(at_only, pc, INF).min(axis=1)
            with np.errstate(invalid="ignore"):
                cost_b = np.where(single & ok2, wcost - u_only + u_second + pc_only, INF)
            cost = np.minimum(wcost + pc_a, np.where(np.isnan(cost_b), INF, cost_b))
            costs[sel] = np.where(feasible, cost, INF)

    evaluate(np.arange(len(xi_t)))
    finite = np.isfinite(costs)
    if not finite.any():
        return None
    idx = np.flatnonzero(finite)
    # lexicographic: cost, completion, workers, colocated first
    k = idx[np.lexsort((1 - xi_t[idx], w_t[idx], e_t[idx], costs[idx]))[0]]
    if not costs[k] < limit:
        return None
    return Option(float(costs[k]), int(lo + o_t[k]), int(w_t[k]), bool(xi_t[k]), int(d_t[k]))


def _best_option_cached(instance: Instance, job: Job, cache: WindowCache, window_start_only: bool,
                        colocation: bool, limit: float) -> Option | None:
    """`best_option` over a `WindowCache`: the same candidate starts, searched by the compiled kernel."""
    from edgeopt.edgecloud import kernels

    lo, L = cache.lo, cache.hi - cache.lo
    u, r = job.worker_type, instance.n_worker_types + job.ps_type
    sw, sp = cache.side(u), cache.side(r)
    if len(sw.rows) == 0 or len(sp.rows) == 0:
        return None
    rel = instance.release(job.id) - lo
    if window_start_only:
        cand = np.zeros(1, dtype=np.int64)
    else:
        cands = [np.zeros(1, dtype=np.int64), rel[(rel > 0) & (rel < L)].astype(np.int64)]
        if L > 1:
            cands += [np.flatnonzero(sw.up > 0) + 1, np.flatnonzero(sp.up > 0) + 1]
        cand = np.unique(np.concatenate(cands))
    dd = durations(instance, job)
    co_w, co_p = cache.pairs(u, r)
    cost, o, w, xi = kernels.search(L, cand, dd, colocation, float(limit), sw.rows, rel[sw.rows], sw.prefix,
                                    sw.table, sp.rows, rel[sp.rows], sp.prefix, sp.table, co_w, co_p, cache.lg)
    if xi < 0:
        return None
    return Option(float(cost), int(lo + o), int(w), bool(xi), int(dd[xi, w - 1]))


def place(instance: Instance, job: Job, ledger: CapacityLedger, prices: Prices, option: Option) -> Placement:
    """The placement of ``option``, built by COST_C / COST_D themselves."""
    lo, hi = option.start, option.start + option.duration
    pw, pp, fw, fp = prices.arrays(instance, ledger, job, lo, hi)
    fn = cost_colocated if option.colocated else cost_distributed
    cost, pl = fn(instance, job, workers=option.workers, start=option.start,
                  price_w=pw, price_p=pp, free_w=fw, free_p=fp, t0=lo)
    if pl is None or abs(cost - option.cost) > 1e-6 * max(1.0, abs(cost)):
        raise RuntimeError(f"job {job.id}: vectorised cost {option.cost} != COST {cost} (a bug)")
    return pl


# ---- A_maxsche -----------------------------------------------------------------------------
def max_schedule(
    instance: Instance,
    job_ids: Sequence[int],
    window: tuple[int, int],
    ledger: CapacityLedger,
    prices: Prices,
    **search: bool,
) -> dict[int, JobRun]:
    """A_maxsche (Alg. 2): schedule as many of ``job_ids`` as have positive utility in ``window``.

    Jobs are taken in the given order; each gets its cheapest option
    (`best_option`) and is accepted iff ``eta_j = 1 - cost > 0`` (6); an
    accepted job's workers and PS are reserved in ``ledger`` at once, which
    raises the prices the next jobs see (line 18). Returns ``{job: run}`` of
    the accepted jobs; the others are left for the next round. ``search``
    passes `best_option`'s switches (``window_start_only``, ``colocation``).
    """
    lo, hi = window
    cache = None if REFERENCE else WindowCache(instance, ledger, prices, lo, hi)

    def min_cost(j: int) -> tuple[float, Option] | None:
        # limit = the weight: A_maxweight takes a job iff 1 - cost > 0, so dearer options need no search
        opt = best_option(instance, instance.jobs[j], ledger, prices, lo, hi, cache=cache, limit=1.0, **search)
        return None if opt is None else (opt.cost, opt)

    out: dict[int, JobRun] = {}

    def commit(j: int, opt: Option) -> None:
        job = instance.jobs[j]
        run = place(instance, job, ledger, prices, opt).run(j)
        reserve_run(ledger, instance, job, run)
        if cache is not None:
            for seg in run.pieces():
                cache.update([*seg.workers, seg.ps_server], seg.start, seg.end,
                             (job.worker_type, instance.n_worker_types + job.ps_type))
        out[j] = run

    # eta_j = 1 - cost > 0 (6): A_maxweight's test with w_j = 1 (the core loop)
    max_weight_batch(list(job_ids), weight=lambda j: 1.0, min_cost=min_cost, commit=commit)
    return out


# ---- A_online ------------------------------------------------------------------------------
class OnlineScheduler(OnlinePolicy[Job]):
    """A_online (Alg. 1) as an `OnlinePolicy`: batches at tau_i = 2**(i-1), A_maxsche per batch."""

    def __init__(self, instance: Instance, prices: Prices, **search: bool) -> None:
        super().__init__()
        self.search = search
        self.instance = instance
        self.prices = prices
        self.ledger = make_ledger(instance)
        self.rounds = {r.start: r for r in geometric_rounds(instance.horizon)}
        self.pending: list[Job] = []
        self.runs: dict[int, JobRun] = {}

    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        self.pending.extend(jobs)

    def on_slot(self, t: int) -> None:
        r = self.rounds.get(t)
        if r is None or not self.pending:
            return
        order = [j.id for j in sorted(self.pending, key=lambda j: (j.arrival, j.id))]
        done = max_schedule(self.instance, order, (r.start, r.end), self.ledger, self.prices, **self.search)
        for j, run in done.items():
            self.commit(j, run)
            self.runs[j] = run
        self.pending = [j for j in self.pending if j.id not in done]

    def next_wakeup(self, t: int) -> int | None:
        later = [s for s in self.rounds if s > t]
        return min(later) if later else None


def finish(instance: Instance, name: str, runs: dict[int, JobRun], runtime_s: float,
           extra: dict[str, Any] | None = None, **schedule_fields: Any) -> Result:
    """Wrap runs into a `Schedule` and `Result` (jobs without a run are rejected)."""
    rejected = [j.id for j in instance.jobs if j.id not in runs]
    sched = Schedule(jobs=[runs[j] for j in sorted(runs)], rejected=rejected, **schedule_fields)
    return FAMILY.algorithm_result(instance, name, sched, runtime_s, rejected=rejected, extra=extra)


@register("edgecloud", "online", kind="online", paper=True, ranges={"f1": "> 0", "f2": "> 0"},
          params={"f1": "F1 of (7): bound of a job's utility per unit of worker consumption; sets theta1",
                  "f2": "F2 of (8): bound of a job's utility per unit of PS consumption; sets theta2"},
          summary="A_online (Alg. 1): geometric batches + A_maxsche primal-dual pricing with COST_C/COST_D")
def online(instance: Instance, *, seed: int = 0, f1: float = 1.0, f2: float = 1.0) -> Result:
    """Run A_online. ``seed`` is unused (deterministic); ``f1``/``f2`` override F1/F2 of (7)-(8)."""
    with stopwatch() as el:
        prices = Prices.for_instance(instance, f1, f2)
        policy = OnlineScheduler(instance, prices)
        run_online(policy, instance.jobs, instance.horizon)
    return finish(instance, "online", policy.runs, el[0],
                  extra={"theta1": prices.theta1, "theta2": prices.theta2})
