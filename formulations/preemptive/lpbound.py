"""A certified lower bound on MINLP (2) (total JCT) that scales to the paper presets.

Method ``lp4_jct``: the aggregated LP of ILP (4) in its JCT form (``lp4_large.build_lp4_large`` with
``pool=True, jct=True``; its module docstring proves it a relaxation: worker groups pooled per type,
PS rows (4c)/(4d) dropped, buckets charged at their earliest slot, per job a column
M_j >= F_j + (P_j - 1)/2 with the job's own chunk length P_j (P_cloud when it is wholly colocated on the
cloud, zeta_j = 1, P_edge otherwise) and M_j >= the job's earliest possible JCT in its mode: wholly
colocated on the cloud, on the edge alone, or with some chunk on the cloud at the edge rate (then no earlier
than the cloud's release + P_edge); objective sum_j M_j).
Two choices are made here, deterministically from the instance:

* the bucketing: one-slot buckets up to the cutoff ``max_j (cloud start + P_j^cloud) + 1`` (every
  job can finish on the unlimited cloud by then, so that is where an optimum's work lies), then one
  tail bucket (any cutoff keeps the LP a relaxation; this one only sets its resolution); without a
  cloud, buckets of ``ceil(T / 2000)`` slots over the horizon;
* M_j gets the finite upper bound T (every job of a schedule completes within the horizon, so
  c_j - r_j <= T), so that every column is bounded and any dual vector certifies a finite number.

The certificate is the LP's row duals; `edgeopt.core.lpbound.dual_bound` re-derives the bound by
weak duality without a solver. Integer JCTs: the bound is rounded up. Floor: the trivial bound
sum_j `ModelData.earliest_jct` (each job alone).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from edgeopt.core.limits import ModelSize
from edgeopt.core.lowerbound import BoundMethod
from edgeopt.core.lpbound import LinearProgram
from formulations.preemptive.data import ModelData, from_instance
from formulations.preemptive.lp4_large import build_lp4_large

#: Most one-slot buckets before the horizon is bucketed coarser (no cloud).
MAX_BUCKETS = 2000


def _bucketing(data: ModelData) -> tuple[int, int | None]:
    """(bucket width, cutoff) for the instance (module docstring)."""
    T = int(data.horizon)
    if data.cloud is not None and data.n_jobs:
        cutoff = min(T, max(int(data.cloud_end(j, True)) for j in range(data.n_jobs)) + 1)
        return max(1, math.ceil(cutoff / MAX_BUCKETS)), cutoff
    return max(1, math.ceil(T / MAX_BUCKETS)), None


def relaxation(instance: Any) -> LinearProgram:
    """The LP (module docstring), deterministic in the instance."""
    return relaxation_of(from_instance(instance))[0]


def relaxation_of(data: ModelData) -> tuple[LinearProgram, np.ndarray]:
    """The LP of `relaxation` built from model data (e.g. with per-job deadlines), and the job of each column."""
    bucket, cutoff = _bucketing(data)
    lp = build_lp4_large(data, bucket=bucket, pool=True, cutoff=cutoff, jct=True)
    upper = np.where(np.isfinite(lp.col_upper), lp.col_upper, float(data.horizon))
    return LinearProgram(lp.cost, lp.A.tocsr(), lp.row_lower, lp.row_upper, lp.col_lower, upper), lp.job_of_col


def trivial_bound(instance: Any) -> float:
    """sum_j `ModelData.earliest_jct`: each job alone (a chunk ends P_edge slots after its edge worker's
    release, or P_cloud after the cloud's when the whole job is there)."""
    data = from_instance(instance)
    total = 0.0
    for j in range(data.n_jobs):
        if len(data.eligible[j]) == 0 and data.cloud is None:
            return -math.inf
        total += data.earliest_jct(j)
    return float(total)


def size(instance: Any) -> ModelSize:
    """Columns per job: one per (its type's pooled group, bucket) and per cloud bucket, 3 nonzeros each, plus
    zeta_j, mu_j and M_j; the mixed-mode rows add one nonzero per cloud column."""
    data = from_instance(instance)
    bucket, cutoff = _bucketing(data)
    K = math.ceil((cutoff or data.horizon) / bucket) + 1
    J = data.n_jobs
    cols = J * (2 * K + 3)
    return ModelSize(cols, J * (K + 4) + K * len(set(data.worker_type.tolist())), 3 * cols + 2 * J * K,
                     note="aggregated LP of (4), one-slot buckets up to the cloud cutoff")


LP4_JCT = BoundMethod(
    name="lp4_jct",
    summary="aggregated LP relaxation of ILP (4) in JCT form (groups pooled per type, PS rows dropped, "
            "one-slot buckets to the cloud cutoff), certified by its row duals",
    relax=relaxation,
    trivial=trivial_bound,
    step=lambda instance: 1.0,
    size=size,
    bound_of="total JCT sum_j (c_j - r_j) of MINLP (2) over schedules of every job",
)
