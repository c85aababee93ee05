"""Instances of the okita family (Han, Zhou, Pang, Tan, Cao, "Online Scheduling Unbiased Distributed
Learning over Wireless Edge Networks", 2021), and their seeded generators.

Notation of the paper -> fields:

=====================  ==========================================================
paper                  field
=====================  ==========================================================
T                      ``horizon`` (slots ``0 .. T-1``)
K resource types       ``resources`` (gpu, cpu, mem_gb, disk_gb)
C_r^k                  ``sites[r].capacity[k]``
q^{rr'}                ``bandwidth_cost_per_mb[r][r']`` (cost per MB, zero diagonal)
a_i                    ``jobs[i].arrival`` (slot)
E_i                    ``jobs[i].epochs``
D_i^r                  ``jobs[i].data_chunks[r]`` (chunks of job i held by site r)
delta_i                ``jobs[i].chunk_size_mb``
pi_i                   ``jobs[i].param_size_mb`` (MB exchanged per worker and slot)
rho_i                  ``jobs[i].worker_chunks_per_slot`` (chunk-epochs per worker and slot)
m_i^k, n_i^k           ``jobs[i].worker_demand[k]``, ``jobs[i].ps_demand[k]``
f_i                    ``jobs[i].latency_cost`` (non-decreasing; see `LatencyCost`)
=====================  ==========================================================

Readings kept identical in the validator, the online algorithm, the baselines and the exact models
(``docs/families/okita.md`` lists them with their reasons):

* Latency: a job completed in slot ``t_i`` (the last slot in which it has workers, eq. (2e)) pays
  ``f_i(t_i - a_i + 1)``: the response time counts the completion slot, so a job that arrives and
  completes in one slot pays ``f_i(1)``. This is Alg. 1 line 9 (``f_i(t + l_i - a_i)`` for a job run
  in slots ``t .. t + l_i - 1``); line 26 writes ``f_i(t - a_i)`` at the end of slot t, one slot less.
* (2b): the workers of site r' in slot t process E_i epochs of every chunk trained there in slot t,
  so a chunk is trained once, in one slot, where it is in that slot: ``rho_i y >= E_i * chunks``.
  We require ``rho_i >= E_i`` (a worker trains at least one chunk per slot).
* Jobs have at least one chunk; ``latency_cost`` is validated non-decreasing over 1..T on load.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from edgeopt.core import InputError
from edgeopt.core import bounds as B

RESOURCES = ("gpu", "cpu", "mem_gb", "disk_gb")
#: Bound on every numeric field, so sums and products stay finite and exact models stay sane.
MAX_VALUE = 1e9
#: The exponential ("sigmoid") cost's growth rate per slot, 0.25 in Sec. V-B.
EXP_RATE = 0.25


def _finite(v: float, name: str, lo: float = 0.0) -> float:
    if not math.isfinite(v) or v < lo or v > MAX_VALUE:
        raise ValueError(f"{name}: must be a finite number in [{lo:g}, {MAX_VALUE:g}], got {v}")
    return v


class ExponentialCost(BaseModel):
    """The paper's "sigmoid" default f(x) = tau * exp(0.25 x) (Sec. V-B), tau >= 0."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["exponential"] = "exponential"
    tau: float = Field(ge=0, le=MAX_VALUE)

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):  # an overflow gives inf, which Instance rejects with its field
            return self.tau * np.exp(EXP_RATE * np.asarray(x, dtype=float))

    @property
    def slope(self) -> float:
        return self.tau


class LinearCost(BaseModel):
    """f(x) = tau x + b (Sec. V-B), tau >= 0."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["linear"] = "linear"
    tau: float = Field(ge=0, le=MAX_VALUE)
    b: float = Field(ge=-MAX_VALUE, le=MAX_VALUE)

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        return self.tau * np.asarray(x, dtype=float) + self.b

    @property
    def slope(self) -> float:
        return self.tau


class PiecewiseCost(BaseModel):
    """f(x) = tau1 if x < c else tau2 (Sec. V-B), a hard deadline c; non-decreasing needs tau2 >= tau1."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["piecewise"] = "piecewise"
    tau1: float = Field(ge=-MAX_VALUE, le=MAX_VALUE)
    tau2: float = Field(ge=-MAX_VALUE, le=MAX_VALUE)
    c: float = Field(ge=0, le=MAX_VALUE)

    @model_validator(mode="after")
    def _monotone(self) -> PiecewiseCost:
        if self.tau2 < self.tau1:
            raise ValueError(f"piecewise latency cost must be non-decreasing: tau2 ({self.tau2}) < tau1 ({self.tau1})")
        return self

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(x, dtype=float) < self.c, self.tau1, self.tau2).astype(float)

    @property
    def slope(self) -> float:
        return self.tau1


class TableCost(BaseModel):
    """Any non-decreasing f given by its values ``values[x - 1] = f(x)`` for x = 1 .. len(values)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["table"] = "table"
    values: list[float] = Field(min_length=1)

    @model_validator(mode="after")
    def _monotone(self) -> TableCost:
        for k, v in enumerate(self.values):
            _finite(v, f"values.{k}", lo=-MAX_VALUE)
            if k and v < self.values[k - 1]:
                raise ValueError(f"table latency cost must be non-decreasing: values[{k}] = {v} < values[{k - 1}]")
        return self

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        idx = np.clip(np.asarray(x, dtype=int) - 1, 0, len(self.values) - 1)
        return np.asarray(self.values, dtype=float)[idx]

    @property
    def slope(self) -> float:
        v = self.values
        return (v[-1] - v[0]) / max(1, len(v) - 1)


LatencyCost = Annotated[ExponentialCost | LinearCost | PiecewiseCost | TableCost, Field(discriminator="kind")]


class Site(BaseModel):
    """An edge site r with capacity C_r^k per resource."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = ""
    capacity: list[float] = Field(description="C_r^k, one per resource, >= 0")

    @model_validator(mode="after")
    def _cap(self) -> Site:
        for k, v in enumerate(self.capacity):
            _finite(v, f"capacity.{k}")
        return self


class Job(BaseModel):
    """A UDL job i."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: int = Field(ge=0)
    arrival: int = Field(ge=0, description="a_i, slot")
    epochs: int = Field(ge=1, le=10**6, description="E_i")
    data_chunks: list[int] = Field(description="D_i^r, one per site, >= 0")
    chunk_size_mb: float = Field(ge=0, le=MAX_VALUE, description="delta_i, MB")
    param_size_mb: float = Field(ge=0, le=MAX_VALUE, description="pi_i, MB per worker and slot")
    worker_chunks_per_slot: float = Field(gt=0, le=MAX_VALUE, description="rho_i, chunk-epochs per worker-slot")
    worker_demand: list[float] = Field(description="m_i^k, one per resource")
    ps_demand: list[float] = Field(description="n_i^k, one per resource")
    latency_cost: LatencyCost

    @model_validator(mode="after")
    def _fields(self) -> Job:
        for k, v in enumerate(self.data_chunks):
            if v < 0 or v > 10**7:
                raise ValueError(f"data_chunks.{k}: must be in [0, 1e7], got {v}")
        if sum(self.data_chunks) < 1:
            raise ValueError("data_chunks: a job needs at least one chunk")
        for name in ("worker_demand", "ps_demand"):
            for k, v in enumerate(getattr(self, name)):
                _finite(v, f"{name}.{k}")
        if self.worker_chunks_per_slot < self.epochs:
            raise ValueError(
                f"worker_chunks_per_slot: rho ({self.worker_chunks_per_slot}) must be >= epochs ({self.epochs}) "
                "(a worker trains at least one chunk per slot)")
        return self

    @property
    def total_chunks(self) -> int:
        return int(sum(self.data_chunks))

    @property
    def chunks_per_worker(self) -> float:
        """rho_i / E_i: chunks one worker trains in one slot (2b)."""
        return self.worker_chunks_per_slot / self.epochs

    def cost(self, latency: int | np.ndarray) -> np.ndarray | float:
        """f_i(latency) (latency = t_i - a_i + 1 >= 1)."""
        out = self.latency_cost.evaluate(np.asarray(latency))
        return float(out) if np.ndim(out) == 0 else out


#: Most sites an instance may have: the bandwidth-cost matrix is R x R (10**6 numbers at this cap;
#: the paper's largest setting has R = 50).
MAX_SITES = 1000


class Instance(BaseModel):
    """An okita instance: sites, bandwidth prices, jobs."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    family: Literal["okita"] = "okita"
    horizon: int = Field(ge=1, le=10**5, description="T, number of slots")
    slot_seconds: float = Field(default=1800.0, gt=0, le=MAX_VALUE)
    resources: list[str] = Field(default_factory=lambda: list(RESOURCES), min_length=1)
    sites: list[Site] = Field(min_length=1, max_length=MAX_SITES)
    bandwidth_cost_per_mb: list[list[float]] = Field(max_length=MAX_SITES, description="q^{rr'}, R x R, zero diagonal")
    jobs: list[Job] = Field(default_factory=list, max_length=B.MAX_JOBS)

    @model_validator(mode="after")
    def _shapes(self) -> Instance:
        K, R = len(self.resources), len(self.sites)
        if len(set(self.resources)) != K or any(not r for r in self.resources):
            raise ValueError("resources: names must be non-empty and unique")
        for r, s in enumerate(self.sites):
            if len(s.capacity) != K:
                raise ValueError(f"sites.{r}.capacity: has {len(s.capacity)} entries, expected {K}")
        q = self.bandwidth_cost_per_mb
        if len(q) != R or any(len(row) != R for row in q):
            raise ValueError(f"bandwidth_cost_per_mb: must be a {R} x {R} matrix")
        for r in range(R):
            for r2 in range(R):
                v = q[r][r2]
                if not math.isfinite(v) or v < 0 or v > MAX_VALUE:
                    raise ValueError(f"bandwidth_cost_per_mb.{r}.{r2}: must be finite in [0, {MAX_VALUE:g}], got {v}")
            if q[r][r] != 0:
                raise ValueError(f"bandwidth_cost_per_mb.{r}.{r}: the diagonal must be 0, got {q[r][r]}")
        for i, j in enumerate(self.jobs):
            if j.id != i:
                raise ValueError(f"jobs.{i}.id: must equal its position {i}, got {j.id}")
            if j.arrival >= self.horizon:
                raise ValueError(f"jobs.{i}.arrival: must be < horizon {self.horizon}, got {j.arrival}")
            if len(j.data_chunks) != R:
                raise ValueError(f"jobs.{i}.data_chunks: has {len(j.data_chunks)} entries, expected {R}")
            for name in ("worker_demand", "ps_demand"):
                if len(getattr(j, name)) != K:
                    raise ValueError(f"jobs.{i}.{name}: has {len(getattr(j, name))} entries, expected {K}")
            if not any(v > 0 for v in j.worker_demand):
                raise ValueError(f"jobs.{i}.worker_demand: at least one entry must be > 0")
            f = j.cost(np.arange(1, self.horizon + 1))
            if not np.all(np.isfinite(f)) or np.any(np.abs(f) > 1e300):
                raise ValueError(f"jobs.{i}.latency_cost: not finite over 1..{self.horizon}")
            if np.any(np.diff(f) < 0):
                raise ValueError(f"jobs.{i}.latency_cost: must be non-decreasing over 1..{self.horizon}")
        return self

    # ---- derived arrays ---------------------------------------------------------------------
    @property
    def capacity(self) -> np.ndarray:
        """C [R, K]."""
        return np.array([s.capacity for s in self.sites], dtype=float).reshape(len(self.sites), -1)

    @property
    def q(self) -> np.ndarray:
        """q [R, R] (cost per MB from r to r')."""
        return np.array(self.bandwidth_cost_per_mb, dtype=float)

    def latency_table(self, i: int) -> np.ndarray:
        """``f_i(t - a_i + 1)`` for every slot t = 0 .. T-1 (slots before a_i hold f_i(1))."""
        job = self.jobs[i]
        x = np.maximum(np.arange(self.horizon) - job.arrival + 1, 1)
        return np.asarray(job.latency_cost.evaluate(x), dtype=float)


def parse_instance(data: object) -> Instance:
    """Validate ``data`` into an `Instance`; errors name the field (`InputError`)."""
    from edgeopt.core import parse_model

    return parse_model(Instance, data, root="instance")


# ---- generators ---------------------------------------------------------------------------------

PRESETS = ("small", "testbed", "paper", "paper_linear", "paper_piecewise")
CostKind = Literal["exponential", "linear", "piecewise", "mixed"]

#: EC2 GPU instances of Sec. V-B (P3, P2, G3 16xlarge): GPUs, vCPUs, memory GB, disk GB (EBS volume we choose).
EC2 = {
    "p3.16xlarge": (8, 64, 488, 1000),
    "p2.16xlarge": (16, 64, 732, 1000),
    "g3.16xlarge": (4, 64, 488, 1000),
}

#: Table II: (model, dataset, chunks).
TABLE2 = (
    ("ResNet-50", "CIFAR10", 27),
    ("ResNet-101", "CIFAR10", 27),
    ("GoogLeNet", "Caltech101", 115),
    ("VGG-16", "Caltech101", 115),
    ("AlexNet", "Tiny-ImageNet", 150),
    ("Inception-BN", "Tiny-ImageNet", 150),
)


def generate(preset: str = "small", *, seed: int = 0, jobs: int | None = None, servers: int | None = None,
             horizon: int | None = None, sites: int | None = None, cost: CostKind | None = None,
             arrival_window: int | None = None) -> Instance:
    """A seeded instance. Same arguments, identical instance.

    Presets:
        small: 3 sites, 3 jobs, T = 8, 0-3 chunks per site, mixed latency-cost kinds (all four), arrivals
            in [0, 2]. Sized so that both exact models prove optimality within seconds, not one: at this
            size CP-SAT takes 0.95 s on average over 10 seeds with spread arrivals and 1.5 s with all
            arrivals in slot 0, the MILP 0.9 s and 7.5 s on seeds 0 and 1; one more site or job (4 x 3 or
            3 x 4) raises CP-SAT's mean to 7-8 s (benchmarks/okita_ratio.py and okita_exact_scale.py;
            wall times on a shared 2-core machine).
        testbed: Sec. V-A / Table II: 9 sites of 1 GPU, 12 CPU, 16 GB (500 GB disk); 10 jobs drawn from
            the six Table II jobs, their chunks spread over the sites at random; delta = 2 MB; E in
            [20, 30]; rho_i / E_i an integer in [3, 8] (the paper "obtains rho by pre-training"); each worker
            and each PS needs 0-1 GPU, 1-3 CPU, 2-6 GB (Sec. V-A: "Each worker or PS requires 0 to 1 GPU, 1
            to 3 CPU cores and 2 to 6GB RAM"), and 10 GB disk (ours); arrivals uniform in the first 10 of 30
            slots. (Before this reading the PS drew no GPU; the paper preset's PS needs none, as Sec. V-B says.)
        paper: Sec. V-B: R = 50, T = 150, I = 100; sites are EC2 P3/P2/G3 16xlarge; worker 0-4 GPU,
            1-10 vCPU, 2-32 GB, 5-10 GB disk; PS 1-10 vCPU, 2-32 GB, 5-10 GB disk; q uniform in [2, 8]
            per 100 MB (symmetric); D_i^r in [10, 20]; delta in [20, 60] MB; rho/E an integer in [5, 15];
            E in [20, 30] (not given; only rho/E matters); pi in [30, 575] MB; exponential cost, tau in
            [20, 100]. Arrivals: the paper says "randomly"; we draw them uniformly in [0, arrival_window)
            with arrival_window = T // 3 by default.
        paper_linear, paper_piecewise: the paper preset with the linear (tau in [20, 100], b in [50, 200])
            or piecewise (tau1 in [20, 100], tau2 in [300, 400], c in [3, 5]) cost.

    Args:
        jobs, servers / sites, horizon: override the preset's sizes (``servers`` is the CLI's name).
        cost: override the latency-cost kind (``mixed`` draws one of the four per job).
        arrival_window: arrivals uniform in [0, arrival_window) (clipped to the horizon).
    """
    n_sites = sites if sites is not None else servers
    for name, v in (("jobs", jobs), ("servers", n_sites), ("horizon", horizon), ("arrival_window", arrival_window)):
        if v is not None and v < 1:
            raise InputError(name, f"must be >= 1, got {v}")
    rng = np.random.default_rng(seed)
    if preset == "small":
        return _small(rng, jobs or 3, n_sites or 3, horizon or 8, cost or "mixed", arrival_window or 3)
    if preset == "testbed":
        return _testbed(rng, jobs or 10, n_sites or 9, horizon or 30, cost or "exponential", arrival_window or 10)
    if preset in ("paper", "paper_linear", "paper_piecewise"):
        kind = cost or ("exponential" if preset == "paper" else preset.split("_")[1])
        T = horizon or 150
        return _paper(rng, jobs or 100, n_sites or 50, T, kind, arrival_window or max(1, T // 3))
    raise InputError("preset", f"unknown preset {preset!r} for okita (known: {', '.join(PRESETS)})")


def _latency(rng: np.random.Generator, kind: str, horizon: int, small: bool = False) -> dict:
    if kind == "mixed":
        kind = str(rng.choice(["exponential", "linear", "piecewise", "table"]))
    if kind == "exponential":
        return {"kind": "exponential", "tau": float(rng.integers(20, 101))}
    if kind == "linear":
        return {"kind": "linear", "tau": float(rng.integers(20, 101)), "b": float(rng.integers(50, 201))}
    if kind == "piecewise":
        return {"kind": "piecewise", "tau1": float(rng.integers(20, 101)), "tau2": float(rng.integers(300, 401)),
                "c": float(rng.integers(3, 6))}
    if kind == "table":
        steps = rng.integers(0, 60, size=horizon)
        return {"kind": "table", "values": [float(v) for v in np.cumsum(steps) + rng.integers(10, 60)]}
    raise InputError("cost", f"unknown latency-cost kind {kind!r}")


def _q(rng: np.random.Generator, R: int, lo: float, hi: float) -> list[list[float]]:
    """Symmetric q with zero diagonal, rounded to 1e-3 per MB (exact in the CP-SAT scaling)."""
    q = np.round(rng.uniform(lo, hi, size=(R, R)), 3)
    q = np.triu(q, 1)
    q = q + q.T
    return [[float(v) for v in row] for row in q]


def _small(rng, n_jobs, R, T, kind, window) -> Instance:
    sites = [{"name": f"s{r}", "capacity": [float(rng.integers(1, 3)), float(rng.integers(6, 11)),
                                             float(rng.integers(12, 25)), 100.0]} for r in range(R)]
    jobs = []
    for i in range(n_jobs):
        chunks = [int(v) for v in rng.integers(0, 4, size=R)]
        if sum(chunks) == 0:
            chunks[int(rng.integers(R))] = 1
        E = int(rng.integers(1, 4))
        jobs.append({
            "id": i, "arrival": int(rng.integers(0, min(window, T))), "epochs": E, "data_chunks": chunks,
            "chunk_size_mb": float(rng.integers(20, 61)), "param_size_mb": float(rng.integers(30, 300)),
            "worker_chunks_per_slot": float(E * rng.integers(1, 3)),
            "worker_demand": [float(rng.integers(0, 2)), float(rng.integers(1, 4)), float(rng.integers(2, 7)), 5.0],
            "ps_demand": [0.0, float(rng.integers(1, 3)), float(rng.integers(2, 5)), 5.0],
            "latency_cost": _latency(rng, kind, T, small=True),
        })
    return Instance(horizon=T, sites=sites, bandwidth_cost_per_mb=_q(rng, R, 0.02, 0.08), jobs=jobs)


def _testbed(rng, n_jobs, R, T, kind, window) -> Instance:
    sites = [{"name": f"server{r}", "capacity": [1.0, 12.0, 16.0, 500.0]} for r in range(R)]
    jobs = []
    for i in range(n_jobs):
        _model, _dataset, total = TABLE2[int(rng.integers(len(TABLE2)))]
        chunks = np.bincount(rng.integers(0, R, size=total), minlength=R)
        E = int(rng.integers(20, 31))
        jobs.append({
            "id": i, "arrival": int(rng.integers(0, min(window, T))), "epochs": E,
            "data_chunks": [int(v) for v in chunks], "chunk_size_mb": 2.0,
            "param_size_mb": float(rng.integers(30, 576)), "worker_chunks_per_slot": float(E * rng.integers(3, 9)),
            "worker_demand": [float(rng.integers(0, 2)), float(rng.integers(1, 4)), float(rng.integers(2, 7)), 10.0],
            "ps_demand": [float(rng.integers(0, 2)), float(rng.integers(1, 4)), float(rng.integers(2, 7)), 10.0],
            "latency_cost": _latency(rng, kind, T),
        })
    return Instance(horizon=T, slot_seconds=1200.0, sites=sites,
                    bandwidth_cost_per_mb=_q(rng, R, 0.02, 0.08), jobs=jobs)


def _paper(rng, n_jobs, R, T, kind, window) -> Instance:
    kinds = list(EC2.values())
    sites = [{"name": f"site{r}", "capacity": [float(v) for v in kinds[int(rng.integers(len(kinds)))]]}
             for r in range(R)]
    jobs = []
    for i in range(n_jobs):
        E = int(rng.integers(20, 31))
        jobs.append({
            "id": i, "arrival": int(rng.integers(0, min(window, T))), "epochs": E,
            "data_chunks": [int(v) for v in rng.integers(10, 21, size=R)],
            "chunk_size_mb": float(rng.integers(20, 61)), "param_size_mb": float(rng.integers(30, 576)),
            "worker_chunks_per_slot": float(E * rng.integers(5, 16)),
            "worker_demand": [float(rng.integers(0, 5)), float(rng.integers(1, 11)), float(rng.integers(2, 33)),
                              float(rng.integers(5, 11))],
            "ps_demand": [0.0, float(rng.integers(1, 11)), float(rng.integers(2, 33)), float(rng.integers(5, 11))],
            "latency_cost": _latency(rng, kind, T),
        })
    return Instance(horizon=T, sites=sites, bandwidth_cost_per_mb=_q(rng, R, 0.02, 0.08), jobs=jobs)
