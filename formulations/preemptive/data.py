"""What the exact models of the preemptive family read from an instance, as plain arrays.

Every model of this package (the MILP and CP-SAT models of MINLP (2), the ILP
(4), its LP relaxation and the dual (6)) is built from one `ModelData`, so
that the reading of the paper is written once (interpretations below) and the
models differ only in how they encode it.

Reading of Wang et al. (see also edgeopt/preemptive/__init__.py):

* Slots are 0-based; slot ``t`` is ``[t, t+1)``. A chunk may train on a worker
  of server ``s`` only in slots ``t >= r_j + Delta_js`` (2i); a job completes
  at ``c_j = last training slot + 1`` (2j) and its JCT is ``c_j - r_j`` (2).
* A chunk trains for a whole number of slots, the family's rounding rule
  ``p_j = chunk_slots(j, colocated=False)`` on any eligible worker (rate
  ``n_j`` of eq. (1) with ``zeta_j = 0``: every eligible worker has the same
  rate ``n_jsw = n_j``), and ``p_j^c = chunk_slots(j, colocated=True)`` on
  the cloud when the whole job (every chunk and every PS) is on the cloud
  (``zeta_j = 1``, (2g)/(2h)).
* Edge workers are individual machines; a chunk is dispatched to one worker
  and never moves (no migration: the paper dispatches a chunk once), preemption is allowed on
  edge workers. The cloud has unlimited workers and PSs and no preemption, so
  a cloud chunk trains in the contiguous slots ``r_j + Delta_jc, ...``: with
  no capacity there, starting it any later can only increase (2) and (3).
* PS (2e)/(2f): in every slot in which a job trains, it holds one PS on a
  server ``s`` with ``t >= r_j + Delta_js``; an edge server has ``ps`` PSs,
  the cloud unlimited ones. Identical PSs of one server are aggregated into a
  count (exact: any per-slot assignment of jobs to them is a matching).
* Fractional flow time (3) in slot units: a chunk trained in slots ``t`` with
  ``p`` slots in all contributes ``sum_t (t + 1 - r_j) / (D_j p)``: the
  paper's ``n_jsw / (E_j D_j B_j)`` is ``1 / (D_j p)`` once the chunk's
  training time is a whole number ``p`` of slots, and ``t + 1`` is the end of
  the 0-based slot ``t`` (the paper's 1-based slot index). Each chunk's
  weights sum to 1, which is what Lemma 1 (f <= JCT) needs.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class ModelData:
    """An instance of the preemptive family reduced to what the exact models need.

    Attributes:
        horizon: T; every slot used is in ``[0, T)``.
        arrival: r_j per job.
        chunks: D_j per job.
        p_edge: slots one chunk trains on a worker with zeta_j = 0 (edge, or cloud when not colocated).
        p_cloud: slots one chunk trains on the cloud when the whole job is there (zeta_j = 1).
        delay: Delta_js, shape [J, S] (slots).
        worker_server: server of each edge worker (global worker index k).
        worker_slot: index w of worker k within its server's ``workers`` list.
        worker_type: type of worker k.
        job_type: worker type each job asks for.
        ps_count: P_s per server (unused for the cloud, which has unlimited PSs).
        cloud: index of the cloud server, or None when the instance has none.
        deadline: optional per-job deadlines (see `with_upper_bound`).
    """

    horizon: int
    arrival: np.ndarray
    chunks: np.ndarray
    p_edge: np.ndarray
    p_cloud: np.ndarray
    delay: np.ndarray
    worker_server: np.ndarray
    worker_slot: np.ndarray
    worker_type: np.ndarray
    job_type: np.ndarray
    ps_count: np.ndarray
    cloud: int | None
    deadline: np.ndarray | None = None

    def end(self, j: int) -> int:
        """Slots of job j lie in [0, end(j)): the horizon, or a deadline no optimum exceeds."""
        if self.deadline is None:
            return self.horizon
        return int(min(self.horizon, self.deadline[j]))

    def earliest_jct(self, j: int) -> int:
        """A lower bound on c_j - r_j: the earliest any chunk of j can finish anywhere."""
        p = int(self.p_edge[j])
        opens = [self.first_slot(j, int(k)) + p for k in self.eligible[j]]
        if self.cloud is not None:
            opens.append(int(self.cloud_end(j, True)))
        return (min(opens) - int(self.arrival[j])) if opens else 0

    @property
    def n_jobs(self) -> int:
        return int(self.arrival.shape[0])

    @property
    def n_servers(self) -> int:
        return int(self.ps_count.shape[0])

    @property
    def n_workers(self) -> int:
        return int(self.worker_server.shape[0])

    @cached_property
    def eligible(self) -> list[np.ndarray]:
        """Edge workers k that may train job j (v_jsw = 1: the worker's type is the job's)."""
        return [np.flatnonzero(self.worker_type == self.job_type[j]) for j in range(self.n_jobs)]

    def first_slot(self, j: int, k: int) -> int:
        """Earliest slot job j may train on edge worker k (2i)."""
        return int(self.arrival[j] + self.delay[j, self.worker_server[k]])

    def cloud_start(self, j: int) -> int | None:
        """First slot of job j on the cloud (None without a cloud)."""
        if self.cloud is None:
            return None
        return int(self.arrival[j] + self.delay[j, self.cloud])

    def cloud_end(self, j: int, colocated: bool) -> int | None:
        """Completion of a cloud chunk of job j started as early as possible."""
        start = self.cloud_start(j)
        if start is None:
            return None
        return start + int(self.p_cloud[j] if colocated else self.p_edge[j])

    def ps_window(self, j: int, s: int) -> int:
        """Earliest slot at which a PS on server s may serve job j (2i)."""
        return int(self.arrival[j] + self.delay[j, s])

    @cached_property
    def edge_ps_servers(self) -> list[int]:
        return [s for s in range(self.n_servers) if s != self.cloud and self.ps_count[s] > 0]

    def identical_workers(self) -> list[list[int]]:
        """Classes of interchangeable edge workers: same server and type (so same release (2i), PSs and storage).

        Nothing in MINLP (2) tells two such workers apart, which the symmetry-breaking rows of the
        strengthened models rely on.
        """
        from formulations.strengthen import identical_classes

        return identical_classes(zip(self.worker_server.tolist(), self.worker_type.tolist(), strict=True))

    def chunk_list(self) -> list[tuple[int, int]]:
        """All chunks (j, d)."""
        return [(j, d) for j in range(self.n_jobs) for d in range(int(self.chunks[j]))]

    def cloud_flow(self, j: int, colocated: bool) -> float:
        """(3) of one chunk of job j trained on the cloud from its first slot: sum (t+1-r)/(D p)."""
        p = int(self.p_cloud[j] if colocated else self.p_edge[j])
        delta = int(self.delay[j, self.cloud]) if self.cloud is not None else 0
        # slots r+delta .. r+delta+p-1; (t+1-r) runs delta+1 .. delta+p; mean delta + (p+1)/2
        return (delta + (p + 1) / 2.0) / float(self.chunks[j])

    def edge_flow_coef(self, j: int, t: int) -> float:
        """Coefficient of one training slot t of a chunk of job j (zeta_j = 0) in (3)."""
        return (t + 1 - float(self.arrival[j])) / (float(self.chunks[j]) * float(self.p_edge[j]))


def from_instance(instance: Any, *, speed: float = 1.0) -> ModelData:
    """Read an `edgeopt.preemptive.Instance` into `ModelData`.

    ``speed`` scales every training rate (speed augmentation, Definition 1);
    the exact models of the paper are at speed 1. Processing times come from
    `Instance.chunk_slots`, the family's one rounding rule.

    Raises:
        InputError: when the instance has storage constraints (Sec. VI, (7b)),
            which these models do not encode.
    """
    from edgeopt.core import InputError

    servers = instance.servers
    jobs = instance.jobs
    if any(sv.storage_mb is not None for sv in servers) and any(jb.chunk_size_mb is not None for jb in jobs):
        raise InputError("instance.servers.storage_mb", "the exact models do not encode storage (7b); drop storage_mb")
    cloud = instance.cloud
    w_server, w_slot, w_type = [], [], []
    for s, srv in enumerate(servers):
        if srv.is_cloud:
            continue
        for w, typ in enumerate(srv.workers):
            w_server.append(s)
            w_slot.append(w)
            w_type.append(int(typ))
    J = len(jobs)
    return ModelData(
        horizon=int(instance.horizon),
        arrival=np.array([jb.arrival for jb in jobs], dtype=np.int64),
        chunks=np.array([jb.chunks for jb in jobs], dtype=np.int64),
        p_edge=np.array([instance.chunk_slots(j, False, speed) for j in range(J)], dtype=np.int64),
        p_cloud=np.array([instance.chunk_slots(j, True, speed) for j in range(J)], dtype=np.int64),
        delay=np.array([list(jb.upload_delay_slots) for jb in jobs], dtype=np.int64).reshape(J, len(servers)),
        worker_server=np.array(w_server, dtype=np.int64),
        worker_slot=np.array(w_slot, dtype=np.int64),
        worker_type=np.array(w_type, dtype=np.int64),
        job_type=np.array([int(jb.worker_type) for jb in jobs], dtype=np.int64),
        ps_count=np.array([0 if srv.is_cloud else int(srv.ps) for srv in servers], dtype=np.int64),
        cloud=cloud,
    )


def with_upper_bound(data: ModelData, upper_bound: float, others: np.ndarray | None = None) -> ModelData:
    """Per-job deadlines that keep every schedule of value at most ``upper_bound`` (>= OPT of (2)).

    In such a schedule c_j - r_j = value - sum_{i != j} (c_i - r_i) <= upper_bound -
    sum_{i != j} earliest_jct(i), so job j completes by r_j + that. Restricting job j's slots to
    [0, deadline_j) therefore leaves the optimum unchanged (and shrinks the time-indexed models).
    ``others[j]``, when given, is any other lower bound on sum_{i != j} (c_i - r_i) over all complete
    schedules (`formulations.preemptive.windows.others_floors`: the certified LP without job j); the larger
    of the two is used. With an ``upper_bound`` below the optimum the restricted model may be infeasible.
    """
    lb = np.array([data.earliest_jct(j) for j in range(data.n_jobs)], dtype=float)
    floor = lb.sum() - lb
    if others is not None:
        floor = np.maximum(floor, np.asarray(others, dtype=float))
    slack = float(upper_bound) - floor
    deadline = np.floor(data.arrival + slack + 1e-9).astype(np.int64)
    return dataclasses.replace(data, deadline=np.minimum(deadline, data.horizon))
