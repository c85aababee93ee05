"""A certified lower bound on MINLP (2) (total JCT) from whole single-job plans: ``config_jct``.

``lp4_jct`` (`lpbound.py`) charges a job its *fractional* flow time plus (P_j - 1)/2. That is exact when
the job trains all D_j chunks side by side, but a job that gets fewer than D_j workers per slot ends
about twice as late as its mean chunk-slot, and the LP counts only the mean. This bound prices whole
single-job plans instead (a configuration LP, Dantzig-Wolfe on the same pooled capacity rows), so each
job pays for its *last* slot.

*Relaxation.* Rows: one per worker type g and bucket kappa of `lpbound._bucketing` (one-slot buckets up to
the cloud cutoff, then one tail bucket; without a cloud, buckets of ceil(T / 2000) slots), capacity W_g
|kappa| (W_g workers of type g, each training one chunk per slot: (4b)). A plan of job j is one of

* **edge**: a completion C and u_kappa chunk-slots of j's type in each bucket, with u_kappa at most
  ``lp4_large._released_chunk_slots`` (per slot min(D_j, workers of the type released to j by then): a chunk
  needs its own released worker, (2i)/(4e)), sum u = D_j P_edge (every chunk trains P_edge slots (2e)),
  C >= (earliest slot of every used bucket open to j) + 1 and C >= r_j + e_edge (`lp4_large._earliest_ends`:
  the workers released to j can hold D_j chunks of P_edge slots no earlier); cost C - r_j;
* **mixed** (some chunk on the cloud, the job not colocated there): cost e_mixed = cloud release + P_edge -
  r_j, no edge capacity (the cloud's workers are unlimited and any edge chunk-slots only add priced usage);
* **colocated** (the whole job on the cloud): cost e_cloud = cloud release + P_cloud - r_j, no edge capacity.

Every schedule of every job maps to one plan per job whose cost is at most the job's JCT and whose
chunk-slots are the schedule's own, so the plans' capacity use sums to at most the capacity: the program
"one plan per job within the capacities" is a relaxation of (2). PS rows (4c)/(4d) and storage (7b) are
left out (more relaxation). Against ``lp4_jct``: every plan is a point of that LP's per-job polytope (a
job's fractional flow plus (P_j - 1)/2 never exceeds its last slot when at most D_j chunk-slots train per
slot), so at convergence this bound is at least the LP's on one-slot buckets. In a multi-slot bucket a plan's
completion is charged at the bucket's earliest open slot only (weaker, still valid).

*Bound.* Lagrangian relaxation of the capacity rows (`edgeopt.core.colgen`): for any prices pi >= 0,
L(pi) = sum_j min over j's plans (cost + sum pi u) - sum pi W |kappa| (weak duality). The minimum over
edge plans is exact and solver-free: for each candidate completion C (a bucket's earliest open slot + 1, or
r_j + e_edge) the D_j P_edge cheapest chunk-slots among the buckets open before C, by price (ties by
bucket), with their caps. Column generation on the master LP finds the prices; the certificate is the
prices, and `edgeopt.core.lowerbound.check_certificate` recomputes L from them by the same enumeration.
Integer JCTs: rounded up; floor: each job alone (`lpbound.trivial_bound`).

Measured (2026-12-07, seed 0, CPU s): `paper` preset 21,161 against ``lp4_jct``'s 21,046 (3.5 s); with
``far_cloud`` 35,779 against 34,918 (105.9 s; 35,778 after 19 s with two-slot master buckets); the ITP
weeks of `docs/REPRODUCTION.md` (quiet / typical / busiest) 1,411 / 2,704 / 2,566 against 1,388 / 2,642 /
2,544, in under 0.4 s each.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from edgeopt.core.colgen import _gamma
from edgeopt.core.limits import ModelSize
from edgeopt.core.lowerbound import BoundMethod
from formulations.preemptive.data import ModelData, from_instance
from formulations.preemptive.lp4_large import _buckets, _earliest_ends, _released_chunk_slots
from formulations.preemptive.lpbound import _bucketing, trivial_bound

#: Candidate completions priced together in one array (memory: this many x the job's buckets).
CANDIDATE_BLOCK = 64


class JobPlans:
    """The relaxation of the module docstring with the pricing interface of `edgeopt.core.colgen`.

    ``capacity[g, kappa]``: rows are worker types (sorted), slots are buckets. Per job: ``arrival``,
    ``need`` (D_j P_edge), ``earliest_end`` (r_j + e_edge, absolute), ``cloud_cost`` (the cheaper of the
    mixed and the colocated plan's JCT, inf where neither fits the horizon), ``row`` (the job's type), and
    its open buckets ``open_buckets`` with their earliest open slots ``open_from`` and caps ``caps``.
    """

    def __init__(self, data: ModelData) -> None:
        T = int(data.horizon)
        width, cutoff = _bucketing(data)
        b = _buckets(T, width, cutoff)
        lo, hi = b[:-1], b[1:]
        self.bucket_starts = lo
        self.types = sorted({int(x) for x in data.worker_type})
        row_of = {t: i for i, t in enumerate(self.types)}
        workers = np.bincount([row_of[int(x)] for x in data.worker_type], minlength=len(self.types)).astype(float)
        self.capacity = workers[:, None] * (hi - lo).astype(float)[None, :]
        self.last_slot = T
        self.arrival, self.need, self.earliest_end, self.cloud_cost, self.row = [], [], [], [], []
        self.open_buckets, self.open_from, self.caps = [], [], []
        self.cloud_from: list[int] = []  # first cloud slot of each job (T without a cloud): `span` only
        for j in range(data.n_jobs):
            r, D, P = int(data.arrival[j]), int(data.chunks[j]), int(data.p_edge[j])
            e_edge, e_cloud = _earliest_ends(data, j)
            cloud = math.inf
            start = data.cloud_start(j)
            if start is not None:
                if int(start) + P <= T:
                    cloud = float(int(start) + P - r)  # mixed: e_mixed
                if int(data.cloud_end(j, True)) <= T and e_cloud is not None:
                    cloud = min(cloud, float(e_cloud))  # colocated
            releases = sorted(data.first_slot(j, int(k)) for k in data.eligible[j])
            if releases:
                opens = np.maximum(lo, releases[0])
                ks = np.flatnonzero(hi - opens > 0)
                caps = _released_chunk_slots(releases, D, lo[ks], hi[ks])
                keep = caps > 0
                ks, caps, opens = ks[keep], caps[keep], opens[ks][keep]
            else:
                ks, caps, opens = np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64)
            self.cloud_from.append(int(start) if start is not None else T)
            self.arrival.append(r)
            self.need.append(float(D * P))
            self.earliest_end.append(r + int(e_edge))
            self.cloud_cost.append(cloud)
            self.row.append(row_of.get(int(data.job_type[j]), 0))
            self.open_buckets.append(ks.astype(np.int64))
            self.open_from.append(opens.astype(np.int64))
            self.caps.append(caps.astype(float))

    @property
    def n_rows(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def horizon(self) -> int:
        """Buckets (the relaxation's slots)."""
        return int(self.capacity.shape[1])

    @property
    def n_jobs(self) -> int:
        return len(self.arrival)

    def empty_jobs(self) -> list[int]:
        """Jobs with no plan: no cloud plan within the horizon and too few edge chunk-slots."""
        return [j for j in range(self.n_jobs) if not math.isfinite(self.cloud_cost[j])
                and (self.caps[j].sum() < self.need[j] or self.earliest_end[j] > self.last_slot)]

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.capacity).tobytes())
        h.update(np.array([self.last_slot], dtype=np.int64).tobytes())
        h.update(np.array([self.arrival, self.earliest_end, self.row], dtype=np.int64).tobytes())
        h.update(np.array([self.need, self.cloud_cost], dtype=float).tobytes())
        for ks, opens, caps in zip(self.open_buckets, self.open_from, self.caps, strict=True):
            h.update(ks.tobytes())
            h.update(opens.tobytes())
            h.update(caps.tobytes())
        return h.hexdigest()

    def _edge_plan(self, j: int, prices: np.ndarray, deadline: Any = None) -> tuple[float, Any]:
        """Job j's cheapest edge plan at its type's bucket ``prices`` (inf, None when it has none that ends
        before its cloud plan would and within the horizon)."""
        ks, caps, opens = self.open_buckets[j], self.caps[j], self.open_from[j]
        need, r = self.need[j], self.arrival[j]
        if caps.sum() < need:
            return math.inf, None
        pr = prices[ks]
        order = np.lexsort((ks, pr))  # cheapest first, ties by bucket: deterministic
        pr, cap, opens_o = pr[order], caps[order], opens[order]
        ends = np.unique(np.maximum(self.earliest_end[j], opens + 1))
        ends = ends[(ends <= self.last_slot) & (ends - r < self.cloud_cost[j])]
        best_v, best = math.inf, None
        for b0 in range(0, ends.size, CANDIDATE_BLOCK):
            if deadline is not None:
                deadline.check("pricing")
            C = ends[b0:b0 + CANDIDATE_BLOCK]
            if C[0] - r >= best_v:
                break  # every later completion costs more than the best plan already found
            units = cap[None, :] * (opens_o[None, :] < C[:, None])
            held = np.cumsum(units, axis=1)
            ok = held[:, -1] >= need
            if not ok.any():
                continue
            C, units, held = C[ok], units[ok], held[ok]
            last = np.argmax(held >= need, axis=1)  # the bucket that completes the need
            paid = np.cumsum(pr[None, :] * units, axis=1)
            rows, prev = np.arange(C.size), np.maximum(last - 1, 0)
            before = np.where(last > 0, held[rows, prev], 0.0)
            cost = (C - r) + np.where(last > 0, paid[rows, prev], 0.0) + pr[last] * (need - before)
            m = int(np.argmin(cost))
            if cost[m] < best_v:
                take = units[m, :last[m] + 1].copy()
                take[-1] = need - before[m]
                nz = take > 0
                best_v = float(cost[m])
                best = ("edge", int(C[m]), tuple(int(k) for k in ks[order[:last[m] + 1]][nz]),
                        tuple(float(u) for u in take[nz]))
        return best_v, best

    def price(self, pi: np.ndarray, buckets: np.ndarray | None = None, *, deadline: Any = None,
              ) -> tuple[list[tuple[Any, float]], float]:
        """Per job its cheapest plan (key, priced cost) at prices ``pi`` [types, buckets] and a bound on the
        float rounding error of their sum (``buckets`` is accepted and ignored: every plan is priced exactly).
        ``deadline``: checked per job and per block of completions (`BuildTimeLimit` when it passes)."""
        best, margin = [], 0.0
        gamma = 4.0 * _gamma(2 * self.horizon + 8)
        top = pi.max(axis=1) if pi.size else np.zeros(self.n_rows)
        for j in range(self.n_jobs):
            if deadline is not None:
                deadline.check("pricing")
            v, key = self._edge_plan(j, pi[self.row[j]], deadline)
            if self.cloud_cost[j] <= v:
                v, key = self.cloud_cost[j], ("cloud",)
            if key is None:
                raise ValueError(f"job {j} has no plan")
            best.append((key, float(v)))
            margin += gamma * (self.last_slot + self.need[j] * float(top[self.row[j]]))
        return best, margin

    def column(self, j: int, key: Any) -> tuple[float, np.ndarray, np.ndarray]:
        """Cost and capacity entries (row * buckets + bucket) of job j's plan ``key``."""
        if key[0] == "cloud":
            return float(self.cloud_cost[j]), np.zeros(0, dtype=np.int64), np.zeros(0)
        _, end, ks, units = key
        return (float(end - self.arrival[j]), self.row[j] * self.horizon + np.array(ks, dtype=np.int64),
                np.array(units, dtype=float))

    def span(self, j: int, key: Any) -> tuple[float, float]:
        """(first slot, one past the last) of job j's plan ``key``, for job orders (`edgeopt.core.lporder`): an edge
        plan from its first used bucket's earliest open slot to its completion, a cloud plan from the cloud's
        release to the completion its cost gives."""
        end = self.arrival[j] + self.column(j, key)[0]
        if key[0] == "cloud":
            return float(min(self.cloud_from[j], end - 1)), float(end)
        idx = np.searchsorted(self.open_buckets[j], np.array(key[2], dtype=np.int64))
        return float(self.open_from[j][idx].min()), float(end)


def relaxation(instance: Any) -> JobPlans:
    """The relaxation of the module docstring, deterministic in the instance."""
    return JobPlans(from_instance(instance))


def size(instance: Any) -> ModelSize:
    """The per-job plan arrays (one entry per open bucket) and the master's rows; column generation then adds
    plans only up to the size budget."""
    data = from_instance(instance)
    width, cutoff = _bucketing(data)
    K = math.ceil((cutoff or data.horizon) / width) + 1
    J, G = data.n_jobs, len(set(data.worker_type.tolist()))
    return ModelSize(J * K, J + G * K, 2 * J * K, note="single-job plans over the pooled type rows (config_jct)")


CONFIG_JCT = BoundMethod(
    name="config_jct",
    summary="Lagrangian of single-job plans (each job pays its last slot) over the pooled worker-type capacity "
            "rows of lp4_jct, prices by column generation",
    relax=relaxation,
    trivial=trivial_bound,
    step=lambda instance: 1.0,
    size=size,
    bound_of="total JCT sum_j (c_j - r_j) of MINLP (2) over schedules of every job",
)


def others_floors(data: ModelData, *, deadline: Any = None, prices: np.ndarray | None = None) -> np.ndarray | None:
    """Per job j, a lower bound on sum_{i != j} (c_i - r_i) over every complete schedule, from the plans'
    Lagrangian without job j's term: the prices stay valid for the other jobs alone (the capacity rows do not
    change), so L(pi) - (job j's cheapest priced plan) bounds their total JCT. At ``prices`` (e.g. a checked
    certificate's), else at those column generation finds within ``deadline``; rounded up (integer JCTs) after
    the float error of the subtraction is taken off. None when a job has no plan or the deadline passed before
    any prices were priced."""
    from edgeopt.core.colgen import column_generation, lagrangian
    from edgeopt.core.limits import BuildTimeLimit
    from edgeopt.core.lpbound import UNIT_ROUNDOFF, round_up

    if data.n_jobs == 0:
        return np.zeros(0)
    rel = JobPlans(data)
    if rel.empty_jobs():
        return None
    try:
        if prices is None:
            prices = column_generation(rel, deadline=deadline).prices
        pricing = lagrangian(rel, prices)
    except BuildTimeLimit:
        return None
    mins = np.array([v for _, v in pricing.best], dtype=float)
    raw = pricing.value - mins
    raw -= 4.0 * UNIT_ROUNDOFF * (abs(pricing.value) + np.abs(mins))
    return np.array([round_up(float(v), 1.0) for v in raw])
