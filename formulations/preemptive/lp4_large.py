"""The LP relaxation of ILP (4) at scale: aggregated, optionally time-bucketed, built with highspy.

`ilp4.build_ilp4(relax=True)` names every chunk, worker and slot: exact but
far too large for the paper's 300 jobs / 100 servers (thousands of slots,
tens of thousands of chunks). This module builds the same LP with its
symmetries removed, and optionally relaxed further, always keeping a valid
lower bound on ILP (4) and hence on MINLP (2) (Lemma 1):

1. Chunks of a job are identical and so are workers of one type on one
   server: X[j, g, kappa] is the number of chunk-slots of job j on worker
   group g (server, type) in time bucket kappa. With 1-slot buckets and no
   pooling this is *exactly* the LP relaxation of (4) without (4c)/(4d)
   (split X evenly over the group's workers and the job's chunks:
   tests/preemptive/test_preemptive_theorems.py checks equality).
2. ``pool=True`` merges the groups of one type across servers, the group
   opening at r_j + min_s Delta_js (a relaxation: more freedom), with at most
   min(D_j, workers released to j by t) chunk-slots of job j in slot t
   (`_released_chunk_slots`: each chunk-slot needs its own released worker;
   the first version let the whole pooled group train from its first
   release, so one job alone could be bounded below its optimum).
3. ``bucket=w``: slots are grouped in buckets of w slots up to ``cutoff`` and
   one tail bucket up to T; a bucket's capacity is its slot count, and a
   chunk-slot in it costs as its earliest slot available to the job (the
   cost (t + 1 - r_j)/(D_j P_j) increases in t, so this underestimates).
4. PS constraints (4c)/(4d) are dropped (a relaxation).

5. ``jct=True`` turns the LP into a lower bound on the total JCT of (2)
   itself, tighter than Lemma 1's: per job a column M_j >= c_j - r_j with
   M_j >= F_j + (P_j^min - 1)/2 (F_j the job's fractional flow time; the proof
   of Lemma 1 gives f_jd <= (c_jd - r_j)/D_j - (P_jd - 1)/(2 D_j) when a chunk
   trains its P_jd slots, summed over d) and M_j >= min_s Delta_js + P_j^min
   (the job cannot finish earlier); the objective is sum_j M_j. Both rows use
   the job's own P: P_jd is P_edge unless the whole job is colocated on the
   cloud (zeta_j = 1; P_cloud <= P_edge), so the first row is M_j - F_j +
   (P_edge - P_cloud)/2 zeta_j >= (P_edge - 1)/2 (exact at zeta_j = 0 and 1),
   and the second M_j >= `ModelData.earliest_jct` (a chunk finishes P_edge
   slots after its worker's release, or P_cloud after the cloud's when the
   whole job is there): P_j^min = min(P_edge, P_cloud) in both, as first
   built, is weaker where an edge worker opens before the cloud.

Rows: ``work[j]`` (4a) sum X + sum Xc + D_j P_j zeta_j >= D_j P_j;
``cap[g, kappa]`` (4b) sum_j X <= W_g |kappa|; ``one[j, kappa]`` (4e)/(4g)
sum_g X + Xc + D_j L zeta_j <= D_j L (L: slots of kappa open to job j).
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from edgeopt.core import ModelError, Result, Status
from edgeopt.core.family import instance_sha256
from formulations.preemptive.data import ModelData, from_instance

if TYPE_CHECKING:  # imported where used: with Pyomo loaded, importing scipy also imports scipy.stats (0.6 s)
    import scipy.sparse as sp


@dataclasses.dataclass
class LargeLP:
    """The LP in matrix form plus what is needed to describe it."""

    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    A: sp.csc_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    buckets: np.ndarray
    n_groups: int
    #: the job of every column (each column is one job's: its chunk-slots, zeta_j, mu_j or M_j)
    job_of_col: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def _buckets(T: int, bucket: int, cutoff: int | None) -> np.ndarray:
    """Bucket boundaries b_0 = 0 < ... < b_K = T."""
    end = T if cutoff is None else max(1, min(T, int(cutoff)))
    b = list(range(0, end, max(1, int(bucket)))) + [end]
    if end < T:
        b.append(T)
    return np.array(sorted(set(b)), dtype=np.int64)


def _earliest_ends(data: ModelData, j: int) -> tuple[int, int]:
    """(e_edge, e_cloud): the earliest c_j - r_j of job j when not wholly colocated on the cloud, and when it is.

    Not colocated, each of its D_j chunks trains P_edge slots on one worker, a worker one chunk per slot from
    its release on (2i, 4b): by slot C an edge worker released at rel finishes at most floor((C - rel) /
    P_edge) chunks, and the cloud (unlimited workers) every chunk once C >= its release + P_edge. e_edge is
    the least C at which these hold D_j chunks. Wholly on the cloud: its release + P_cloud."""
    p, D, r = int(data.p_edge[j]), int(data.chunks[j]), int(data.arrival[j])
    rel = np.array([data.first_slot(j, int(k)) for k in data.eligible[j]], dtype=np.int64)
    cloud_done = int(data.cloud_start(j)) + p if data.cloud is not None else None

    def holds(c: int) -> bool:
        if cloud_done is not None and c >= cloud_done:
            return True
        return int(np.clip((c - rel) // p, 0, None).sum()) >= D if rel.size else False

    hi = cloud_done if cloud_done is not None else int(rel.min()) + D * p if rel.size else r
    lo = int(rel.min()) + p if rel.size else hi
    lo = min(lo, hi)
    while lo < hi:  # least C in [lo, hi] that holds (hi holds: the cloud, or every chunk on the first worker)
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    e_cloud = int(data.cloud_end(j, True)) - r if data.cloud is not None else None
    return lo - r, e_cloud


def _released_chunk_slots(first_slots: list[int], chunks: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Most chunk-slots a job can train on a worker group in each bucket [lo, hi): in slot t at most one
    chunk per worker released to the job by t (2i) and at most one slot per chunk (4e), so
    min(D_j, #released by t) per slot. With ``first_slots`` sorted, min(D, #released by t) = the number of
    the D earliest releases at or before t, so the sum over t < x is sum_i max(0, x - rel_i) over them.
    (Grouped workers of one release, as the unpooled groups are, give the first version's
    min(W_g, D_j) x the open slots; pooled groups of several releases get less.)"""
    rel = np.sort(np.asarray(first_slots, dtype=np.int64))[:chunks].astype(float)

    def upto(x: np.ndarray) -> np.ndarray:
        return np.clip(x[:, None].astype(float) - rel[None, :], 0.0, None).sum(axis=1)

    return upto(hi) - upto(lo)


def build_lp4_large(data: ModelData, *, bucket: int = 1, pool: bool = False, cutoff: int | None = None,
                    jct: bool = False) -> LargeLP:
    """Matrix form of the aggregated LP (module docstring); never solves."""
    T = data.horizon
    b = _buckets(T, bucket, cutoff)
    lo, hi = b[:-1], b[1:]
    K = lo.size
    # worker groups: (server, type) or (type) when pooled
    if pool:
        keys = sorted({int(x) for x in data.worker_type})
        g_of_worker = np.array([keys.index(int(x)) for x in data.worker_type], dtype=np.int64)
    else:
        pairs = sorted(set(zip(data.worker_server.tolist(), data.worker_type.tolist(), strict=True)))
        keys = pairs
        index = {p: i for i, p in enumerate(pairs)}
        g_of_worker = np.array([index[(int(s), int(t))] for s, t in zip(data.worker_server, data.worker_type, strict=True)],
                               dtype=np.int64)
    G = len(keys)
    W = np.bincount(g_of_worker, minlength=G).astype(float)
    g_type = np.array([k if pool else k[1] for k in keys], dtype=np.int64) if G else np.zeros(0, dtype=np.int64)

    cost, clo, cup = [], [], []
    owners: list[np.ndarray] = []
    rows, cols, vals = [], [], []
    J = data.n_jobs
    n_work = J
    n_cap = G * K
    one_row0 = n_work + n_cap
    one_upper = np.zeros(J * K)
    col = 0

    def add(job: int, c: np.ndarray, up: np.ndarray, row_lists: list[tuple[np.ndarray, np.ndarray]]) -> None:
        nonlocal col
        n = c.size
        ids = np.arange(col, col + n)
        owners.append(np.full(n, job, dtype=np.int64))
        cost.append(c)
        clo.append(np.zeros(n))
        cup.append(up)
        for r, v in row_lists:
            rows.append(r)
            # one entry per column, or (a single column) one entry per row
            cols.append(ids if r.size == n else np.full(r.size, ids[0]))
            vals.append(v)
        col += n

    zeta_col = np.full(J, -1, dtype=np.int64)  # the column of zeta_j, where the job fits on the cloud
    cloud_cols: dict[int, np.ndarray] = {}  # job -> its cloud chunk-slot columns (not colocated, P_edge)
    for j in range(J):
        r, D, P = int(data.arrival[j]), int(data.chunks[j]), int(data.p_edge[j])
        gs = np.flatnonzero(g_type == data.job_type[j])
        # release of job j on each group: min over the group's workers
        rel_g = np.full(G, np.iinfo(np.int64).max, dtype=np.int64)
        released: dict[int, list[int]] = {}  # group -> its workers' first slots for job j
        for k in data.eligible[j]:
            g = int(g_of_worker[k])
            rel_g[g] = min(rel_g[g], data.first_slot(j, int(k)))
            released.setdefault(g, []).append(data.first_slot(j, int(k)))
        opens = [int(rel_g[g]) for g in gs]
        cloud_rel = data.cloud_start(j) if data.cloud is not None else None
        if cloud_rel is not None:
            opens.append(cloud_rel)
        first_open = min(opens) if opens else T
        L = np.clip(hi - np.maximum(lo, first_open), 0, None).astype(float)  # slots of bucket open to j
        one_upper[j * K:(j + 1) * K] = D * L
        for g in gs:
            start = np.maximum(lo, rel_g[g])
            avail = np.clip(hi - start, 0, None)
            ks = np.flatnonzero(avail > 0)
            if ks.size == 0:
                continue
            c = (start[ks] + 1 - r) / (D * P)
            add(j, c, _released_chunk_slots(released.get(int(g), []), D, lo[ks], hi[ks]),
                [(np.full(ks.size, j), np.ones(ks.size)),
                 (n_work + g * K + ks, np.ones(ks.size)),
                 (one_row0 + j * K + ks, np.ones(ks.size))])
        if cloud_rel is not None:
            start = np.maximum(lo, cloud_rel)
            avail = np.clip(hi - start, 0, None)
            ks = np.flatnonzero(avail > 0)
            if ks.size:
                first = col
                add(j, (start[ks] + 1 - r) / (D * P), D * avail[ks].astype(float),
                    [(np.full(ks.size, j), np.ones(ks.size)), (one_row0 + j * K + ks, np.ones(ks.size))])
                cloud_cols[j] = np.arange(first, col)
            if data.cloud_end(j, True) <= T:  # zeta_j: the whole job colocated on the cloud
                zeta_col[j] = col
                kk = np.flatnonzero(L > 0)
                add(j, np.array([D * data.cloud_flow(j, True)]), np.ones(1),
                    [(np.array([j]), np.array([float(D * P)])),
                     (one_row0 + j * K + kk, D * L[kk])])
    n_rows = one_row0 + J * K
    extra_lower: list[float] = []
    if jct:
        # M_j - F_j >= (P_j - 1)/2 (below), F_j = the flow cost of j's columns; objective moves onto M_j.
        # without jobs there are no columns yet (and none to add): empty arrays, an LP of value 0
        flow_cost = np.concatenate(cost) if cost else np.zeros(0)
        all_rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        all_cols = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
        job_of_col = np.full(col, -1, dtype=np.int64)
        work_entries = all_rows < n_work
        job_of_col[all_cols[work_entries]] = all_rows[work_entries]
        rows.append(n_rows + job_of_col)
        cols.append(np.arange(col))
        vals.append(-flow_cost)
        cost = [np.zeros(col)]
        # A chunk trains P_j slots, P_edge unless the whole job is colocated on the cloud (zeta_j = 1, P_cloud
        # <= P_edge): M_j - F_j >= (P_edge - 1)/2 - (P_edge - P_cloud)/2 zeta_j holds at zeta_j = 0 and 1, so
        # for every schedule, and is the row (P_j^min of the first version for both: weaker).
        has_zeta = zeta_col >= 0
        rows.append(n_rows + np.flatnonzero(has_zeta))
        cols.append(zeta_col[has_zeta])
        vals.append((data.p_edge - data.p_cloud)[has_zeta].astype(float) / 2.0)
        # M_j >= e_edge + (e_cloud - e_edge) zeta_j (`_earliest_ends`): exact at zeta_j = 0 and 1, so it holds
        # for every schedule (one row per job that fits on the cloud and whose two earliest ends differ).
        # M_j >= e_edge + (e_cloud - e_edge) zeta_j + (e_mixed - e_edge) mu_j, with mu_j in [0, 1] a column
        # (`mixed_mode` rows below) that is 1 when some chunk of a job not wholly colocated trains on the
        # cloud: that chunk starts at the cloud's release at the earliest and trains P_edge slots, so the job
        # ends no earlier than e_mixed = cloud release + P_edge - r_j. Rows: W_c <= D_j P_edge mu_j (W_c the
        # job's cloud chunk-slots) and mu_j + zeta_j <= 1. Each holds for every schedule (mu_j = 1 exactly
        # when a chunk is on the cloud and the job is not colocated there), and at a fractional point they stop
        # the LP from training a sliver of a job on the cloud at no cost to its JCT. On the `paper` preset with
        # `far_cloud` (seed 0) the bound went from 34,499 to 34,918.
        extra = []  # lower sides of the rows after the J rows M_j - F_j >= ..., in their order
        for j in range(J):
            split_row = None
            e_edge, e_cloud = _earliest_ends(data, j)
            # no zeta column: the job cannot be wholly colocated on the cloud within the horizon. Either way this
            # is at least `ModelData.earliest_jct` (e_edge starts its search there, P_cloud <= P_edge)
            earliest = min(e_edge, e_cloud) if zeta_col[j] >= 0 and e_cloud is not None else e_edge
            e_mixed = (int(data.cloud_start(j)) + int(data.p_edge[j]) - int(data.arrival[j])
                       if j in cloud_cols else None)
            mixed = e_mixed is not None and e_mixed > e_edge
            colocated = zeta_col[j] >= 0 and e_cloud is not None and e_cloud != e_edge
            if colocated or mixed:
                split_row = n_rows + J + len(extra)
                extra.append(float(e_edge))
                if colocated:
                    rows.append(np.array([split_row]))
                    cols.append(np.array([zeta_col[j]]))
                    vals.append(np.array([-(e_cloud - e_edge)], dtype=float))
            if mixed:
                work_row = n_rows + J + len(extra)  # D_j P_edge mu_j - W_c >= 0
                extra.append(0.0)
                rows.append(np.full(cloud_cols[j].size, work_row))
                cols.append(cloud_cols[j])
                vals.append(-np.ones(cloud_cols[j].size))
                mode_row = n_rows + J + len(extra)  # -mu_j - zeta_j >= -1
                extra.append(-1.0)
                if zeta_col[j] >= 0:
                    rows.append(np.array([mode_row]))
                    cols.append(np.array([zeta_col[j]]))
                    vals.append(np.array([-1.0]))
                add(j, np.zeros(1), np.ones(1), [(np.array([split_row, work_row, mode_row]),
                                               np.array([-(e_mixed - e_edge), float(data.chunks[j] * data.p_edge[j]),
                                                         -1.0]))])
            rs = [n_rows + j] + ([split_row] if split_row is not None else [])
            add(j, np.ones(1), np.full(1, np.inf), [(np.array(rs), np.ones(len(rs)))])
            clo[-1] = np.array([float(earliest)])
            extra_lower.append((int(data.p_edge[j]) - 1) / 2.0)
        extra_lower.extend(extra)
        n_rows += J + len(extra)
    import scipy.sparse as sp

    A = sp.csc_matrix(
        (np.concatenate(vals) if vals else np.zeros(0),
         (np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64),
          np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64))),
        shape=(n_rows, col),
    )
    row_lower = np.concatenate([data.chunks * data.p_edge.astype(float), np.full(n_cap + J * K, -np.inf),
                                np.array(extra_lower)])
    row_upper = np.concatenate([np.full(n_work, np.inf), np.repeat(W, K) * np.tile((hi - lo).astype(float), G),
                                one_upper, np.full(len(extra_lower), np.inf)])
    return LargeLP(np.concatenate(cost) if cost else np.zeros(0), np.concatenate(clo) if clo else np.zeros(0),
                   np.concatenate(cup) if cup else np.zeros(0), A, row_lower, row_upper, b, G,
                   np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64))


def solve_large_lp(lp: LargeLP, *, time_limit: float = 600.0, threads: int = 1, solver: str = "choose") -> tuple[str, float | None, float]:
    """Solve with highspy; returns (model status, optimum or None, seconds)."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("solver", solver)
    model = highspy.HighsLp()
    model.num_col_ = int(lp.cost.size)
    model.num_row_ = int(lp.row_lower.size)
    model.col_cost_ = lp.cost
    model.col_lower_ = lp.col_lower
    model.col_upper_ = lp.col_upper
    model.row_lower_ = lp.row_lower
    model.row_upper_ = lp.row_upper
    A = lp.A.tocsc()
    A.sort_indices()
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_ = A.indptr.astype(np.int32)
    model.a_matrix_.index_ = A.indices.astype(np.int32)
    model.a_matrix_.value_ = A.data.astype(float)
    model.a_matrix_.num_col_ = model.num_col_
    model.a_matrix_.num_row_ = model.num_row_
    t0 = time.perf_counter()
    h.passModel(model)
    h.run()
    secs = time.perf_counter() - t0
    status = h.modelStatusToString(h.getModelStatus())
    value = float(h.getInfo().objective_function_value) if status == "Optimal" else None
    return status, value, secs


def solve_lp4_large(instance: Any, *, time_limit: float = 600.0, bucket: int = 1, pool: bool = False,
                    cutoff: int | None = None, jct: bool = False, speed: float = 1.0, threads: int = 1,
                    **_: Any) -> Result:
    """Lower bound on (2) from the aggregated LP of (4) (``bound``); no schedule."""
    t0 = time.perf_counter()
    data = from_instance(instance, speed=speed)
    lp = build_lp4_large(data, bucket=bucket, pool=pool, cutoff=cutoff, jct=jct)
    build_s = time.perf_counter() - t0
    status, value, secs = solve_large_lp(lp, time_limit=time_limit, threads=threads)
    extra = {"model": "LP relaxation of ILP (4), aggregated" + (", JCT form" if jct else ""), "bucket": bucket,
             "pool": pool, "cutoff": cutoff, "jct": jct,
             "speed": speed, "columns": int(lp.cost.size), "rows": int(lp.row_lower.size),
             "solver_message": status, "timings": {"build_s": round(build_s, 6)}, "bound_of": "MINLP (2) (Lemma 1)"}
    if status == "Infeasible":
        st = Status.INFEASIBLE
        extra["reason"] = "HiGHS proved the aggregated LP of (4) infeasible"
    elif value is None:
        if "limit" not in status.lower():
            raise ModelError(f"aggregated LP (4): HiGHS ended with {status}")
        st = Status.TIME_LIMIT
    else:
        st = Status.OPTIMAL
    return Result("preemptive", "lp4_jct" if jct else "lp4_agg", st, None, value, build_s + secs, None, instance_sha256(instance), extra)


def jct_bound_from_flow(data: ModelData, flow_bound: float) -> float:
    """A lower bound on OPT of (2) from a lower bound on the fractional flow time (4).

    Every schedule training each chunk in exactly P slots has, per job, c_j - r_j >= F_j +
    (P_j^min - 1)/2 (proof of Lemma 1, summed over the job's chunks), so OPT2 >= min F +
    sum_j (P_j^min - 1)/2 >= ``flow_bound`` + the same sum. (The ``jct=True`` LP is at least this.)
    """
    pmin = np.minimum(data.p_edge, data.p_cloud) if data.cloud is not None else data.p_edge
    return float(flow_bound) + float(np.sum((pmin - 1) / 2.0))
