"""Instances of the hetero family (Zhou et al., "Online Scheduling Algorithm for
Heterogeneous Distributed Machine Learning Jobs"), and their generators.

Notation of the paper -> fields:

=====================  ==========================================================
paper                  field
=====================  ==========================================================
T                      ``horizon`` (slots ``0 .. T-1``)
C_h^r                  ``servers[h].capacity[r]`` (units of ``resources[r]``)
e_m^r, b_m             ``worker_types[m].demand[r]``, ``.bandwidth_mbps``
z_p^r, B_p             ``ps_types[p].demand[r]``, ``.bandwidth_mbps``
a_j, w_j               ``jobs[j].arrival`` (slot), ``.weight``
E_j, D_j, K_j          ``.epochs``, ``.chunks``, ``.minibatches_per_chunk``
v_jm                   ``.minibatch_time_slots[m]`` (slots per mini-batch)
U_j^p                  ``.ps_update_time_slots[p]`` (slots per iteration)
U_j (Ring-AllReduce)   ``.allreduce_time_slots`` (slots, eq. 14)
pi_j                   ``.gradient_size_mb`` (megabytes)
=====================  ==========================================================

Interpretations (kept identical in the validator, the algorithms and the exact
models; see also /work/coord/hetero.md):

* Time: slots are integers from 0; a job started at ``start`` with duration
  ``d`` holds its workers and PSs in slots ``start .. start+d-1`` and completes
  at ``start + d`` (<= ``horizon``). It may start at its arrival slot (2j).
* ``b_m = e_m^{bandwidth}`` (Sec. 3.1): when ``resources`` contains a resource
  named ``bw_mbps`` its demand entry must equal ``bandwidth_mbps``, so
  bandwidth counts in the capacity constraint (2h) and in (2i) alike.
* Transfer time: pi_j megabytes over b_m Mbit/s take ``8 pi_j / b_m`` seconds,
  i.e. ``8 pi_j / (b_m * slot_seconds)`` slots. Rates (eq. 1): one worker
  trains ``rho = 1 / (v_jm + U_j^p + (1 - q) * 2 * 8 pi_j / (b_m slot_seconds))``
  mini-batches per slot (``q`` = colocated). Eq. (14) for Ring-AllReduce with
  ``Phi`` workers: ``rho = 1 / (v_jm + U_j (Phi-1)/Phi + (1-q) 2 * 8 pi_j
  (Phi-1) / (Phi b_m slot_seconds))``. See `rate`.
* Job ids equal their position in ``jobs`` (``jobs[k].id == k``).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
import pydantic
from pydantic import BaseModel, ConfigDict, Field, model_validator

from edgeopt.core import InputError
from edgeopt.core import bounds as B

BANDWIDTH = "bw_mbps"
Architecture = Literal["ps", "ring_allreduce"]


class Server(BaseModel):
    """A physical server h with capacity C_h^r per resource r."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    name: str = ""
    capacity: list[Annotated[float, Field(ge=0, le=B.MAX_CAPACITY)]] = Field(
        description="C_h^r, one entry per resource, 0 .. MAX_CAPACITY")

    @pydantic.field_validator("capacity")
    @classmethod
    def _nonneg(cls, v: list[float]) -> list[float]:
        for i, x in enumerate(v):
            if not math.isfinite(x) or x < 0:
                raise ValueError(f"entry {i} must be a finite number >= 0, got {x}")
        return v


class NodeType(BaseModel):
    """A worker type m (demand e_m^r, bandwidth b_m) or a PS type p (z_p^r, B_p)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    name: str = ""
    demand: list[Annotated[float, Field(ge=0, le=B.MAX_CAPACITY)]] = Field(
        description="resource demand per node, one entry per resource, 0 .. MAX_CAPACITY")
    bandwidth_mbps: float = Field(ge=B.MIN_MBPS, le=B.MAX_MBPS, description="b_m (workers) or B_p (PSs), Mbit/s")

    @pydantic.field_validator("demand")
    @classmethod
    def _demand(cls, v: list[float]) -> list[float]:
        for i, x in enumerate(v):
            if not math.isfinite(x) or x < 0:
                raise ValueError(f"entry {i} must be a finite number >= 0, got {x}")
        if not any(x > 0 for x in v):
            raise ValueError("at least one entry must be > 0 (a node consumes something)")
        return v


class Job(BaseModel):
    """A training job j."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    id: int = Field(ge=0, le=B.MAX_JOBS)
    arrival: int = Field(ge=0, le=B.MAX_HORIZON, description="a_j, slot (< horizon)")
    weight: float = Field(gt=0, le=B.MAX_WEIGHT, description="w_j")
    epochs: int = Field(ge=1, le=B.MAX_COUNT, description="E_j")
    chunks: int = Field(ge=1, le=B.MAX_COUNT, description="D_j, also the most workers the job may use (2g)")
    minibatches_per_chunk: int = Field(ge=1, le=B.MAX_COUNT, description="K_j")
    minibatch_time_slots: list[Annotated[float, Field(gt=0, le=B.MAX_SLOTS_PER_STEP)]] = Field(
        description="v_jm, one per worker type, slots, > 0")
    ps_update_time_slots: list[Annotated[float, Field(ge=0, le=B.MAX_SLOTS_PER_STEP)]] = Field(
        description="U_j^p, one per PS type, slots, >= 0")
    allreduce_time_slots: float = Field(default=0.0, ge=0, le=B.MAX_SLOTS_PER_STEP, description="U_j of eq. (14), slots")
    gradient_size_mb: float = Field(ge=0, le=B.MAX_MB, description="pi_j, MB")

    @pydantic.field_validator("minibatch_time_slots")
    @classmethod
    def _v(cls, v: list[float]) -> list[float]:
        for i, x in enumerate(v):
            if not math.isfinite(x) or x <= 0:
                raise ValueError(f"entry {i} must be a finite number > 0, got {x}")
        return v

    @pydantic.field_validator("ps_update_time_slots")
    @classmethod
    def _u(cls, v: list[float]) -> list[float]:
        for i, x in enumerate(v):
            if not math.isfinite(x) or x < 0:
                raise ValueError(f"entry {i} must be a finite number >= 0, got {x}")
        return v

    @property
    def work(self) -> int:
        """E_j D_j K_j: mini-batches to train (2f)."""
        return self.epochs * self.chunks * self.minibatches_per_chunk


class Instance(BaseModel):
    """A hetero instance: servers, worker and PS types, jobs."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    family: Literal["hetero"] = "hetero"
    horizon: int = Field(ge=1, le=B.MAX_HORIZON, description="T, number of slots")
    architecture: Architecture = "ps"
    slot_seconds: float = Field(default=3600.0, ge=B.MIN_SLOT_SECONDS, le=B.MAX_SLOT_SECONDS,
                                 description="length of a slot in seconds")
    resources: list[str] = Field(min_length=1, description="resource names, e.g. gpu, cpu, mem_gb, bw_mbps")
    servers: list[Server] = Field(min_length=1, max_length=B.MAX_SERVERS)
    worker_types: list[NodeType] = Field(min_length=1)
    ps_types: list[NodeType] = Field(default_factory=list)
    jobs: list[Job] = Field(default_factory=list, max_length=B.MAX_JOBS)

    @model_validator(mode="after")
    def _shapes(self) -> Instance:
        R, M, P = len(self.resources), len(self.worker_types), len(self.ps_types)
        if len(set(self.resources)) != R or any(not r for r in self.resources):
            raise ValueError("resources: names must be non-empty and unique")
        for h, s in enumerate(self.servers):
            if len(s.capacity) != R:
                raise ValueError(f"servers.{h}.capacity: has {len(s.capacity)} entries, expected {R} (one per resource)")
        bw = self.resources.index(BANDWIDTH) if BANDWIDTH in self.resources else None
        for kind, types in (("worker_types", self.worker_types), ("ps_types", self.ps_types)):
            for m, t in enumerate(types):
                if len(t.demand) != R:
                    raise ValueError(f"{kind}.{m}.demand: has {len(t.demand)} entries, expected {R} (one per resource)")
                if bw is not None and abs(t.demand[bw] - t.bandwidth_mbps) > 1e-9 * max(1.0, t.bandwidth_mbps):
                    raise ValueError(
                        f"{kind}.{m}.demand: entry {BANDWIDTH} ({t.demand[bw]}) must equal bandwidth_mbps "
                        f"({t.bandwidth_mbps}) (b_m = e_m^bandwidth)"
                    )
        if self.architecture == "ps" and P == 0:
            raise ValueError("ps_types: the PS architecture needs at least one PS type (2e)")
        for k, j in enumerate(self.jobs):
            if j.id != k:
                raise ValueError(f"jobs.{k}.id: must equal its position {k}, got {j.id}")
            if j.arrival >= self.horizon:
                raise ValueError(f"jobs.{k}.arrival: {j.arrival} is not inside the horizon (must be < {self.horizon})")
            if len(j.minibatch_time_slots) != M:
                raise ValueError(
                    f"jobs.{k}.minibatch_time_slots: has {len(j.minibatch_time_slots)} entries, expected {M} "
                    "(one per worker type)"
                )
            if len(j.ps_update_time_slots) != P:
                raise ValueError(
                    f"jobs.{k}.ps_update_time_slots: has {len(j.ps_update_time_slots)} entries, expected {P} "
                    "(one per PS type)"
                )
        return self

    # ---- derived arrays (cheap; not cached because the model is frozen & hashed by value) ----
    @property
    def capacity(self) -> np.ndarray:
        """C [H, R]."""
        return np.array([s.capacity for s in self.servers], dtype=float).reshape(len(self.servers), -1)

    @property
    def worker_demand(self) -> np.ndarray:
        """e [M, R]."""
        return np.array([t.demand for t in self.worker_types], dtype=float).reshape(len(self.worker_types), -1)

    @property
    def ps_demand(self) -> np.ndarray:
        """z [P, R]."""
        return np.array([t.demand for t in self.ps_types], dtype=float).reshape(len(self.ps_types), len(self.resources))


def parse_instance(data: object) -> Instance:
    """Validate ``data`` into an `Instance`; errors name the field (`InputError`)."""
    from edgeopt.core import parse_model

    return parse_model(Instance, data, root="instance")


# ---- rates: eq. (1) and eq. (14) --------------------------------------------------------------

def comm_slots(instance: Instance, job: Job, worker_type: int) -> float:
    """Time to send pi_j over b_m: ``8 pi_j / (b_m slot_seconds)`` slots."""
    b = instance.worker_types[worker_type].bandwidth_mbps
    return 8.0 * job.gradient_size_mb / (b * instance.slot_seconds)


def rate(instance: Instance, job: Job, worker_type: int, ps_type: int | None, colocated: bool, n_workers: int) -> float:
    """Mini-batches one worker trains per slot: rho of eq. (1) (PS) or eq. (14) (Ring-AllReduce)."""
    v = job.minibatch_time_slots[worker_type]
    c = comm_slots(instance, job, worker_type)
    if instance.architecture == "ps":
        assert ps_type is not None
        per_iter = v + job.ps_update_time_slots[ps_type] + (0.0 if colocated else 2.0 * c)
    else:
        frac = (n_workers - 1) / n_workers
        per_iter = v + job.allreduce_time_slots * frac + (0.0 if colocated else 2.0 * c * frac)
    return 1.0 / per_iter


#: Relative slack when comparing work done with work needed (float rates).
WORK_RTOL = 1e-9


def min_duration(instance: Instance, job: Job, worker_type: int, ps_type: int | None, colocated: bool,
                 n_workers: int) -> int:
    """Smallest d with ``d * N * rho >= E D K`` (2f), for N = ``n_workers``."""
    rho = rate(instance, job, worker_type, ps_type, colocated, n_workers)
    exact = job.work / (n_workers * rho)
    # a tenth of the validator's slack, so that d * N * rho >= E D K (1 - WORK_RTOL) holds despite rounding
    d = math.ceil(exact * (1 - WORK_RTOL / 10))
    return max(1, d)


def work_done(instance: Instance, job: Job, worker_type: int, ps_type: int | None, colocated: bool,
              n_workers: int, duration: int) -> float:
    """``d * N * rho``: mini-batches trained (left side of 2f)."""
    return duration * n_workers * rate(instance, job, worker_type, ps_type, colocated, n_workers)


# ---- generators ---------------------------------------------------------------------------------

PRESETS = ("small", "paper", "small_ra", "paper_ra", "small_congested", "paper_congested", "paper_fig2",
           "paper_fig2_ra")

#: The paper's lower capacity fraction (Sec. 7: capacities are 0.2-0.5 of the summed ideal demand).
CONGESTED_FRACTION = 0.2

#: EC2 GPU instances of Sec. 7 (P3, P2, G3): GPUs, vCPUs, memory GB, network Mbit/s.
EC2 = {
    "p3.2xlarge": (1, 8, 61, 10000),
    "p3.8xlarge": (4, 32, 244, 10000),
    "p3.16xlarge": (8, 64, 488, 25000),
    "p2.xlarge": (1, 4, 61, 1000),
    "p2.8xlarge": (8, 32, 488, 10000),
    "p2.16xlarge": (16, 64, 732, 25000),
    "g3.4xlarge": (1, 16, 122, 10000),
    "g3.8xlarge": (2, 32, 244, 10000),
    "g3.16xlarge": (4, 64, 488, 25000),
}


def generate(preset: str = "small", *, seed: int = 0, jobs: int | None = None, servers: int | None = None,
             horizon: int | None = None, architecture: Architecture = "ps") -> Instance:
    """A seeded instance. Same arguments, identical instance.

    Presets:
        small: 5 jobs, 2 servers, T = 20, 2 worker and 2 PS types, resources
            gpu/cpu/bw_mbps; durations of 1-8 slots, arrivals in [0, 3]. Sized so
            a time-indexed MILP proves optimality in about a second.
        paper: Sec. 7: T = 150, 150 servers (EC2 P3/P2/G3 kinds), 8 worker and
            10 PS types, w in [200, 5000], E in [50, 100], D in [5, 50], K in
            [10, 50], U in [10, 100] ms, v in [0.001, 0.05] slots, pi in [30,
            575] MB, slot = 1 hour; server capacities scaled per resource to a
            fraction in [0.2, 0.5] of the total ideal demand of all jobs (with
            floors, see `_paper`: every job's ideal configuration fits the
            idle cluster and finishes by T); arrivals uniform in [0, T/4).
            300 jobs by default.
        paper_fig2: the setting of Fig. 2 (the paper's total weighted completion times): ``paper`` at
            T = 300 with 1,000 jobs, the largest job count we run there (the text gives T = 300 and
            "different numbers of jobs"; pass ``jobs`` for the others). ``paper`` keeps Sec. 7's
            default T = 150; neither preset scales T with ``jobs``, as the paper fixes T per figure.
        small_ra, paper_ra, paper_fig2_ra: the same with ``architecture = "ring_allreduce"``
            (no PS types; U_j of eq. 14 drawn like U_j^p).
        small_congested, paper_congested (add ``_ra`` for Ring-AllReduce): a
            congested regime, not the default. The same jobs and server kinds
            as ``small`` / ``paper`` with the same seed, but (1) arrivals
            spread over the first half of the horizon: a_j uniform in
            [0, min(T/2, T - d_j)], d_j the job's ideal (distributed)
            duration, drawn from a second stream of the seed (the second half
            drains the backlog: with arrivals up to T - d_j at capacity 0.2
            no algorithm, and often no schedule, completes every job by T),
            and (2) capacity at the paper's lower fraction 0.2 of the summed
            ideal demand (`CONGESTED_FRACTION`; ``paper``'s floors 1-3 still
            apply, so every job's ideal configuration fits the idle cluster;
            for ``small`` the two drawn servers are scaled to it, with floors
            1 and 3, and the horizon is raised where needed so that a schedule
            of every job exists, see `_congest_small`).

    Arrival process (Sec. 7 does not give one): ``small`` draws a_j uniform in
    {0, ..., 3}; ``paper`` uniform in {0, ..., T/4 - 1} (so at T = 300 the jobs
    arrive over the first 75 slots and the cluster is congested only briefly);
    the ``*_congested`` presets spread them over the first half of the horizon
    (above). Arrivals
    are independent of the job's size and weight.
    """
    if preset.endswith("_ra"):
        preset, architecture = preset[: -len("_ra")], "ring_allreduce"
    if preset == "small":
        return _small(seed, jobs or 5, servers or 2, horizon or 20, architecture)
    if preset == "paper":
        return _paper(seed, jobs or 300, servers or 150, horizon or 150, architecture)
    if preset == "small_congested":
        return _congest_small(_small(seed, jobs or 5, servers or 2, horizon or 20, architecture), seed)
    if preset == "paper_fig2":
        return _paper(seed, jobs or 1000, servers or 150, horizon or 300, architecture)
    if preset == "paper_congested":
        return _paper(seed, jobs or 300, servers or 150, horizon or 150, architecture, congested=True)
    raise InputError("preset", f"unknown preset {preset!r} for hetero (known: {', '.join(PRESETS)})")


def _small(seed: int, n_jobs: int, n_servers: int, T: int, arch: Architecture) -> Instance:
    rng = np.random.default_rng(seed)
    resources = ["gpu", "cpu", BANDWIDTH]
    slot_s = 10.0
    # two worker types: a slow cheap one and a fast big one; PSs use no GPU
    wt = [NodeType(name="w-small", demand=[1, 2, 200], bandwidth_mbps=200),
          NodeType(name="w-big", demand=[2, 4, 400], bandwidth_mbps=400)]
    pt = [NodeType(name="ps-small", demand=[0, 1, 400], bandwidth_mbps=400),
          NodeType(name="ps-big", demand=[0, 2, 1000], bandwidth_mbps=1000)]
    srv = []
    for h in range(n_servers):
        g = int(rng.integers(3, 6))
        srv.append(Server(name=f"s{h}", capacity=[g, 2 * g + 2, 200 * g + 1000]))
    jb = []
    for k in range(n_jobs):
        v0 = float(rng.uniform(0.3, 0.8))
        jb.append(Job(
            id=k,
            arrival=int(rng.integers(0, 4)),
            weight=float(rng.integers(1, 10)),
            epochs=int(rng.integers(1, 3)),
            chunks=int(rng.integers(2, 4)),
            minibatches_per_chunk=int(rng.integers(2, 5)),
            minibatch_time_slots=[round(v0, 3), round(v0 * float(rng.uniform(0.5, 0.75)), 3)],
            ps_update_time_slots=[round(float(rng.uniform(0.05, 0.15)), 3), round(float(rng.uniform(0.01, 0.05)), 3)],
            allreduce_time_slots=round(float(rng.uniform(0.05, 0.15)), 3),
            gradient_size_mb=round(float(rng.uniform(2.0, 10.0)), 2),
        ))
    if arch != "ps":
        pt = []
        jb = [j.model_copy(update={"ps_update_time_slots": []}) for j in jb]
    return Instance(horizon=T, architecture=arch, slot_seconds=slot_s, resources=resources, servers=srv,
                    worker_types=wt, ps_types=pt, jobs=jb)


def ideal_config(instance: Instance, job: Job) -> tuple[int, int | None, int, int]:
    """The "ideal" configuration of Sec. 7 (most expedited single-job training).

    Returns ``(worker_type, ps_type, workers, ps_count)``: D_j workers of the
    type with the highest distributed rate (q = 0, eq. 1 / 14), the PS type with
    the shortest update time (ties: fewest resources), and enough PSs for (2i)
    when every worker sits on another server (``ceil(D b_m / B_p)``, >= 1).
    Ring-AllReduce: ``ps_type`` None and ``ps_count`` 0.
    """
    D = job.chunks
    if instance.architecture == "ps":
        p = min(range(len(instance.ps_types)),
                key=lambda q: (job.ps_update_time_slots[q], sum(instance.ps_types[q].demand), q))
    else:
        p = None
    m = max(range(len(instance.worker_types)),
            key=lambda mm: (rate(instance, job, mm, p, False, D), -mm))
    if p is None:
        return m, None, D, 0
    s = max(1, math.ceil(D * instance.worker_types[m].bandwidth_mbps / instance.ps_types[p].bandwidth_mbps - 1e-9))
    return m, p, D, s


def _spread_arrivals(seed: int, T: int, durations: list[int]) -> list[int]:
    """Congested regime: a_j uniform in [0, min(T/2, T - d_j)] from a second stream of ``seed`` (the jobs'
    own draws are unchanged)."""
    rng = np.random.default_rng([seed, 7919])
    return [int(rng.integers(0, max(0, min(T // 2 - 1, T - d)) + 1)) for d in durations]


def _congest_small(inst: Instance, seed: int) -> Instance:
    """``small_congested``: arrivals spread over the first half of T, capacity scaled to 0.2 of the summed
    ideal demand (floor 1: a server holds one worker and one PS of the largest types; floor 3: raised in
    25 % steps until every job's ideal configuration fits the idle cluster), and floor 5: the horizon is
    raised to the end of the serial schedule (jobs in arrival order, each alone with its ideal
    configuration) when that ends after T, so that a schedule of every job exists."""
    T = inst.horizon
    configs = [ideal_config(inst, j) for j in inst.jobs]
    e, z = inst.worker_demand, inst.ps_demand
    durations = [min_duration(inst, j, m, p, False, n) if n >= 2 or p is not None
                 else min_duration(inst, j, m, p, True, n) for j, (m, p, n, _) in zip(inst.jobs, configs, strict=True)]
    arrivals = _spread_arrivals(seed, T, durations)
    ideal = np.zeros(len(inst.resources))
    for m, p, n, s in configs:
        ideal += n * e[m] + (s * z[p] if p is not None else 0)
    base = inst.capacity
    scale = CONGESTED_FRACTION * ideal / base.sum(axis=0)
    biggest = np.ceil(e.max(axis=0) + (z.max(axis=0) if len(z) else 0.0))
    wt, pt = inst.worker_types, inst.ps_types
    for _ in range(100):
        cap = np.maximum(np.ceil(base * scale[None, :]), biggest[None, :])
        if all(_ideal_fits_idle(cap, e, z, wt, pt, inst.architecture, c) for c in configs):
            break
        scale = scale * 1.25
    end = 0
    for k in sorted(range(len(arrivals)), key=lambda k: (arrivals[k], k)):  # floor 5
        end = max(end, arrivals[k]) + durations[k]
    jobs = [j.model_copy(update={"arrival": a}) for j, a in zip(inst.jobs, arrivals, strict=True)]
    servers = [Server(name=sv.name, capacity=[float(x) for x in row]) for sv, row in zip(inst.servers, cap, strict=True)]
    return inst.model_copy(update={"jobs": jobs, "servers": servers, "horizon": max(T, end)})


def _paper(seed: int, n_jobs: int, n_servers: int, T: int, arch: Architecture, congested: bool = False
           ) -> Instance:
    """The paper preset (Sec. 7). Reading of "the overall resource capacities C are set to be
    approximately [0.2, 0.5] fraction of the respective overall job resource demand, which is computed
    by adding the ideal resource demand of all jobs":

    * The ideal demand of a job is what its ideal configuration (`ideal_config`: D_j workers of the
      fastest type, the PS type with the shortest update, ``ceil(D_j b_m / B_p)`` PSs) holds in one slot
      (the units of C); summed over all jobs it gives the total D^r per resource r ("respective"). The
      servers are EC2 P3/P2/G3 shapes, every resource r scaled by one factor over all servers so that
      sum_h C_h^r = frac D^r, frac ~ U[0.2, 0.5] drawn once per instance.
    * Floors ("approximately"); they bind when the jobs are few for the servers (with 20 jobs on 150
      servers the scaled servers are far smaller than one job's ideal PS side), and for a few jobs at
      the default size:
      1. every server holds one worker and one PS of the largest types (a colocated job is possible);
      2. PS architecture: (2i) puts the ``s_j`` PSs of the ideal configuration on ONE server (its
         bandwidth alone covers every worker elsewhere: ``s_j B_p >= D_j b_m``), so for each job (in id
         order) whose ideal configuration does not fit (neither colocated nor distributed) and whose PS
         bundle ``s_j z_p`` no server holds, the scale factors of the resources the bundle uses are
         raised just enough that the server needing the least raise holds it. GPUs (PSs use none) keep
         the fraction;
      3. if some job's ideal configuration (D_j workers and its PSs, colocated or distributed) still
         does not fit the idle cluster, all factors are raised in 25 % steps until every one fits;
      4. a job whose ideal configuration (distributed rate, duration d_j) would not finish by T is made
         to arrive at ``max(0, T - d_j)`` instead (at T = 150 this practically never binds: ideal
         durations stay below ~120 slots and arrivals below T/4).
      Hence every job fits the idle cluster with its ideal configuration and can finish by T (when
      d_j <= T). The random draws are unchanged, so a seed gives the same jobs and types as before;
      only capacities (and, by floor 4, rare arrivals) differ where a floor binds.
    """
    rng = np.random.default_rng(seed)
    resources = ["gpu", "cpu", "mem_gb", BANDWIDTH]
    slot_s = 3600.0
    M, P = 8, 10
    wt = []
    for m in range(M):
        g = int(rng.integers(1, 5))
        c = int(rng.integers(1, 17))
        bw = float(rng.integers(1, 51) * 100)  # 100 Mbps .. 5 Gbps
        wt.append(NodeType(name=f"w{m}", demand=[g, c, 4 * c, bw], bandwidth_mbps=bw))
    pt = []
    for p in range(P):
        c = int(rng.integers(1, 17))
        bw = float(rng.integers(10, 41) * 500)  # 5 .. 20 Gbps
        pt.append(NodeType(name=f"ps{p}", demand=[0, c, 2 * c, bw], bandwidth_mbps=bw))
    gpus = np.array([t.demand[0] for t in wt], dtype=float)
    jb = []
    for k in range(n_jobs):
        base = float(rng.uniform(0.002, 0.05))
        # faster with more GPUs, sub-linearly; kept within the paper's [0.001, 0.05] slots
        v = np.clip(base / gpus ** 0.6 * rng.uniform(0.9, 1.1, size=M), 0.001, 0.05)
        u_ms = rng.uniform(10, 100, size=P)
        jb.append(Job(
            id=k,
            arrival=int(rng.integers(0, max(1, T // 4))),
            weight=float(rng.integers(200, 5001)),
            epochs=int(rng.integers(50, 101)),
            chunks=int(rng.integers(5, 51)),
            minibatches_per_chunk=int(rng.integers(10, 51)),
            minibatch_time_slots=[round(float(x), 6) for x in v],
            ps_update_time_slots=[round(float(x) / 1000.0 / slot_s, 9) for x in u_ms],
            allreduce_time_slots=round(float(rng.uniform(10, 100)) / 1000.0 / slot_s, 9),
            gradient_size_mb=round(float(rng.uniform(30, 575)), 2),
        ))
    if arch != "ps":
        jb = [j.model_copy(update={"ps_update_time_slots": []}) for j in jb]
    kinds = list(EC2)
    chosen = [kinds[int(i)] for i in rng.integers(0, len(kinds), size=n_servers)]
    base_cap = np.array([EC2[k] for k in chosen], dtype=float)
    probe = Instance(horizon=T, architecture=arch, slot_seconds=slot_s, resources=resources,
                     servers=[Server(capacity=list(map(float, c))) for c in base_cap],
                     worker_types=wt, ps_types=pt if arch == "ps" else [], jobs=[])
    ideal = np.zeros(len(resources))
    e = probe.worker_demand
    z = probe.ps_demand
    configs = []
    durations = []
    for j in jb:
        m, p, n, s = ideal_config(probe, j)
        configs.append((m, p, n, s))
        ideal += n * e[m] + (s * z[p] if p is not None else 0)
        durations.append(min_duration(probe, j, m, p, False, n))
    if congested:  # arrivals spread over [0, min(T/2, T - d_j)] (a second stream: the draws below are unchanged)
        jb = [j.model_copy(update={"arrival": a}) for j, a in zip(jb, _spread_arrivals(seed, T, durations), strict=True)]
    for k, (j, d) in enumerate(zip(jb, durations, strict=True)):
        if j.arrival + d > T:  # floor 4
            jb[k] = j.model_copy(update={"arrival": max(0, T - d)})
    frac = float(rng.uniform(0.2, 0.5))
    if congested:
        frac = CONGESTED_FRACTION
    scale = frac * ideal / base_cap.sum(axis=0)
    # floor 1: every server can host one worker and one PS of the largest types
    biggest = np.ceil(e.max(axis=0) + (z.max(axis=0) if len(z) else 0.0))

    def caps(sc: np.ndarray) -> np.ndarray:
        return np.maximum(np.ceil(base_cap * sc[None, :]), biggest[None, :])

    if arch == "ps":  # floor 2: a server holds the ideal PS bundle of each job that does not fit otherwise
        for c in configs:
            m, p, n, s = c
            bundle = s * z[p]
            cap = caps(scale)
            if np.any(np.all(bundle[None, :] <= cap + _EPS, axis=1)) or _ideal_fits_idle(cap, e, z, wt, pt, arch, c):
                continue
            use = bundle > 0
            short = (bundle[use][None, :] / (base_cap[:, use] * scale[use][None, :])).max(axis=1)
            h = int(np.argmin(short))
            scale[use] = np.maximum(scale[use], bundle[use] / base_cap[h, use])
    for _ in range(100):  # floor 3 (terminates: enough room holds any configuration)
        cap = caps(scale)
        if all(_ideal_fits_idle(cap, e, z, wt, pt, arch, c) for c in configs):
            break
        scale = scale * 1.25
    servers = [Server(name=f"h{h}-{chosen[h]}", capacity=[float(x) for x in row]) for h, row in enumerate(cap)]
    return Instance(horizon=T, architecture=arch, slot_seconds=slot_s, resources=resources, servers=servers,
                    worker_types=wt, ps_types=pt if arch == "ps" else [], jobs=jb)


_EPS = 1e-9


def _ideal_fits_idle(cap: np.ndarray, e: np.ndarray, z: np.ndarray, wt: list[NodeType], pt: list[NodeType],
                     arch: Architecture, config: tuple[int, int | None, int, int]) -> bool:
    """Whether N = D_j type-m workers (and type-p PSs) fit the idle cluster ``cap`` [H, R], colocated or
    distributed, as the validator reads (2d)-(2i)/(15a)-(15b): the same test as `mincost.fits_idle` for
    this one configuration (tests check they agree)."""
    m, p, n, _ = config
    em = e[m]
    zp = z[p] if p is not None else np.zeros_like(em)
    if np.any(np.all(n * em + zp <= cap + _EPS, axis=1)):
        return True  # colocated on one server
    pos = em > 0
    copies = np.floor((cap[:, pos] + _EPS) / em[pos]).min(axis=1).clip(min=0)  # type-m workers per server
    if p is None:  # Ring-AllReduce: N >= 2 workers on >= 2 servers
        return n >= 2 and copies.sum() >= n and int((copies > 0).sum()) >= 2
    b, B = wt[m].bandwidth_mbps, pt[p].bandwidth_mbps
    g = np.arange(n)  # workers on the PS server; x = n - g >= 1 elsewhere
    s = np.maximum(1, np.ceil((n - g) * b / B - _EPS))
    fits = np.all(g[None, :, None] * em + s[None, :, None] * zp <= cap[:, None, :] + _EPS, axis=2)  # [H, n]
    elsewhere = copies.sum() - copies  # [H]
    return bool(np.any(fits & (elsewhere[:, None] >= (n - g)[None, :])))
