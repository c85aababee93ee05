"""Vectorised building blocks shared by Okita and the baselines: the deployment metric Q (eq. (6)),
the placement algorithm PA (Alg. 2) for many worker counts at once, the workload d_i^r(t) of a
placement, and the data transmission algorithm DTA (Alg. 3).

Arrays: ``U`` available resources [R, K]; ``C`` capacities [R, K]; ``q`` [R, R] cost per MB from
row site to column site; ``M`` remaining chunks per site [R] (eq. (3)); ``D`` the job's D_i^r [R].
"""

from __future__ import annotations

import dataclasses

import numpy as np

from edgeopt.okita.instance import Instance, Job

INF = float("inf")


@dataclasses.dataclass(frozen=True)
class JobArrays:
    """The numbers of one job as arrays (built once per run)."""

    id: int
    arrival: int
    m: np.ndarray  # worker demand [K]
    n: np.ndarray  # PS demand [K]
    k: float  # rho / E: chunks per worker and slot
    pi: float
    delta: float
    D: np.ndarray  # [R]
    job: Job

    @classmethod
    def of(cls, job: Job) -> JobArrays:
        return cls(job.id, job.arrival, np.asarray(job.worker_demand, float), np.asarray(job.ps_demand, float),
                   job.chunks_per_worker, job.param_size_mb, job.chunk_size_mb,
                   np.asarray(job.data_chunks, dtype=np.int64), job)

    def worker_slots(self, chunks: int) -> int:
        """ceil(E_i M / rho_i): worker-slots needed for ``chunks`` chunks (Alg. 1 line 5)."""
        return int(np.ceil(chunks / self.k - 1e-9))

    def f(self, latency: int | np.ndarray) -> np.ndarray | float:
        return self.job.cost(np.maximum(latency, 1))


def max_workers(U: np.ndarray, m: np.ndarray, cap: int) -> np.ndarray:
    """min_k floor(U_r^k / m^k) per site (Alg. 2 line 6 without the PS), capped at ``cap``; [R] ints."""
    pos = m > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.floor(U[:, pos] / m[pos] + 1e-9)
    out = ratio.min(axis=1) if ratio.shape[1] else np.full(U.shape[0], cap, dtype=float)
    return np.minimum(np.maximum(out, 0), cap).astype(np.int64)


def metric_q(U: np.ndarray, C: np.ndarray, q: np.ndarray, M: np.ndarray, D: np.ndarray, pi: float,
             betas: tuple[float, float, float]) -> np.ndarray:
    """Q_i^r(t) of eq. (6): beta1 mean_k U/C - beta2 sum_r' q^{rr'} pi / (R-1) + beta3 M^r / D^r.

    Resources of zero capacity count as fully available (U/C = 1 is undefined; they constrain nothing);
    sites with D^r = 0 have no local data term.
    """
    b1, b2, b3 = betas
    R = U.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        avail = np.where(C > 0, U / np.where(C > 0, C, 1.0), 1.0).mean(axis=1)
        local = np.where(D > 0, M / np.where(D > 0, D, 1), 0.0)
    bw = q.sum(axis=1) * pi / max(1, R - 1)
    return b1 * avail - b2 * bw + b3 * local


@dataclasses.dataclass
class Fill:
    """Greedy worker fills for every PS site r~ (rows), in one site order per row.

    ``order[r~]`` is the site order, ``A[r~]`` the assignable workers in that order (the PS's demand
    taken out at r~), ``unit[r~]`` the per-worker cost in that order; ``ps_ok[r~]`` whether the PS fits.
    """

    order: np.ndarray  # [P, R] site indices
    A: np.ndarray  # [P, R]
    unit: np.ndarray  # [P, R]
    ps_ok: np.ndarray  # [P] bool

    def __post_init__(self) -> None:
        self.cum = np.cumsum(self.A, axis=1)
        self.prev = self.cum - self.A
        self.cost_before = np.cumsum(self.unit * self.A, axis=1) - self.unit * self.A

    def costs(self, Ns: np.ndarray) -> np.ndarray:
        """Fill cost sum_j unit * y_j for every N in ``Ns`` and every row: [len(Ns), P]; inf if infeasible."""
        P, R = self.A.shape
        Ns = np.asarray(Ns, dtype=np.int64)
        big = int(self.cum[:, -1].max()) + int(Ns.max()) + 2
        flat = (self.cum + np.arange(P)[:, None] * big).ravel()
        queries = Ns[:, None] + np.arange(P)[None, :] * big  # [nN, P]
        pos = np.searchsorted(flat, queries.ravel(), side="left").reshape(queries.shape) - np.arange(P)[None] * R
        feasible = (pos < R) & self.ps_ok[None, :]
        p = np.minimum(pos, R - 1)
        rows = np.broadcast_to(np.arange(P)[None, :], p.shape)
        val = self.cost_before[rows, p] + self.unit[rows, p] * (Ns[:, None] - self.prev[rows, p])
        return np.where(feasible, val, INF)

    def workers(self, row: int, N: int) -> np.ndarray:
        """The workers per site [R] of filling N workers in row ``row``."""
        ys = np.minimum(np.maximum(N - self.prev[row], 0), self.A[row])
        y = np.zeros(self.A.shape[1], dtype=np.int64)
        y[self.order[row]] = ys
        return y


def pa_fill(ja: JobArrays, U: np.ndarray, Q: np.ndarray, q: np.ndarray, cap: int) -> Fill:
    """Alg. 2 for every PS site at once: sites sorted by decreasing Q (line 8, same order for every r~,
    since Q does not depend on r~), A_i^r from U less the PS's demand at r~ (line 6), and the
    per-worker exchange cost pi q^{r r~} (line 12)."""
    R = U.shape[0]
    order = np.argsort(-Q, kind="stable")
    base = max_workers(U, ja.m, cap)
    with_ps = max_workers(U - ja.n[None, :], ja.m, cap)
    ps_ok = np.all(U + 1e-9 >= ja.n[None, :], axis=1)
    A = np.broadcast_to(base[order], (R, R)).copy()
    pos_of = np.empty(R, dtype=np.int64)
    pos_of[order] = np.arange(R)
    A[np.arange(R), pos_of] = np.where(ps_ok, with_ps, 0)
    unit = ja.pi * q[order, :].T  # unit[r~, j] = pi q^{order[j], r~}
    return Fill(np.broadcast_to(order, (R, R)), A, unit, ps_ok)


def best_ps(costs_row: np.ndarray) -> int:
    """Index of the minimal cost, the last one on ties (Alg. 2 line 12 updates on '<=')."""
    rev = costs_row[::-1]
    return len(costs_row) - 1 - int(np.argmin(rev))


def workload(y: np.ndarray, k: float) -> np.ndarray:
    """d_i^r(t): the chunks the workers of each site can train in one slot, floor(rho y / E) (2b)."""
    return np.floor(k * y + 1e-9).astype(np.int64)


def dta_moves(M: np.ndarray, d: np.ndarray, src_order: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """Alg. 3 as (local chunks [R], moves [(from, to, chunks)] between different sites).

    Local data first (g^{rr}); each site r with H^r = M^r - d^r < 0 (in site order, line 2) gathers
    from the sites with data to spare in increasing q^{r' r} (``src_order[r]``), never more than they
    spare and never more than it lacks. Line 7 of the listing is garbled; we implement its stated intent
    (gather greedily, no over-provisioning): take min(spare of r_j, still missing at r).
    The loop is plain Python on purpose: a deficit is usually met by the first few sources.
    """
    local = np.minimum(M, d)
    lack = (d - local).tolist()
    spare = (M - local).tolist()
    left = sum(spare)
    moves: list[tuple[int, int, int]] = []
    for r, need in enumerate(lack):
        if need <= 0:
            continue
        if left <= 0:
            break
        for s in src_order[r]:
            have = spare[s]
            if have <= 0 or s == r:
                continue
            take = min(need, have)
            spare[s] = have - take
            left -= take
            moves.append((int(s), r, int(take)))
            need -= take
            if need == 0:
                break
    return local, moves


def dta(M: np.ndarray, d: np.ndarray, src_order: np.ndarray) -> np.ndarray:
    """Alg. 3: g [R, R] (from, to) for workload d with remaining data M (see `dta_moves`)."""
    R = M.shape[0]
    local, moves = dta_moves(M, d, src_order)
    g = np.zeros((R, R), dtype=np.int64)
    g[np.arange(R), np.arange(R)] = local
    for s, r, c in moves:
        g[s, r] += c
    return g


def dta_cost(ja: JobArrays, q: np.ndarray, M: np.ndarray, d: np.ndarray, src_order: np.ndarray) -> float:
    """Transfer cost of Alg. 3's moves (bcost2 of OSF), without building g."""
    _, moves = dta_moves(M, d, src_order)
    return float(ja.delta * sum(float(q[s, r]) * c for s, r, c in moves))


def source_orders(q: np.ndarray) -> list[list[int]]:
    """``src_order[r]``: sites sorted by increasing q^{r' r} (cost of moving into r), for DTA."""
    return np.argsort(q.T, axis=1, kind="stable").tolist()


def slot_cost(ja: JobArrays, q: np.ndarray, y: np.ndarray, ps: int | None, g: np.ndarray) -> tuple[float, float]:
    """(data transfer, parameter exchange) cost of one slot (eq. (1))."""
    transfer = float(ja.delta * (q * g).sum())
    exchange = float(ja.pi * (q[:, ps] * y).sum()) if ps is not None else 0.0
    return transfer, exchange


def usage_of(ja: JobArrays, y: np.ndarray, ps: int | None, R: int) -> np.ndarray:
    """Resources [R, K] used by y workers and a PS at ``ps``."""
    u = y[:, None] * ja.m[None, :]
    if ps is not None and y.any():
        u = u.copy()
        u[ps] += ja.n
    return u


def instance_arrays(instance: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[JobArrays]]:
    """(C, q, src_order, jobs) of an instance."""
    q = instance.q
    return instance.capacity, q, source_orders(q), [JobArrays.of(j) for j in instance.jobs]
