"""What the exact models of Zhou et al.'s programs (2), (7), (12)/(13) and (15) read, as plain arrays.

Program (2) is nonlinear through the per-worker rate rho (eq. 1 for the PS
architecture, eq. 14 for Ring-AllReduce), which depends on the worker type m,
the PS type p, the colocation flag q_j and (Ring-AllReduce only) the worker
count Phi, and through the products x_jt * d_j (2h, 7b). Every exact model
here linearises it the same way: a job picks one *configuration*

    k = (m, p, q, N)  ->  duration d_k = the least d with d * N * rho(m, p, q, N) >= E_j D_j K_j   (2f)

with 1 <= N <= D_j (2g). The duration comes from the family's own rule (the
one the validator checks), so a model and the validator never round
differently. Fixing d to the least duration loses no optimum: a schedule that
keeps its workers and PSs longer than d_k finishes later and uses more
capacity, so shortening it keeps it feasible and lowers its objective.

A *window* generalises the horizon: program (2)/(15) uses slots [0, T) with
each job's arrival as its earliest start (2j); the batch problem (7) of round
i uses tau_i slots, ignores arrivals (they are all in the past, (7) does not
list (2j)) and may see only the capacity left free by earlier rounds.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class Config:
    """One way to run a job: ``workers`` of type ``worker_type``, PS type ``ps_type`` (-1 for
    Ring-AllReduce), ``colocated`` (q_j) or not, taking ``duration`` slots."""

    worker_type: int
    ps_type: int
    colocated: bool
    workers: int
    duration: int


@dataclasses.dataclass(frozen=True)
class JobData:
    """One job as the models see it.

    Attributes:
        index: position in ``instance.jobs``.
        job_id: the job's ``id``.
        weight: w_j.
        earliest: first allowed start, relative to the window (a_j - t0 for (2), 0 for (7)).
        max_workers: D_j (2g).
        configs: the configurations that fit in the window somewhere.
        allowed: per configuration index k, ``[length]`` which start slots the model may use (None: all;
            reduced-cost fixing, ``fixing.py``, removes the starts no better schedule uses).
    """

    index: int
    job_id: int
    weight: float
    earliest: int
    max_workers: int
    configs: tuple[Config, ...]
    allowed: dict[int, np.ndarray] | None = dataclasses.field(default=None, compare=False)

    @property
    def durations(self) -> list[int]:
        return sorted({c.duration for c in self.configs})

    def starts(self, duration: int, length: int) -> range:
        """Start slots (relative) of a run of ``duration`` slots that completes inside the window."""
        return range(self.earliest, length - duration + 1)

    def config_starts(self, k: int, length: int) -> range | list[int]:
        """Start slots of configuration ``k`` that the model may use: `starts`, less what `allowed` removes."""
        span = self.starts(self.configs[k].duration, length)
        if self.allowed is None or k not in self.allowed:
            return span
        keep = self.allowed[k]
        return [t for t in span if keep[t]]


@dataclasses.dataclass(frozen=True)
class ModelData:
    """An instance (or a batch of it) as arrays.

    Attributes:
        ring: Ring-AllReduce (program (15)) instead of PS (program (2)).
        t0: absolute slot of the window's first slot.
        length: number of slots in the window.
        capacity: ``[H, R]`` C_h^r.
        free: ``[H, R, length]`` capacity available per slot (C_h^r unless earlier rounds hold some).
        worker_demand: ``[M, R]`` e_m^r.  ps_demand: ``[P, R]`` z_p^r (``[0, R]`` for Ring-AllReduce).
        worker_bw: ``[M]`` b_m.  ps_bw: ``[P]`` B_p.
        worker_cap: ``[H, M]`` most type-m workers server h can ever hold.
        ps_cap: ``[H, P]`` most type-p PSs server h can ever hold.
        jobs: the jobs of the window.
    """

    ring: bool
    t0: int
    length: int
    capacity: np.ndarray
    free: np.ndarray
    worker_demand: np.ndarray
    ps_demand: np.ndarray
    worker_bw: np.ndarray
    ps_bw: np.ndarray
    worker_cap: np.ndarray
    ps_cap: np.ndarray
    jobs: tuple[JobData, ...]

    @property
    def n_servers(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def n_resources(self) -> int:
        return int(self.capacity.shape[1])

    @property
    def n_worker_types(self) -> int:
        return int(self.worker_demand.shape[0])

    @property
    def n_ps_types(self) -> int:
        return int(self.ps_demand.shape[0])

    def unschedulable(self) -> list[int]:
        """Job ids with no configuration that fits the window (program (2) is then infeasible)."""
        return [jd.job_id for jd in self.jobs if not jd.configs]


def colocated_load(data: ModelData, cf: Any) -> np.ndarray:
    """``[R]`` load of a colocated configuration on its host: N_k workers and one PS."""
    load = cf.workers * data.worker_demand[cf.worker_type]
    if not data.ring:
        load = load + data.ps_demand[cf.ps_type]
    return load


def colocated_hosts(data: ModelData, cf: Any) -> np.ndarray:
    """The servers (indices) whose capacity holds colocated configuration ``cf`` (`colocated_load`): its hosts in
    the MILP, one start variable each."""
    return np.flatnonzero(np.all(colocated_load(data, cf)[None, :] <= data.capacity + 1e-9, axis=1))


def most_copies(capacity: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """``[H, K]``: how many units of each demand vector ``demand [K, R]`` fit in ``capacity [H, R]``."""
    cap = np.asarray(capacity, dtype=float)[:, None, :]
    dem = np.asarray(demand, dtype=float)[None, :, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(dem > 0, np.floor(cap / np.where(dem > 0, dem, 1.0) + 1e-9), np.inf)
    out = q.min(axis=2)
    return np.where(np.isfinite(out), out, 10**6).astype(np.int64)


def instance_arrays(instance: Any) -> dict[str, Any]:
    """Capacities, demands and bandwidths of ``instance`` as numpy arrays."""
    ring = instance.architecture == "ring_allreduce"
    return {
        "ring": ring,
        "capacity": instance.capacity,
        "worker_demand": instance.worker_demand,
        "ps_demand": instance.ps_demand,
        "worker_bw": np.array([t.bandwidth_mbps for t in instance.worker_types], dtype=float),
        "ps_bw": np.array([t.bandwidth_mbps for t in instance.ps_types], dtype=float),
    }


def duration_slots(instance: Any, j: int, worker_type: int, ps_type: int, colocated: bool, workers: int) -> int:
    """d_k: the family's duration rule (delegates so that the validator and the models agree)."""
    from edgeopt.hetero.instance import min_duration

    p = None if ps_type < 0 else ps_type
    return int(min_duration(instance, instance.jobs[j], worker_type, p, colocated, workers))


def prepare(
    instance: Any,
    *,
    jobs: Sequence[int] | None = None,
    window: tuple[int, int] | None = None,
    free: np.ndarray | None = None,
    honor_arrival: bool = True,
    colocated: bool | None = None,
) -> ModelData:
    """Reduce ``instance`` to `ModelData`.

    Args:
        jobs: indices into ``instance.jobs`` to keep (default all).
        window: ``(t0, length)`` (default ``(0, horizon)``).
        free: ``[H, R, length]`` capacity available per slot (default C_h^r throughout).
        honor_arrival: start >= a_j (2j); off for the batch problem (7).
        colocated: keep only configurations with this q_j (None: both), for (13)'s two cases.
    """
    arr = instance_arrays(instance)
    T = int(instance.horizon)
    t0, length = window if window is not None else (0, T)
    cap = np.asarray(arr["capacity"], dtype=float)
    H, R = cap.shape
    if free is None:
        free = np.repeat(cap[:, :, None], length, axis=2)
    free = np.asarray(free, dtype=float)
    if free.shape != (H, R, length):
        raise ValueError(f"free must have shape {(H, R, length)}, got {free.shape}")
    ring = bool(arr["ring"])
    e = np.asarray(arr["worker_demand"], dtype=float)
    z = np.asarray(arr["ps_demand"], dtype=float) if not ring else np.zeros((0, R))
    b = np.asarray(arr["worker_bw"], dtype=float)
    B = np.asarray(arr["ps_bw"], dtype=float) if not ring else np.zeros(0)
    wcap = most_copies(cap, e)
    pcap = most_copies(cap, z) if not ring else np.zeros((H, 0), dtype=np.int64)
    keep = range(len(instance.jobs)) if jobs is None else jobs
    out = []
    for j in keep:
        job = instance.jobs[j]
        earliest = max(0, int(job.arrival) - t0) if honor_arrival else 0
        D = int(job.chunks)
        configs = []
        ps_types = [-1] if ring else range(len(z))
        for m in range(len(e)):
            for p in ps_types:
                for q in (True, False):
                    if colocated is not None and q != colocated:
                        continue
                    for n in range(1, D + 1):
                        if not _may_fit(q, n, m, p, wcap, pcap, ring):
                            continue
                        d = duration_slots(instance, j, m, p, q, n)
                        if d >= 1 and earliest + d <= length:
                            configs.append(Config(m, p, q, n, d))
        out.append(
            JobData(
                index=j,
                job_id=int(getattr(job, "id", j)),
                weight=float(job.weight),
                earliest=earliest,
                max_workers=D,
                configs=tuple(configs),
            )
        )
    return ModelData(
        ring=ring,
        t0=int(t0),
        length=int(length),
        capacity=cap,
        free=free,
        worker_demand=e,
        ps_demand=z,
        worker_bw=b,
        ps_bw=B,
        worker_cap=wcap,
        ps_cap=pcap,
        jobs=tuple(out),
    )


def _may_fit(q: bool, n: int, m: int, p: int, wcap: np.ndarray, pcap: np.ndarray, ring: bool) -> bool:
    """A necessary condition for configuration (m, p, q, n) to fit the servers' nominal capacity.

    Only prunes configurations no schedule can use; the models enforce the rest.
    """
    if q:
        # all n workers (and >= 1 PS) on one server; whether both fit together is left to the model
        ok = wcap[:, m] >= n
        if not ring:
            ok &= pcap[:, p] >= 1
        return bool(ok.any())
    if wcap[:, m].sum() < n:
        return False
    if ring:
        # workers on at least two servers
        return n >= 2 and int((wcap[:, m] > 0).sum()) >= 2
    return bool((pcap[:, p] >= 1).any()) and int(((wcap[:, m] > 0) | (pcap[:, p] >= 1)).sum()) >= 2


def most_fitting_workers(q: bool, m: int, p: int, wcap: np.ndarray, pcap: np.ndarray, ring: bool) -> tuple[int, int]:
    """(top, least): configuration (m, p, q, N) passes `_may_fit` exactly for least <= N <= top (top 0: for no N).

    `_may_fit` is monotone in N: colocated, some server must hold N type-m workers (and, with PSs, a type-p PS),
    so N is at most the largest such server's count; distributed, the servers together must hold N workers,
    and the rest of its test does not depend on N except Ring-AllReduce's N >= 2."""
    if q:
        hosts = wcap[:, m] if ring else wcap[:, m][pcap[:, p] >= 1]
        return (int(hosts.max()) if hosts.size else 0), 1
    top = int(wcap[:, m].sum())
    return (top if _may_fit(False, max(top, 1), m, p, wcap, pcap, ring) else 0), (2 if ring else 1)


def ps_bound(data: ModelData, jd: JobData, h: int, p: int) -> int:
    """Most type-p PSs of job ``jd`` on server h that an optimal schedule needs.

    Dominance: on a server holding PSs, (2i) and (2e) only bound s_jhp from below, by
    max(1, ceil(b_m * (workers elsewhere) / B_p)) <= max(1, ceil(D_j max_m b_m / B_p)). Lowering s_jhp
    to that value keeps the set of used servers (so q_j and the rate), frees capacity and lowers any
    resource cost with prices >= 0, so no objective of (2), (7) or (12) needs more PSs.
    """
    need = max(1, math.ceil(jd.max_workers * float(data.worker_bw.max(initial=0.0)) / float(data.ps_bw[p]) - 1e-9))
    return int(min(int(data.ps_cap[h, p]), need))


def int_scale(values: np.ndarray, *, what: str, max_power: int = 6) -> int:
    """Smallest power of ten that makes every value an integer (CP-SAT needs integers)."""
    vals = np.asarray(values, dtype=float).ravel()
    for k in range(max_power + 1):
        s = 10**k
        scaled = vals * s
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return s
    raise ValueError(f"{what}: values are not multiples of 1e-{max_power}; CP-SAT needs integer data")


def ceil_div(a: float, b: float) -> int:
    return math.ceil(a / b - 1e-12)


def identical_servers(data: ModelData) -> list[list[int]]:
    """Classes of interchangeable servers: equal capacity, free profile and per-type worker / PS limits.

    Nothing else in program (2)/(15) depends on a server's identity, which is what the symmetry-breaking
    rows of the strengthened models rely on.
    """
    from formulations.strengthen import identical_classes

    keys = [(data.capacity[h].tobytes(), data.free[h].tobytes(), data.worker_cap[h].tobytes(),
             data.ps_cap[h].tobytes()) for h in range(data.n_servers)]
    return identical_classes(keys)
