"""Time-indexed MILP of the TapFinger problem (1)-(8) in Pyomo, solved by HiGHS.

Variables ``x[j, n, a, s]`` = 1 when task j starts on cluster n at timestep s with allocation
option a (`data.options`; its duration d is precomputed from the progress model). Rows:

* ``c3_place_once[j]``: sum x = 1 (every task placed once: (3)/(6), with s >= arrival by the
  variables' index);
* ``c2_one_start[n, t]``: at most one start per cluster and timestep (2);
* ``c5_capacity[n, r, t]``: the allocations of tasks running at t fit C_{r,n} (5); (7)/(8) hold by
  the options' construction.

Objective (1): sum (s + d - arrival) x.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

import pyomo.core as pyo

from edgeopt.core import BuildTimeLimit, Deadline, Result, Status
from edgeopt.tapfinger.instance import Instance
from edgeopt.tapfinger.schedule import Placement, Schedule
from formulations.common import SolverOutcome, finish, solve_pyomo
from formulations.strengthen import consecutive_pairs
from formulations.tapfinger.data import Option, identical_tasks, options


def build_milp(instance: Instance, deadline: Deadline | None = None, *, relax: bool = False,
               strengthen: bool = False) -> Any:
    """The Pyomo model (``model.keys[i] = (option, start)`` for ``model.x[i]``).

    ``strengthen``: add the symmetry-breaking rows over identical tasks (``valid_symmetry_tasks``) and the
    large-allocation cardinality rows (``valid_large_allocations``).
    """
    deadline = deadline or Deadline(1e9)
    opts = options(instance, deadline)
    keys: list[tuple[Option, int]] = [(o, s) for o in opts for s in o.starts(instance)]
    m = pyo.ConcreteModel(name="tapfinger_milp")
    m.keys = keys
    m.I = pyo.RangeSet(0, len(keys) - 1) if keys else pyo.Set(initialize=[])
    m.x = pyo.Var(m.I, domain=pyo.UnitInterval if relax else pyo.Binary)
    by_task: dict[int, list[int]] = defaultdict(list)
    starts: dict[tuple[int, int], list[int]] = defaultdict(list)
    load: dict[tuple[int, int, int], list[tuple[int, int]]] = defaultdict(list)
    R = len(instance.resources)
    for i, (o, s) in enumerate(keys):
        if i % 2000 == 0:
            deadline.check()
        by_task[o.task].append(i)
        starts[(o.cluster, s)].append(i)
        for t in range(s, s + o.duration):
            for r in range(R):
                load[(o.cluster, r, t)].append((i, o.alloc[r]))
    m.c3_place_once = pyo.Constraint(range(len(instance.tasks)),
                                     rule=lambda m, j: sum(m.x[i] for i in by_task[j]) == 1
                                     if by_task[j] else pyo.Constraint.Infeasible)
    m.c2_one_start = pyo.Constraint(list(starts), rule=lambda m, n, t: sum(m.x[i] for i in starts[(n, t)]) <= 1)
    deadline.check()
    cap = [c.capacity for c in instance.clusters]
    tight = [k for k, v in load.items() if sum(a for _, a in v) > cap[k[0]][k[1]]]
    m.c5_capacity = pyo.Constraint(tight, rule=lambda m, n, r, t: sum(a * m.x[i] for i, a in load[(n, r, t)])
                                   <= cap[n][r])
    deadline.check()
    if strengthen:
        # Symmetry breaking: identical tasks j < j' (`identical_tasks`) start in index order; swapping two
        # such tasks' placements keeps every row and the objective, so one optimal schedule satisfies it.
        def start_of(j):
            return sum(s * m.x[i] for i in by_task[j] for s in [keys[i][1]])

        pairs = consecutive_pairs(identical_tasks(instance, opts))
        m.valid_symmetry_tasks = pyo.Constraint(
            pairs, rule=lambda m, j, j2: start_of(j) <= start_of(j2),
            doc="valid inequality (symmetry breaking): identical tasks start in index order")
        rows = large_allocation_rows(load, cap)
        m.valid_large_allocations = pyo.Constraint(
            list(rows), rule=lambda m, n, r, t, q: sum(m.x[i] for i in rows[(n, r, t, q)]) <= q,
            doc="valid inequality: at most q tasks with an allocation above C_{r,n} / (q + 1) run at t on n")
        deadline.check()
    arr = [t.arrival for t in instance.tasks]
    m.obj = pyo.Objective(expr=sum((s + o.duration - arr[o.task]) * m.x[i] for i, (o, s) in enumerate(keys)),
                          sense=pyo.minimize)
    return m


def large_allocation_rows(load: dict[tuple[int, int, int], list[tuple[int, int]]], cap: list,
                          qs: tuple[int, ...] = (1, 2)) -> dict[tuple[int, int, int, int], list[int]]:
    """Cardinality rows implied by (5): ``sum x_i <= q`` over the runs covering (n, r, t) whose allocation of
    r exceeds C_{r,n} / (q + 1).

    Valid because q + 1 such tasks running together would hold more than C_{r,n}. Stronger than (5) in
    the LP relaxation (e.g. for q = 1 two runs each holding 3/4 of C may both be 2/3 in (5), not here);
    kept only where the row is not implied by the count of candidates.
    """
    rows = {}
    for (n, r, t), items in load.items():
        for q in qs:
            big = [i for i, a in items if a * (q + 1) > cap[n][r]]
            if len(big) > q:
                rows[(n, r, t, q)] = big
    return rows


def extract(instance: Instance, model: Any) -> Schedule:
    out = []
    for i, (o, s) in enumerate(model.keys):
        v = model.x[i].value
        if v is not None and v > 0.5:
            out.append(Placement(task=o.task, cluster=o.cluster, start=s, end=s + o.duration,
                                 allocation={r: int(a) for r, a in zip(instance.resources, o.alloc, strict=True)}))
    return Schedule(placements=sorted(out, key=lambda p: p.task))


def solve_milp(instance: Instance, *, time_limit: float = 60.0, threads: int = 1, strengthen: bool = True) -> Result:
    """Solve (1)-(8) exactly with the time-indexed MILP (``time_limit`` covers building).

    ``strengthen`` (default): add the symmetry-breaking rows over identical tasks and the large-allocation
    rows (`build_milp`); False builds the model without them. (The objective floor of
    `formulations.strengthen` is not added here: it slowed HiGHS down.)
    """
    from edgeopt.tapfinger import FAMILY

    deadline = Deadline(time_limit)
    t0 = time.perf_counter()
    try:
        model = build_milp(instance, deadline, strengthen=strengthen)
    except BuildTimeLimit as exc:
        out = SolverOutcome(Status.TIME_LIMIT, None, None, 0.0, str(exc), False)
        return finish(FAMILY, instance, "milp", out, None, build_s=time.perf_counter() - t0)
    build_s = time.perf_counter() - t0
    out = solve_pyomo(model, time_limit=deadline.remaining(), threads=threads)
    sched = extract(instance, model) if out.has_solution else None
    return finish(FAMILY, instance, "milp", out, sched, build_s=build_s,
                  extra={"variables": len(model.keys), "strengthen": strengthen})
