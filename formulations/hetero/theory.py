"""The bounds of Zhou et al.'s Sec. 4-5 as numbers, their assumptions as checks, and instances built
to satisfy them (for the theorem tests and ``benchmarks/hetero_ratios.py``).

Conventions (those of ``edgeopt/hetero/online.py``, which the checks must match):

* resource consumption is measured in units of each server's capacity: a schedule l of job j
  consumes ``sum_t sum_h sum_r f_jh^r(l) / C_h^r``;
* lambda = 2 T H R F + 1 (eq. 11), gamma = 2 ln(lambda) (Theorem 3), and the alpha of Lemma 2 /
  Theorem 5 is floor((ln w(J) - ln w_min) / (ln gamma - ln(gamma - 1))) + 1 (natural logarithms;
  the paper's Theorem 5 writes the same quantity with base-2 logarithms).

Assumptions of Theorem 3 (Sec. 5.1): (a) 1 <= w_j / consumption(l) <= F for every schedule l of
j; (b) f_jh^r(l) / C_h^r <= 1 / ln(lambda). Both quantify over Gamma_j; a schedule with more PSs
than (2i)/(2e) need is dominated (``data.ps_bound``) and never chosen by A_mincost or an optimum,
so the checks range over *reduced* schedules: N <= D_j workers of one type, at most
``ps_bound`` PSs per server, the minimal duration of the configuration.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from edgeopt.hetero.instance import Instance, Job, NodeType, Server, min_duration


def gamma_of(lam: float) -> float:
    """gamma = 2 ln(lambda): the approximation ratio of A_maxweight (Theorem 3)."""
    return 2.0 * math.log(lam)


def alpha_of(weights: list[float], lam: float, w_min: float | None = None) -> int:
    """alpha = floor((ln w(J) - ln w_min) / (ln gamma - ln(gamma - 1))) + 1 (Lemma 2 (6), Theorem 5)."""
    g = gamma_of(lam)
    wmin = min(weights) if w_min is None else w_min
    return math.floor((math.log(sum(weights)) - math.log(wmin)) / (math.log(g) - math.log(g - 1.0))) + 1


@dataclasses.dataclass(frozen=True)
class Assumptions:
    """Where an instance stands against Theorem 3's assumptions.

    Attributes:
        lam: lambda used.
        max_load_ratio: max over jobs, reduced schedules, servers, resources of f_jh^r(l) / C_h^r.
        load_bound: 1 / ln(lambda) (assumption (b) holds iff max_load_ratio <= load_bound).
        min_weight_ratio: min over jobs of w_j / (largest consumption of a reduced schedule) (>= 1 for (a)).
        max_weight_ratio: max over jobs of w_j / (smallest consumption) (<= F for (a)).
    """

    lam: float
    max_load_ratio: float
    load_bound: float
    min_weight_ratio: float
    max_weight_ratio: float

    @property
    def hold(self) -> bool:
        return self.max_load_ratio <= self.load_bound + 1e-12 and self.min_weight_ratio >= 1.0 - 1e-12


def _reduced_configs(instance: Instance, job: Job, window: int) -> list[tuple[int, int | None, bool, int, int, int]]:
    """(m, p, q, N, d, most PSs on one server) of every configuration that fits ``window`` slots."""
    out = []
    ps_arch = instance.architecture == "ps"
    bmax = max(t.bandwidth_mbps for t in instance.worker_types)
    for m in range(len(instance.worker_types)):
        for p in (range(len(instance.ps_types)) if ps_arch else [None]):
            for q in (True, False):
                for n in range(1, job.chunks + 1):
                    if not ps_arch and not q and n < 2:
                        continue
                    d = min_duration(instance, job, m, p, q, n)
                    if d > window:
                        continue
                    s = 0 if p is None else (1 if q else max(1, math.ceil(job.chunks * bmax
                                                                       / instance.ps_types[p].bandwidth_mbps - 1e-9)))
                    out.append((m, p, q, n, d, s))
    return out


def check_assumptions(instance: Instance, lam: float, jobs: list[int] | None = None,
                      window: int | None = None) -> Assumptions:
    """Theorem 3's assumptions (a) and (b) over the reduced schedules of ``jobs`` (default all)."""
    cap = instance.capacity
    cmin = np.where(cap > 0, cap, np.inf).min(axis=0)  # the smallest capacity per resource (worst ratio)
    cmax = cap.max(axis=0)
    e, z = instance.worker_demand, instance.ps_demand
    window = instance.horizon if window is None else window
    load_ratio, wr_min, wr_max = 0.0, math.inf, 0.0
    for j in (range(len(instance.jobs)) if jobs is None else jobs):
        job = instance.jobs[j]
        cons_max, cons_min = 0.0, math.inf
        for m, p, _q, n, d, s in _reduced_configs(instance, job, window):
            # one server may hold all N workers and all PSs (colocated) -- the largest per-server load
            load = n * e[m] + (s * z[p] if p is not None else 0.0)
            load_ratio = max(load_ratio, float(np.max(load / cmin)))
            unit_max = n * (e[m] / cmin).sum() + (s * (z[p] / cmin).sum() if p is not None else 0.0)
            unit_min = n * (e[m] / cmax).sum() + ((z[p] / cmax).sum() if p is not None else 0.0)
            cons_max = max(cons_max, d * unit_max)
            cons_min = min(cons_min, d * unit_min)
        if cons_max > 0:
            wr_min = min(wr_min, job.weight / cons_max)
            wr_max = max(wr_max, job.weight / cons_min)
    return Assumptions(lam, load_ratio, 1.0 / math.log(lam), wr_min, wr_max)


def assumption_instance(seed: int, *, jobs: int, horizon: int, servers: int = 2, capacity: float = 16.0,
                        arrivals: int = 0, weight_spread: float = 2.0, arch: str = "ps") -> Instance:
    """A seeded instance built for Theorem 3's assumptions (verify with `check_assumptions`).

    One resource (``units``), so lambda = 2 T H F + 1 stays small; every worker and PS uses one
    unit; D_j <= 2 and one PS covers every worker's bandwidth, so a job never holds more than 3
    units of a server; servers hold ``capacity`` units. Durations are 1-4 slots. Each weight is
    ``U[1, weight_spread]`` times the job's largest consumption, so w_j / consumption >= 1 (a).
    """
    rng = np.random.default_rng(seed)
    wt = [NodeType(name="w-slow", demand=[1.0], bandwidth_mbps=100.0),
          NodeType(name="w-fast", demand=[1.0], bandwidth_mbps=200.0)]
    pt = [NodeType(name="ps", demand=[1.0], bandwidth_mbps=1000.0)] if arch == "ps" else []
    srv = [Server(name=f"s{h}", capacity=[capacity]) for h in range(servers)]
    jb = []
    for k in range(jobs):
        v = float(rng.uniform(0.4, 1.0))
        jb.append(Job(
            id=k, arrival=int(rng.integers(0, arrivals + 1)) if arrivals else 0, weight=1.0,
            epochs=1, chunks=int(rng.integers(1, 3)), minibatches_per_chunk=int(rng.integers(1, 4)),
            minibatch_time_slots=[round(v, 3), round(v * 0.7, 3)],
            ps_update_time_slots=[0.05] if arch == "ps" else [],
            allreduce_time_slots=0.05, gradient_size_mb=1.0,
        ))
    inst = Instance(horizon=horizon, architecture=arch, slot_seconds=10.0, resources=["units"], servers=srv,
                    worker_types=wt, ps_types=pt, jobs=jb)
    cmin = float(capacity)
    new = []
    for job in inst.jobs:
        cons = [d * (n + s) / cmin for (_m, _p, _q, n, d, s) in _reduced_configs(inst, job, horizon)]
        top = max(cons) if cons else 1.0
        new.append(job.model_copy(update={"weight": round(top * float(rng.uniform(1.0, weight_spread)) + 0.005, 2)}))
    return inst.model_copy(update={"jobs": new})
