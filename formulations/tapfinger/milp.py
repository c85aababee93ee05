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
from edgeopt.core.limits import guard_built
from edgeopt.tapfinger.instance import Instance
from edgeopt.tapfinger.schedule import Placement, Schedule
from formulations.common import SolverOutcome, finish, solve_pyomo
from formulations.strengthen import consecutive_pairs
from formulations.tapfinger.data import Option, identical_tasks, milp_size_of_keys, options


def build_milp(instance: Instance, deadline: Deadline | None = None, *, relax: bool = False,
               strengthen: bool = False, keys: list[tuple[Option, int]] | None = None, hull: bool = False) -> Any:
    """The Pyomo model (``model.keys[i] = (option, start)`` for ``model.x[i]``).

    ``strengthen``: add the symmetry-breaking rows over identical tasks (``valid_symmetry_tasks``) and the
    large-allocation cardinality rows (``valid_large_allocations``).

    ``keys``: only these (option, start) variables (`all_keys`, less what reduced-cost fixing removed,
    ``fixing.py``); the rest are 0. ``hull``: add the concurrency rows of the certified bound ``ti_lp_hull``
    (``valid_concurrency``, `formulations.tapfinger.lpbound.concurrency_rows`).
    """
    deadline = deadline or Deadline(1e9)
    opts = options(instance, deadline)
    if keys is None:
        keys = all_keys(instance, opts)
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
    if hull:
        from formulations.tapfinger.lpbound import concurrency_rows

        running: dict[tuple[int, int], list[int]] = defaultdict(list)
        for i, (o, s) in enumerate(keys):
            for t in range(s, s + o.duration):
                running[(o.cluster, t)].append(i)
        # (coefficients, rhs, the variables running on that cluster then): only rows that can bind
        crow = [(coef, rhs, running[(n, t)]) for n, coef, rhs in concurrency_rows(instance)
                for t in range(instance.horizon) if sum(coef[keys[i][0].alloc] for i in running[(n, t)]) > rhs]
        m.valid_concurrency = pyo.Constraint(
            range(len(crow)), rule=lambda m, q: sum(crow[q][0][keys[i][0].alloc] * m.x[i] for i in crow[q][2])
            <= crow[q][1],
            doc="valid inequality: a facet of the integer hull of the allocations that fit together on a cluster")
        deadline.check()
    arr = [t.arrival for t in instance.tasks]
    m.obj = pyo.Objective(expr=sum((s + o.duration - arr[o.task]) * m.x[i] for i, (o, s) in enumerate(keys)),
                          sense=pyo.minimize)
    return m


def all_keys(instance: Instance, opts: list[Option] | None = None) -> list[tuple[Option, int]]:
    """Every (option, start) variable of the full model, in the model's order."""
    return [(o, s) for o in (options(instance) if opts is None else opts) for s in o.starts(instance)]


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


def solve_milp(instance: Instance, *, time_limit: float = 60.0, threads: int = 1, strengthen: bool = True,
               fix: bool = False, fix_min_vars: int | None = None, lns_share: float | None = None) -> Result:
    """Solve (1)-(8) exactly with the time-indexed MILP (``time_limit`` covers building).

    ``strengthen`` (default): add the symmetry-breaking rows over identical tasks and the large-allocation
    rows (`build_milp`); False builds the model without them. (The objective floor of
    `formulations.strengthen` is not added here: it slowed HiGHS down.)

    ``fix``: reduced-cost fixing and the certified bound as the proof (``fixing.py``): an incumbent (the list
    schedulers, then a CP-SAT large-neighbourhood search for ``lns_share`` of the time, at most 20 s) and the
    prices of the certified bound ``ti_lp_hull`` remove every variable no better schedule uses; when the bound
    already meets the incumbent no model is built and the result is ``optimal`` with the bound's certificate
    in ``extra["certificate"]`` (re-checked by ``edgeopt validate``); otherwise HiGHS is asked for a schedule
    strictly better than the incumbent (its ``objective_bound``), with the concurrency rows of the bound.
    Off by default: on the ``small`` ladder it did not pay (docs/solvers.md). Models with fewer than
    ``fix_min_vars`` variables (`formulations.tapfinger.fixing.FIX_MIN_VARS`) are solved unfixed.
    ``extra["fixing"]`` and ``extra["timings"]`` record the incumbent, the bound, the share fixed and the time
    of each step.
    """
    from edgeopt.tapfinger import FAMILY

    deadline = Deadline(time_limit)
    t0 = time.perf_counter()
    if fix:
        from formulations.tapfinger import fixing as tf_fixing

        n_vars = len(all_keys(instance))
        if n_vars >= (tf_fixing.FIX_MIN_VARS if fix_min_vars is None else fix_min_vars):
            return _solve_fixed(instance, deadline, threads=threads, strengthen=strengthen,
                                lns_share=tf_fixing.LNS_SHARE if lns_share is None else lns_share)
    guard_built(None)  # a size guard deferred to a fixed model: this one is not fixed (a no-op otherwise)
    try:  # one deadline: the model, its translation to HiGHS and the search
        model = build_milp(instance, deadline, strengthen=strengthen)
        build_s = time.perf_counter() - t0
        out = solve_pyomo(model, time_limit=deadline.remaining(), threads=threads, deadline=deadline)
    except BuildTimeLimit as exc:
        out = SolverOutcome(Status.TIME_LIMIT, None, None, 0.0, str(exc), False)
        return finish(FAMILY, instance, "milp", out, None, build_s=time.perf_counter() - t0)
    sched = extract(instance, model) if out.has_solution else None
    extra: dict[str, Any] = {"variables": len(model.keys), "strengthen": strengthen}
    if fix:
        extra["fix"] = True
    return finish(FAMILY, instance, "milp", out, sched, build_s=build_s, extra=extra)


def _solve_fixed(instance: Instance, deadline: Deadline, *, threads: int, strengthen: bool,
                 lns_share: float) -> Result:
    """`solve_milp` with ``fix`` (its docstring): incumbent, prices, fixing, then the search on what is left."""
    from edgeopt.tapfinger import FAMILY
    from formulations.fixing import conclude, skipped_search
    from formulations.tapfinger.fixing import fix_keys, prepare, proof_certificate

    t0 = time.perf_counter()
    incumbent, prices, timings = prepare(instance, hint=None, deadline=deadline, lns_share=lns_share)
    keys = all_keys(instance)
    if incumbent is None or prices is None:  # no incumbent or no bound: the model unfixed, still exact
        guard_built(None)
        try:
            t1 = time.perf_counter()
            model = build_milp(instance, deadline, strengthen=strengthen)
            timings["model_s"] = time.perf_counter() - t1
            out = solve_pyomo(model, time_limit=deadline.remaining(), threads=threads, deadline=deadline)
        except BuildTimeLimit as exc:
            model, out = None, SolverOutcome(Status.TIME_LIMIT, None, None, 0.0, str(exc), False)
        sched = extract(instance, model) if out.has_solution and model is not None else None
        return finish(FAMILY, instance, "milp", out, sched, build_s=time.perf_counter() - t0,
                      extra={"variables": len(keys), "strengthen": strengthen, "fix": True, "timings": timings,
                             "reason_unfixed": "no incumbent" if incumbent is None else "no certified bound"})
    c0 = time.process_time()
    keep, fixing = fix_keys(instance, keys, incumbent, prices)
    timings["fixing_s"], timings["fixing_cpu_s"] = fixing.fixing_s, time.process_time() - c0
    base = {"variables": len(keys), "strengthen": strengthen, "fix": True, "timings": timings,
            "fixing": fixing.record()}
    if (skip := skipped_search(fixing)) is not None:
        outcome, _ = conclude(skip, fixing)
        extra = dict(base)
        if prices.bound >= incumbent.objective:
            # the bound alone is the proof: its certificate, which edgeopt validate re-checks without a solver
            extra["certificate"] = proof_certificate(fixing)
        return finish(FAMILY, instance, "milp", outcome, incumbent.schedule, extra=extra,
                      build_s=time.perf_counter() - t0)
    kept = [k for k, on in zip(keys, keep, strict=True) if on]
    guard_built(milp_size_of_keys(instance, kept))  # a size guard deferred to the fixed model (a no-op otherwise)
    try:
        t1, c0 = time.perf_counter(), time.process_time()
        model = build_milp(instance, deadline, strengthen=strengthen, keys=kept, hull=True)
        timings["model_s"], timings["model_cpu_s"] = time.perf_counter() - t1, time.process_time() - c0
        build_s = time.perf_counter() - t0
        t1, c0 = time.perf_counter(), time.process_time()
        out = solve_pyomo(model, time_limit=deadline.remaining(), threads=threads, deadline=deadline,
                          highs_options={"objective_bound": fixing.solver_cutoff()})
        timings["search_s"], timings["search_cpu_s"] = time.perf_counter() - t1, time.process_time() - c0
    except BuildTimeLimit as exc:
        model, build_s = None, time.perf_counter() - t0
        out = SolverOutcome(Status.TIME_LIMIT, None, None, 0.0, str(exc), False)
    sched = extract(instance, model) if out.has_solution and model is not None else None
    outcome, use_incumbent = conclude(out, fixing)
    if use_incumbent:
        sched = incumbent.schedule
    return finish(FAMILY, instance, "milp", outcome, sched, extra=base, build_s=build_s)
