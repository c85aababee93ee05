"""A lower bound on program (2) that scales to the paper preset (named as a bound, never an optimum).

``latency_bound``: each job alone in the empty sites. Job i needs W_i = ceil(E_i D_i / rho_i)
worker-slots (2a)+(2b); in one slot it can have at most A_i workers, the most that fit all sites
together with its PS at the best site (2c)+(2d); so it completes no earlier than a_i + ceil(W_i / A_i) - 1
and, f_i being non-decreasing, pays at least f_i(ceil(W_i / A_i)). Bandwidth is bounded below by 0, so
sum_i f_i(ceil(W_i / A_i)) <= OPT. It ignores every interaction between jobs: weak under load.
"""

from __future__ import annotations

import math

import numpy as np

from edgeopt.okita.instance import Instance, Job
from edgeopt.okita.placement import max_workers


def worker_slots(job: Job) -> int:
    """W_i = ceil(E_i D_i / rho_i): the worker-slots job i needs to train every chunk (2a)+(2b)."""
    return math.ceil(job.total_chunks / job.chunks_per_worker - 1e-9)


def worker_limits(instance: Instance) -> list[tuple[int, int]]:
    """Per job (W_i, A_i): worker-slots it needs, and the most workers it can have in one slot (0: none fit)."""
    C = instance.capacity
    out = []
    for job in instance.jobs:
        m, n = np.asarray(job.worker_demand, float), np.asarray(job.ps_demand, float)
        W = worker_slots(job)
        base = max_workers(C, m, W)
        best = 0
        for r in range(len(C)):
            if np.all(C[r] + 1e-9 >= n):
                best = max(best, int(base.sum() - base[r] + max_workers((C[r] - n)[None, :], m, W)[0]))
        out.append((W, min(best, W)))
    return out


def latency_floors(instance: Instance) -> np.ndarray:
    """Per job f_i(ceil(W_i / A_i)), a lower bound on job i's cost (latency + bandwidth) in every schedule
    (inf for a job that can never run)."""
    out = np.empty(len(instance.jobs))
    for i, (job, (W, A)) in enumerate(zip(instance.jobs, worker_limits(instance), strict=True)):
        out[i] = math.inf if A == 0 else float(job.cost(math.ceil(W / A)))
    return out


def latency_bound(instance: Instance) -> float:
    """sum_i f_i(ceil(W_i / A_i)): a lower bound on the optimum of program (2)."""
    floors = latency_floors(instance)
    return math.inf if np.isinf(floors).any() else float(floors.sum())


def worker_bounds(instance: Instance) -> np.ndarray:
    """Y [I, R]: most useful workers of job i at site r in one slot."""
    C = instance.capacity
    out = np.zeros((len(instance.jobs), len(instance.sites)), dtype=np.int64)
    for i, job in enumerate(instance.jobs):
        m = np.asarray(job.worker_demand)
        pos = m > 0
        fit = np.floor(C[:, pos] / m[pos] + 1e-9).min(axis=1)
        need = worker_slots(job)
        out[i] = np.minimum(fit, need)
    return out
