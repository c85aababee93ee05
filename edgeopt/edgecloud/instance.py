"""Instances of She et al.'s edge-cloud PS scheduling problem (MINLP (2)) and their generators.

Model (Sec. III). Servers ``s`` (edge servers and one remote cloud) hold ``W_su``
workers of each worker type ``u`` and ``P_sv`` parameter servers (PSs) of each
PS type ``v``. Job ``j`` arrives at ``a_j`` (slot), fixes its worker type ``u_j``
and PS type ``v_j``, and has ``E_j`` epochs over ``D_j`` data chunks of ``M_j``
mini-batches each: ``E_j * D_j * M_j`` mini-batch steps in total. A worker of
``j`` trains ``p_j`` mini-batches per slot, eq. (1):

    p_j = 1 / (n_j + H_j + 2 k_j / B_j)   if the job is spread (xi_j = 0)
    p_j = 1 / (n_j + H_j)                 if all workers and the PS are on one server (xi_j = 1)

Units, as stored (field names carry them):

* ``worker_time_slots`` n_j and ``ps_time_slots`` H_j: slots per mini-batch.
* ``gradient_size_mb`` k_j in megabytes, ``bandwidth_mbps`` B_j in megabits per
  second; the push+pull time ``2 k_j / B_j`` is ``2 * 8 * k_j / B_j`` seconds,
  i.e. ``16 k_j / (B_j * slot_seconds)`` slots (a megabyte is 8 megabits).
* ``upload_delay_slots[s]`` Delta_js: slots before job ``j``'s data reach server
  ``s``; server ``s`` may host a worker or the PS of ``j`` only in slots
  ``t >= a_j + Delta_js`` (2i).

Duration. Workers stay fixed while a job runs (2c, 2d), so with ``w`` workers
(2e) reads ``w * (c_j - h_j) * p_j >= E_j D_j M_j`` and the shortest run is

    d_j(w, xi) = ceil(E_j D_j M_j / (p_j(xi) * w))   slots            (`duration_slots`)

(computed in float64 as ``ceil(E*D*M*(n+H+comm)/w - 1e-9)``, at least 1). Every
module of the family (validator, online algorithm, baselines) and both exact
models use this one function, so nobody rounds differently.

Interpretations of the generator ranges (Sec. VI) are written in `generate` and `paper_instance`.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
import pydantic
from pydantic import Field

from edgeopt.core import InputError
from edgeopt.core import bounds as B

#: Tolerance subtracted before the ceiling of a duration, so that an exact
#: integer quotient computed in floating point is not rounded up.
DURATION_EPS = 1e-9


class Server(pydantic.BaseModel):
    """One server: an edge server or the cloud.

    Attributes:
        is_cloud: whether this is the remote cloud (only informative: the cloud
            differs from edge servers through its capacities and upload delays).
        workers: ``W_su`` for every worker type ``u`` (length U).
        ps: ``P_sv`` for every PS type ``v`` (length V).
    """

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    is_cloud: bool = False
    workers: list[Annotated[int, Field(le=B.MAX_COUNT)]] = Field(min_length=1)
    ps: list[Annotated[int, Field(le=B.MAX_COUNT)]] = Field(min_length=1)

    @pydantic.field_validator("workers", "ps")
    @classmethod
    def _non_negative(cls, v: list[int]) -> list[int]:
        for i, x in enumerate(v):
            if x < 0:
                raise ValueError(f"entry {i} is {x}, must be >= 0")
        return v


class Job(pydantic.BaseModel):
    """One ML training job (Table I's notation in brackets)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    id: int = Field(ge=0, le=B.MAX_JOBS, description="job index, equal to its position in `jobs`")
    arrival: int = Field(ge=0, le=B.MAX_HORIZON, description="a_j, slot of arrival (< horizon)")
    worker_type: int = Field(ge=0, le=B.MAX_COUNT, description="u_j, 0-based worker type")
    ps_type: int = Field(ge=0, le=B.MAX_COUNT, description="v_j, 0-based PS type")
    epochs: int = Field(ge=1, le=B.MAX_COUNT, description="E_j")
    chunks: int = Field(ge=1, le=B.MAX_COUNT, description="D_j, data chunks; at most D_j workers (2a)")
    minibatches_per_chunk: int = Field(ge=1, le=B.MAX_COUNT, description="M_j")
    worker_time_slots: float = Field(gt=0, le=B.MAX_SLOTS_PER_STEP, description="n_j, slots a worker needs per mini-batch")
    ps_time_slots: float = Field(ge=0, le=B.MAX_SLOTS_PER_STEP, description="H_j, slots the PS needs per mini-batch update")
    gradient_size_mb: float = Field(ge=0, le=B.MAX_MB, description="k_j, gradient/parameter size in MB")
    bandwidth_mbps: float = Field(ge=B.MIN_MBPS, le=B.MAX_MBPS, description="B_j, worker-PS bandwidth in Mbit/s")
    upload_delay_slots: list[Annotated[int, Field(le=B.MAX_HORIZON)]] = Field(description="Delta_js for every server s")

    @pydantic.field_validator("upload_delay_slots")
    @classmethod
    def _delays(cls, v: list[int]) -> list[int]:
        for i, x in enumerate(v):
            if x < 0:
                raise ValueError(f"entry {i} is {x}, must be >= 0")
        return v

    @pydantic.field_validator("worker_time_slots", "ps_time_slots", "gradient_size_mb", "bandwidth_mbps")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be finite")
        return v

    @property
    def steps(self) -> int:
        """E_j * D_j * M_j: mini-batch steps the job needs in total (RHS of 2e)."""
        return self.epochs * self.chunks * self.minibatches_per_chunk


class Instance(pydantic.BaseModel):
    """An edgecloud instance: servers (edge + cloud), jobs, horizon ``T`` in slots.

    Slots are 0-based; a job using slots ``start .. end-1`` completes at ``end``
    and ``end <= horizon``.
    """

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    family: Literal["edgecloud"] = "edgecloud"
    horizon: int = Field(ge=1, le=B.MAX_HORIZON, description="T, number of slots")
    slot_seconds: float = Field(ge=B.MIN_SLOT_SECONDS, le=B.MAX_SLOT_SECONDS, description="length of one slot in seconds (3600 in Sec. VI)")
    servers: list[Server] = Field(min_length=1, max_length=B.MAX_SERVERS)
    jobs: list[Job] = Field(default_factory=list, max_length=B.MAX_JOBS)

    @pydantic.model_validator(mode="after")
    def _shapes(self) -> Instance:
        U = len(self.servers[0].workers)
        V = len(self.servers[0].ps)
        for s, srv in enumerate(self.servers):
            if len(srv.workers) != U:
                raise ValueError(f"servers.{s}.workers: has {len(srv.workers)} types, server 0 has {U}")
            if len(srv.ps) != V:
                raise ValueError(f"servers.{s}.ps: has {len(srv.ps)} types, server 0 has {V}")
        S = len(self.servers)
        for k, job in enumerate(self.jobs):
            if job.id != k:
                raise ValueError(f"jobs.{k}.id: is {job.id}, must equal its position {k}")
            if job.arrival >= self.horizon:
                raise ValueError(f"jobs.{k}.arrival: {job.arrival} is not inside the horizon (must be < {self.horizon})")
            if job.worker_type >= U:
                raise ValueError(f"jobs.{k}.worker_type: {job.worker_type} out of range [0, {U})")
            if job.ps_type >= V:
                raise ValueError(f"jobs.{k}.ps_type: {job.ps_type} out of range [0, {V})")
            if len(job.upload_delay_slots) != S:
                raise ValueError(
                    f"jobs.{k}.upload_delay_slots: has {len(job.upload_delay_slots)} entries, "
                    f"there are {S} servers"
                )
        return self

    # ---- derived arrays (cheap; recomputed on demand) -----------------------------
    @property
    def n_worker_types(self) -> int:
        return len(self.servers[0].workers)

    @property
    def n_ps_types(self) -> int:
        return len(self.servers[0].ps)

    def W(self) -> np.ndarray:
        """``[S, U]`` worker capacities W_su."""
        return np.array([s.workers for s in self.servers], dtype=np.int64)

    def P(self) -> np.ndarray:
        """``[S, V]`` PS capacities P_sv."""
        return np.array([s.ps for s in self.servers], dtype=np.int64)

    def release(self, j: int) -> np.ndarray:
        """``[S]``: first slot server ``s`` may host job ``j`` (a_j + Delta_js, 2i)."""
        job = self.jobs[j]
        return job.arrival + np.asarray(job.upload_delay_slots, dtype=np.int64)


# ---- the one duration rule ---------------------------------------------------------
def comm_slots(instance: Instance, job: Job) -> float:
    """2 k_j / B_j in slots: push gradients + pull parameters (MB -> Mbit is x8)."""
    return 2.0 * 8.0 * job.gradient_size_mb / job.bandwidth_mbps / instance.slot_seconds


def minibatch_slots(instance: Instance, job: Job, colocated: bool) -> float:
    """1 / p_j of eq. (1): slots one worker needs per mini-batch."""
    t = job.worker_time_slots + job.ps_time_slots
    return t if colocated else t + comm_slots(instance, job)


def rate(instance: Instance, job: Job, colocated: bool) -> float:
    """p_j of eq. (1): mini-batches one worker trains per slot."""
    return 1.0 / minibatch_slots(instance, job, colocated)


def durations(instance: Instance, job: Job) -> np.ndarray:
    """``[2, D_j]`` int array: ``d[xi, w - 1]`` = slots needed with ``w`` workers, colocated iff ``xi``.

    ``d = max(1, ceil(E D M * (1/p_j(xi)) / w - 1e-9))`` (2e with eq. (1)).
    """
    w = np.arange(1, job.chunks + 1, dtype=np.float64)
    per = np.array([minibatch_slots(instance, job, False), minibatch_slots(instance, job, True)])
    work = float(job.steps) * per  # worker-slots needed, [2]
    d = np.ceil(work[:, None] / w[None, :] - DURATION_EPS)
    return np.maximum(d, 1).astype(np.int64)


def duration_slots(instance: Instance, job: Job, workers: int, colocated: bool) -> int:
    """d_j(w, xi): slots a job needs with ``workers`` workers (1 <= w <= D_j).

    Raises ValueError when ``workers`` is outside ``[1, D_j]`` (2a).
    """
    if not 1 <= workers <= job.chunks:
        raise ValueError(f"workers must be in [1, {job.chunks}], got {workers}")
    return int(durations(instance, job)[int(bool(colocated)), workers - 1])


def work_done(instance: Instance, job: Job, workers: int, colocated: bool, slots: float) -> float:
    """Mini-batch steps ``workers`` workers train in ``slots`` slots (LHS of 2e)."""
    return workers * slots / minibatch_slots(instance, job, colocated)


# ---- generators ----------------------------------------------------------------------
PRESETS = ("small", "paper", "paper_compact")

#: Default horizon of the paper presets: T = 6144 = 1.5 * 4096, so the paper's
#: arrivals a_j in [1, T/1.5] end at slot 4096 = 2**12, a decision slot of the
#: geometric rounds, whose window [4096, 6144) leaves every job room to finish.
PAPER_HORIZON = 6144
#: Last arrival and horizon of the ``paper_compact`` preset (the toolkit's first regime).
COMPACT_LAST_ARRIVAL, COMPACT_HORIZON = 128, 4096

ServerTypes = Literal["per_unit", "per_server"]


def generate(
    preset: str,
    *,
    seed: int,
    jobs: int | None = None,
    servers: int | None = None,
    horizon: int | None = None,
) -> Instance:
    """A seeded instance; ``servers`` counts EDGE servers (one cloud is always added, last).

    ``small`` (for exact models; both should prove optimality in about a second):
    4 jobs, 2 edge servers + cloud, U = V = 2, T = 24 slots of 60 s; every edge
    server has 1-2 workers of each type and one PS of each type, the cloud 3
    workers and 2 PSs of each type; a_j in [0, 3]; E in [1, 2], D in [1, 3],
    M in [1, 2]; n in [0.1, 0.4] slots, H in [0.01, 0.05] slots, k in [30, 575]
    MB, B in [300, 1000] Mbit/s; Delta 1-2 slots to edge, 3-5 to the cloud.
    So a job needs 1-12 slots.

    ``paper`` (Sec. VI, slot = 1 hour): 200 edge servers + cloud, arrivals
    a_j in [1, T/1.5] as in the paper, T = 6144 (see `paper_instance`).

    ``paper_compact``: the same, but every job arrives in [1, 128] and
    T = 4096 (the toolkit's first regime: a burst of arrivals, congested).
    """
    if preset not in PRESETS:
        raise InputError("preset", f"unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    if preset == "small":
        return _small(np.random.default_rng(seed), jobs or 4, servers or 2, horizon or 24)
    if preset == "paper_compact":
        T = horizon or COMPACT_HORIZON
        return paper_instance(seed, jobs=jobs or 200, servers=servers or 200, horizon=T,
                              last_arrival=min(COMPACT_LAST_ARRIVAL, T - 1))
    return paper_instance(seed, jobs=jobs or 200, servers=servers or 200, horizon=horizon or PAPER_HORIZON)


def paper_instance(
    seed: int,
    *,
    jobs: int = 200,
    servers: int = 200,
    horizon: int = PAPER_HORIZON,
    last_arrival: int | None = None,
    server_types: ServerTypes = "per_unit",
) -> Instance:
    """She et al.'s Sec. VI setting (slot = 1 hour), with the readings below.

    Ranges from the paper: U and V in [8, 10]; worker bandwidth in [100, 5120]
    Mbit/s and PS bandwidth in [5, 20] Gbit/s, B_j = the smaller of the two
    (the slower end of the link); E in [50, 100], D in [20, 50], M in [10, 50],
    n in [0.001, 0.05] h, H in [10, 100] ms, k in [30, 575] MB, Delta in
    [1, 4] (edge) and [10, 40] (cloud) slots; a_j in [1, T/1.5].

    Readings where the paper is silent or loose:

    * Servers. "The number of GPUs and CPUs [of a Philly machine] as that of
      workers and PSs on each edge server" and "randomly select the types of
      each worker and PS for servers". ``server_types="per_unit"`` (default)
      reads it literally: an edge server gets G workers and C PSs, G and C in
      {4, 8} (Philly machine sizes), and EACH worker gets a uniformly random
      type in [0, U), each PS one in [0, V); so a server holds several types.
      ``"per_server"`` is the toolkit's first reading: ONE random worker type
      with G workers and ONE PS type with C PSs per server. The first lets
      far more edge servers host a job colocated (its u_j and v_j together);
      the effect is measured in ``benchmarks/edgecloud_baselines.py``.
    * The cloud: 64 workers and 64 PSs of every type (the paper says only that
      it is large).
    * T is not given. Default 6144 = 1.5 * 4096: the last arrival, T/1.5 =
      4096, is a decision slot of the geometric rounds (2**12), so every job
      can still get a round window of 2048 slots before T.
      ``last_arrival`` overrides T/1.5 (128 for the ``paper_compact`` preset).
    """
    rng = np.random.default_rng(seed)
    last = max(1, int(horizon / 1.5)) if last_arrival is None else last_arrival
    last = max(1, min(last, horizon - 1))
    return _paper(rng, jobs, servers, horizon, last, server_types)


def _u(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(np.round(rng.uniform(lo, hi), 6))


def _small(rng: np.random.Generator, n_jobs: int, n_edge: int, horizon: int) -> Instance:
    U = V = 2
    srv = [
        Server(is_cloud=False, workers=[int(x) for x in rng.integers(1, 3, size=U)], ps=[1] * V)
        for _ in range(n_edge)
    ]
    srv.append(Server(is_cloud=True, workers=[3] * U, ps=[2] * V))
    last_arrival = min(3, max(0, horizon - 1))
    jobs = []
    for j in range(n_jobs):
        delays = [int(x) for x in rng.integers(1, 3, size=n_edge)] + [int(rng.integers(3, 6))]
        jobs.append(
            Job(
                id=j,
                arrival=int(rng.integers(0, last_arrival + 1)),
                worker_type=int(rng.integers(0, U)),
                ps_type=int(rng.integers(0, V)),
                epochs=int(rng.integers(1, 3)),
                chunks=int(rng.integers(1, 4)),
                minibatches_per_chunk=int(rng.integers(1, 3)),
                worker_time_slots=_u(rng, 0.1, 0.4),
                ps_time_slots=_u(rng, 0.01, 0.05),
                gradient_size_mb=_u(rng, 30, 575),
                bandwidth_mbps=_u(rng, 300, 1000),
                upload_delay_slots=delays,
            )
        )
    return Instance(horizon=horizon, slot_seconds=60.0, servers=srv, jobs=jobs)


def _paper(rng: np.random.Generator, n_jobs: int, n_edge: int, horizon: int, last_arrival: int,
           server_types: ServerTypes) -> Instance:
    if server_types not in ("per_unit", "per_server"):
        raise InputError("server_types", f"must be 'per_unit' or 'per_server', got {server_types!r}")
    U = int(rng.integers(8, 11))
    V = int(rng.integers(8, 11))
    sizes = np.array([4, 8])
    srv = []
    for _ in range(n_edge):
        if server_types == "per_server":
            w = [0] * U
            p = [0] * V
            w[int(rng.integers(0, U))] = int(rng.choice(sizes))
            p[int(rng.integers(0, V))] = int(rng.choice(sizes))
        else:
            g = int(rng.choice(sizes))
            c = int(rng.choice(sizes))
            w = [int(x) for x in np.bincount(rng.integers(0, U, size=g), minlength=U)]
            p = [int(x) for x in np.bincount(rng.integers(0, V, size=c), minlength=V)]
        srv.append(Server(is_cloud=False, workers=w, ps=p))
    srv.append(Server(is_cloud=True, workers=[64] * U, ps=[64] * V))
    jobs = []
    for j in range(n_jobs):
        delays = [int(x) for x in rng.integers(1, 5, size=n_edge)] + [int(rng.integers(10, 41))]
        bw = min(_u(rng, 100, 5 * 1024), _u(rng, 5 * 1024, 20 * 1024))
        jobs.append(
            Job(
                id=j,
                arrival=int(rng.integers(1, last_arrival + 1)),
                worker_type=int(rng.integers(0, U)),
                ps_type=int(rng.integers(0, V)),
                epochs=int(rng.integers(50, 101)),
                chunks=int(rng.integers(20, 51)),
                minibatches_per_chunk=int(rng.integers(10, 51)),
                worker_time_slots=_u(rng, 0.001, 0.05),  # hours = slots
                ps_time_slots=float(np.round(rng.uniform(10, 100) / 3.6e6, 12)),  # ms -> hours
                gradient_size_mb=_u(rng, 30, 575),
                bandwidth_mbps=bw,
                upload_delay_slots=delays,
            )
        )
    return Instance(horizon=horizon, slot_seconds=3600.0, servers=srv, jobs=jobs)
