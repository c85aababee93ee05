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

Stronger variant (``ti_lp_hull``): the same columns with, per cluster and timestep, the rows of
`formulations.concurrency.hull_rows` over the cluster's allocation kinds: facets of the integer hull of
"which allocations fit together" (e.g. with 6 CPU / 4 GPU, minimum 2 CPU / 1 GPU: ``n_2 + 2 n_3 + 2 n_4 <= 2``
over the tasks holding 2, 3 and 4 GPUs). Every schedule meets them in every timestep, so it is still a
relaxation; on the ``small`` ladder the LP goes from 81.3 to 84.5 (12 tasks, optimum 91) and from 212.0 to
222.7 (24 tasks, optimum 236). Clusters with more than `formulations.concurrency.MAX_KINDS` allocation kinds
(the paper presets' 16 / 16 clusters) get no such rows: there it equals ``ti_lp``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from edgeopt.core.colgen import JobModes, TimeIndexedRelaxation
from edgeopt.core.limits import ModelSize
from edgeopt.core.lowerbound import BoundMethod
from formulations.tapfinger.bound import start_rate_bound


def cluster_kinds(instance: Any) -> list[list[tuple[int, ...]]]:
    """Per cluster, the distinct allocations of the tasks' options there (sorted): the item kinds of its
    concurrency rows."""
    T = int(instance.horizon)
    kinds: list[set[tuple[int, ...]]] = [set() for _ in instance.clusters]
    for task in instance.tasks:
        for n in task.reachable_clusters:
            for alloc, d in instance.pareto_allocations(task.id, n):
                if task.arrival + d <= T:
                    kinds[n].add(tuple(int(a) for a in alloc))
    return [sorted(k) for k in kinds]


def concurrency_rows(instance: Any) -> list[tuple[int, dict[tuple[int, ...], int], int]]:
    """``(cluster, {allocation: coefficient}, rhs)``: the hull rows of every cluster
    (`formulations.concurrency.hull_rows`), in cluster order."""
    from formulations.concurrency import hull_rows

    out = []
    for n, kinds in enumerate(cluster_kinds(instance)):
        for coef, rhs in hull_rows(kinds, instance.clusters[n].capacity):
            out.append((n, dict(zip(kinds, coef, strict=True)), rhs))
    return out


def task_modes(instance: Any, task: Any) -> list[tuple[int, tuple[int, ...], int]]:
    """The task's modes (cluster, allocation, duration) in the order of its relaxation columns' mode index k:
    every reachable cluster, every Pareto allocation there that completes by T."""
    T = int(instance.horizon)
    return [(int(n), tuple(int(a) for a in alloc), int(d)) for n in task.reachable_clusters
            for alloc, d in instance.pareto_allocations(task.id, n) if task.arrival + d <= T]


def relaxation(instance: Any, *, hull: bool = False) -> TimeIndexedRelaxation:
    """Rows: capacity (n, r) for n, r in order, then one start row per cluster, then (``hull``) the
    concurrency rows of `concurrency_rows`; deterministic."""
    T, R, N = int(instance.horizon), len(instance.resources), len(instance.clusters)
    extra = concurrency_rows(instance) if hull else []
    rows = N * R + N + len(extra)
    cap = np.zeros((rows, T))
    for n, c in enumerate(instance.clusters):
        cap[n * R:(n + 1) * R, :] = np.asarray(c.capacity, dtype=float)[:, None]
    cap[N * R:N * R + N, :] = 1.0
    for i, (_, _, rhs) in enumerate(extra):
        cap[N * R + N + i, :] = float(rhs)
    jobs = []
    for task in instance.tasks:
        D, run, st = [], [], []
        for n, alloc, d in task_modes(instance, task):
            row = np.zeros(rows)
            row[n * R:(n + 1) * R] = alloc
            for i, (cn, coef, _) in enumerate(extra):
                if cn == n:
                    row[N * R + N + i] = coef[alloc]
            s = np.zeros(rows)
            s[N * R + n] = 1.0
            D.append(d), run.append(row), st.append(s)
        K = len(D)
        jobs.append(JobModes(weight=1.0, offset=-float(task.arrival), latest=T, duration=np.array(D, np.int64),
                             earliest=np.full(K, int(task.arrival)), run=np.array(run).reshape(K, rows),
                             at_start=np.array(st).reshape(K, rows)))
    names = ([f"cap_{n}_{r}" for n in range(N) for r in instance.resources] + [f"start_{n}" for n in range(N)]
             + [f"hull_{n}_{i}" for i, (n, _, _) in enumerate(extra)])
    return TimeIndexedRelaxation(jobs, cap, names)


def relaxation_hull(instance: Any) -> TimeIndexedRelaxation:
    """`relaxation` with the concurrency rows (``ti_lp_hull``)."""
    return relaxation(instance, hull=True)


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


def size_hull(instance: Any) -> ModelSize:
    """`size` plus the concurrency rows' dense ``[rows, T]`` arrays, allowing 8 rows per cluster (2 on the
    ``small`` preset)."""
    base = size(instance)
    extra = 8 * len(instance.clusters) * int(instance.horizon)
    return ModelSize(base.variables, base.constraints + extra, base.nonzeros + extra, note=base.note)


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

TI_LP_HULL = BoundMethod(
    name="ti_lp_hull",
    summary="ti_lp with, per cluster and timestep, the facets of the integer hull of the allocations that fit "
            "together (formulations.concurrency), Lagrangian, prices by column generation",
    relax=relaxation_hull,
    trivial=start_rate_bound,
    step=lambda instance: 1.0,
    size=size_hull,
    bound_of="total completion time sum_j (end_j - arrival_j) of problem (1)-(8) over schedules of every task",
)
