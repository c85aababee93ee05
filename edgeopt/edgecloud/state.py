"""Shared bookkeeping of the edgecloud algorithms: one capacity ledger for workers and PSs.

The ledger (`edgeopt.core.CapacityLedger`) has one resource per worker type
(indices ``0..U-1``) and one per PS type (``U..U+V-1``) on every server, so
``usage[s, u, t]`` is f_su(t) and ``usage[s, U + v, t]`` is g_sv(t) of the paper.
"""

from __future__ import annotations

import numpy as np

from edgeopt.core import CapacityLedger
from edgeopt.edgecloud.instance import Instance, Job
from edgeopt.edgecloud.schedule import JobRun


def make_ledger(instance: Instance) -> CapacityLedger:
    """An empty ledger ``[S, U + V, T]`` with capacities W_su and P_sv."""
    cap = np.concatenate([instance.W(), instance.P()], axis=1)
    names = [f"worker{u}" for u in range(instance.n_worker_types)] + [
        f"ps{v}" for v in range(instance.n_ps_types)
    ]
    return CapacityLedger(cap, instance.horizon, names)


def reserve_run(ledger: CapacityLedger, instance: Instance, job: Job, run: JobRun, sign: int = 1) -> None:
    """Add (``sign=1``) or remove (``sign=-1``) a run's workers and PS over ``[start, end)``."""
    U = instance.n_worker_types
    usage = ledger.usage
    for seg in run.pieces():
        for s, c in seg.workers.items():
            usage[s, job.worker_type, seg.start : seg.end] += sign * c
        usage[seg.ps_server, U + job.ps_type, seg.start : seg.end] += sign
    if sign > 0:  # only the two resources the run takes can have gone over
        for seg in run.pieces():
            rows = sorted({*seg.workers, seg.ps_server})
            if any(np.any(usage[rows, r, seg.start : seg.end] > ledger.capacity[rows, r, None] + 1e-9)
                   for r in (job.worker_type, U + job.ps_type)):
                raise RuntimeError(f"job {job.id}: reservation exceeds capacity (an algorithm bug)")


def free_workers(ledger: CapacityLedger, instance: Instance, job: Job, lo: int, hi: int) -> np.ndarray:
    """``[S, hi - lo]``: free type-u_j workers per server and slot."""
    u = job.worker_type
    return ledger.capacity[:, u, None] - ledger.usage[:, u, lo:hi]


def free_ps(ledger: CapacityLedger, instance: Instance, job: Job, lo: int, hi: int) -> np.ndarray:
    """``[S, hi - lo]``: free type-v_j PSs per server and slot."""
    r = instance.n_worker_types + job.ps_type
    return ledger.capacity[:, r, None] - ledger.usage[:, r, lo:hi]
