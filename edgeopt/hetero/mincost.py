"""Cost minimisation for one job: A_mincost1/2 (Alg. 4-5, PS) and
A_RAmincost1/2 (Alg. 6-7, Ring-AllReduce) of Zhou et al., problems (12)/(13)
and (20)/(21).

Given unit prices ``price[h, r, t]`` (>= 0, per natural unit of resource r on
server h in slot t) and free capacities ``free[h, r, t]``, find the cheapest
schedule of a job inside a window ``[lo, hi)``: a configuration (worker type
m, PS type p, worker count N, colocated q), a start t and a placement, with

    cost = sum_{tau in [t, t+d)} sum_h sum_r price[h, r, tau] * (e_m^r y_h + z_p^r s_h).

Reading of the listings (kept identical in the exact models):

* For a fixed configuration the duration is the smallest d with
  ``d N rho >= E D K`` (`instance.min_duration`): with non-negative prices a
  longer window never costs less. Alg. 4 enumerates L and derives
  ``N = ceil(EDK / (L rho))``; we enumerate N in 1..D_j and derive d, and for
  each d keep the smallest N (the same candidates, each dominating the
  corresponding (L, N_L) pair).
* Problem (13) (fixed m, p, window) is solved exactly:
  - colocated (q = 1, Alg. 5): N workers and one PS on one server h (more PSs
    only cost more); the cheapest h that fits.
  - distributed (q = 0, Alg. 4): one server n holds all PSs (a second PS server
    only adds PSs: each PS server must cover all workers elsewhere, (2i)); n
    holds g <= N-1 workers and ``s = max(1, ceil((N-g) b_m / B_p))`` PSs; the
    other N-g workers go greedily to the cheapest other servers (unit costs are
    constant per server, so greedy is optimal). We enumerate every n and g
    (the listing keeps the last feasible g; enumerating all g is what makes
    Theorem 1's optimality hold).
  - Ring-AllReduce colocated (Alg. 6): N workers on the cheapest server that fits.
  - Ring-AllReduce distributed (Alg. 7): the N cheapest worker slots over all
    servers; if they all fall on one server (that would be colocated, (15a)),
    move one to the cheapest other server. N >= 2.
* Ties: among equal costs the earliest completion wins, then the fewest nodes
  (workers + PSs, which leaves the most room to later jobs), then the
  enumeration order (q, m, p, N). With zero prices (an idle cluster) every
  schedule costs 0 and this picks the fastest, leanest one.
* Search (exact, not a heuristic; vectorised with numpy): configurations that
  differ only in the PS type form a group (q, m, N, d). Every (group, start)
  pair gets an admissible lower bound: per slot, the N cheapest type-m worker
  slots under that slot's free capacity, summed over the window, plus the
  fewest PSs (2i) at the cheapest PS price; pairs whose window cannot hold N
  workers at all are dropped. Pairs are taken in increasing bound order; a
  distributed pair first meets a tighter bound (its N workers kept on fixed
  servers over the whole window: exact worker cost, computed for all starts
  at once) and a necessary condition on its PS server (`PricedWindow.ps_server_room`:
  by (2i) one server holds the PSs for every worker elsewhere, so N is bounded
  by what the best server's free capacity allows; without it a job whose
  distributed configurations are infeasible for bandwidth had every
  (configuration, start) evaluated: 50 s for 20 jobs of the paper preset with
  the former generator), then is evaluated exactly; a colocated group is evaluated over all
  its starts and PS types at once. The search stops when no remaining bound
  can beat the best (cost, completion) found. ``cutoff`` (A_maxweight passes
  w_j) stops it as soon as nothing can cost less than the cutoff.
* Tests check every routine against brute-force enumeration of problem (13)/(21)
  and the window search against the best of all fixed configurations.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable

import numpy as np

from edgeopt.core import InputError
from edgeopt.hetero import kernels
from edgeopt.hetero.instance import WORK_RTOL, Instance, Job, comm_slots
from edgeopt.hetero.schedule import JobSchedule

EPS = 1e-9

#: Run the reference implementation (True): A_maxweight rebuilds its `PricedWindow` after every accepted job
#: instead of updating it, and the search runs in numpy only. The fast path makes the same decisions;
#: tests run both on random instances.
REFERENCE = False


#: Most bytes the time-indexed search may take. Its range-minimum tables hold about log2(T) + 8 float64
#: copies of the servers x resources x slots capacity: a horizon of 10^7 slots on a 2-server instance took
#: 15.8 GB and never finished. Above the budget the instance is refused before anything is allocated.
MAX_SEARCH_BYTES = 2**30


def search_bytes(instance: Instance, slots: int | None = None) -> int:
    """The bytes the search's tables take on ``instance`` over ``slots`` slots (default: its horizon)."""
    H, R = np.asarray(instance.capacity).shape[:2]
    T = instance.horizon if slots is None else slots
    return int(H * R * max(T, 1) * 8 * (math.ceil(math.log2(max(T, 1) + 1)) + 8))


def check_search_size(instance: Instance, slots: int | None = None) -> None:
    """`InputError` naming ``horizon`` when the search would need more than `MAX_SEARCH_BYTES`, with the
    longest horizon that fits: refused at once instead of allocating for minutes."""
    need = search_bytes(instance, slots)
    if need <= MAX_SEARCH_BYTES:
        return
    T = instance.horizon if slots is None else slots
    fits = T
    while fits > 1 and search_bytes(instance, fits) > MAX_SEARCH_BYTES:
        fits //= 2
    raise InputError("horizon", f"the hetero search over {T:,} slots x {np.asarray(instance.capacity).shape[0]:,} "
                                f"servers would need about {need / 2**30:,.1f} GiB (budget {MAX_SEARCH_BYTES / 2**30:g} "
                                f"GiB): use a horizon of at most about {fits:,} slots")


@dataclasses.dataclass(frozen=True)
class Placement:
    """A schedule l_j of one job with its cost under the prices it was priced with."""

    job: int
    start: int
    duration: int
    worker_type: int
    ps_type: int | None
    colocated: bool
    workers: dict[int, int]
    ps: dict[int, int]
    cost: float

    @property
    def end(self) -> int:
        return self.start + self.duration

    @property
    def n_workers(self) -> int:
        return sum(self.workers.values())

    def to_schedule(self) -> JobSchedule:
        return JobSchedule(job=self.job, start=self.start, duration=self.duration, worker_type=self.worker_type,
                           ps_type=self.ps_type, colocated=self.colocated, workers=dict(self.workers),
                           ps=dict(self.ps))

    def demand(self, instance: Instance) -> np.ndarray:
        """f_jh^r(l): resource use [H, R] of the placement in each of its slots."""
        H, R = len(instance.servers), len(instance.resources)
        f = np.zeros((H, R))
        e = instance.worker_demand[self.worker_type]
        for h, c in self.workers.items():
            f[h] += c * e
        if self.ps_type is not None:
            z = instance.ps_demand[self.ps_type]
            for h, c in self.ps.items():
                f[h] += c * z
        return f


# ---- configurations ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Configs:
    """Candidate configurations of one job: parallel arrays (q, m, p, N, d).

    For each (q, m, p) and each distinct minimal duration d, the smallest N.
    ``p`` is -1 for Ring-AllReduce.
    """

    q: np.ndarray
    m: np.ndarray
    p: np.ndarray
    n: np.ndarray
    d: np.ndarray

    def __len__(self) -> int:
        return len(self.d)

    def select(self, mask: np.ndarray) -> Configs:
        return Configs(self.q[mask], self.m[mask], self.p[mask], self.n[mask], self.d[mask])

    def groups(self) -> dict[str, tuple]:
        """The groups (q, m, N, d) of configurations that differ only in the PS type (cached):
        ``"qmnd"``: (rows [G, 4], their columns as four arrays); ``"csr"``: (bounds [G + 1], order), the
        configurations of group g being ``order[bounds[g]:bounds[g + 1]]`` in increasing index."""
        got = self.__dict__.get("_groups")
        if got is None:
            key = ((self.q * 64 + self.m) * (1 << 16) + self.n) * (1 << 24) + self.d
            uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
            inv = inv.ravel()
            cols = tuple(np.ascontiguousarray(c[first], dtype=np.int64) for c in (self.q, self.m, self.n, self.d))
            order = np.argsort(inv, kind="stable")
            bounds = np.concatenate([[0], np.cumsum(np.bincount(inv, minlength=len(uniq)))])
            got = {"qmnd": (np.stack(cols, axis=1), cols), "csr": (bounds.astype(np.int64), order.astype(np.int64))}
            object.__setattr__(self, "_groups", got)
        return got

    def members(self) -> list[np.ndarray]:
        """The configurations of each group (`groups`) as a list of arrays (cached; the numpy search's view)."""
        got = self.__dict__.get("_members")
        if got is None:
            bounds, order = self.groups()["csr"]
            got = [order[a:b] for a, b in itertools.pairwise(bounds.tolist())]  # np.split, faster
            object.__setattr__(self, "_members", got)
        return got


def job_configs(instance: Instance, job: Job, *, colocated: bool | None = None,
                worker_types: Iterable[int] | None = None, ps_types: Iterable[int] | None = None,
                n_workers: int | None = None, duration: int | None = None) -> Configs:
    """Every non-dominated configuration of ``job`` (restricted by the keyword arguments).

    ``duration`` fixes the window length: N is then the fewest workers that
    finish within it (13c) and d is that window length.
    """
    ps_arch = instance.architecture == "ps"
    M, P = len(instance.worker_types), len(instance.ps_types)
    ms = np.arange(M) if worker_types is None else np.array([int(x) for x in worker_types], dtype=np.int64)
    if ps_arch:
        ps = np.arange(P) if ps_types is None else np.array([int(x) for x in ps_types], dtype=np.int64)
    else:
        ps = np.array([-1], dtype=np.int64)
    qs = np.array([1, 0] if colocated is None else [int(bool(colocated))], dtype=np.int64)
    ns = np.arange(1, job.chunks + 1) if n_workers is None else np.array([n_workers], dtype=np.int64)
    ns = ns[(ns >= 1) & (ns <= job.chunks)]
    q, m, p, n = (a.ravel() for a in np.meshgrid(qs, ms, ps, ns, indexing="ij"))
    if not ps_arch:
        keep = (q == 1) | (n >= 2)  # a single worker is always on one server (15a)
        q, m, p, n = q[keep], m[keep], p[keep], n[keep]
    d = _min_durations(instance, job, q, m, p, n)
    if duration is not None:
        keep = d <= duration
        q, m, p, n = q[keep], m[keep], p[keep], n[keep]
        d = np.full(len(q), int(duration), dtype=np.int64)
    if not len(q):
        z = np.zeros(0, dtype=np.int64)
        return Configs(z, z, z, z, z)
    # per (q, m, p) and duration keep the fewest workers: rows are ordered by (q, m, p, n) already
    key = (((q * (M + 1) + m) * (P + 2) + (p + 1)) << 24) + d
    _, first = np.unique(key, return_index=True)
    first = np.sort(first)
    return Configs(q[first], m[first], p[first], n[first], d[first])


def _min_durations(instance: Instance, job: Job, q: np.ndarray, m: np.ndarray, p: np.ndarray, n: np.ndarray
                   ) -> np.ndarray:
    """`instance.min_duration` for arrays of configurations, with the same floating-point operations."""
    v = np.array(job.minibatch_time_slots)[m]
    comm = np.array([comm_slots(instance, job, k) for k in range(len(instance.worker_types))])[m]
    if instance.architecture == "ps":
        u = np.array(job.ps_update_time_slots)[p]
        per_iter = v + u + np.where(q == 1, 0.0, 2.0 * comm)
    else:
        frac = (n - 1) / n
        per_iter = v + job.allreduce_time_slots * frac + np.where(q == 1, 0.0, 2.0 * comm * frac)
    rho = 1.0 / per_iter
    exact = job.work / (n * rho)
    return np.maximum(1, np.ceil(exact * (1 - WORK_RTOL / 10))).astype(np.int64)


# ---- per-evaluation precomputation ---------------------------------------------------------

class PricedWindow:
    """Prices and free capacity of one window [lo, hi), with prefix sums and a sparse table of minima."""

    def __init__(self, instance: Instance, price: np.ndarray, free: np.ndarray, lo: int, hi: int) -> None:
        check_search_size(instance, hi - lo)
        self.inst = instance
        self.lo, self.hi = lo, hi
        self.T = hi - lo
        pr = np.asarray(price, dtype=float)[:, :, lo:hi]
        fr = np.asarray(free, dtype=float)[:, :, lo:hi]
        self.e = instance.worker_demand
        self.z = instance.ps_demand
        H = pr.shape[0]
        # unit cost of one worker of type m (one PS of type p) on server h in slot t
        pe = np.einsum("hrt,mr->mht", pr, self.e)
        # Arrays over slots are stored slot-major ([..., T, H], what the compiled kernel reads server after
        # server) and exposed in the [..., H, T] order of the numpy code as views (`_time_major`).
        self.pe = _time_major(np.concatenate([np.zeros((len(self.e), H, 1)), np.cumsum(pe, axis=2)], axis=2))
        pe = _time_major(pe)
        if len(self.z):
            pz = _time_major(np.einsum("hrt,pr->pht", pr, self.z))
            self.pz = _time_major(np.concatenate([np.zeros((len(self.z), H, 1)), np.cumsum(pz, axis=2)], axis=2))
            self._pz_slotmin = pz.min(axis=(0, 1))  # per slot, cheapest PS of any type on any server
            self.pz_minall = np.concatenate([[0.0], np.cumsum(self._pz_slotmin)])
        else:
            self.pz = _time_major(np.zeros((1, H, self.T + 1)))
            self.pz_minall = np.zeros(self.T + 1)
        self._table4, self.table = _sparse_min_padded(fr)
        # per-slot worker capacity of each type, summed and maxed over servers, with window minima:
        # necessary conditions for N workers (distributed: total >= N; colocated: some server >= N)
        cw = _time_major(np.stack([np.maximum(_copies(np.moveaxis(fr, 1, 2), e), 0) for e in self.e]))  # [M, H, T]
        self._tot3, self.tot_table = _sparse_min_padded(np.minimum(cw, 10**6).sum(axis=1).astype(float))
        self._max3, self.max_table = _sparse_min_padded(cw.max(axis=1).astype(float))
        self._cw_slot = cw
        self._pe_slot = pe
        self._pz_slot = pz if len(self.z) else None
        self._cheapest: dict[int, np.ndarray] = {}
        self._cheapest_F: dict[int, np.ndarray] = {}  # per-slot cheapest-N costs behind `_cheapest`
        self._prefix_stale: dict[int, tuple[int, int]] = {}  # m -> slots [s, e) changed since `_cheapest[m]`
        self._window_cheap: dict[tuple[int, int], np.ndarray] = {}
        self._stale: dict[tuple[int, int], int] = {}  # cache key -> first start column to recompute
        self._ps_a: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # for `ps_server_room`, lazily
        self._ps_room_idle: dict[int, np.ndarray] = {}
        # the compiled search's state (`kernel_state`): cheapest-N prefix sums of every worker type up to
        # `_knmax` workers, built per worker type when first needed and refreshed lazily after updates
        self._knmax = 0
        self._kpref = np.zeros((0, 2, 1, self.T + 1))
        self._kF = np.zeros((0, 1, self.T))
        self._kok = np.zeros(len(self.e), dtype=bool)
        self._kstale: dict[int, tuple[int, int]] = {}
        self._kconst: tuple | None = None
        self._kclock = 1  # update counter; `_kchanged[t]`: its value when slot t last changed
        # the clock since which every update only took free capacity and raised prices (A_maxweight's
        # reservations; `offline_fill` also frees capacity): a cached column stamped at or after it is, when
        # stale, still a lower bound of the current one (`kernels.search_kernel`)
        self._kmono = 1
        self._kchanged = np.zeros(self.T, dtype=np.int64)
        self._kcache: tuple | None = None  # the kernel's cache of second-stage columns (`kernel_state`)

    # read only by tests and callers outside the search: computed on read from the current per-slot values
    # (the same operations as a new window), so that `update` does not maintain them
    @property
    def pe_min(self) -> np.ndarray:
        """Prefix sums over slots of the cheapest type-m worker price over all servers: [M, T + 1]."""
        return np.concatenate([np.zeros((len(self.e), 1)), np.cumsum(self._pe_slot.min(axis=1), axis=1)], axis=1)

    @property
    def pz_min(self) -> np.ndarray:
        """Prefix sums over slots of the cheapest type-p PS price over all servers: [P, T + 1]."""
        if not len(self.z):
            return np.zeros((1, self.T + 1))
        return np.concatenate([np.zeros((len(self.z), 1)), np.cumsum(self._pz_slot.min(axis=1), axis=1)], axis=1)

    @property
    def _cz_slot(self) -> np.ndarray | None:
        """Per-slot PS capacity of each type [P, H, T] (None without PS types)."""
        if not len(self.z):
            return None
        ft = np.moveaxis(self.table[0], 1, 2)
        return np.stack([np.maximum(_copies(ft, z), 0) for z in self.z])

    @property
    def ps_max_table(self) -> list[np.ndarray]:
        """Sparse table of minima of the largest per-server PS capacity per type: levels of [P, T - 2**k + 1]."""
        cz = self._cz_slot
        return _sparse_min(np.zeros((1, self.T)) if cz is None else cz.max(axis=1).astype(float))

    def update(self, price: np.ndarray, free: np.ndarray, start: int, end: int, rows: np.ndarray) -> None:
        """Bring the window up to date after the prices and free capacity of the servers ``rows`` changed in
        the slots ``[start, end)`` (absolute slots; nothing else may have changed).

        Afterwards every array and every cached answer is bitwise what a new `PricedWindow` of ``price`` and
        ``free`` would hold or compute (tests check this): per-slot values are recomputed only for the
        changed slots and servers, prefix sums are resumed from the first changed slot with the same
        sequential additions, sparse tables of minima are patched level by level, and cached answers are
        marked stale (the changed slots; for window answers, from the first start whose window sees a changed
        prefix sum) and refreshed when next read. A job's price update
        thus costs O(its servers x (T - start)) instead of a rebuild of the whole window.
        """
        s, e = max(start, self.lo) - self.lo, min(end, self.hi) - self.lo
        if s >= e:
            return
        rows = np.asarray(rows, dtype=np.int64)
        pr = np.asarray(price, dtype=float)[rows][:, :, self.lo + s:self.lo + e]
        fr = np.asarray(free, dtype=float)[rows][:, :, self.lo + s:self.lo + e]
        sub = np.ix_(np.arange(len(self.e)), rows, np.arange(s, e))
        pe = np.einsum("hrt,mr->mht", pr, self.e)
        took = bool(np.all(fr <= self.table[0][rows, :, s:e]) and np.all(pe >= self._pe_slot[sub]))
        self._pe_slot[sub] = pe
        self.pe[:, rows, s + 1:] = _resume_cumsum(self.pe[:, rows, s], self._pe_slot[:, rows, s:])
        if len(self.z):
            pz = np.einsum("hrt,pr->pht", pr, self.z)
            self._pz_slot[np.ix_(np.arange(len(self.z)), rows, np.arange(s, e))] = pz
            self.pz[:, rows, s + 1:] = _resume_cumsum(self.pz[:, rows, s], self._pz_slot[:, rows, s:])
            self._pz_slotmin[s:e] = self._pz_slot[:, :, s:e].min(axis=(0, 1))  # only these slots changed
            self.pz_minall[s + 1:] = _resume_cumsum(self.pz_minall[s], self._pz_slotmin[s:])
        self.table[0][rows, :, s:e] = fr
        _patch_sparse_min(self.table, s, e, rows)
        ft = np.moveaxis(fr, 1, 2)
        self._cw_slot[sub] = np.stack([np.maximum(_copies(ft, x), 0) for x in self.e])
        cw = self._cw_slot[:, :, s:e]
        self.tot_table[0][:, s:e] = np.minimum(cw, 10**6).sum(axis=1).astype(float)
        _patch_sparse_min(self.tot_table, s, e)
        self.max_table[0][:, s:e] = cw.max(axis=1).astype(float)
        _patch_sparse_min(self.max_table, s, e)
        self._kclock += 1
        self._kchanged[s:e] = self._kclock
        if not took:
            self._kmono = self._kclock
        for m in np.flatnonzero(self._kok):  # refreshed when next read (`kernel_state`)
            a, b = self._kstale.get(int(m), (s, e))
            self._kstale[int(m)] = (min(a, s), max(b, e))
        for m in self._cheapest_F:  # refreshed when next read (`cheapest_prefix`)
            a, b = self._prefix_stale.get(m, (s, e))
            self._prefix_stale[m] = (min(a, s), max(b, e))
        for key in self._window_cheap:
            first = max(0, s - key[1] + 1)
            self._stale[key] = min(self._stale.get(key, first), first)

    def cheapest_prefix(self, m: int, nmax: int) -> np.ndarray:
        """Prefix sums over slots of the cheapest-N worker cost per slot: [2, nmax + 1, T + 1]
        (index 0: sums of the finite costs, index 1: number of slots where N do not fit).

        Row N, slot tau: the cost of the N cheapest type-m worker slots in slot tau
        alone (per-slot capacity); summed over a window it is a lower bound of
        every placement of N workers in that window (inf where N do not fit).
        """
        got = self._cheapest.get(m)
        if got is not None and got.shape[1] > nmax:
            if m in self._prefix_stale:  # slots [s, e) changed since: their columns, then the sums from s
                s, e = self._prefix_stale.pop(m)
                F = self._cheapest_F[m]
                F[:, s:e] = _cheapest_n(self._pe_slot[m][:, s:e], self._cw_slot[m][:, s:e], F.shape[0] - 1)
                bad = np.isinf(F[:, s:])
                got[0, :, s + 1:] = _resume_cumsum(got[0, :, s], np.where(bad, 0.0, F[:, s:]))
                got[1, :, s + 1:] = _resume_cumsum(got[1, :, s], bad)
            return got
        self._prefix_stale.pop(m, None)
        F = _cheapest_n(self._pe_slot[m], self._cw_slot[m], nmax)
        self._cheapest_F[m] = F
        # prefix sums of the finite part, and of the number of slots where N do not fit (inf)
        bad = np.isinf(F)
        zero = np.zeros((nmax + 1, 1))
        out = np.stack([np.concatenate([zero, np.cumsum(np.where(bad, 0.0, F), axis=1)], axis=1),
                        np.concatenate([zero, np.cumsum(bad, axis=1)], axis=1)])
        self._cheapest[m] = out
        return out

    def kernel_state(self, ms: Iterable[int], nmax: int) -> tuple:
        """What `kernels.search_kernel` reads besides the job: the cheapest-N prefix sums [M, 2, K + 1, T + 1]
        (K >= ``nmax``; current for the worker types ``ms``; `cheapest_prefix` holds the same numbers, and
        its row N does not depend on K >= N), the padded sparse tables of free capacity [L, H, R, T] and of
        per-type worker counts [L, M, T], and the constants of the PS-server room bound."""
        if nmax > self._knmax:  # (re)allocate for more workers; everything is rebuilt when next read
            self._knmax = max(nmax, max((j.chunks for j in self.inst.jobs), default=1))
            self._kpref = np.zeros((len(self.e), 2, self._knmax + 1, self.T + 1))
            self._kF = np.zeros((len(self.e), self._knmax + 1, self.T))
            self._kok[:] = False
            self._kstale.clear()
            size = 1 << 13
            self._kcache = (np.full(size, -1, dtype=np.int64), np.zeros(size, dtype=np.int64),
                            np.empty((size, self._knmax + 1)))
        for m in ms:
            m = int(m)
            if not self._kok[m]:
                kernels.refresh_prefix(self._kpref[m], self._kF[m], self._pe_slot[m].T, self._cw_slot[m].T, 0, self.T)
                self._kok[m] = True
                self._kstale.pop(m, None)
            elif m in self._kstale:
                s, e = self._kstale.pop(m)
                kernels.refresh_prefix(self._kpref[m], self._kF[m], self._pe_slot[m].T, self._cw_slot[m].T, s, e)
        if self._kconst is None:
            M, R = self.e.shape
            P = max(1, len(self.z))
            if len(self.z):
                inv, off, zmax = self._ps_constants()
                idle = np.stack([self._room(self.inst.capacity, inv, off, zmax, m, np.arange(P)) for m in range(M)])
            else:
                inv, off, zmax, idle = np.zeros((M, P, R)), np.zeros((M, P, R)), np.zeros(R), np.zeros((M, P))
            bw = np.array([t_.bandwidth_mbps for t_ in self.inst.worker_types], dtype=float)
            B = np.array([t_.bandwidth_mbps for t_ in self.inst.ps_types] or [1.0], dtype=float)
            z = self.z if len(self.z) else np.zeros((0, R))
            self._kconst = (np.ascontiguousarray(inv, dtype=float), np.ascontiguousarray(off, dtype=float),
                            np.asarray(zmax, dtype=float), idle.astype(float), bw, B, z)
        return self._kpref, self._table4, self._max3, self._tot3, self._kconst, self._kcache

    def window_cheapest(self, m: int, d: int, nmax: int) -> np.ndarray:
        """Cost of the N cheapest type-m workers kept on their servers over [t, t+d), for every start t
        with t + d <= T: [nmax + 1, T - d + 1] (inf where N do not fit). Exact worker cost of a distributed
        placement without its PS; a lower bound of every placement of N workers. Cached."""
        key = (m, d)
        got = self._window_cheap.get(key)
        if got is not None and got.shape[0] > nmax:
            if key in self._stale:
                first = self._stale.pop(key)
                got[:, first:] = self._window_cheapest_at(m, d, got.shape[0] - 1, np.arange(first, self.T - d + 1))
            return got
        self._stale.pop(key, None)
        out = self._window_cheapest_at(m, d, nmax, np.arange(0, self.T - d + 1))
        self._window_cheap[key] = out
        return out

    def _window_cheapest_at(self, m: int, d: int, nmax: int, ts: np.ndarray) -> np.ndarray:
        k = d.bit_length() - 1
        lvl = self.table[k]
        mf = np.minimum(lvl[:, :, ts], lvl[:, :, ts + d - (1 << k)])  # [H, R, S]
        cw = np.maximum(_copies(np.moveaxis(mf, 1, 2), self.e[m]), 0)  # [H, S]
        om = self.pe[m][:, ts + d] - self.pe[m][:, ts]
        return _cheapest_n(om, cw, nmax)

    def minfree(self, t: int, d: int) -> np.ndarray:
        """min over [t, t+d) (window coordinates) of free capacity: [H, R]."""
        k = d.bit_length() - 1
        lvl = self.table[k]
        return np.minimum(lvl[:, :, t], lvl[:, :, t + d - (1 << k)])

    def worker_cost(self, m: int, t: int, d: int) -> np.ndarray:
        return self.pe[m, :, t + d] - self.pe[m, :, t]

    def ps_cost_min(self, p: int, d: int) -> np.ndarray:
        """min over servers of one type-p PS's cost over [t, t+d), for every start t: [T - d + 1] (cached)."""
        key = (-1 - p, d)
        got = self._window_cheap.get(key)
        if got is None or key in self._stale:
            first = self._stale.pop(key, 0) if got is not None else 0
            ts = np.arange(first, self.T - d + 1)
            part = (self.pz[p][:, ts + d] - self.pz[p][:, ts]).min(axis=0)
            if got is None:
                got = self._window_cheap[key] = part
            else:
                got[first:] = part
        return got

    def ps_cost_min_all(self, d: int) -> np.ndarray:
        """min over PS types of `ps_cost_min` (zeros without PS types): [T - d + 1] (cached)."""
        key = (-10_000, d)
        got = self._window_cheap.get(key)
        if got is None or key in self._stale:
            self._stale.pop(key, None)
            if len(self.z):
                got = np.min([self.ps_cost_min(p, d) for p in range(len(self.z))], axis=0)
            else:
                got = np.zeros(self.T - d + 1)
            self._window_cheap[key] = got
        return got

    def ps_cost(self, p: int, t: int, d: int) -> np.ndarray:
        return self.pz[p, :, t + d] - self.pz[p, :, t]

    def ps_server_room(self, m: int, ps: np.ndarray, t: int, d: int, n: int | None = None) -> np.ndarray:
        """Upper bound of the worker count N of any distributed placement of type-m workers with type-p PSs
        over [t, t+d) (window coordinates), for each p of ``ps``: [len(ps)]. A necessary condition checked
        before the exact evaluation (`_eval_distributed_ps`), on the same window minima of free capacity.

        The PS server h holds g workers and s >= (N - g) b_m / B_p PSs (2i), s >= 1, so for every resource r
        ``g e_m^r + s z_p^r >= N a^r`` with ``a^r = min(e_m^r, b_m z_p^r / B_p)``, and z_p fits on h. Hence
        N <= max over the servers h that hold z_p of min_{r: a^r > 0} floor(free_h^r / a^r). The lower
        bounds of the search only see the workers' capacity; when (2i) and the PS server's capacity
        (its bandwidth, above all) rule out large distributed jobs, this is what keeps the search from
        evaluating every (configuration, start) of such a job. The tolerance is generous: the bound may
        only let through placements the exact evaluation then finds infeasible, never the reverse.
        With ``n`` given, the same bound on the idle cluster (capacities C, cached) is tried first and
        returned alone when it already rules out ``n`` for every p of ``ps``.
        """
        inv, off, zmax = self._ps_constants()
        if n is not None:
            idle = self._ps_room_idle.get(m)
            if idle is None:  # [P]: the bound on the idle cluster, per worker type as needed
                idle = self._ps_room_idle[m] = self._room(self.inst.capacity, inv, off, zmax, m,
                                                          np.arange(len(self.z)))
            first = idle[ps]
            if np.all(first < n):
                return first
        return self._room(self.minfree(t, d), inv, off, zmax, m, ps)

    def _ps_constants(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(1 / a [M, P, R], inf where a = 0 [M, P, R], largest PS demand [R]) of `ps_server_room` (cached)."""
        got = self._ps_a
        if got is None:
            b = np.array([t_.bandwidth_mbps for t_ in self.inst.worker_types])
            B = np.array([t_.bandwidth_mbps for t_ in self.inst.ps_types])
            a = np.minimum(self.e[:, None, :], (b[:, None] / B[None, :])[:, :, None] * self.z[None, :, :])  # [M,P,R]
            with np.errstate(divide="ignore"):
                inv = np.where(a > 0, 1.0 / np.where(a > 0, a, 1.0), 0.0)
            off = np.where(a > 0, 0.0, np.inf)  # resources a job's PS server does not need to count
            got = self._ps_a = (inv, off, self.z.max(axis=0) if len(self.z) else np.zeros(self.e.shape[1]))
        return got

    def _room(self, mf: np.ndarray, inv: np.ndarray, off: np.ndarray, zmax: np.ndarray, m: int, ps: np.ndarray
              ) -> np.ndarray:
        x = mf + 1e-6 * (1.0 + np.abs(mf) + zmax)  # generous slack (>= the exact evaluation's EPS)
        q = (np.floor(x[None, :, :] * inv[m, ps][:, None, :]) + off[m, ps][:, None, :]).min(axis=2)  # [k, H]
        zfit = (self.z[ps][:, None, :] <= x[None, :, :]).all(axis=2)  # [k, H]
        return np.where(zfit, q, -1.0).max(axis=1)


def _cheapest_n(unit: np.ndarray, cap: np.ndarray, nmax: int) -> np.ndarray:
    """Cheapest cost of N units, N = 0..nmax, per column: [nmax + 1, X].

    ``unit`` [H, X] is the price of one unit on server h, ``cap`` [H, X] how
    many units server h offers; inf where fewer than N units exist.
    """
    cw = np.minimum(cap, nmax)
    pr = np.where(cw > 0, unit, np.inf)
    H = cw.shape[0]
    top = min(nmax, H)
    # the whole stable order (ties by server index), not argpartition: tied prices summed in another order
    # can round differently, and the compiled kernel (`kernels.cheapest_n_column`) follows this order
    order = np.argsort(pr, axis=0, kind="stable")[:top]
    cw_s = np.take_along_axis(cw, order, axis=0).astype(float)  # [top, X]
    pr_s = np.take_along_axis(unit, order, axis=0)
    cum = np.cumsum(cw_s, axis=0)
    cumcost = np.cumsum(np.where(cw_s > 0, cw_s * pr_s, 0.0), axis=0)
    ns = np.arange(1, nmax + 1)
    k = (cum[None, :, :] < ns[:, None, None]).sum(axis=1)  # [nmax, X]: block holding unit N
    kk = np.minimum(k, top - 1)
    cols = np.arange(cw.shape[1])[None, :]
    before = np.where(kk > 0, cum[np.maximum(kk - 1, 0), cols], 0.0)
    cbefore = np.where(kk > 0, cumcost[np.maximum(kk - 1, 0), cols], 0.0)
    with np.errstate(invalid="ignore"):
        F = cbefore + (ns[:, None] - before) * pr_s[kk, cols]
    F = np.where(k >= top, np.inf, F)
    return np.vstack([np.zeros((1, F.shape[1])), F])


def _sparse_min_padded(a: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """`_sparse_min` of ``a`` [X..., T] stored slot-major in one array [levels, T, X...] padded with inf (what
    the compiled kernel reads), and the levels as views into it in the layout of `_sparse_min` (patching a
    view patches the array)."""
    levels = _sparse_min(a)
    arr = np.full((len(levels), a.shape[-1], *a.shape[:-1]), np.inf)
    views = []
    for k, lvl in enumerate(levels):
        v = np.moveaxis(arr[k, :lvl.shape[-1]], 0, -1)
        v[...] = lvl
        views.append(v)
    return arr, views


def _time_major(a: np.ndarray) -> np.ndarray:
    """``a`` [X, H, T] as a view [X, H, T] of a slot-major array [X, T, H] (reach the latter through
    `_slot_major`)."""
    return np.ascontiguousarray(np.moveaxis(a, 2, 1)).transpose(0, 2, 1)


def _slot_major(view: np.ndarray) -> np.ndarray:
    """The slot-major array [X, T, H] behind a `_time_major` view (no copy)."""
    out = view.transpose(0, 2, 1)
    assert out.flags.c_contiguous
    return out


def _sparse_min(a: np.ndarray) -> list[np.ndarray]:
    """Sparse table of minima along the last axis: level k holds min over 2**k consecutive slots."""
    table = [a]
    k = 1
    while 2 * k <= a.shape[-1]:
        prev = table[-1]
        table.append(np.minimum(prev[..., :-k], prev[..., k:]))
        k *= 2
    return table


def _patch_sparse_min(table: list[np.ndarray], s: int, e: int, rows: np.ndarray | None = None) -> None:
    """Recompute the entries of a `_sparse_min` table that see the slots ``[s, e)`` of level 0 (only ``rows``
    of the first axis when given), after level 0 changed there."""
    k = 1
    for level in range(1, len(table)):
        prev, cur = table[level - 1], table[level]
        a, b = max(0, s - 2 * k + 1), min(e, cur.shape[-1])
        if a < b:
            if rows is None:
                cur[..., a:b] = np.minimum(prev[..., a:b], prev[..., a + k:b + k])
            else:
                cur[rows, ..., a:b] = np.minimum(prev[rows, ..., a:b], prev[rows, ..., a + k:b + k])
        k *= 2


def _resume_cumsum(base: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``np.cumsum`` along the last axis of ``x`` started from ``base`` (the prefix sum before ``x``), with
    the same sequential additions as a cumsum over the whole row: ``base + x0``, ``(base + x0) + x1``, ..."""
    x = np.asarray(x, dtype=float)
    return np.cumsum(np.concatenate([np.asarray(base, dtype=float)[..., None], x], axis=-1), axis=-1)[..., 1:]


def _window_min(table: list[np.ndarray], rows: np.ndarray, ts: np.ndarray, d: np.ndarray) -> np.ndarray:
    """min over [t, t+d) of table[0][row] for arrays rows [C], d [C] and ts [S] (requires t + d <= T): [C, S]."""
    d = np.clip(d, 1, table[0].shape[-1])  # longer windows are masked by the caller
    k = np.floor(np.log2(d)).astype(np.int64)
    out = np.full((len(rows), len(ts)), np.inf)
    for kk in np.unique(k):
        sel = np.flatnonzero(k == kk)
        lvl = table[int(kk)]
        a = np.minimum(ts[None, :], lvl.shape[-1] - 1)
        b = np.clip(ts[None, :] + d[sel, None] - (1 << int(kk)), 0, lvl.shape[-1] - 1)
        out[sel] = np.minimum(lvl[rows[sel, None], a], lvl[rows[sel, None], b])
    return out


def _copies(free: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """How many ``unit`` [R] fit in ``free`` [..., R] (floor, >= 0 or -1 when free < 0 somewhere)."""
    pos = unit > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.floor((free[..., pos] + EPS) / unit[pos])
    out = per.min(axis=-1) if pos.any() else np.full(free.shape[:-1], 10**9)
    neg = (free[..., ~pos] < -EPS).any(axis=-1) if (~pos).any() else False
    return np.where(neg, -1, out)


# ---- exact evaluation of one (configuration, start) --------------------------------------------

def _eval_colocated(w: PricedWindow, m: int, p: int, n: int, t: int, d: int) -> tuple[float, dict, dict]:
    mf = w.minfree(t, d)
    need = n * w.e[m] + (w.z[p] if p >= 0 else 0.0)
    ok = np.all(need[None, :] <= mf + EPS, axis=1)
    if not ok.any():
        return math.inf, {}, {}
    cost = n * w.worker_cost(m, t, d) + (w.ps_cost(p, t, d) if p >= 0 else 0.0)
    cost = np.where(ok, cost, np.inf)
    h = int(np.argmin(cost))
    return float(cost[h]), {h: n}, ({h: 1} if p >= 0 else {})


def _eval_colocated_many(w: PricedWindow, m: int, p: int, n: int, ts: np.ndarray, d: int
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Colocated cost at each start of ``ts``: (best cost per start [S], its server [S]); inf if none fits."""
    k = d.bit_length() - 1
    lvl = w.table[k]
    mf = np.minimum(lvl[:, :, ts], lvl[:, :, ts + d - (1 << k)])  # [H, R, S]
    need = n * w.e[m] + (w.z[p] if p >= 0 else 0.0)
    ok = np.all(need[None, :, None] <= mf + EPS, axis=1)  # [H, S]
    cost = n * (w.pe[m][:, ts + d] - w.pe[m][:, ts])
    if p >= 0:
        cost = cost + (w.pz[p][:, ts + d] - w.pz[p][:, ts])
    cost = np.where(ok, cost, np.inf)
    h = np.argmin(cost, axis=0)
    return cost[h, np.arange(len(ts))], h


def _eval_colocated_group(w: PricedWindow, m: int, ps: np.ndarray, n: int, ts: np.ndarray, d: int,
                          bound: float) -> list[tuple[int, int, tuple[float, dict, dict]]]:
    """Colocated schedules of N type-m workers with each PS type of ``ps`` (-1: none) over the starts ``ts``.

    Returns ``(position in ps, start, (cost, workers, ps))`` for each PS type whose best cost is
    finite and could be <= ``bound`` (least cost, then earliest start).
    """
    if not len(ts):
        return []
    k = d.bit_length() - 1
    lvl = w.table[k]
    mf = np.minimum(lvl[:, :, ts], lvl[:, :, ts + d - (1 << k)])  # [H, R, S]
    wcost = n * (w.pe[m][:, ts + d] - w.pe[m][:, ts])  # [H, S]
    room = mf - n * w.e[m][None, :, None]
    if not np.any(np.all(room >= -EPS, axis=1) & (wcost <= bound)):
        return []
    out = []
    for pos, p in enumerate(ps):
        p = int(p)
        if p >= 0:
            ok = np.all(w.z[p][None, :, None] <= room + EPS, axis=1)
            cost = wcost + (w.pz[p][:, ts + d] - w.pz[p][:, ts])
        else:
            ok = np.all(room >= -EPS, axis=1)
            cost = wcost
        cost = np.where(ok, cost, np.inf)
        h = np.argmin(cost, axis=0)
        per_t = cost[h, np.arange(len(ts))]
        i = int(np.argmin(per_t))
        if math.isfinite(per_t[i]) and per_t[i] <= bound:
            hh = int(h[i])
            out.append((pos, int(ts[i]), (float(per_t[i]), {hh: n}, {hh: 1} if p >= 0 else {})))
    return out


def _greedy_fill(order: np.ndarray, cap: np.ndarray, x: int, skip: int = -1) -> dict[int, int]:
    out: dict[int, int] = {}
    for h in order:
        if x <= 0:
            break
        h = int(h)
        if h == skip or cap[h] <= 0:
            continue
        k = int(min(cap[h], x))
        out[h] = k
        x -= k
    return out


def _eval_distributed_ps(w: PricedWindow, m: int, p: int, n: int, t: int, d: int, b: float, B: float
                         ) -> tuple[float, dict, dict]:
    mf = w.minfree(t, d)  # [H, R]
    H = mf.shape[0]
    omega = w.worker_cost(m, t, d)
    psi = w.ps_cost(p, t, d)
    cw = np.minimum(_copies(mf, w.e[m]), n).astype(np.int64)  # workers alone, capped at N
    cw = np.maximum(cw, 0)
    order = np.argsort(omega, kind="stable")
    cw_s = cw[order]
    om_s = omega[order]
    cum = np.cumsum(cw_s)
    cumcost = np.cumsum(cw_s * om_s)
    total = int(cum[-1])
    # F(x): cheapest x worker slots over all servers, x = 0 .. 2N
    xs = np.arange(0, 2 * n + 1)
    k = np.searchsorted(cum, xs, side="left")  # block holding the x-th unit
    kk = np.minimum(k, H - 1)
    before = np.where(kk > 0, cum[kk - 1], 0)
    costbefore = np.where(kk > 0, cumcost[kk - 1], 0.0)
    F = np.where(xs <= total, costbefore + (xs - before) * om_s[kk], np.inf)
    F[0] = 0.0
    rank = np.empty(H, dtype=np.int64)
    rank[order] = np.arange(H)
    start_n = (cum[rank] - cw_s[rank])  # units before server n's block
    g = np.arange(0, n)  # workers on the PS server, <= N-1 (q = 0 needs another server)
    x = n - g  # workers elsewhere, >= 1
    s = np.maximum(1, np.ceil(x * b / B - EPS)).astype(np.int64)  # PSs for (2i) on the PS server
    # capacity on the PS server for g workers + s PSs
    rest = mf[:, None, :] - s[None, :, None] * w.z[p][None, None, :] - g[None, :, None] * w.e[m][None, None, :]
    fits = np.all(rest >= -EPS, axis=2)  # [H, N]
    xm = x[None, :]
    shifted = np.minimum(xm + cw[:, None], 2 * n)
    f_minus = np.where(xm <= start_n[:, None], F[xm], F[shifted] - (cw * omega)[:, None])
    # F(x + cw_n) might include units of n beyond ... only when x > start_n, by construction it skips n's block
    too_many = xm > (total - cw)[:, None]
    f_minus = np.where(too_many, np.inf, f_minus)
    tot = g[None, :] * omega[:, None] + s[None, :] * psi[:, None] + f_minus
    tot = np.where(fits, tot, np.inf)
    idx = int(np.argmin(tot))
    best = float(tot.flat[idx])
    if not math.isfinite(best):
        return math.inf, {}, {}
    nsrv, gi = divmod(idx, n)
    workers = _greedy_fill(order, cw, int(x[gi]), skip=nsrv)
    if g[gi] > 0:
        workers[nsrv] = int(g[gi])
    return best, workers, {nsrv: int(s[gi])}


def _eval_distributed_ra(w: PricedWindow, m: int, n: int, t: int, d: int) -> tuple[float, dict, dict]:
    mf = w.minfree(t, d)
    omega = w.worker_cost(m, t, d)
    cw = np.maximum(np.minimum(_copies(mf, w.e[m]), n), 0).astype(np.int64)
    if cw.sum() < n or (cw > 0).sum() < 2:
        return math.inf, {}, {}
    order = np.argsort(omega, kind="stable")
    workers = _greedy_fill(order, cw, n)
    if len(workers) == 1:
        (h0,) = workers
        workers[h0] -= 1
        other = next(int(h) for h in order if int(h) != h0 and cw[h] > 0)
        workers[other] = 1
    cost = float(sum(c * omega[h] for h, c in workers.items()))
    return cost, workers, {}


# ---- the search --------------------------------------------------------------------------------

def search(instance: Instance, job: Job, price: np.ndarray, free: np.ndarray, window: tuple[int, int], *,
           configs: Configs | None = None, start: int | None = None, colocated: bool | None = None,
           worker_types: Iterable[int] | None = None, ps_types: Iterable[int] | None = None,
           n_workers: int | None = None, duration: int | None = None, batch: int = 32,
           ctx: PricedWindow | None = None, cutoff: float = math.inf) -> Placement | None:
    """The cheapest schedule of ``job`` in ``window`` (None if none fits).

    Args:
        price: [H, R, T] unit prices (>= 0). free: [H, R, T] free capacity.
        window: (lo, hi): start >= max(lo, arrival), start + d <= hi.
        configs: precomputed `job_configs` (else built from the restrictions).
        start: fix the start slot. colocated, worker_types, ps_types, n_workers,
            duration: restrict the configurations (see `job_configs`).
        ctx: a `PricedWindow` of the same ``price``, ``free`` and ``window``
            (reused across jobs while prices do not change).
        cutoff: only schedules cheaper than this matter (A_maxweight passes w_j:
            a job is scheduled iff cost < w_j); None is returned when none is.
    """
    lo, hi = int(window[0]), int(window[1])
    first = max(lo, job.arrival)
    if start is not None:
        if start < first:
            return None
        first = int(start)
    if hi - first < 1:
        return None
    if configs is None:
        configs = job_configs(instance, job, colocated=colocated, worker_types=worker_types, ps_types=ps_types,
                              n_workers=n_workers, duration=duration)
    elif colocated is not None:
        configs = configs.select(configs.q == int(colocated))
    cf = configs
    if not len(cf) or int(cf.d.min()) > hi - first:
        return None
    grp = cf.groups()
    ps_arch = instance.architecture == "ps"
    w = ctx if ctx is not None and (ctx.lo, ctx.hi) == (lo, hi) else PricedWindow(instance, price, free, lo, hi)
    Tw = w.T
    ts = np.array([first - lo]) if start is not None else np.arange(first - lo, Tw)
    if not REFERENCE:
        return _search_compiled(instance, job, cf, w, ts, cutoff, batch)
    S = len(ts)
    # Lower bounds per group g = (q, m, N, d) (the PS types of a group share one row) and start t: the
    # cheapest N worker slots per slot plus the fewest PSs at the cheapest PS price per slot, summed over
    # the window; inf where the window's capacity cannot hold N workers at all.
    G, members = grp["qmnd"][0], cf.members()
    gq, gm, gn, gd = G[:, 0], G[:, 1], G[:, 2], G[:, 3]
    end = ts[None, :] + gd[:, None]
    valid = end <= Tw
    endc = np.minimum(end, Tw)
    nmax = int(cf.n.max())
    lbw = np.empty((len(G), S))
    for m in np.unique(gm):
        rows = np.flatnonzero(gm == m)
        pf, pc = w.cheapest_prefix(int(m), nmax)
        nr, er, sr = gn[rows, None], endc[rows], ts[None, :]
        lbw[rows] = np.where(pc[nr, er] - pc[nr, sr] > 0, np.inf, pf[nr, er] - pf[nr, sr])
    mx = _window_min(w.max_table, gm, ts, gd)
    tot = _window_min(w.tot_table, gm, ts, gd)
    bw = np.array([t.bandwidth_mbps for t in instance.worker_types])
    Bmax = max((t.bandwidth_mbps for t in instance.ps_types), default=1.0)
    if ps_arch:
        s_g = np.maximum(1.0, np.ceil((gn[:, None] - mx) * (bw[gm] / Bmax)[:, None] - EPS))
        s_g = np.where(gq[:, None] == 1, 1.0, s_g)
        lbz = s_g * (w.pz_minall[endc] - w.pz_minall[ts[None, :]])
    else:
        lbz = 0.0
    # necessary capacity conditions over the window (pairs that cannot fit are never evaluated)
    valid &= np.where(gq[:, None] == 1, mx >= gn[:, None], tot >= gn[:, None])
    lb = np.where(valid, lbw + lbz, np.inf)
    # candidates as flat 1-D arrays; they shrink fast once a first schedule is known
    cand = np.flatnonzero(valid)
    c_lb = lb.ravel()[cand]
    c_comp = end.ravel()[cand]
    best_cost, best_comp, best_key = cutoff, -1, None  # (cutoff, -1): only costs < cutoff survive
    best: tuple[float, dict, dict] | None = None
    done_grp = np.zeros(len(G), dtype=bool)  # colocated groups evaluated over all their starts
    while cand.size:
        if best is not None or math.isfinite(best_cost):
            keep = (c_lb < best_cost) | ((c_lb == best_cost) & (c_comp <= best_comp))
            cand, c_lb, c_comp = cand[keep], c_lb[keep], c_comp[keep]
            if not cand.size:
                break
        if cand.size > batch:
            key = c_lb + c_comp * 1e-9 * (1.0 + np.abs(c_lb))
            pick = _smallest(key, batch)
        else:
            pick = np.arange(cand.size)
        pick = pick[np.lexsort((cand[pick], c_comp[pick], c_lb[pick]))]
        sel, sel_lb, sel_comp = cand[pick], c_lb[pick], c_comp[pick]
        rest = np.ones(cand.size, dtype=bool)
        rest[pick] = False
        cand, c_lb, c_comp = cand[rest], c_lb[rest], c_comp[rest]
        for flat, l0, c0 in zip(sel, sel_lb, sel_comp, strict=True):
            if l0 > best_cost or (l0 == best_cost and c0 > best_comp):
                continue
            g, ti = divmod(int(flat), S)
            if done_grp[g]:
                continue
            q, m, n, d = int(gq[g]), int(gm[g]), int(gn[g]), int(gd[g])
            t0 = int(ts[ti])
            mem = members[g]
            if q:
                done_grp[g] = True  # colocated: every start of every PS type of the group at once
                results = [(int(mem[pos]), t, res)
                           for pos, t, res in _eval_colocated_group(w, m, cf.p[mem], n, ts[valid[g]], d, best_cost)]
            else:
                # the group's N workers on fixed servers plus its fewest PSs at the cheapest PS price
                lb2 = float(w.window_cheapest(m, d, nmax)[n, t0])
                if ps_arch:
                    s_min = max(1.0, math.ceil((n - mx[g, ti]) * bw[m] / Bmax - EPS))
                    lb2 += s_min * float(w.ps_cost_min_all(d)[t0])
                if math.isinf(lb2) or lb2 > best_cost or (lb2 == best_cost and t0 + d > best_comp):
                    continue
                results = []
                # no server can hold the PSs of (2i) with its share of the workers: infeasible, skipped
                room = w.ps_server_room(m, cf.p[mem], t0, d, n) if ps_arch else None
                for i, c in enumerate(mem):
                    p = int(cf.p[c])
                    if ps_arch:
                        if n > room[i]:
                            continue
                        B = instance.ps_types[p].bandwidth_mbps
                        s_c = max(1.0, math.ceil((n - mx[g, ti]) * bw[m] / B - EPS))
                        if _stage2_prunes(w, t0, m, p, n, d, nmax, s_c, best_cost, best_comp):
                            continue
                        results.append((int(c), t0, _eval_distributed_ps(w, m, p, n, t0, d, bw[m], B)))
                    else:
                        results.append((int(c), t0, _eval_distributed_ra(w, m, n, t0, d)))
            for c, t, res in results:
                cost = res[0]
                # ties: least cost, earliest completion, fewest nodes (leaves room for others), then order
                key2 = (cost, t + d, sum(res[1].values()) + sum(res[2].values()), c)
                if cost < cutoff and (best_key is None or key2 < best_key):
                    best_key, best, best_cost, best_comp = key2, res, cost, t + d
                    best_cfg = (q, m, int(cf.p[c]), n, d, t)
    if best is None:
        return None
    q, m, p, n, d, t = best_cfg
    return Placement(job=job.id, start=lo + t, duration=d, worker_type=m, ps_type=None if p < 0 else p,
                     colocated=bool(q), workers=best[1], ps=best[2], cost=best[0])


def _smallest(key: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` smallest entries of ``key`` (< len), ties by position (`np.argpartition` leaves
    them to its algorithm; the compiled kernel follows this rule), in increasing position."""
    kth = np.partition(key, k - 1)[k - 1]
    below = np.flatnonzero(key < kth)
    return np.sort(np.concatenate([below, np.flatnonzero(key == kth)[:k - len(below)]]))


def _search_compiled(instance: Instance, job: Job, cf: Configs, w: PricedWindow, ts: np.ndarray, cutoff: float,
                     batch: int) -> Placement | None:
    """`search` through the compiled kernel (`kernels.search_kernel`): the same candidates in the same order,
    the same bounds and evaluations, so the same placement; the placement's dictionaries are rebuilt here in
    the reference's insertion order."""
    grp = cf.groups()
    (gq, gm, gn, gd), (mem_ptr, mem_idx) = grp["qmnd"][1], grp["csr"]
    ms = np.unique(gm)
    nmax = int(cf.n.max())
    pref, table, maxt, tott, (inv, off, zmax, idle, bw, B, z), (ckeys, cstamp, cvals) = w.kernel_state(ms, nmax)
    ps_arch = instance.architecture == "ps"
    found, c, t, cost, srv, g, s, _ = kernels.search_kernel(
        gq, gm, gn, gd, mem_ptr, mem_idx, cf.p, np.ascontiguousarray(ts, dtype=np.int64), w.T, ps_arch, pref,
        maxt, tott, table, _slot_major(w.pe), _slot_major(w.pz), w.pz_minall, w.e, z, bw, B, float(B.max()), inv, off, zmax, idle,
        float(cutoff), int(batch), int(pref.shape[2] - 1), ckeys, cstamp, cvals, w._kchanged, w._kclock, w._kmono)
    if not found:
        return None
    q, m, p, n, d = int(cf.q[c]), int(cf.m[c]), int(cf.p[c]), int(cf.n[c]), int(cf.d[c])
    t, srv = int(t), int(srv)
    if q:
        workers, ps = {srv: n}, ({srv: 1} if p >= 0 else {})
    else:
        H = w.pe.shape[1]
        wh, wc = np.empty(H + 1, dtype=np.int64), np.empty(H + 1, dtype=np.int64)
        if ps_arch:
            k = kernels.fill_dps(table, _slot_major(w.pe), w.e, m, n, t, d, srv, int(g), wh, wc)
            ps = {srv: int(s)}
        else:
            _, k = kernels._eval_dra(table, _slot_major(w.pe), w.e, m, n, t, d, np.empty((H, w.e.shape[1])), np.empty(H),
                                     np.empty(H, dtype=np.int64), wh, wc)
            ps = {}
        workers = {int(wh[i]): int(wc[i]) for i in range(k)}
    return Placement(job=job.id, start=w.lo + t, duration=d, worker_type=m, ps_type=None if p < 0 else p,
                     colocated=bool(q), workers=workers, ps=ps, cost=float(cost))


def _stage2_prunes(w: PricedWindow, t: int, m: int, p: int, n: int, d: int, nmax: int, n_ps: float,
                   best_cost: float, best_comp: float) -> bool:
    """Second, tighter bound for a distributed candidate: the exact cost of its N workers kept on fixed
    servers over the window, plus ``n_ps`` PSs on the cheapest server. True if it cannot win."""
    F = w.window_cheapest(m, d, nmax)
    lb2 = float(F[n, t])
    if p >= 0:
        lb2 += n_ps * float(w.ps_cost_min(p, d)[t])
    comp = t + d
    return math.isinf(lb2) or lb2 > best_cost or (lb2 == best_cost and comp > best_comp)


def _job(instance: Instance, job: Job | int) -> Job:
    return instance.jobs[job] if isinstance(job, (int, np.integer)) else job


def min_cost_colocated(instance: Instance, job: Job | int, price: np.ndarray, free: np.ndarray,
                       window: tuple[int, int], **restrict) -> Placement | None:
    """A_mincost2 (Alg. 5): cheapest schedule with all workers and the PS on one server (q_j = 1).

    ``restrict``: start, worker_types, ps_types, n_workers, duration (see `search`).
    With worker_types=[m], ps_types=[p], start=t and duration=d this is problem (13), q = 1.
    """
    _need(instance, "ps")
    return search(instance, _job(instance, job), price, free, window, colocated=True, **restrict)


def min_cost_distributed(instance: Instance, job: Job | int, price: np.ndarray, free: np.ndarray,
                         window: tuple[int, int], **restrict) -> Placement | None:
    """A_mincost1 (Alg. 4): cheapest schedule spread over >= 2 servers (q_j = 0)."""
    _need(instance, "ps")
    return search(instance, _job(instance, job), price, free, window, colocated=False, **restrict)


def ra_min_cost_colocated(instance: Instance, job: Job | int, price: np.ndarray, free: np.ndarray,
                          window: tuple[int, int], **restrict) -> Placement | None:
    """A_RAmincost1 (Alg. 6): Ring-AllReduce, all workers on one server (q_j = 1). Problem (21)."""
    _need(instance, "ring_allreduce")
    return search(instance, _job(instance, job), price, free, window, colocated=True, **restrict)


def ra_min_cost_distributed(instance: Instance, job: Job | int, price: np.ndarray, free: np.ndarray,
                            window: tuple[int, int], **restrict) -> Placement | None:
    """A_RAmincost2 (Alg. 7): Ring-AllReduce, workers on >= 2 servers (q_j = 0). Problem (21)."""
    _need(instance, "ring_allreduce")
    return search(instance, _job(instance, job), price, free, window, colocated=False, **restrict)


def min_cost(instance: Instance, job: Job | int, price: np.ndarray, free: np.ndarray, window: tuple[int, int],
             **restrict) -> Placement | None:
    """Lines 3-7 of Alg. 3: the cheaper of the colocated and the distributed schedule (either architecture)."""
    return search(instance, _job(instance, job), price, free, window, **restrict)


def _need(instance: Instance, arch: str) -> None:
    if instance.architecture != arch:
        raise ValueError(f"this routine is for architecture {arch!r}, the instance is {instance.architecture!r}")


def idle_window(instance: Instance) -> PricedWindow:
    """The one-slot `PricedWindow` of the idle cluster (zero prices, free = capacities) that `fits_idle` reads;
    build it once and pass it to every `fits_idle` call on the same instance."""
    cap = instance.capacity[:, :, None]
    return PricedWindow(instance, np.zeros_like(cap), cap, 0, 1)


def fits_idle(instance: Instance, job: Job, configs: Configs | None = None, idle: PricedWindow | None = None
              ) -> bool:
    """Whether some configuration of ``job`` fits on the idle cluster (capacities C, any time).

    Feasibility on an idle cluster does not depend on time and is monotone in
    N (dropping a worker off the PS server keeps (2i)), so the fewest-workers
    configuration of each (q, m, p) decides. ``idle``: `idle_window` of the instance (built when None).
    """
    cf = configs if configs is not None else job_configs(instance, job)
    if not len(cf):
        return False
    w = idle if idle is not None else idle_window(instance)
    # the answer for one (q, m, p, N) depends on the idle cluster alone: kept on the window, shared by jobs
    known: dict[tuple[int, int, int, int], bool] = w.__dict__.setdefault("_fits_idle", {})
    seen: set[tuple[int, int, int]] = set()
    for k in np.lexsort((cf.n, cf.p, cf.m, cf.q)):
        q, m, p, n = int(cf.q[k]), int(cf.m[k]), int(cf.p[k]), int(cf.n[k])
        if (q, m, p) in seen:
            continue
        seen.add((q, m, p))
        ok = known.get((q, m, p, n))
        if ok is None:
            ok = known[(q, m, p, n)] = _fits_idle_one(instance, w, q, m, p, n)
        if ok:
            return True
    return False


def _fits_idle_one(instance: Instance, w: PricedWindow, q: int, m: int, p: int, n: int) -> bool:
    """Whether configuration (q, m, p, N) fits the idle window ``w``."""
    if q:
        cost, _ = _eval_colocated_many(w, m, p, n, np.array([0]), 1)
        return math.isfinite(float(cost[0]))
    if instance.architecture == "ps":
        return math.isfinite(_eval_distributed_ps(w, m, p, n, 0, 1, instance.worker_types[m].bandwidth_mbps,
                                                  instance.ps_types[p].bandwidth_mbps)[0])
    return math.isfinite(_eval_distributed_ra(w, m, n, 0, 1)[0])


#: Former private name, kept for callers written against it.
_Window = PricedWindow
