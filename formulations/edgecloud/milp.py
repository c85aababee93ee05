"""Time-indexed MILP of She et al.'s MINLP (2) in Pyomo, solved by HiGHS.

Variables (``data.py`` explains the modes):

* ``x[j, k, h]`` binary: job j runs in mode k = (w, xi) over slots
  [h, h + d_j(k)): h_j and c_j (2j, 2k), xi_j (2f) and the work (2e) in one choice;
* ``y[j, s]`` integer: workers of job j on server s, held over the run (2c);
* ``z[j, s]`` binary: the PS of job j is on server s, held over the run (2d);
* ``q[j, k, h, s] >= 0``: y[j, s] if run (k, h) is the chosen one, else 0;
  ``r[j, k, h, s] >= 0``: likewise z[j, s]. They are the paper's per-slot
  y_{jsu_j}(t), z_{jsv_j}(t) written per run, so the capacities (2g, 2h) are
  linear without any big-M: at slot t a server carries the q of the runs
  covering t. Only runs starting after the data reached s exist (2i).

Exactness: exactly one x is 1; q and r of the other runs are forced to 0 by
``q <= cap * x``, ``r <= x``; so q and r of the chosen run equal y and z,
which are integral. Colocation (2f) is stated per run: in a colocated mode
every worker sits on the PS's server (``q <= w * r``), in a distributed mode
the PS's server holds at most w - 1 of them. Every job must be scheduled
(the objective sums every job's JCT).

Objective (2): sum_j (c_j - a_j) = sum x[j, k, h] (h + d_j(k) - a_j).

Size. Runs that no optimal schedule uses are left out before building: a
validated list-scheduling schedule gives a total JCT UB, and job j cannot end
after a_j + UB - sum_{k != j} LB_k (`data.with_deadlines`). This shrinks the
time index about tenfold on the ``small`` preset and keeps the model exact.

Time limit. HiGHS's incumbent and bound are returned with status
``time_limit``; when HiGHS has no incumbent (or a worse one) the list-
scheduling schedule is returned, and when its bound is missing or weaker the
sum of single-job least JCTs is; ``extra`` says which (``incumbent_from``,
``bound_from``). Pyomo's translation to HiGHS is not under the limit (it
takes about 3 s for ~20k variables).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
import pyomo.core as pyo

from edgeopt.core import BuildTimeLimit, Deadline, InputError, ModelError, Result, Status
from edgeopt.core.limits import guard_built
from formulations.common import SolverOutcome, deadline_bounded, finish, solve_pyomo
from formulations.edgecloud.data import ModelData, greedy_placements, prepare, with_deadlines
from formulations.edgecloud.fixing import FIX_MIN_RUNS, runs
from formulations.edgecloud.schedule_io import Placement, infeasible_result, to_schedule
from formulations.edgecloud.sizes import milp_size_of
from formulations.edgecloud.start import start_milp


def build_milp(
    instance: Any,
    data: ModelData | None = None,
    *,
    free_workers: np.ndarray | None = None,
    free_ps: np.ndarray | None = None,
    max_jobs: bool = False,
    relax: bool = False,
) -> pyo.ConcreteModel:
    """Build the MILP of MINLP (2) (never solves). ``data`` defaults to `prepare(instance)`.

    With ``max_jobs=True`` it is instead the batch problem (3) of one round:
    every job is optional (x_j in {0, 1}, 3a), the objective is to maximise the
    number of jobs run in the window of ``data``, and the capacities are the
    free ones left by earlier rounds, ``free_workers [S, U, T]`` and
    ``free_ps [S, V, T]`` (W_su - f_su(t), P_sv - g_sv(t)); default the full W, P.
    ``relax=True`` builds the LP relaxation (every variable continuous).
    """
    data = data or prepare(instance)
    T, S = data.horizon, data.n_servers
    jobs = {jd.index: jd for jd in data.jobs}
    cap_w = free_workers if free_workers is not None else np.repeat(data.W[:, :, None], T, axis=2)
    cap_p = free_ps if free_ps is not None else np.repeat(data.P[:, :, None], T, axis=2)
    m = pyo.ConcreteModel(name="edgecloud_minlp2")
    m._data = data  # for extract_milp

    jkh = [(jd.index, k, h) for jd in data.jobs for k, md in enumerate(jd.modes) for h in jd.starts(md, T)]
    jkhs_w = [(j, k, h, s) for (j, k, h) in jkh for s in range(S)
              if jobs[j].worker_cap[s] > 0 and h >= jobs[j].release[s]]
    jkhs_p = [(j, k, h, s) for (j, k, h) in jkh for s in range(S) if jobs[j].ps_ok[s] and h >= jobs[j].release[s]]
    js_w = sorted({(j, s) for (j, _, _, s) in jkhs_w})
    js_p = sorted({(j, s) for (j, _, _, s) in jkhs_p})

    def cap(j: int, s: int) -> int:
        return int(jobs[j].worker_cap[s])

    def mode(j: int, k: int):
        return jobs[j].modes[k]

    binary = pyo.UnitInterval if relax else pyo.Binary
    m.x = pyo.Var(jkh, domain=binary, doc="job j runs mode k from slot h")
    m.y = pyo.Var(js_w, domain=pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers,
                  bounds=lambda _, j, s: (0, cap(j, s)), doc="workers of job j on server s")
    m.z = pyo.Var(js_p, domain=binary, doc="PS of job j on server s")
    m.q = pyo.Var(jkhs_w, domain=pyo.NonNegativeReals, doc="workers of run (j, k, h) on server s")
    m.r = pyo.Var(jkhs_p, domain=pyo.NonNegativeReals, bounds=(0, 1), doc="PS of run (j, k, h) on server s")

    runs: dict[int, list] = {jd.index: [] for jd in data.jobs}
    for key in jkh:
        runs[key[0]].append(key)
    q_of_run: dict[tuple[int, int, int], list] = {key: [] for key in jkh}
    q_of_js: dict[tuple[int, int], list] = {key: [] for key in js_w}
    for key in jkhs_w:
        q_of_run[key[:3]].append(key)
        q_of_js[key[0], key[3]].append(key)
    r_of_run: dict[tuple[int, int, int], list] = {key: [] for key in jkh}
    r_of_js: dict[tuple[int, int], list] = {key: [] for key in js_p}
    for key in jkhs_p:
        r_of_run[key[:3]].append(key)
        r_of_js[key[0], key[3]].append(key)

    if max_jobs:
        m.c3a_accept = pyo.Constraint(
            [j for j in jobs if runs[j]], rule=lambda _, j: sum(m.x[key] for key in runs[j]) <= 1,
            doc="(3a)/(4c) x_j in {0, 1}: job j runs at most once in the round",
        )
    else:
        m.c2_run_once = pyo.Constraint(
            list(jobs), rule=lambda _, j: sum(m.x[key] for key in runs[j]) == 1,
            doc="each job gets exactly one (mode, start); the objective sums every job's c_j - a_j",
        )
    m.c2a_chunks = pyo.Constraint(
        jkh, rule=lambda _, j, k, h: sum(m.q[key] for key in q_of_run[j, k, h]) == mode(j, k).workers * m.x[j, k, h],
        doc="(2a) sum_s y_jsu(t) <= D_j: the run places its mode's w in 1..D_j workers",
    )
    m.c2b_one_ps = pyo.Constraint(
        jkh, rule=lambda _, j, k, h: sum(m.r[key] for key in r_of_run[j, k, h]) == m.x[j, k, h],
        doc="(2b) sum_s z_jsv(t) = 1 while job j runs",
    )
    m.c2c_run_workers = pyo.Constraint(
        jkhs_w, rule=lambda _, j, k, h, s: m.q[j, k, h, s] <= cap(j, s) * m.x[j, k, h],
        doc="(2c) only the chosen run holds workers",
    )
    m.c2c_fixed_workers = pyo.Constraint(
        js_w, rule=lambda _, j, s: sum(m.q[key] for key in q_of_js[j, s]) == m.y[j, s],
        doc="(2c) y_jsu(t) = y_jsu(t+1) over [h_j, c_j): one integer allocation per server for the whole run",
    )
    m.c2d_run_ps = pyo.Constraint(
        jkhs_p, rule=lambda _, j, k, h, s: m.r[j, k, h, s] <= m.x[j, k, h],
        doc="(2d) only the chosen run holds the PS",
    )
    m.c2d_fixed_ps = pyo.Constraint(
        js_p, rule=lambda _, j, s: sum(m.r[key] for key in r_of_js[j, s]) == m.z[j, s],
        doc="(2d) z_jsv(t) = z_jsv(t+1) over [h_j, c_j): one binary PS placement for the whole run",
    )

    def coloc_rule(_, j, k, h, s):
        w = mode(j, k).workers
        r = m.r[j, k, h, s] if (j, k, h, s) in m.r else 0  # noqa: SIM401 (a Pyomo Var, not a dict)
        if mode(j, k).colocated:
            return m.q[j, k, h, s] <= w * r
        return m.q[j, k, h, s] <= (w - 1) * r + min(cap(j, s), w) * (m.x[j, k, h] - r)

    m.c2f_colocation = pyo.Constraint(
        jkhs_w, rule=coloc_rule,
        doc="(2f) xi_j = 1 iff all workers sit on the PS's server: colocated runs put all w there, "
        "distributed runs at most w - 1",
    )
    m.c2i_release = pyo.Constraint(
        js_w, rule=lambda _, j, s: m.y[j, s] <= cap(j, s) * sum(m.x[key] for key in runs[j] if key[2] >= jobs[j].release[s]),
        doc="(2i) y_jsu(t) = z_jsv(t) = 0 for t < a_j + Delta_js (also built into the runs' domains)",
    )

    w_at: dict[tuple[int, int, int], list] = {}
    for j, k, h, s in jkhs_w:
        for t in range(h, h + mode(j, k).duration):
            w_at.setdefault((s, jobs[j].worker_type, t), []).append((j, k, h, s))
    p_at: dict[tuple[int, int, int], list] = {}
    for j, k, h, s in jkhs_p:
        for t in range(h, h + mode(j, k).duration):
            p_at.setdefault((s, jobs[j].ps_type, t), []).append((j, k, h, s))
    m.c2g_worker_capacity = pyo.Constraint(
        sorted(w_at), rule=lambda _, s, u, t: sum(m.q[key] for key in w_at[s, u, t]) <= float(cap_w[s, u, t]),
        doc="(2g) sum_j y_jsu(t) <= W_su",
    )
    m.c2h_ps_capacity = pyo.Constraint(
        sorted(p_at), rule=lambda _, s, v, t: sum(m.r[key] for key in p_at[s, v, t]) <= float(cap_p[s, v, t]),
        doc="(2h) sum_j z_jsv(t) <= P_sv",
    )
    if max_jobs:
        m.obj = pyo.Objective(expr=sum(m.x[key] for key in jkh), sense=pyo.maximize, doc="(3) maximise sum_j x_j")
    else:
        m.obj = pyo.Objective(
            expr=sum((h + mode(j, k).duration - jobs[j].arrival) * m.x[j, k, h] for (j, k, h) in jkh),
            sense=pyo.minimize,
            doc="(2) minimise sum_j (c_j - a_j)",
        )
    return m


def extract_milp(m: pyo.ConcreteModel) -> list[Placement]:
    """Read each job's run from a solved model (jobs not run, in the batch problem, are left out)."""
    data: ModelData = m._data
    chosen = {j: (k, h) for (j, k, h) in m.x if pyo.value(m.x[j, k, h]) > 0.5}
    out = []
    for jd in data.jobs:
        j = jd.index
        if j not in chosen:
            continue
        k, h = chosen[j]
        workers = {s: round(pyo.value(m.y[jj, s])) for (jj, s) in m.y if jj == j}
        ps = next(s for (jj, s) in m.z if jj == j and pyo.value(m.z[jj, s]) > 0.5)
        md = jd.modes[k]
        out.append(Placement(j, h, h + md.duration, {s: c for s, c in workers.items() if c > 0}, ps, md.colocated))
    return out


def lp_relaxation(instance: Any, *, time_limit: float = 60.0) -> float:
    """Value of the LP relaxation of the MILP of (2) over the full horizon (no deadline cuts): a lower bound."""
    data = prepare(instance)
    if data.unschedulable() or not data.jobs:
        raise InputError("instance", "the LP relaxation needs at least one job and every job schedulable")
    outcome = solve_pyomo(build_milp(instance, data, relax=True), time_limit=time_limit)
    if outcome.status != Status.OPTIMAL:
        raise ModelError(f"LP relaxation ended {outcome.status.value}")
    return float(outcome.objective)


def greedy_schedule(instance: Any, data: ModelData) -> Any | None:
    """The list-scheduling schedule of `data.greedy_placements`, if it passes the family's validator."""
    from edgeopt.edgecloud import FAMILY

    runs = greedy_placements(data)
    if runs is None:
        return None
    schedule = to_schedule(instance, [Placement(*r) for r in runs])
    return None if FAMILY.validate(instance, schedule) else schedule


def trivial_bound(data: ModelData) -> float:
    """sum_j of the least JCT job j can have alone (earliest start + fastest mode): a lower bound of (2)."""
    return float(sum(min(max(jd.earliest, int(jd.release.min())) + md.duration for md in jd.modes) - jd.arrival
                     for jd in data.jobs))


@deadline_bounded("edgecloud", "milp")
def solve_milp(
    instance: Any,
    *,
    time_limit: float = 60.0,
    threads: int = 1,
    rel_gap: float = 1e-6,
    tighten: bool = True,
    strengthen: bool = True,
    fix: bool = True,
    fix_min_runs: int = FIX_MIN_RUNS,
    deadline: Deadline | None = None,
    hint: Any = None,
    **options: Any,
) -> Result:
    """Solve MINLP (2) exactly with the time-indexed MILP and HiGHS.

    ``hint``: a schedule (a `Schedule` or its JSON) handed to HiGHS as a MIP start (``start.py``); with ``fix``
    it is one of the incumbents instead.

    ``fix`` (default): reduced-cost fixing (``fixing.py``): an incumbent (``offline_fill`` or the hint) and
    the certified bound's prices remove every run no better schedule uses before the model is built, and
    HiGHS is asked for a schedule strictly better than the incumbent (its ``objective_bound``); when there is
    none, the incumbent is returned, proven optimal. ``extra["fixing"]`` records the incumbent, the bound and
    how many runs were removed; ``extra["timings"]`` the time of each step. Models with fewer than
    ``fix_min_runs`` (job, mode, start) runs are solved unfixed (`formulations.edgecloud.fixing.FIX_MIN_RUNS`:
    there fixing costs more than it saves).

    With ``tighten`` (default) the time index of each job is cut at the
    latest completion any optimal schedule can have, from the total JCT of a
    validated list-scheduling schedule (`data.with_deadlines`); exactness is
    kept. Returns status optimal, time_limit (incumbent + bound) or infeasible.
    ``strengthen``: accepted for a uniform interface; this model adds no rows (the objective floor of
    `formulations.strengthen`, tried here, slowed HiGHS down: benchmarks/exact_scale.py).
    """
    from edgeopt.edgecloud import FAMILY

    if options:
        raise InputError("options", f"unknown option(s) for milp: {', '.join(sorted(options))} "
                                    "(known: threads, rel_gap, tighten, strengthen, fix, fix_min_runs)")
    from formulations.fixing import conclude, skipped_search

    t0 = time.perf_counter()
    deadline = deadline or Deadline(time_limit)
    with deadline.guard():
        data = prepare(instance)
    if data.unschedulable():
        return infeasible_result(instance, "milp", data.unschedulable(), time.perf_counter() - t0)
    if not data.jobs:  # nothing to schedule: HiGHS would see an empty model
        empty = SolverOutcome(Status.OPTIMAL, 0.0, 0.0, 0.0, "no jobs", True)
        return finish(FAMILY, instance, "milp", empty, to_schedule(instance, []), build_s=time.perf_counter() - t0)
    fixing, timings = None, {}
    if fix and runs(data) >= fix_min_runs:
        from formulations.edgecloud.fixing import prepare_fixing

        # strict: HiGHS gets no MIP start but far fewer runs (ties kept and the incumbent as start: 64 jobs
        # proved in 24.6 s CPU instead of 13.2 s, and 80 / 128 jobs not proved in 60 s either way)
        data, fixing, timings = prepare_fixing(instance, data, hint=hint, deadline=deadline, strict=True)
    with deadline.guard():
        greedy = greedy_schedule(instance, data) if tighten and fixing is None else None
        ub = float(FAMILY.objective(instance, greedy)) if greedy is not None else None
        if ub is not None:
            data = with_deadlines(data, ub)
        elif fixing is not None and tighten:
            data = with_deadlines(data, fixing.cutoff)  # only schedules better than the incumbent are asked for
    highs_options: dict[str, Any] = {}
    fix_extra: dict[str, Any] = {}
    if fixing is not None:
        fix_extra["fixing"] = fixing.record()
        if not fixing.jobs_without_column:
            fixing.jobs_without_column = [jd.index for jd in data.jobs if not any(jd.starts(md, data.horizon)
                                                                                    for md in jd.modes)]
        if (skip := skipped_search(fixing)) is not None:
            outcome, _ = conclude(skip, fixing)
            return finish(FAMILY, instance, "milp", outcome, fixing.incumbent.schedule,
                          extra={**fix_extra, "strengthen": strengthen, "fix": fix, "timings": timings},
                          build_s=time.perf_counter() - t0)
        # HiGHS prunes every node above it and answers "infeasible" when no schedule is below it
        highs_options["objective_bound"] = fixing.solver_cutoff()
    # a size guard deferred to the fixed model (`edgeopt.core.limits.guard_built`; a no-op otherwise)
    guard_built(milp_size_of(instance, data) if fixing is not None else None)
    try:
        t1 = time.perf_counter()
        with deadline.guard():
            m = build_milp(instance, data)
            start = start_milp(m, instance, FAMILY.parse_schedule(hint)) if hint is not None and fixing is None else None
        timings["model_s"] = time.perf_counter() - t1
        build_s = time.perf_counter() - t0
        outcome: SolverOutcome = solve_pyomo(m, time_limit=time_limit, rel_gap=rel_gap, threads=threads,
                                             deadline=deadline, start=start, highs_options=highs_options)
    except BuildTimeLimit as exc:
        # no model to solve in time, but the list schedule and the trivial bound are still answers
        m, build_s = None, time.perf_counter() - t0
        outcome = SolverOutcome(Status.TIME_LIMIT, None, None, 0.0, str(exc), False)
    schedule = to_schedule(instance, extract_milp(m)) if outcome.has_solution else None
    notes: dict[str, Any] = {}
    if fixing is not None:
        outcome, use_incumbent = conclude(outcome, fixing)
        if use_incumbent:
            schedule = fixing.incumbent.schedule
    if outcome.status == Status.TIME_LIMIT and fixing is None:
        # At a time limit, report the best schedule and bound known, saying where each came from.
        lb = trivial_bound(data)
        if outcome.bound is None or outcome.bound < lb:
            outcome = dataclasses.replace(outcome, bound=lb)
            notes["bound_from"] = "sum of single-job least JCTs"
        if greedy is not None and (outcome.objective is None or ub < outcome.objective):
            outcome = dataclasses.replace(outcome, objective=ub, has_solution=True)
            schedule = greedy
            notes["incumbent_from"] = "list scheduling (HiGHS had no better incumbent)"
    extra: dict[str, Any] = {
        "n_vars": int(sum(len(v) for v in m.component_objects(pyo.Var))) if m is not None else None,
        "n_modes": sum(len(jd.modes) for jd in data.jobs),
        "greedy_upper_bound": ub,
        "strengthen": strengthen,
        "fix": fix,
        "timings": timings,
        **fix_extra,
        **notes,
    }
    if outcome.status == Status.INFEASIBLE:
        extra["reason"] = "HiGHS proved the MILP of MINLP (2) infeasible"
    return finish(FAMILY, instance, "milp", outcome, schedule, extra=extra, build_s=build_s)
