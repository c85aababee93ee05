"""Instances of the tapfinger family (Li, Zeng, Zhang, Duan, Wu, "TapFinger: Task Placement and
Fine-Grained Resource Allocation for Edge Machine Learning", IEEE INFOCOM 2023), and their generators.

Notation of the paper -> fields:

===================  ============================================================
paper                field
===================  ============================================================
T                    ``horizon`` (timesteps ``0 .. T-1``)
r, C_{r,n}           ``resources[r]``, ``clusters[n].capacity[r]`` (integers)
t_hat_j              ``tasks[j].arrival``
b_{j,r}              ``tasks[j].min_resources[r]``
D_j                  ``tasks[j].reachable_clusters``
phi_j                from the task type's progress model (`edgeopt.tapfinger.speedup`)
|P_{n,t}|            ``pending_size`` (10)
===================  ============================================================

Readings (identical in the environment, the validator and the exact models):

* Time: a task started at ``start`` holds its allocation in timesteps ``start .. end-1`` and
  completes at ``end`` (<= ``horizon``); its completion time is ``end - arrival`` and the objective
  sum_j (end_j - arrival_j) equals sum_t R_t, the number of tasks alive (arrived, not finished)
  in each timestep t. A task may start in its arrival timestep.
* (8) is read together with the action mask of (12): every resource of a started task is at least
  its minimum ``b_{j,r}`` and at most the cluster's capacity (a zero is allowed only where the
  minimum is zero).
* Task ids equal their position in ``tasks``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from edgeopt.core import InputError
from edgeopt.tapfinger.speedup import ProgressModel, run_duration

PRESETS = ("small", "paper", "paper6", "hetero_clusters")

MAX_CAPACITY = 1024
MAX_HORIZON = 100_000


class Cluster(BaseModel):
    """An edge cluster n with integer capacity C_{r,n} per resource."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = ""
    capacity: list[int] = Field(description="C_{r,n}, one entry per resource")

    @model_validator(mode="after")
    def _cap(self) -> Cluster:
        for i, c in enumerate(self.capacity):
            if not 0 <= c <= MAX_CAPACITY:
                raise ValueError(f"capacity.{i}: must be in [0, {MAX_CAPACITY}], got {c}")
        return self


class TaskType(BaseModel):
    """A kind of ML task with its progress model."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    progress: ProgressModel


class Task(BaseModel):
    """A task j: arrival t_hat_j, type, minimum demand b_{j,r}, reachable clusters D_j."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: int = Field(ge=0)
    arrival: int = Field(ge=0)
    task_type: int = Field(ge=0)
    min_resources: list[int] = Field(description="b_{j,r}, one entry per resource")
    reachable_clusters: list[int] = Field(min_length=1, description="D_j")


class Instance(BaseModel):
    """A tapfinger instance (see the module docstring for the readings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    family: Literal["tapfinger"] = "tapfinger"
    horizon: int = Field(ge=1, le=MAX_HORIZON, description="T timesteps")
    timestep_seconds: float = Field(default=10.0, gt=0, le=86_400)
    resources: list[str] = Field(default_factory=lambda: ["cpu", "gpu"], min_length=1)
    clusters: list[Cluster] = Field(min_length=1, max_length=256)
    task_types: list[TaskType] = Field(min_length=1, max_length=64)
    tasks: list[Task] = Field(max_length=100_000)
    pending_size: int = Field(default=10, ge=1, le=64, description="|P_{n,t}|")
    switch_overhead: float = Field(default=0.5, ge=0, lt=1, description="lost fraction of a switched timestep")
    noise: float = Field(default=0.0, ge=0, le=0.5, description="u ~ U[-noise, noise] on progress gains")
    noise_seed: int = Field(default=0, ge=0)
    _cache: dict[Any, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> Instance:
        R, N, K = len(self.resources), len(self.clusters), len(self.task_types)
        if len(set(self.resources)) != R:
            raise ValueError("resources: names must be distinct")
        for n, c in enumerate(self.clusters):
            if len(c.capacity) != R:
                raise ValueError(f"clusters.{n}.capacity: needs {R} entries (one per resource)")
        for j, t in enumerate(self.tasks):
            if t.id != j:
                raise ValueError(f"tasks.{j}.id: must equal its position {j}, got {t.id}")
            if t.task_type >= K:
                raise ValueError(f"tasks.{j}.task_type: {t.task_type} is not a task type (have {K})")
            if t.arrival >= self.horizon:
                raise ValueError(f"tasks.{j}.arrival: {t.arrival} is not before the horizon {self.horizon}")
            if len(t.min_resources) != R or any(not 0 <= b <= MAX_CAPACITY for b in t.min_resources):
                raise ValueError(f"tasks.{j}.min_resources: needs {R} entries in [0, {MAX_CAPACITY}]")
            if len(set(t.reachable_clusters)) != len(t.reachable_clusters) or any(
                    not 0 <= n < N for n in t.reachable_clusters):
                raise ValueError(f"tasks.{j}.reachable_clusters: distinct cluster indices in [0, {N}) required")
        return self

    @property
    def jobs(self) -> list[Task]:
        """The tasks, under the name the shared CLI counts."""
        return self.tasks

    # -- derived data, cached on the (frozen) instance ------------------------------------------
    def noise_of(self, task: int) -> tuple[float, ...] | None:
        """Noise offsets u of the task's run timesteps (None when the instance is noise-free)."""
        if self.noise <= 0:
            return None
        key = ("noise", task)
        if key not in self._cache:
            rng = np.random.default_rng([self.noise_seed, task])
            self._cache[key] = tuple(rng.uniform(-self.noise, self.noise, self.horizon).tolist())  # Python floats
        return self._cache[key]

    def duration(self, task: int, cpu: int, gpu: int) -> int:
        """Timesteps task ``task`` runs under a fixed ``(cpu, gpu)`` from its start (noise included).

        Returns ``horizon + 1`` when it cannot finish within the horizon.
        """
        key = ("d", task, cpu, gpu)
        out = self._cache.get(key)
        if out is None:
            t = self.tasks[task]
            out = run_duration(self.task_types[t.task_type].progress, cpu, gpu, self.timestep_seconds,
                               self.noise_of(task), self.horizon)
            self._cache[key] = out
        return out

    def type_duration(self, task_type: int, cpu: int, gpu: int) -> int:
        """Noise-free timesteps of a task of ``task_type`` under ``(cpu, gpu)`` (what policies may estimate)."""
        key = ("td", task_type, cpu, gpu)
        out = self._cache.get(key)
        if out is None:
            out = run_duration(self.task_types[task_type].progress, cpu, gpu, self.timestep_seconds, None,
                               self.horizon)
            self._cache[key] = out
        return out

    def pareto_allocations(self, task: int, cluster: int) -> list[tuple[tuple[int, ...], int]]:
        """Allocation options of ``task`` on ``cluster`` that no smaller allocation matches in duration.

        Returns ``[(allocation, duration)]`` over allocations with every resource in
        ``[b_{j,r}, C_{r,n}]``, keeping only those for which no componentwise smaller-or-equal
        allocation is as fast: a dominated option never helps a schedule, since the smaller one
        finishes as early and leaves more capacity. The grid is CPU x GPU (the first two
        resources); further resources are held at their minimum.
        """
        key = ("pareto", task, cluster)
        if key in self._cache:
            return self._cache[key]
        t = self.tasks[task]
        cap = self.clusters[cluster].capacity
        b = t.min_resources
        if any(b[r] > cap[r] for r in range(len(cap))):
            self._cache[key] = []
            return []
        rest = tuple(b[2:])
        opts: list[tuple[tuple[int, ...], int]] = []
        cpus = range(b[0], cap[0] + 1)
        gpus = range(b[1], cap[1] + 1) if len(cap) > 1 else [0]
        grid = sorted((self.duration(task, c, g), c, g) for c in cpus for g in gpus)
        kept: list[tuple[int, int]] = []
        for d, c, g in grid:  # by duration, then lexicographically: a dominator always comes first
            if d > self.horizon or any(c2 <= c and g2 <= g for c2, g2 in kept):
                continue
            kept.append((c, g))
            alloc = (c, g, *rest) if len(cap) > 1 else (c, *rest[1:])
            opts.append((alloc, d))
        opts.sort(key=lambda o: (o[1], o[0]))
        self._cache[key] = opts
        return opts


# ----------------------------------------------------------------------------------------------
# generators
# ----------------------------------------------------------------------------------------------
def default_task_types() -> list[TaskType]:
    """The two synthetic types of Sec. V-A: resource-insensitive (image) and -sensitive (language)."""
    return [TaskType(name="insensitive", progress=ProgressModel(kind="insensitive")),
            TaskType(name="sensitive", progress=ProgressModel(kind="sensitive"))]


def generate(
    preset: str = "small",
    *,
    seed: int = 0,
    jobs: int | None = None,
    servers: int | None = None,
    horizon: int | None = None,
    clusters: int | None = None,
    arrival_rate: float | None = None,
    noise: float = 0.0,
    sensitive_fraction: float = 0.5,
    reachability: Literal["bandwidth", "uniform_k"] = "bandwidth",
) -> Instance:
    """A seeded instance. Same arguments, identical instance.

    Presets:
        small: 2 clusters of 6 CPU / 4 GPU, 6 tasks, Poisson(1) arrivals, T = 64; both exact
            models prove optimality in well under 10 s.
        paper: Sec. V-A: 3 clusters of 16 CPU / 16 GPU, 64 tasks per cluster, Poisson(2)
            arrivals per timestep (``clusters=6, arrival_rate=4`` for the 6-cluster setting),
            minimum 2 CPU / 1 GPU, half the tasks of each type, device-cluster bandwidth
            U[0, 10] Mbps and a cluster reachable at >= 5 Mbps (a task that reaches none redraws
            its bandwidths; ``reachability="uniform_k"`` instead draws k ~ U{1..N} clusters as the
            authors' code does). T = last arrival + 300.
        paper6: the paper's 6-cluster setting: ``paper`` with 6 clusters and arrival rate 4 (the
            same as ``paper`` with ``clusters=6, arrival_rate=4``, i.e. ``edgeopt generate tapfinger --preset paper
            --clusters 6 --arrival-rate 4``).
        hetero_clusters: the authors' heterogeneous setting: 6 clusters from (4, 4) to (32, 32),
            arrival rate 6, 64 tasks per cluster.

    Args:
        jobs: number of tasks (overrides the preset).
        servers: number of clusters (alias of ``clusters``, the shared CLI's name).
        horizon: T (overrides the preset; tasks arriving at or after it are dropped).
        clusters: number of clusters.
        arrival_rate: Poisson rate of arrivals per timestep.
        noise: +/- range of the multiplicative noise on progress gains (0.1 in the paper).
        sensitive_fraction: share of resource-sensitive tasks.
        reachability: ``bandwidth`` (the paper's text) or ``uniform_k`` (the authors' code).
    """
    if preset not in PRESETS:
        raise InputError("preset", f"unknown preset {preset!r} for tapfinger (known: {', '.join(PRESETS)})")
    if not 0 <= sensitive_fraction <= 1:
        raise InputError("sensitive_fraction", f"must be in [0, 1], got {sensitive_fraction}")
    if arrival_rate is not None and not 0 < arrival_rate <= 1000:
        raise InputError("arrival_rate", f"must be in (0, 1000], got {arrival_rate}")
    if not 0 <= noise <= 0.5:
        raise InputError("noise", f"must be in [0, 0.5], got {noise}")
    n_clusters = clusters or servers
    # one random stream per setting; paper6 shares paper's, so it equals paper with 6 clusters at rate 4
    rng = np.random.default_rng([seed, {"small": 0, "paper": 1, "paper6": 1, "hetero_clusters": 2}[preset]])
    if preset == "small":
        caps = [(6, 4)] * (n_clusters or 2)
        n_tasks, rate, slack = jobs or 6, arrival_rate or 1.0, None
        T = horizon or 64
    elif preset in ("paper", "paper6"):
        six = preset == "paper6"
        caps = [(16, 16)] * (n_clusters or (6 if six else 3))
        n_tasks, rate, slack = jobs or 64 * len(caps), arrival_rate or (4.0 if six else 2.0), 300
        T = horizon
    else:
        base = [(4, 4), (8, 8), (12, 12), (16, 16), (24, 24), (32, 32)]
        k = n_clusters or 6
        caps = [base[round(i * (len(base) - 1) / max(1, k - 1))] for i in range(k)]
        n_tasks, rate, slack = jobs or 64 * k, arrival_rate or 6.0, 300
        T = horizon
    N = len(caps)
    arrivals = _poisson_arrivals(rng, n_tasks, rate)
    n_sens = round(sensitive_fraction * n_tasks)
    types = np.array([1] * n_sens + [0] * (n_tasks - n_sens))
    rng.shuffle(types)
    reach = [_reachable(rng, N, reachability) for _ in range(n_tasks)]
    if T is None:
        T = int(arrivals[-1]) + (slack or 40) if n_tasks else 1
    kept = [j for j, a in enumerate(arrivals) if a < T]  # draw j keeps its type and reach, renumbered
    tasks = [Task(id=i, arrival=int(arrivals[j]), task_type=int(types[j]), min_resources=[2, 1],
                  reachable_clusters=reach[j]) for i, j in enumerate(kept)]
    return Instance(
        horizon=int(T),
        clusters=[Cluster(name=f"edge{n}", capacity=list(c)) for n, c in enumerate(caps)],
        task_types=default_task_types(),
        tasks=tasks,
        noise=float(noise),
        noise_seed=int(seed),
    )


def _poisson_arrivals(rng: np.random.Generator, n: int, rate: float) -> np.ndarray:
    """Arrival timesteps of ``n`` tasks with Poisson(``rate``) arrivals per timestep, sorted."""
    out: list[int] = []
    t = 0
    while len(out) < n:
        k = int(rng.poisson(rate))
        out.extend([t] * min(k, n - len(out)))
        t += 1
    return np.array(out, dtype=int)


def _reachable(rng: np.random.Generator, N: int, how: str) -> list[int]:
    if how == "uniform_k":
        k = int(rng.integers(1, N + 1))
        return sorted(int(x) for x in rng.choice(N, size=k, replace=False))
    for _ in range(1000):
        bw = rng.uniform(0.0, 10.0, size=N)
        ok = [n for n in range(N) if bw[n] >= 5.0]
        if ok:
            return ok
    return [int(rng.integers(0, N))]  # pragma: no cover - probability 2^-1000N


def capacity_bound(instance: Instance) -> int:
    """Most tasks that can run at once on any cluster (each at its minimum): sizes running-task arrays."""
    mins = np.array([t.min_resources for t in instance.tasks] or [[1] * len(instance.resources)])
    smallest = np.maximum(mins.min(axis=0), 1)
    return max(1, max(int(min(math.floor(c / s) for c, s in zip(cl.capacity, smallest, strict=True)))
                      for cl in instance.clusters))
