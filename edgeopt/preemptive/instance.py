"""Instances of the preemptive family (Wang et al., "Preemptive Scheduling for
Distributed Machine Learning Jobs in Edge-Cloud Networks", IEEE JSAC 2022),
and their generators.

Notation of the paper -> fields:

=====================  ==========================================================
paper                  field
=====================  ==========================================================
T                      ``horizon`` (slots ``0 .. T-1``)
[S], s_c               ``servers`` (at most one with ``is_cloud``)
[W_s]                  ``servers[s].workers``: one entry per worker, its type
[P_s]                  ``servers[s].ps``: number of PSs on an edge server
U_s (Sec. VI)          ``servers[s].storage_mb`` (None: unlimited)
r_j                    ``jobs[j].arrival`` (slot)
E_j, D_j, B_j          ``.epochs``, ``.chunks``, ``.minibatches_per_chunk``
m_j                    ``.worker_time_slots`` (slots per mini-batch on one worker)
G_j                    ``.ps_time_slots`` (slots per PS update)
q_j, b_j               ``.gradient_size_mb`` (MB), ``.bandwidth_mbps`` (Mbit/s)
Delta_js               ``.upload_delay_slots[s]`` (slots, one per server)
u_j (Sec. VI)          ``.chunk_size_mb`` (None: no storage constraint)
v_jsw                  1 iff worker w of edge server s has type ``worker_type``;
                       the cloud has unlimited workers of every type
o_jsp                  1 for every PS (one PS type, as the testbed's); the cloud
                       has unlimited PSs
=====================  ==========================================================

Interpretations (kept identical in the validator, the algorithms and the exact
models; also written in /work/coord/preemptive.md):

* Time: slot ``t`` is ``[t, t+1)``. A chunk trains in a set of slots (not
  necessarily contiguous on an edge worker: preemption); its completion
  ``c_jd`` is its last slot + 1; ``c_j = max_d c_jd``; JCT = ``c_j - r_j``.
* Eq. (1): one mini-batch takes ``tau_j = m_j + G_j + 2 * 8 q_j / (b_j *
  slot_seconds)`` slots (``zeta_j = 0``), or ``m_j + G_j`` when the whole job
  (every chunk and every PS slot) is on the cloud (``zeta_j = 1``, (2g)/(2h):
  on an edge server a job is never colocated). A chunk needs ``E_j B_j``
  mini-batches, so it trains for ``P_j = ceil(E_j B_j tau_j / speed)`` whole
  slots on any eligible worker (`chunk_slots`); ``speed = 1 + eps`` is the
  speed augmentation of Definition 1. All eligible edge workers give the same
  rate (n_jsw = n_j), so the unrelated-machine model only distinguishes edge,
  and cloud colocated.
* Only ``requested_workers`` (the trace's GPU count) is extra to the paper's
  model: the gang (all-or-nothing) baselines SRTF and Tiresias-L use it (the
  paper's non-elastic reading); the paper's algorithm and the ``*_elastic``
  baseline variants use one worker per chunk and ignore it.
* q_j is uniform in the paper's [30, 575] MB (`GRADIENT_MB`); the workload
  regime (`REGIMES`) is a generator option.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from edgeopt.core import InputError
from edgeopt.core import bounds as B

PRESETS = ("small", "testbed", "paper", "paper_edge")

#: Workload regimes of the ``testbed`` / ``paper`` generators (keyword ``regime``):
#:
#: * ``paper``: Sec. V-A as printed (m_j in [0.001, 0.05] h, cloud upload delay in [10, 15] slots).
#:   A chunk then trains for about 60 slots (E_j B_j m_j ~ 40 * 58 * 0.025 h) while the unlimited
#:   cloud is only 10-15 slots away, so sending work to the cloud nearly always pays and ratios
#:   near 1 come easily.
#: * ``short_chunks`` (not in the paper; a regime where the edge matters): m_j in [0.001, 0.005] h
#:   (the testbed's scaled-down range), so a chunk trains for about 3-17 slots, comparable to or
#:   shorter than the cloud's upload delay.
#: * ``far_cloud`` (not in the paper; a regime where the edge matters): the paper's m_j but a cloud
#:   upload delay in [60, 120] slots, one to two chunk times.
REGIMES = ("paper", "short_chunks", "far_cloud")

#: q_j range of Sec. V-A (MB): "q_j in [30, 575] MB".
GRADIENT_MB = (30.0, 575.0)

#: Table II: (model, dataset, D_j chunks, B_j mini-batches per chunk, fp32 parameter size MB).
#: The parameter sizes are public facts kept for reference; q_j itself is drawn from the paper's
#: stated range `GRADIENT_MB` (Sec. V-A), independently of the model, as the paper does.
TABLE_II: tuple[tuple[str, str, int, int, float], ...] = (
    ("ResNet-50", "CIFAR10", 27, 58, 98.0),
    ("ResNet-101", "CIFAR10", 27, 58, 170.0),
    ("GoogLeNet", "Caltech101", 115, 58, 27.0),
    ("LeNet", "Caltech101", 115, 58, 30.0),
    ("AlexNet", "ImageNet-12", 60, 58, 233.0),
    ("Inception-BN", "ImageNet-12", 60, 58, 45.0),
)


class Server(BaseModel):
    """An edge server (workers and PSs listed) or the cloud (unlimited workers and PSs)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    name: str = ""
    is_cloud: bool = False
    workers: list[Annotated[int, Field(le=B.MAX_COUNT)]] = Field(default_factory=list, max_length=B.MAX_COUNT, description="type of each worker (edge); empty for the cloud")
    ps: int = Field(default=0, ge=0, le=B.MAX_COUNT, description="number of PSs (edge); 0 for the cloud (unlimited)")
    storage_mb: float | None = Field(default=None, gt=0, le=B.MAX_MB, description="U_s (Sec. VI); None: unlimited")

    @model_validator(mode="after")
    def _check(self) -> Server:
        for i, w in enumerate(self.workers):
            if w < 0:
                raise ValueError(f"workers[{i}]: worker type must be >= 0, got {w}")
        if self.is_cloud and (self.workers or self.ps):
            raise ValueError("the cloud has unlimited workers and PSs: leave workers empty and ps 0")
        return self


class Job(BaseModel):
    """An ML training job (Sec. III-A)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    id: int = Field(ge=0, le=B.MAX_JOBS)
    model: str = ""
    arrival: int = Field(ge=0, le=B.MAX_HORIZON, description="r_j, slot")
    worker_type: int = Field(ge=0, le=B.MAX_COUNT, description="type of worker the job needs")
    epochs: int = Field(ge=1, le=B.MAX_COUNT, description="E_j")
    chunks: int = Field(ge=1, le=B.MAX_COUNT, description="D_j")
    minibatches_per_chunk: int = Field(ge=1, le=B.MAX_COUNT, description="B_j")
    worker_time_slots: float = Field(gt=0, le=B.MAX_SLOTS_PER_STEP, description="m_j, slots per mini-batch on one worker")
    ps_time_slots: float = Field(ge=0, le=B.MAX_SLOTS_PER_STEP, description="G_j, slots per PS update")
    gradient_size_mb: float = Field(ge=0, le=B.MAX_MB, description="q_j, MB")
    bandwidth_mbps: float = Field(ge=B.MIN_MBPS, le=B.MAX_MBPS, description="b_j, Mbit/s")
    upload_delay_slots: list[Annotated[int, Field(le=B.MAX_HORIZON)]] = Field(description="Delta_js, one per server, slots")
    requested_workers: int = Field(default=1, ge=1, le=B.MAX_COUNT, description="gang size for the SRTF / Tiresias-L baselines")
    chunk_size_mb: float | None = Field(default=None, gt=0, le=B.MAX_MB, description="u_j (Sec. VI)")

    @model_validator(mode="after")
    def _check(self) -> Job:
        for i, d in enumerate(self.upload_delay_slots):
            if d < 0:
                raise ValueError(f"upload_delay_slots[{i}] must be >= 0, got {d}")
        for name in ("worker_time_slots", "ps_time_slots", "gradient_size_mb", "bandwidth_mbps"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be finite")
        if self.requested_workers > self.chunks:
            raise ValueError(f"requested_workers ({self.requested_workers}) must be <= chunks ({self.chunks})")
        return self


class Instance(BaseModel):
    """One instance of MINLP (2)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    family: Literal["preemptive"] = "preemptive"
    name: str = ""
    horizon: int = Field(ge=1, le=B.MAX_HORIZON, description="T, slots")
    slot_seconds: float = Field(default=3600.0, ge=B.MIN_SLOT_SECONDS, le=B.MAX_SLOT_SECONDS, description="length of a slot, seconds")
    servers: list[Server] = Field(min_length=1, max_length=B.MAX_SERVERS)
    jobs: list[Job] = Field(max_length=B.MAX_JOBS)

    @model_validator(mode="after")
    def _check(self) -> Instance:
        clouds = [s for s, sv in enumerate(self.servers) if sv.is_cloud]
        if len(clouds) > 1:
            raise ValueError(f"at most one cloud server, got {len(clouds)} (servers {clouds})")
        n = len(self.servers)
        for k, job in enumerate(self.jobs):
            if job.id != k:
                raise ValueError(f"jobs[{k}].id must equal its position {k}, got {job.id}")
            if len(job.upload_delay_slots) != n:
                raise ValueError(
                    f"jobs[{k}].upload_delay_slots has {len(job.upload_delay_slots)} entries, need one per server ({n})"
                )
            if job.arrival >= self.horizon:
                raise ValueError(f"jobs[{k}].arrival ({job.arrival}) must be < horizon ({self.horizon})")
        return self

    # ---- derived quantities (all algorithms, the validator and exact models use these) ----
    @property
    def cloud(self) -> int | None:
        """Index of the cloud server s_c, or None."""
        for s, sv in enumerate(self.servers):
            if sv.is_cloud:
                return s
        return None

    def minibatch_slots(self, j: int, colocated: bool) -> float:
        """tau_j = 1 / n_j (eq. 1): slots per mini-batch; ``colocated`` is zeta_j."""
        job = self.jobs[j]
        tau = job.worker_time_slots + job.ps_time_slots
        if not colocated:
            tau += 2.0 * 8.0 * job.gradient_size_mb / (job.bandwidth_mbps * self.slot_seconds)
        return tau

    def chunk_slots(self, j: int, colocated: bool = False, speed: float = 1.0) -> int:
        """P_j: whole slots one chunk of job ``j`` trains on an eligible worker.

        ``ceil(E_j B_j tau_j / speed)`` (at least 1), with tau_j of eq. (1);
        ``colocated`` is zeta_j (the whole job on the cloud). The ``1e-9``
        guards against float noise making an exact integer round up.
        """
        job = self.jobs[j]
        work = job.epochs * job.minibatches_per_chunk * self.minibatch_slots(j, colocated) / speed
        return max(1, math.ceil(work - 1e-9))

    def chunk_slots_array(self, colocated: bool = False, speed: float = 1.0) -> np.ndarray:
        """`chunk_slots` of every job, as an int array [J]."""
        return np.array([self.chunk_slots(j, colocated, speed) for j in range(len(self.jobs))], dtype=np.int64)

    def eligible_workers(self, j: int) -> list[tuple[int, int]]:
        """(server, worker) pairs of edge workers with v_jsw = 1 (the cloud's are unlimited, not listed)."""
        t = self.jobs[j].worker_type
        return [
            (s, w)
            for s, sv in enumerate(self.servers)
            if not sv.is_cloud
            for w, typ in enumerate(sv.workers)
            if typ == t
        ]

    def eligible(self, j: int, s: int, w: int) -> bool:
        """v_jsw (the cloud: any worker label >= 0)."""
        sv = self.servers[s]
        if sv.is_cloud:
            return w >= 0
        return 0 <= w < len(sv.workers) and sv.workers[w] == self.jobs[j].worker_type

    def release(self, j: int, s: int) -> int:
        """r_j + Delta_js: the first slot a chunk of ``j`` (or its PS) may use server ``s`` (2i)."""
        return self.jobs[j].arrival + self.jobs[j].upload_delay_slots[s]


def parse_instance(data: Any) -> Instance:
    """Validate ``data`` into an `Instance`; errors name the field (`InputError`)."""
    from edgeopt.core import parse_model

    return parse_model(Instance, data, root="instance")


# ----------------------------------------------------------------------------------------------
# Generators
# ----------------------------------------------------------------------------------------------


def _safe_horizon(servers: list[Server], jobs: list[dict[str, Any]], slot_seconds: float) -> int:
    """A horizon every algorithm of the family finishes within.

    After the last release every work-conserving or gang-priority scheduler
    keeps at least one job progressing, so ``max release + sum of all chunk
    work (edge rate) + 1`` slots always suffice.
    """
    # built unvalidated: the horizon is what is being computed (10**12 is above MAX_HORIZON on purpose)
    tmp = Instance.model_construct(family="preemptive", name="", horizon=10**12, slot_seconds=slot_seconds,
                                   servers=servers, jobs=[Job(**j) for j in jobs])
    work = sum(job.chunks * tmp.chunk_slots(k, False) for k, job in enumerate(tmp.jobs))
    last = max((max(tmp.release(k, s) for s in range(len(servers))) for k in range(len(tmp.jobs))), default=0)
    return int(last + work + 1)


def _draw_jobs(
    rng: np.random.Generator,
    n_jobs: int,
    servers: list[Server],
    types: list[int],
    *,
    arrival_gap: float,
    epochs: tuple[int, int],
    minibatch_h: tuple[float, float],
    edge_delay: tuple[int, int],
    cloud_delay: tuple[int, int],
    storage: bool,
) -> list[dict[str, Any]]:
    """Jobs with the ranges of Sec. V-A (slot = one hour).

    q_j is uniform in the paper's [30, 575] MB (`GRADIENT_MB`). With b_j in [100, 5120] Mbps and a
    one-hour slot the communication term 2 * 8 q_j / b_j of eq. (1) is at most 92 s per mini-batch,
    so it lengthens a non-colocated mini-batch by up to 0.026 h (about 1 % to 300 % of m_j).
    """
    jobs: list[dict[str, Any]] = []
    t = 0.0
    for k in range(n_jobs):
        model, _ds, d, b, _param_mb = TABLE_II[int(rng.integers(len(TABLE_II)))]
        if k > 0:
            t += float(rng.exponential(arrival_gap))
        delays = [
            int(rng.integers(cloud_delay[0], cloud_delay[1] + 1))
            if sv.is_cloud
            else int(rng.integers(edge_delay[0], edge_delay[1] + 1))
            for sv in servers
        ]
        gpus = int(rng.choice([1, 2, 4, 8], p=[0.4, 0.3, 0.2, 0.1]))
        jobs.append(
            {
                "id": k,
                "model": model,
                "arrival": int(t),
                "worker_type": int(rng.choice(types)),
                "epochs": int(rng.integers(epochs[0], epochs[1] + 1)),
                "chunks": d,
                "minibatches_per_chunk": b,
                "worker_time_slots": round(float(rng.uniform(*minibatch_h)), 6),  # hours = slots
                "ps_time_slots": round(float(rng.uniform(10, 100)) / 1000 / 3600, 9),  # G_j in [10, 100] ms
                "gradient_size_mb": round(float(rng.uniform(*GRADIENT_MB)), 3),
                "bandwidth_mbps": round(float(rng.uniform(100, 5 * 1024)), 3),
                "upload_delay_slots": delays,
                "requested_workers": min(gpus, d),
                "chunk_size_mb": round(float(rng.uniform(50, 200)), 3) if storage else None,
            }
        )
    return jobs


def _small(rng: np.random.Generator, jobs: int | None, servers: int | None, storage: bool) -> Instance:
    """2-3 jobs of 1-2 chunks, 2 edge servers of 1-2 workers + cloud, P_j of 1-3 slots.

    Sized so that both exact models prove optimality within a second or two.
    Units are abstract here (slot_seconds = 1): a mini-batch takes m_j in
    [0.4, 1] slot plus up to 0.6 slot of communication when not colocated.
    """
    n_edge = servers if servers is not None else 2
    n_jobs = jobs if jobs is not None else int(rng.integers(2, 4))
    types = [0, 1]
    sv: list[Server] = []
    for s in range(n_edge):
        nw = int(rng.integers(1, 3))
        sv.append(Server(name=f"edge{s}", workers=[int(rng.choice(types)) for _ in range(nw)], ps=nw + 1,
                         storage_mb=400.0 if storage else None))
    sv.append(Server(name="cloud", is_cloud=True))
    present = sorted({w for s in sv for w in s.workers})
    js: list[dict[str, Any]] = []
    for k in range(n_jobs):
        d = int(rng.integers(1, 3))
        js.append(
            {
                "id": k,
                "arrival": int(rng.integers(0, 3)),
                "worker_type": int(rng.choice(present)),
                "epochs": 1,
                "chunks": d,
                "minibatches_per_chunk": int(rng.integers(1, 3)),
                "worker_time_slots": round(float(rng.uniform(0.4, 1.0)), 3),
                "ps_time_slots": round(float(rng.uniform(0.0, 0.2)), 3),
                "gradient_size_mb": round(float(rng.uniform(1.0, 8.0)), 3),
                "bandwidth_mbps": round(float(rng.uniform(100.0, 200.0)), 3),
                "upload_delay_slots": [int(rng.integers(0, 2)) for _ in range(n_edge)] + [int(rng.integers(2, 5))],
                "requested_workers": int(rng.integers(1, d + 1)),
                "chunk_size_mb": round(float(rng.uniform(100, 200)), 3) if storage else None,
            }
        )
    # A tight but safe horizon keeps the exact models small.
    horizon = _safe_horizon(sv, js, 1.0)
    return Instance(name="small", horizon=horizon, slot_seconds=1.0, servers=sv, jobs=[Job(**j) for j in js])


def _regime_ranges(regime: str, minibatch_h: tuple[float, float]) -> dict[str, Any]:
    """m_j and cloud-delay ranges of a `REGIMES` entry (``minibatch_h``: the preset's own m_j range)."""
    if regime == "short_chunks":
        return {"minibatch_h": (0.001, 0.005), "cloud_delay": (10, 15)}
    if regime == "far_cloud":
        return {"minibatch_h": minibatch_h, "cloud_delay": (60, 120)}
    return {"minibatch_h": minibatch_h, "cloud_delay": (10, 15)}


def _testbed(rng: np.random.Generator, jobs: int | None, servers: int | None, storage: bool,
             regime: str = "paper") -> Instance:
    """Sec. V-A testbed: 8 edge machines + the cloud, 30 jobs, Table II models, slot = 1 hour.

    Each edge machine (1 GPU, 12 CPU cores, 16 GB) hosts one GPU worker
    (type 0: 1 GPU, 3 GB), two CPU workers (type 1: 3 cores, 2 GB each) and
    three PSs (2 cores, 3 GB each): 12 cores and 16 GB exactly. The scaled-down
    testbed workload trains small subsets, so m_j is drawn from [0.001, 0.005] h
    (the simulator's lower end); Delta in [1, 4] (edge) and [10, 15] (cloud).
    """
    n_edge = servers if servers is not None else 8
    n_jobs = jobs if jobs is not None else 30
    sv = [Server(name=f"edge{s}", workers=[0, 1, 1], ps=3, storage_mb=20000.0 if storage else None)
          for s in range(n_edge)]
    sv.append(Server(name="cloud", is_cloud=True))
    js = _draw_jobs(rng, n_jobs, sv, [0, 1], arrival_gap=2.0, epochs=(20, 60), edge_delay=(1, 4),
                    storage=storage, **_regime_ranges(regime, (0.001, 0.005)))
    return Instance(name="testbed", horizon=_safe_horizon(sv, js, 3600.0), slot_seconds=3600.0, servers=sv,
                    jobs=[Job(**j) for j in js])


def _paper(rng: np.random.Generator, jobs: int | None, servers: int | None, storage: bool,
           regime: str = "paper") -> Instance:
    """The ``paper`` preset: `paper_draws` with the horizon every algorithm finishes within."""
    sv, js = paper_draws(rng, jobs, servers, storage, regime)
    return Instance(name="paper", horizon=_safe_horizon(sv, js, 3600.0), slot_seconds=3600.0, servers=sv,
                    jobs=[Job(**j) for j in js])


def paper_draws(rng: np.random.Generator, jobs: int | None, servers: int | None, storage: bool,
                regime: str = "paper") -> tuple[list[Server], list[dict[str, Any]]]:
    """Sec. V-A simulator: 100 edge servers + a virtual cloud, 300 jobs, slot = 1 hour.

    The servers and job dicts without an instance: trace-driven instances
    (`edgeopt.traces.instances`) replace every job's work and arrival, so the
    safe horizon of these draws (above `MAX_HORIZON` past about 2,400 jobs) does not apply to them.

    Per server: workers = GPUs of a Philly-like server (2, 4 or 8), PSs = CPU
    share (2 to 4 per worker, so PSs never run short); 8 to 10 worker types,
    each worker's type uniform. Jobs: Table II models, E in [20, 60], m_j in
    [0.001, 0.05] h, G_j in [10, 100] ms, q_j uniform in [30, 575] MB,
    b_j in [100, 5120] Mbps, Delta in [1, 4] / [10, 15]. ``regime`` changes
    m_j or the cloud delay (`REGIMES`).
    Arrivals: exponential gaps of mean 1 slot (the trace's submissions scaled).
    """
    n_edge = servers if servers is not None else 100
    n_jobs = jobs if jobs is not None else 300
    n_types = int(rng.integers(8, 11))
    sv: list[Server] = []
    for s in range(n_edge):
        nw = int(rng.choice([2, 4, 8], p=[0.3, 0.4, 0.3]))
        sv.append(Server(name=f"edge{s}", workers=[int(rng.integers(n_types)) for _ in range(nw)],
                         ps=int(nw * rng.integers(2, 5)), storage_mb=50000.0 if storage else None))
    sv.append(Server(name="cloud", is_cloud=True))
    present = sorted({w for s in sv for w in s.workers})
    js = _draw_jobs(rng, n_jobs, sv, present, arrival_gap=1.0, epochs=(20, 60), edge_delay=(1, 4),
                    storage=storage, **_regime_ranges(regime, (0.001, 0.05)))
    return sv, js


def generate(
    preset: str = "small",
    *,
    seed: int = 0,
    jobs: int | None = None,
    servers: int | None = None,
    horizon: int | None = None,
    storage: bool = False,
    regime: str | None = None,
) -> Instance:
    """A seeded instance; same arguments give an identical instance.

    Args:
        preset: ``small`` (exact models solve it in seconds), ``testbed``
            (Sec. V-A, 8 edge + cloud, 30 jobs), ``paper`` (100 edge + cloud,
            300 jobs) or ``paper_edge`` (``paper`` in the ``short_chunks`` regime: not
            the paper's setting, a regime where the edge matters).
        jobs, servers: override the number of jobs / edge servers (the cloud is added).
        horizon: override T (default: a horizon every algorithm finishes within).
        storage: also draw U_s and u_j (Sec. VI).
        regime: workload regime of ``testbed`` / ``paper`` (`REGIMES`): ``paper``
            (Sec. V-A as printed, the default), ``short_chunks`` or ``far_cloud``
            (regimes where the edge matters, not in the paper). ``small`` has one regime.
    """
    makers = {"small": _small, "testbed": _testbed, "paper": _paper, "paper_edge": _paper}
    if regime is None:
        regime = "short_chunks" if preset == "paper_edge" else "paper"
    if regime not in REGIMES:
        raise InputError("regime", f"unknown regime {regime!r} (known: {', '.join(REGIMES)})")
    if preset == "small" and regime != "paper":
        raise InputError("regime", f"the small preset has no regime {regime!r}")
    if preset not in makers:
        raise InputError("preset", f"unknown preset {preset!r} for preemptive (known: {', '.join(PRESETS)})")
    if jobs is not None and jobs < 1:
        raise InputError("jobs", f"must be >= 1, got {jobs}")
    if servers is not None and servers < 1:
        raise InputError("servers", f"must be >= 1, got {servers}")
    if horizon is not None and horizon < 1:
        raise InputError("horizon", f"must be >= 1, got {horizon}")
    rng = np.random.default_rng(seed)
    inst = makers[preset](rng, jobs, servers, storage) if preset == "small" else makers[preset](
        rng, jobs, servers, storage, regime)
    if horizon is not None:
        data = inst.model_dump()
        data["horizon"] = horizon
        kept = [j for j in data["jobs"] if j["arrival"] < horizon]
        data["jobs"] = [{**j, "id": k} for k, j in enumerate(kept)]
        inst = parse_instance(data)
    tag = "" if regime == "paper" or preset == "paper_edge" else f"-{regime}"
    return inst.model_copy(update={"name": f"{preset}{tag}-seed{seed}"})
