"""Sizes of the preemptive exact models, estimated before they are built (``SIZES`` in ``__init__``).

Both models are time-indexed per edge worker: the MILP has Y[j, k, t] for every eligible worker k
of job j and slot t from its first slot to the horizon (plus PS variables z[j, s, t]); the CP-SAT
model has one literal per chunk, eligible worker and slot. Counted without `with_upper_bound`'s
tightening (an upper estimate).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edgeopt.core import ModelSize


def _slots(instance: Any) -> tuple[int, int, int]:
    """(worker slots sum_j sum_k (T - first slot), the same weighted by chunks, PS slots)."""
    from formulations.preemptive.data import from_instance

    data = from_instance(instance)
    T = data.horizon
    y = yc = z = 0
    for j in range(data.n_jobs):
        ks = data.eligible[j]
        if len(ks):
            first = data.arrival[j] + data.delay[j, data.worker_server[ks]]
            n = np.maximum(0, T - first)
            n = n[first + data.p_edge[j] <= T]
            y += int(n.sum())
            yc += int(n.sum()) * int(data.chunks[j])
        for s in data.edge_ps_servers:
            z += max(0, T - data.ps_window(j, s))
    return y, yc, z


def milp_size(instance: Any) -> ModelSize:
    """Variables, rows and nonzeros of the time-indexed MILP of MINLP (2)."""
    if not instance.jobs:
        return ModelSize(0, 0, 0, "no jobs")
    y, _, z = _slots(instance)
    n_ps = sum(1 for s in instance.servers if not s.is_cloud and s.ps > 0)
    return ModelSize(int(y + z), int(y + z), int(y * (4 + n_ps) + 3 * z),
                     f"{y:,} (job, worker, slot) variables over T = {int(instance.horizon):,} slots")


def cpsat_size(instance: Any) -> ModelSize:
    """Variables, constraints and literals of the CP-SAT model (a literal per chunk, worker and slot)."""
    if not instance.jobs:
        return ModelSize(0, 0, 0, "no jobs")
    _, yc, z = _slots(instance)
    return ModelSize(int(yc + z), int(yc), int(3 * yc + 3 * z),
                     f"{yc:,} (chunk, worker, slot) literals over T = {int(instance.horizon):,} slots")


SIZES = {"milp": milp_size, "cpsat": cpsat_size}
