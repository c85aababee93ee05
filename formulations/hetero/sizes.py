"""Sizes of the hetero exact models, estimated before they are built (``SIZES`` in ``__init__``).

Counted from the same index sets `milp.build_milp` and `cpsat.build_cpsat` create, without
creating them: start variables per (job, configuration[, host]) over the window, the per-slot
occupancy of distributed jobs (j, h, r, t), and the capacity rows (h, r, t). Within a factor of
about 2 of the built model (tests/test_reliability_limits.py compares them on small instances).
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import ModelSize
from edgeopt.core.limits import DEFAULT_MAX_NONZEROS
from formulations.hetero.data import colocated_hosts

#: Above this many nonzeros the quick estimate is returned as it is (it is refused by any sane budget).
QUICK_LIMIT = 4 * DEFAULT_MAX_NONZEROS

#: prepare() alone holds the free capacity [H, R, T] as float64: refuse before allocating more than this.
MAX_PREPARE_CELLS = 5 * 10**7


def _quick(instance: Any) -> tuple[int, int, int, int]:
    H, R, L = len(instance.servers), len(instance.resources), int(instance.horizon)
    return H, R, L, len(instance.jobs)


def milp_size(instance: Any) -> ModelSize:
    """Variables, rows and nonzeros of the time-indexed MILP of program (2)/(15)."""
    from formulations.hetero.data import prepare

    H, R, L, J = _quick(instance)
    if J == 0:
        return ModelSize(0, 0, 0, "no jobs")
    # Quick estimate first, without enumerating configurations (prepare() computes a duration for
    # every (worker type, PS type, colocation, worker count): ~10**6 of them at the paper preset,
    # minutes): every job that may spread over two servers (D_j >= 2, H >= 2) holds H * R * T
    # occupancy variables, each in a row with about M + P + 3 nonzeros.
    spread = sum(1 for j in instance.jobs if j.chunks >= 2) if H >= 2 else 0
    quick = ModelSize(spread * H * R * L + H * R * L, spread * H * R * L + H * R * L,
                      spread * H * R * L * (len(instance.worker_types) + len(instance.ps_types) + 3) + H * R * L,
                      f"{spread} jobs that may spread over servers hold jobs x servers x resources x T "
                      f"(T = {L:,} slots) occupancy variables")
    if quick.nonzeros > QUICK_LIMIT or H * R * L > MAX_PREPARE_CELLS:
        return quick
    return milp_size_of(prepare(instance))


def milp_size_of(data: Any) -> ModelSize:
    """`milp_size` counted on prepared model data (also a large-neighbourhood window's, ``lns.py``, and the model
    reduced-cost fixing leaves, ``fixing.py``)."""
    H, R, L, J = data.n_servers, data.n_resources, data.length, len(data.jobs)
    if J == 0:
        return ModelSize(0, 0, 0, "no jobs")
    M, P = data.n_worker_types, data.n_ps_types
    nnz = var = rows = 0
    n_dist = 0
    for jd in data.jobs:
        dist = False
        for k, cf in enumerate(jd.configs):
            # reduced-cost fixing (JobData.allowed) removes starts
            n_st = max(0, L - cf.duration - jd.earliest + 1) if jd.allowed is None else len(jd.config_starts(k, L))
            if cf.colocated:
                hosts = colocated_hosts(data, cf).size
                var += n_st * hosts
                nnz += n_st * hosts * (1 + 2 * R * cf.duration)
            elif n_st:
                dist = True
                var += n_st
                nnz += n_st * (1 + cf.duration * (1 + R))
        n_dist += dist
    occ = n_dist * H * R * L
    var += occ + n_dist * L + n_dist * H * (M + P + 1)
    nnz += occ * (M + P + 3) + n_dist * L
    rows += J + n_dist * L + occ + H * R * L + R * L
    return ModelSize(int(var), int(rows), int(nnz),
                     f"{n_dist} jobs with distributed configurations hold {occ:,} occupancy variables "
                     f"(jobs x servers x resources x T = {L:,} slots)")


def cpsat_size(instance: Any) -> ModelSize:
    """Variables, constraints and literals of the CP-SAT model (no time index: configurations x servers)."""
    from formulations.hetero.data import prepare

    H, R, L, J = _quick(instance)
    if J == 0:
        return ModelSize(0, 0, 0, "no jobs")
    if H * R * L > MAX_PREPARE_CELLS:
        return ModelSize(H * R * L, 0, H * R * L, f"T = {L:,} slots: the model data alone holds H * R * T values")
    # Quick estimate: the candidate configurations (worker type, PS type, colocation, N <= D_j) that
    # prepare() enumerates, each with a duration to compute, and each a choice literal in the model.
    M, P = len(instance.worker_types), max(1, len(instance.ps_types))
    candidates = sum(M * P * 2 * j.chunks for j in instance.jobs)
    if candidates * (6 + R * H) > QUICK_LIMIT:
        return ModelSize(candidates, candidates, candidates * (6 + R * H),
                         f"{candidates:,} candidate configurations (worker type x PS type x colocation x N <= D_j)")
    data = prepare(instance)
    M, P = data.n_worker_types, data.n_ps_types
    configs = sum(len(jd.configs) for jd in data.jobs)
    var = configs * 2 + J * (H * (M + P) * 2 + M + P + 4)
    nnz = configs * (6 + R * H) + J * H * (M + P) * (R + 4)
    rows = configs + J * (H * 4 + M + P + 4) + H * R
    return ModelSize(int(var), int(rows), int(nnz), f"{configs:,} configurations over {H} servers")


SIZES = {"milp": milp_size, "cpsat": cpsat_size}
