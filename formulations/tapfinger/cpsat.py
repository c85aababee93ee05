"""CP-SAT model of the TapFinger problem (1)-(8): optional intervals, no time index.

Task j has a start S_j in [arrival_j, T - 1] (6) and one presence literal per option
(`data.options`: cluster n in D_j, Pareto allocation a, duration d), exactly one true (3). Each
option is an optional interval [S_j, S_j + d); the task's end is E_j = S_j + sum d * p.

* (5): one cumulative per (cluster, resource) over the option intervals with demand a_r;
* (2): per cluster, an optional unit interval [S_j, S_j + 1) present when j is placed there, all
  in one no-overlap: at most one start per cluster and timestep;
* "T": E_j <= T.

Objective (1): sum_j (E_j - arrival_j).
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from ortools.sat.python import cp_model

from edgeopt.core import BuildTimeLimit, Deadline, Result, Status
from edgeopt.tapfinger.instance import Instance
from edgeopt.tapfinger.schedule import Placement, Schedule
from formulations.common import SolverOutcome, finish
from formulations.common import solve_cpsat as run_cpsat
from formulations.strengthen import add_cpsat_floor, certified_floor, consecutive_pairs, floor_in_model_units
from formulations.tapfinger.data import identical_tasks, options


def build_cpsat(instance: Instance, deadline: Deadline | None = None, *,
                strengthen: bool = False, tasks: set[int] | None = None,
                fixed: Schedule | None = None) -> tuple[cp_model.CpModel, dict[str, Any]]:
    """The CP-SAT model and its handles (``start``, ``present``).

    ``strengthen``: identical tasks (`data.identical_tasks`) start in index order, a valid symmetry-breaking
    row (swapping two such tasks' placements keeps every constraint and the objective).

    ``tasks`` and ``fixed`` (the large-neighbourhood search's sub-model, ``lns.py``): only the tasks with
    these ids are variables (the objective sums theirs); every placement of ``fixed`` (the other tasks)
    holds its resources as a fixed interval in the (5) cumulatives and its start as a fixed unit interval
    in the (2) no-overlap of its cluster, so any solution is feasible together with them.
    """
    deadline = deadline or Deadline(1e9)
    T, R = instance.horizon, len(instance.resources)
    model = cp_model.CpModel()
    opts = options(instance, deadline)
    if tasks is not None:
        opts = [o for o in opts if o.task in tasks]
    by_task = defaultdict(list)
    for o in opts:
        by_task[o.task].append(o)
    start, end, present = {}, {}, []
    cum: dict[tuple[int, int], tuple[list, list]] = defaultdict(lambda: ([], []))
    unit: dict[int, list] = defaultdict(list)
    objective = []
    for t in instance.tasks:
        deadline.check()
        j = t.id
        if tasks is not None and j not in tasks:
            continue
        S = model.new_int_var(t.arrival, T - 1, f"S{j}")
        E = model.new_int_var(t.arrival + 1, T, f"E{j}")
        start[j], end[j] = S, E
        lits = []
        on_cluster: dict[int, list] = defaultdict(list)
        for o in by_task[j]:
            p = model.new_bool_var(f"p{j}_n{o.cluster}_a{'x'.join(map(str, o.alloc))}")
            present.append((o, p))
            lits.append((p, o.duration))
            iv = model.new_optional_fixed_size_interval_var(S, o.duration, p, f"iv{j}_{len(lits)}")
            model.add(S + o.duration <= T).only_enforce_if(p)
            for r in range(R):
                cum[(o.cluster, r)][0].append(iv)
                cum[(o.cluster, r)][1].append(int(o.alloc[r]))
            on_cluster[o.cluster].append(p)
        model.add_exactly_one([p for p, _ in lits]) if lits else model.add_bool_or([])
        model.add(E == S + sum(d * p for p, d in lits))
        for n, ps in on_cluster.items():
            on = model.new_bool_var(f"on{j}_{n}")
            model.add(on == sum(ps))
            unit[n].append(model.new_optional_fixed_size_interval_var(S, 1, on, f"u{j}_{n}"))
        objective.append(E - t.arrival)
    for pl in fixed.placements if fixed is not None else ():
        for seg in pl.runs():
            iv = model.new_fixed_size_interval_var(int(seg.start), int(seg.end - seg.start), f"fixed{pl.task}")
            for r, name in enumerate(instance.resources):
                if int(seg.allocation.get(name, 0)):
                    cum[(pl.cluster, r)][0].append(iv)
                    cum[(pl.cluster, r)][1].append(int(seg.allocation.get(name, 0)))
        unit[pl.cluster].append(model.new_fixed_size_interval_var(int(pl.start), 1, f"fixed_start{pl.task}"))
    for (n, r), (ivs, dem) in cum.items():
        model.add_cumulative(ivs, dem, instance.clusters[n].capacity[r])
    for ivs in unit.values():
        model.add_no_overlap(ivs)
    if strengthen:
        for j, j2 in consecutive_pairs(identical_tasks(instance, opts)):
            model.add(start[j] <= start[j2]).with_name(f"valid_symmetry_tasks_{j}_{j2}")
    model.minimize(sum(objective))
    return model, {"start": start, "present": present}


def extract(instance: Instance, h: dict[str, Any], solver: Any) -> list[Placement]:
    """The placements of a CP-SAT solution (the model's tasks only), by task id."""
    out = []
    for o, p in h["present"]:
        if solver.value(p):
            s = int(solver.value(h["start"][o.task]))
            out.append(Placement(task=o.task, cluster=o.cluster, start=s, end=s + o.duration,
                                 allocation={r: int(a) for r, a in zip(instance.resources, o.alloc, strict=True)}))
    return sorted(out, key=lambda q: q.task)


def add_hint(instance: Instance, h: dict[str, Any], model: cp_model.CpModel, schedule: Any) -> int:
    """Hint CP-SAT with a schedule (a `Schedule` or its JSON): each task's start and option; returns how
    many tasks were hinted. A placement whose allocation is not a Pareto option is hinted with the
    Pareto option on its cluster that needs no more of any resource and is no slower (it exists when
    the placement is valid: dominated allocations are what the option list leaves out)."""
    sched = schedule if isinstance(schedule, Schedule) else Schedule.model_validate(schedule)
    by_task: dict[int, list] = defaultdict(list)
    for o, p in h["present"]:
        by_task[o.task].append((o, p))
    hinted = 0
    for pl in sched.placements:
        alloc = tuple(int(pl.allocation.get(r, 0)) for r in instance.resources)
        fits = [(o, p) for o, p in by_task.get(pl.task, []) if o.cluster == pl.cluster
                and all(a <= b for a, b in zip(o.alloc, alloc, strict=True)) and o.duration <= pl.end - pl.start]
        if not fits or pl.task not in h["start"]:
            continue
        chosen = min(fits, key=lambda op: op[0].duration)[1]
        model.add_hint(h["start"][pl.task], int(pl.start))
        for _, p in by_task[pl.task]:
            model.add_hint(p, p is chosen)
        hinted += 1
    return hinted


def solve_cpsat(instance: Instance, *, time_limit: float = 60.0, workers: int = 2, hint: Any = None,
                strengthen: bool = True) -> Result:
    """Solve (1)-(8) exactly with CP-SAT (``time_limit`` covers building).

    ``strengthen`` (default): add the valid inequalities of `formulations.strengthen` (objective >= the
    certified bound); False builds the model as the paper's constraints alone.

    ``hint``: a schedule (e.g. a registered algorithm's, `edgeopt solve --warm-start`) given to CP-SAT
    as solution hints (`add_hint`); the search still proves what it proves, from a warm incumbent.
    """
    from edgeopt.tapfinger import FAMILY

    deadline = Deadline(time_limit)
    t0 = time.perf_counter()
    floor = certified_floor(instance, deadline) if strengthen else None
    try:
        # with a hint, no symmetry rows: a warm start need not be the representative they keep
        model, h = build_cpsat(instance, deadline, strengthen=strengthen and hint is None)
        if floor is not None:
            add_cpsat_floor(model, floor_in_model_units(floor))  # the model's objective is (1) itself
    except BuildTimeLimit as exc:
        out = SolverOutcome(Status.TIME_LIMIT, None, None, 0.0, str(exc), False)
        return finish(FAMILY, instance, "cpsat", out, None, build_s=time.perf_counter() - t0)
    hinted = add_hint(instance, h, model, hint) if hint is not None else 0
    build_s = time.perf_counter() - t0
    out, solver = run_cpsat(model, time_limit=deadline.remaining(), workers=workers)
    sched = Schedule(placements=extract(instance, h, solver)) if out.has_solution else None
    res = finish(FAMILY, instance, "cpsat", out, sched, build_s=build_s,
                 extra={"strengthen": strengthen, "objective_floor": floor})
    if hint is not None:
        res.extra["hinted_tasks"] = hinted
    return res
