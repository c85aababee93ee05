"""A certified lower bound for problem (1)-(8) that scales to the paper presets.

Relaxation (``ti_lp``): the LP relaxation of the time-indexed model itself (no aggregation:
clusters are few). A column is (task, reachable cluster n, Pareto allocation x, start t) with the
duration of `Instance.pareto_allocations` (progress model, the instance's noise realisation: the
validator's rule). Rows per cluster and timestep: the allocations of running tasks fit C_{r,n}
(5), and at most one task starts (2). Cost end - arrival = t + d - a_j. Dropping dominated
allocations loses no optimum (`formulations.tapfinger.data`), so every schedule of every task is
a 0/1 point of this program; the Lagrangian of its rows (`edgeopt.core.colgen`) is a lower bound
on sum_j (end_j - arrival_j). The start rows are what the existing fastest-run + start-rate bound
(``bound.py``) sees alone; here they interact with capacity.

The bound is an integer (rounded up) and floored by the start-rate bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edgeopt.core.colgen import JobModes, TimeIndexedRelaxation
from edgeopt.core.limits import ModelSize
from edgeopt.core.lowerbound import BoundMethod
from formulations.tapfinger.bound import start_rate_bound


def relaxation(instance: Any) -> TimeIndexedRelaxation:
    """Rows: capacity (n, r) for n, r in order, then one start row per cluster; deterministic."""
    T, R, N = int(instance.horizon), len(instance.resources), len(instance.clusters)
    cap = np.zeros((N * R + N, T))
    for n, c in enumerate(instance.clusters):
        cap[n * R:(n + 1) * R, :] = np.asarray(c.capacity, dtype=float)[:, None]
    cap[N * R:, :] = 1.0
    jobs = []
    for task in instance.tasks:
        D, run, st = [], [], []
        for n in task.reachable_clusters:
            for alloc, d in instance.pareto_allocations(task.id, n):
                if task.arrival + d > T:
                    continue
                row = np.zeros(N * R + N)
                row[n * R:(n + 1) * R] = alloc
                s = np.zeros(N * R + N)
                s[N * R + n] = 1.0
                D.append(int(d)), run.append(row), st.append(s)
        K = len(D)
        jobs.append(JobModes(weight=1.0, offset=-float(task.arrival), latest=T, duration=np.array(D, np.int64),
                             earliest=np.full(K, int(task.arrival)), run=np.array(run).reshape(K, N * R + N),
                             at_start=np.array(st).reshape(K, N * R + N)))
    names = [f"cap_{n}_{r}" for n in range(N) for r in instance.resources] + [f"start_{n}" for n in range(N)]
    return TimeIndexedRelaxation(jobs, cap, names)


def size(instance: Any) -> ModelSize:
    """The starting master (one column per task and a slack per row); column generation then adds
    columns only up to the size budget and stops there, keeping a valid bound."""
    J, T, R, N = len(instance.tasks), int(instance.horizon), len(instance.resources), len(instance.clusters)
    return ModelSize(J * T, J + (N * R + N) * T, J + (N * R + N) * T + J * (2 + R * T),
                     note="column generation: the master holds only generated columns")


TI_LP = BoundMethod(
    name="ti_lp",
    summary="LP relaxation of the time-indexed model (task, cluster, Pareto allocation, start) with the "
            "capacity rows (5) and start rows (2), Lagrangian, prices by column generation",
    relax=relaxation,
    trivial=start_rate_bound,
    step=lambda instance: 1.0,
    size=size,
    bound_of="total completion time sum_j (end_j - arrival_j) of problem (1)-(8) over schedules of every task",
)
