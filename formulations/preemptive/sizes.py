"""Sizes of the preemptive exact models, estimated before they are built (``SIZES`` in ``__init__``).

Both models are time-indexed per edge worker: the MILP has Y[j, k, t] for every eligible worker k
of job j and slot t from its first slot to the horizon (plus PS variables z[j, s, t]); the CP-SAT
model has one literal per chunk, eligible worker and slot. Counted without `with_upper_bound`'s
tightening (an upper estimate); ``*_size_of`` count prepared data, e.g. the model the per-job windows leave
(`edgeopt.core.limits.guard_built`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edgeopt.core import ModelSize


def _slots_of(data: Any) -> tuple[int, int, int]:
    """(worker slots sum_j sum_k (end - first slot), the same weighted by chunks, PS slots) of prepared data, each
    job's slots ending at ``data.end(j)`` (its window, when per-job windows cut it; the horizon otherwise)."""
    y = yc = z = 0
    for j in range(data.n_jobs):
        end = data.end(j)
        ks = data.eligible[j]
        if len(ks):
            first = data.arrival[j] + data.delay[j, data.worker_server[ks]]
            n = np.maximum(0, end - first)
            n = n[first + data.p_edge[j] <= end]
            y += int(n.sum())
            yc += int(n.sum()) * int(data.chunks[j])
        for s in data.edge_ps_servers:
            z += max(0, end - data.ps_window(j, s))
    return y, yc, z


def milp_size(instance: Any) -> ModelSize:
    """Variables, rows and nonzeros of the time-indexed MILP of MINLP (2)."""
    from formulations.preemptive.data import from_instance

    if not instance.jobs:
        return ModelSize(0, 0, 0, "no jobs")
    return milp_size_of(from_instance(instance))


def milp_size_of(data: Any) -> ModelSize:
    """`milp_size` counted on prepared data (the model the per-job windows leave, ``windows.py``)."""
    if not data.n_jobs:
        return ModelSize(0, 0, 0, "no jobs")
    y, _, z = _slots_of(data)
    n_ps = len(data.edge_ps_servers)
    return ModelSize(int(y + z), int(y + z), int(y * (4 + n_ps) + 3 * z),
                     f"{y:,} (job, worker, slot) variables over T = {int(data.horizon):,} slots")


def cpsat_size(instance: Any) -> ModelSize:
    """Variables, constraints and literals of the CP-SAT model (a literal per chunk, worker and slot)."""
    from formulations.preemptive.data import from_instance

    if not instance.jobs:
        return ModelSize(0, 0, 0, "no jobs")
    return cpsat_size_of(from_instance(instance))


def cpsat_size_of(data: Any) -> ModelSize:
    """`cpsat_size` counted on prepared data (the model the per-job windows leave, ``windows.py``)."""
    if not data.n_jobs:
        return ModelSize(0, 0, 0, "no jobs")
    _, yc, z = _slots_of(data)
    return ModelSize(int(yc + z), int(yc), int(3 * yc + 3 * z),
                     f"{yc:,} (chunk, worker, slot) literals over T = {int(data.horizon):,} slots")


SIZES = {"milp": milp_size, "cpsat": cpsat_size}
