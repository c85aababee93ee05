"""CP-SAT model of She et al.'s MINLP (2): one interval per job, cumulative capacities.

Independent of the MILP (``milp.py``): no time index at all. Each job j has

* one boolean per mode (w, xi) (``data.py``), exactly one true; the job's
  interval [h_j, c_j) has the chosen mode's duration (2e with eq. 1, 2j, 2k);
* integer ``y[j, s]`` workers and boolean ``z[j, s]`` PS per server, held over
  the whole interval (2c, 2d), so a cumulative per (server, type) with
  demands ``y`` / ``z`` is exactly (2g) / (2h);
* (2f) by enforcement literals: xi_j => no worker off the PS's server;
  not xi_j => the PS's server holds at most w - 1 of the workers;
* (2i) by enforcement literals: a used server forces h_j >= a_j + Delta_js.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from ortools.sat.python import cp_model

from edgeopt.core import Deadline, InputError, Result, Status
from edgeopt.core.limits import guard_built
from formulations.common import deadline_bounded, finish
from formulations.common import solve_cpsat as run_cpsat
from formulations.edgecloud.data import ModelData, prepare
from formulations.edgecloud.fixing import FIX_MIN_RUNS
from formulations.edgecloud.schedule_io import Placement, infeasible_result, to_schedule
from formulations.edgecloud.sizes import cpsat_size_of
from formulations.edgecloud.start import hint_cpsat
from formulations.strengthen import add_cpsat_floor, certified_floor, floor_in_model_units


class CpsatModel:
    """The CP-SAT model and the handles `extract_cpsat` reads."""

    def __init__(self, model: cp_model.CpModel, data: ModelData) -> None:
        self.model = model
        self.data = data
        self.mode: dict[tuple[int, int], cp_model.IntVar] = {}
        self.start: dict[int, cp_model.IntVar] = {}
        self.y: dict[tuple[int, int], cp_model.IntVar] = {}
        self.z: dict[tuple[int, int], cp_model.IntVar] = {}


def build_cpsat(instance: Any, data: ModelData | None = None, *,
                taken: dict[tuple[str, int, int], list[tuple[int, int, int]]] | None = None) -> CpsatModel:
    """Build the CP-SAT model of MINLP (2) (never solves).

    ``taken``: capacity held by jobs outside the model (a neighbourhood of the LNS),
    ``{("w", s, u) or ("p", s, v): [(start, end, count), ...]}``; each entry is a fixed interval in
    that (2g) / (2h) cumulative, so the model's jobs get what the others leave.
    """
    data = data or prepare(instance)
    T, S = data.horizon, data.n_servers
    model = cp_model.CpModel()
    cm = CpsatModel(model, data)
    worker_use: dict[tuple[int, int], list[tuple[Any, Any]]] = {}
    ps_use: dict[tuple[int, int], list[tuple[Any, Any]]] = {}
    objective = []
    for jd in data.jobs:
        j = jd.index
        b = [model.new_bool_var(f"job{j}_mode_w{md.workers}_{'col' if md.colocated else 'dist'}") for md in jd.modes]
        for k, var in enumerate(b):
            cm.mode[j, k] = var
        model.add_exactly_one(b)
        if jd.allowed is None:
            start = model.new_int_var(int(jd.release.min()), T, f"start_of_job{j}")
        else:  # reduced-cost fixing (``fixing.py``): the starts left to each mode
            left = [[int(h) for h in jd.starts(md, T)] for md in jd.modes]
            union = sorted({h for hs in left for h in hs}) or [int(jd.release.min())]
            start = model.new_int_var_from_domain(cp_model.Domain.from_values(union), f"start_of_job{j}")
            for k, (hs, var) in enumerate(zip(left, b)):
                if not hs:
                    model.add(var == 0)
                elif len(hs) < len(union):
                    # the mode's own start: a domain CP-SAT keeps on the variable, tied to the job's start when
                    # the mode is chosen (an enforced "in domain" constraint propagated far slower)
                    own = model.new_int_var_from_domain(cp_model.Domain.from_values(hs), f"start_of_job{j}_mode{k}")
                    model.add(start == own).only_enforce_if(var)
        end = model.new_int_var(0, T, f"end_of_job{j}")
        durations = [md.duration for md in jd.modes]
        size = model.new_int_var(min(durations), max(durations), f"duration_of_job{j}")
        model.add(size == sum(d * var for d, var in zip(durations, b)))
        interval = model.new_interval_var(start, size, end, f"run_of_job{j}")
        cm.start[j] = start
        objective.append(end - jd.arrival)
        xi = sum(var for md, var in zip(jd.modes, b) if md.colocated)
        xi_lit = model.new_bool_var(f"xi_job{j}")
        model.add(xi_lit == xi)
        n_workers = sum(md.workers * var for md, var in zip(jd.modes, b))
        ys = []
        for s in range(S):
            if jd.worker_cap[s] > 0:
                y = model.new_int_var(0, int(jd.worker_cap[s]), f"workers_job{j}_server{s}")
                used = model.new_bool_var(f"uses_job{j}_server{s}")
                model.add(y <= int(jd.worker_cap[s]) * used)
                model.add(y >= 1).only_enforce_if(used)
                model.add(start >= int(jd.release[s])).only_enforce_if(used)  # (2i)
                cm.y[j, s] = y
                ys.append(y)
                worker_use.setdefault((s, jd.worker_type), []).append((interval, y))
        model.add(sum(ys) == n_workers)  # (2a): w in 1..D_j by the modes
        zs = []
        for s in range(S):
            if jd.ps_ok[s]:
                z = model.new_bool_var(f"ps_job{j}_server{s}")
                model.add(start >= int(jd.release[s])).only_enforce_if(z)  # (2i)
                cm.z[j, s] = z
                zs.append(z)
                ps_use.setdefault((s, jd.ps_type), []).append((interval, z))
        model.add_exactly_one(zs)  # (2b)
        for s in range(S):
            if (j, s) not in cm.y:
                continue
            z = cm.z.get((j, s))
            if z is None:
                model.add(cm.y[j, s] == 0).only_enforce_if(xi_lit)  # (2f) colocated: all on the PS server
            else:
                model.add(cm.y[j, s] == 0).only_enforce_if([xi_lit, z.Not()])
                model.add(cm.y[j, s] <= n_workers - 1).only_enforce_if([z, xi_lit.Not()])  # (2f) distributed
    for (kind, s, t), spans in (taken or {}).items():
        use = worker_use if kind == "w" else ps_use
        if (s, t) in use:
            use[s, t].extend((model.new_fixed_size_interval_var(a, b - a, f"taken_{kind}{s}_{t}_{a}"), n)
                             for a, b, n in spans if b > a and n > 0)
    for (s, u), items in worker_use.items():  # (2g)
        model.add_cumulative([i for i, _ in items], [d for _, d in items], int(data.W[s, u]))
    for (s, v), items in ps_use.items():  # (2h)
        model.add_cumulative([i for i, _ in items], [d for _, d in items], int(data.P[s, v]))
    model.minimize(sum(objective))  # (2)
    return cm


def extract_cpsat(cm: CpsatModel, solver: cp_model.CpSolver) -> list[Placement]:
    """Read each job's run from a solved model."""
    out = []
    for jd in cm.data.jobs:
        j = jd.index
        k = next(k for k in range(len(jd.modes)) if solver.value(cm.mode[j, k]))
        h = int(solver.value(cm.start[j]))
        workers = {s: int(solver.value(y)) for (jj, s), y in cm.y.items() if jj == j and solver.value(y) > 0}
        ps = next(s for (jj, s), z in cm.z.items() if jj == j and solver.value(z))
        md = jd.modes[k]
        out.append(Placement(j, h, h + md.duration, workers, ps, md.colocated))
    return out


@deadline_bounded("edgecloud", "cpsat")
def solve_cpsat(instance: Any, *, time_limit: float = 60.0, workers: int = 2, strengthen: bool = True,
                fix: bool = True, fix_min_runs: int = FIX_MIN_RUNS, deadline: Deadline | None = None,
                hint: Any = None, **options: Any) -> Result:
    """Solve MINLP (2) exactly with CP-SAT. Status optimal, time_limit (incumbent + bound) or infeasible.

    ``strengthen`` (default): add the valid inequalities of `formulations.strengthen` (objective >= the
    certified bound); False builds the model as the paper's constraints alone.
    ``hint``: a schedule (a `Schedule` or its JSON) given as solution hints (``start.py``); with ``fix``, it is
    one of the incumbents instead.
    ``fix`` (default): reduced-cost fixing (``fixing.py``): an incumbent (``offline_fill`` or the hint) and the
    certified bound's prices remove every run that no schedule at least as good uses; the incumbent is the
    hint and the objective may not exceed it. The search stops at its first strictly better schedule, which
    becomes the incumbent and fixes more, and goes on; when it proves nothing better exists, the incumbent is
    returned, optimal. ``extra["fixing"]`` records the incumbents, the bound, how many runs were removed;
    ``extra["timings"]`` the time of each step. Models with fewer than ``fix_min_runs`` (job, mode, start) runs
    are solved unfixed (`formulations.edgecloud.fixing.FIX_MIN_RUNS`: there fixing costs more than it saves).
    """
    from edgeopt.edgecloud import FAMILY
    from formulations.edgecloud.fixing import fix_runs, refix, runs
    from formulations.fixing import add_cpsat_cutoff, conclude, improved_incumbent, last_step, skipped_search

    if options:
        raise InputError("options", f"unknown option(s) for cpsat: {', '.join(sorted(options))} "
                                    "(known: workers, strengthen, fix, fix_min_runs)")
    t0 = time.perf_counter()
    deadline = deadline or Deadline(time_limit)
    with deadline.guard():
        data = prepare(instance)
    if data.unschedulable():
        return infeasible_result(instance, "cpsat", data.unschedulable(), time.perf_counter() - t0)
    fixing, timings = None, {}
    if fix and data.jobs and runs(data) >= fix_min_runs:
        from formulations.edgecloud.fixing import prepare_fixing

        base_data = data
        # ties kept: the incumbent stays feasible and is the hint, so that CP-SAT's LNS workers start from it
        # (asked for a strictly better schedule with none in hand, they sat idle: edgecloud 64 jobs, 49
        # deterministic seconds to a first schedule)
        data, fixing, timings = prepare_fixing(instance, data, hint=hint, deadline=deadline, strict=False)
        if fixing is not None and fixing.last_step:
            data, fixing = fix_runs(instance, base_data, fixing.incumbent, fixing.prices, strict=True)
    if fixing is not None:
        floor = fixing.prices.bound if strengthen else None
    else:
        floor = certified_floor(instance, deadline) if strengthen else None
    extra: dict[str, Any] = {"strengthen": strengthen, "objective_floor": floor, "fix": fix}
    if fixing is not None:
        extra["fixing"] = fixing.record()
        if (skip := skipped_search(fixing)) is not None:
            outcome, _ = conclude(skip, fixing)
            extra["timings"] = timings
            return finish(FAMILY, instance, "cpsat", outcome, fixing.incumbent.schedule, extra=extra,
                          build_s=time.perf_counter() - t0)
    build_s, search_s = 0.0, 0.0
    timings.setdefault("model_s", 0.0)
    # a size guard deferred to the fixed model (`edgeopt.core.limits.guard_built`; a no-op otherwise); a later
    # round fixes again from the same prices with a better incumbent, so its model is no larger
    guard_built(cpsat_size_of(instance, data) if fixing is not None else None)
    while True:
        t1 = time.perf_counter()
        with deadline.guard():
            cm = build_cpsat(instance, data)
            if floor is not None:
                add_cpsat_floor(cm.model, floor_in_model_units(floor))  # the model's objective is (2) itself
            if fixing is not None:
                add_cpsat_cutoff(cm.model, fixing.cutoff)  # no schedule worse than the incumbent
                if not fixing.strict:
                    hint_cpsat(cm, instance, fixing.incumbent.schedule)
            elif hint is not None:
                hint_cpsat(cm, instance, FAMILY.parse_schedule(hint))
        timings["model_s"] += time.perf_counter() - t1
        build_s = build_s or time.perf_counter() - t0
        # with fixing, the search stops at its first better schedule, which then fixes more (`refix`)
        outcome, solver = run_cpsat(cm.model, time_limit=time_limit, workers=workers, deadline=deadline,
                                    stop_below=None if fixing is None else fixing.better)
        search_s += outcome.runtime_s
        schedule = to_schedule(instance, extract_cpsat(cm, solver)) if outcome.has_solution else None
        if fixing is None or outcome.status == Status.OPTIMAL or schedule is None or deadline.expired():
            break
        better = improved_incumbent(FAMILY, instance, schedule, fixing, "cpsat")
        if better is None:
            break
        # one step above the bound, the only question left is whether a schedule at the bound exists: no
        # hint can help, and fixing the ties too shrinks the model most (edgecloud, 64 jobs: 99.4 % of the
        # runs fixed instead of 98.8 %, proved infeasible in 8 deterministic seconds)
        data, fixing = refix(instance, base_data, fixing, better,
                             strict=fixing.strict or last_step(better.objective, fixing.prices))
        if (skip := skipped_search(fixing)) is not None:
            outcome = skip
            break
    outcome = dataclasses.replace(outcome, runtime_s=search_s)
    extra["n_vars"] = len(cm.model.proto.variables)
    extra["timings"] = timings
    if fixing is not None:
        extra["fixing"] = fixing.record()
        outcome, use_incumbent = conclude(outcome, fixing)
        if use_incumbent:
            schedule = fixing.incumbent.schedule
    if outcome.status == Status.INFEASIBLE:
        extra["reason"] = "CP-SAT proved MINLP (2) infeasible"
    return finish(FAMILY, instance, "cpsat", outcome, schedule, extra=extra, build_s=build_s)
