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

import math
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
    """What `compute_bound` really builds, not the full time-indexed LP (tasks x modes x starts columns,
    which column generation never holds: 15 million on a busy ITP week).

    * the master at its start (`edgeopt.core.colgen.column_generation`): a row per task and per (row,
      bucket) of at most 512 buckets; an artificial column per task (one nonzero) and, at the first
      pricing, each task's cheapest column: its task row, the R capacity rows of its cluster over at
      most every bucket, and one start row. Later columns are added only while the master stays
      within the size budget (it stops there, keeping a valid bound), so they are not counted;
    * the dense ``[rows, T]`` capacity and price arrays (the relaxation's capacity, the prices and the
      certificate's multipliers): counted once per entry, like a row of the full model. They are
      float arrays (8 bytes an entry, a few copies at once), far below the budget's Pyomo nonzero
      (about 1.5 KB), so a horizon they would not fit in is still refused.
    """
    J, T, R, N = len(instance.tasks), int(instance.horizon), len(instance.resources), len(instance.clusters)
    rows = N * R + N
    width = max(1, math.ceil(T / 512))  # column_generation's bucket (slots per master row)
    buckets = math.ceil(T / width) if T else 0
    first = J * (2 + R * buckets)  # task row + R capacity rows over at most every bucket + one start row
    return ModelSize(2 * J, J + rows * buckets, J + first + rows * T,
                     note="column generation: the master holds only generated columns, "
                          "at most the budget; the full time-indexed LP is never built")


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
