"""Exact MILP (Pyomo, solved by HiGHS) of program (2) of Han et al., under the readings of
``edgeopt.okita.instance`` / ``schedule``.

Index sets: job i, sites r, r2, slot t in the job's window a_i .. T-1. Variables:

* ``y[i, r, t]`` integer workers (2f), at most Y_ir = min(workers fitting C_r, ceil(E_i D_i / rho_i));
  more workers than worker-slots needed only add cost, so the bound loses no optimum;
* ``s[i, r, t]`` binary PS site (2g); ``u[i, t]`` binary "the job has workers in slot t";
* ``g[i, r, r2, t]`` integer chunks moved from r to r2 and trained there in slot t (2f);
* ``z[i, t]`` binary: t is the completion slot t_i (2e) -- one binary per possible completion slot, so
  the latency cost is the table ``sum_t z[i, t] f_i(t - a_i + 1)``, exact for any non-decreasing f;
* ``w[i, r, r2, t]`` = y[i, r, t] * s[i, r2, t] for r != r2 with q^{r r2} > 0, linearised exactly
  (s binary, 0 <= y <= Y): w >= y - Y (1 - s), w <= y, w <= Y s, w >= 0.

Constraints (names carry the equations):

* ``c2a_data[i, r]``: sum_{r2, t} g = D_i^r (every chunk of every origin trained once; sums to (2a), and
  eq. (3) M_i^r(t) >= 0 holds since a site sends at most what it holds);
* ``c2b_process[i, r2, t]``: rho_i y[i, r2, t] >= E_i sum_r g[i, r, r2, t];
* ``c2c_one_ps[i, t]``: sum_r s = u (one PS while the job has workers, none otherwise);
  ``c2c_active_ub`` y <= Y u and ``c2c_active_lb`` u <= sum_r y;
* ``c2d_capacity[r, k, t]``: sum_i m y + n s <= C;
* ``c2e_one_completion[i]``: sum_t z = 1; ``c2e_none_after[i, t]``: u[i, t] <= sum_{t' >= t} z[i, t'];
  ``c2e_completion_active[i, t]``: z <= u (the completion slot has workers), so z marks the last active slot;
* ``c1_product_*``: the linearisation of w;
* ``c2b_worker_slots[i]``: the valid cut sum_{r, t} y >= ceil(E_i D_i / rho_i) (sum of (2b) over r and t
  with (2a), rounded up since y is integer); it tightens the LP relaxation only.

Objective (2) with (1): sum z f + sum q delta g + sum q pi w.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyomo.core as pyo

from edgeopt.core import BuildTimeLimit, Deadline, InputError, ModelError, ModelSize, Result, Status
from edgeopt.core.family import instance_sha256
from edgeopt.core.limits import guard_built, size_guard_deferred
from edgeopt.okita.instance import Instance
from edgeopt.okita.schedule import Schedule, entry, group_entries, objective_parts
from formulations.common import REL_GAP, SolverOutcome, finish, solve_pyomo
from formulations.fixing import best_incumbent
from formulations.okita import milp_completion as by_completion
from formulations.okita.bounds import worker_bounds, worker_slots


def model_size(instance: Instance) -> ModelSize:
    """The size the guard judges for ``solve_milp``: the larger of its two models (by completion, the default,
    and by slot), so neither is built above the budget whichever ``formulation`` is asked for."""
    return max(slots_model_size(instance), by_completion.model_size(instance), key=lambda s: s.nonzeros)


def slots_model_size(instance: Instance) -> ModelSize:
    """Variables, rows and nonzeros of `build_milp`, estimated before building."""
    R, K, T = len(instance.sites), len(instance.resources), instance.horizon
    slots = sum(T - j.arrival for j in instance.jobs)
    nv = slots * (R + R + 2 + 2 * R * R)
    nc = len(instance.jobs) * R + slots * (R + 1 + R + 1 + 2 + 3 * R * R) + R * K * T + len(instance.jobs)
    nz = slots * (R * R * 3 + R * 4 + 2 * R * K + 4 + 8 * R * R) + slots * T // max(1, T)
    return ModelSize(nv, nc, nz, note="the g and w variables grow as jobs x slots x sites^2")


def build_milp(instance: Instance, *, relax: bool = False, deadline: Deadline | None = None) -> pyo.ConcreteModel:
    """Build the MILP (never solves). ``relax`` gives its LP relaxation (a lower bound)."""
    R, K, T = len(instance.sites), len(instance.resources), instance.horizon
    C, q = instance.capacity, instance.q
    Y = worker_bounds(instance)
    jobs = instance.jobs
    IT = [(i, t) for i, j in enumerate(jobs) for t in range(j.arrival, T)]
    IRT = [(i, r, t) for (i, t) in IT for r in range(R)]
    IRRT = [(i, r, r2, t) for (i, t) in IT for r in range(R) for r2 in range(R)]
    PROD = [(i, r, r2, t) for (i, r, r2, t) in IRRT if r != r2 and q[r, r2] > 0]
    def check() -> None:
        if deadline is not None:
            deadline.check()

    check()
    m = pyo.ConcreteModel(name="okita_program_2")
    calls = [0]

    def timed(rule):
        """The rule, checking the deadline every 2000 calls (Pyomo builds rows inside these calls)."""
        def wrapped(*args):
            calls[0] += 1
            if deadline is not None and calls[0] % 2000 == 0:
                deadline.check()
            return rule(*args)
        return wrapped

    def con(index, rule, doc: str = "") -> pyo.Constraint:
        return pyo.Constraint(index, rule=timed(rule), doc=doc)

    integer = pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers
    binary = pyo.UnitInterval if relax else pyo.Binary
    m.y = pyo.Var(IRT, domain=integer, bounds=timed(lambda _m, i, r, t: (0, int(Y[i, r]))))
    m.s = pyo.Var(IRT, domain=binary)
    m.u = pyo.Var(IT, domain=binary)
    m.z = pyo.Var(IT, domain=binary)
    check()
    m.g = pyo.Var(IRRT, domain=integer, bounds=timed(lambda _m, i, r, r2, t: (0, jobs[i].data_chunks[r])))
    check()
    m.w = pyo.Var(PROD, domain=pyo.NonNegativeReals, bounds=timed(lambda _m, i, r, r2, t: (0, int(Y[i, r]))))

    by_job_origin: dict[tuple[int, int], list] = {}
    into: dict[tuple[int, int, int], list] = {}
    for n_done, (i, r, r2, t) in enumerate(IRRT):
        if n_done % 20000 == 0:
            check()
        by_job_origin.setdefault((i, r), []).append(m.g[i, r, r2, t])
        into.setdefault((i, r2, t), []).append(m.g[i, r, r2, t])
    check()
    m.c2a_data = con(
        [(i, r) for i in range(len(jobs)) for r in range(R)],
        lambda _m, i, r: sum(by_job_origin.get((i, r), [])) == jobs[i].data_chunks[r]
        if by_job_origin.get((i, r)) else pyo.Constraint.Feasible if jobs[i].data_chunks[r] == 0
        else pyo.Constraint.Infeasible,
        doc="(2a)/(3): every chunk of every origin site trained exactly once")
    m.c2b_process = con(
        IRT, lambda _m, i, r, t: jobs[i].worker_chunks_per_slot * _m.y[i, r, t]
        >= jobs[i].epochs * sum(into[i, r, t]),
        doc="(2b): rho_i y_i^r'(t) >= E_i sum_r g_i^{r r'}(t)")
    check()
    m.c2c_one_ps = con(IT, lambda _m, i, t: sum(_m.s[i, r, t] for r in range(R)) == _m.u[i, t],
                                  doc="(2c): one PS in every slot with workers, none otherwise")
    m.c2c_active_ub = con(IRT, lambda _m, i, r, t: _m.y[i, r, t] <= int(Y[i, r]) * _m.u[i, t])
    m.c2c_active_lb = con(IT, lambda _m, i, t: _m.u[i, t] <= sum(_m.y[i, r, t] for r in range(R)))
    m.c2b_worker_slots = con(range(len(jobs)), lambda _m, i: sum(_m.y[i, r, t] for (i2, t) in IT if i2 == i
                                                                  for r in range(R))
                             >= worker_slots(jobs[i]),
                             doc="valid cut from (2a)+(2b): sum_t,r y >= ceil(E_i D_i / rho_i) (y integer)")
    check()
    on_slot: dict[int, list[tuple[int, int]]] = {}
    for (i, t) in IT:
        on_slot.setdefault(t, []).append((i, t))

    def cap_rule(_m, r, k, t):
        terms = [jobs[i].worker_demand[k] * _m.y[i, r, t] + jobs[i].ps_demand[k] * _m.s[i, r, t]
                 for (i, _t) in on_slot.get(t, [])]
        if not terms:
            return pyo.Constraint.Skip
        return sum(terms) <= float(C[r, k])

    m.c2d_capacity = con([(r, k, t) for r in range(R) for k in range(K) for t in range(T)],
                                    cap_rule, doc="(2d): sum_i m y + n s <= C per site, resource, slot")
    check()
    win = {i: list(range(j.arrival, T)) for i, j in enumerate(jobs)}
    m.c2e_one_completion = con(range(len(jobs)), lambda _m, i: sum(_m.z[i, t] for t in win[i]) == 1)
    m.c2e_none_after = con(IT, lambda _m, i, t: _m.u[i, t] <= sum(_m.z[i, t2] for t2 in win[i]
                                                                                   if t2 >= t))
    m.c2e_completion_active = con(IT, lambda _m, i, t: _m.z[i, t] <= _m.u[i, t])
    check()
    m.c1_product_lb = con(PROD, lambda _m, i, r, r2, t: _m.w[i, r, r2, t]
                                     >= _m.y[i, r, t] - int(Y[i, r]) * (1 - _m.s[i, r2, t]))
    m.c1_product_y = con(PROD, lambda _m, i, r, r2, t: _m.w[i, r, r2, t] <= _m.y[i, r, t])
    m.c1_product_s = con(PROD, lambda _m, i, r, r2, t: _m.w[i, r, r2, t]
                                    <= int(Y[i, r]) * _m.s[i, r2, t])
    check()
    lat = {i: instance.latency_table(i) for i in range(len(jobs))}
    m.obj = pyo.Objective(
        expr=sum(float(lat[i][t]) * m.z[i, t] for (i, t) in IT)
        + sum(float(q[r, r2]) * jobs[i].chunk_size_mb * m.g[i, r, r2, t] for (i, r, r2, t) in IRRT if r != r2
              and q[r, r2] > 0)
        + sum(float(q[r, r2]) * jobs[i].param_size_mb * m.w[i, r, r2, t] for (i, r, r2, t) in PROD),
        sense=pyo.minimize)
    return m


def extract_milp(model: pyo.ConcreteModel, instance: Instance) -> Schedule:
    """The schedule of the loaded solution."""
    R = len(instance.sites)
    entries: dict[int, list] = {}
    for i, job in enumerate(instance.jobs):
        for t in range(job.arrival, instance.horizon):
            y = np.array([round(pyo.value(model.y[i, r, t])) for r in range(R)], dtype=np.int64)
            g = np.array([[round(pyo.value(model.g[i, r, r2, t])) for r2 in range(R)] for r in range(R)],
                         dtype=np.int64)
            if not y.any() and not g.any():
                continue
            s = [pyo.value(model.s[i, r, t]) for r in range(R)]
            ps = int(np.argmax(s)) if y.any() else None
            entries.setdefault(i, []).append(entry(t, y, ps, g))
    return Schedule(jobs=group_entries(entries))


def no_schedule_result(instance: Instance, algorithm: str, status: Status, *, reason: str, bound: float | None,
                       runtime_s: float, extra: dict[str, Any] | None = None) -> Result:
    """A result without a schedule: infeasible (proven) or time_limit without incumbent."""
    extra = dict(extra or {})
    extra["reason"] = reason
    return Result(family="okita", algorithm=algorithm, status=status, objective=None, bound=bound,
                  runtime_s=runtime_s, schedule=None, instance_sha256=instance_sha256(instance), extra=extra)


#: ``solve_milp``'s models: indexed by completion (`milp_completion`, the default) or by slot (`build_milp`).
FORMULATIONS = ("completion", "slots")


#: The fast algorithms whose best validated schedule is the completion windows' incumbent (`solve_milp`'s ``fix``).
INCUMBENT_ALGORITHMS = ("drf", "fifo", "online", "oasis_latency")


def solve_milp(instance: Instance, *, time_limit: float = 60.0, threads: int = 1, rel_gap: float | None = None,
               tee: bool = False, strengthen: bool = True, hint: Any = None,
               formulation: str = "completion", fix: bool = True) -> Result:
    """Solve program (2) exactly with HiGHS; ``time_limit`` covers building and solving.

    ``formulation``: ``completion`` (default) builds `milp_completion.build_milp_completion`, each job's plan
    per completion slot, whose LP does not mix a late completion's open slots into an early one (the 8- and
    10-job rungs of the `small` ladder proven 5 and 2 times faster, docs/families/okita.md); ``slots`` builds
    `build_milp`, the model by slot, kept as the reference the other is tested against.

    ``strengthen``: accepted for a uniform interface; this model adds no rows (the objective floor of
    `formulations.strengthen`, tried here, slowed HiGHS down: benchmarks/exact_scale.py).
    ``hint``: a schedule (a `Schedule` or its JSON) handed to HiGHS as a MIP start (``start.py``). With the
    model by completion a complete, valid hint also bounds every job's completion slot: a job can end in slot
    c only while f_i(c) plus the other jobs' latency floors stays within the hint's cost
    (`milp_completion.completion_windows`), so every schedule as good as the hint, the optimum among them, is
    kept. ``extra["windows"]`` records the completions built.

    ``fix`` (default; the model by completion only): those windows, reduced-cost fixing with one bound per job.
    They come from the hint, and, when the unfixed model is above the size budget (the guard then waits for
    the windowed one, `edgeopt.core.limits.guard_built`), from the best of the hint and `INCUMBENT_ALGORITHMS`
    (the `paper` preset cut to 8 jobs and 4 sites: 12.2 M nonzeros unfixed, 83 k in the windows of `drf`'s
    schedule). That incumbent is the MIP start, and it comes back if HiGHS finds nothing in time.
    ``fix=False`` builds every completion.
    """
    from edgeopt.okita import FAMILY

    if formulation not in FORMULATIONS:
        raise InputError("formulation", f"{formulation!r} is not one of {', '.join(FORMULATIONS)}")
    if not isinstance(fix, bool):
        raise InputError("fix", f"must be true or false, got {fix!r}")
    completion = formulation == "completion"
    deadline = Deadline(time_limit)
    t0 = time.perf_counter()
    parsed = FAMILY.parse_schedule(hint) if hint is not None else None
    incumbent, start = None, None
    try:  # one deadline: the incumbent, the model, its translation to HiGHS and the search
        if completion and fix:
            # the incumbent's cost bounds every job's completion (`completion_windows`); it stays in the model
            with deadline.guard("the incumbent of the completion windows"):
                incumbent = best_incumbent(FAMILY, instance, hint=parsed, deadline=deadline,
                                           algorithms=INCUMBENT_ALGORITHMS if size_guard_deferred() else ())
        upper = None if incumbent is None else incumbent.objective
        # a size guard deferred to the windowed model (`guard_built`; a no-op otherwise)
        guard_built(by_completion.model_size(instance, upper) if upper is not None else None)
        model = (by_completion.build_milp_completion(instance, deadline=deadline, upper=upper) if completion
                 else build_milp(instance, deadline=deadline))
        given = parsed if incumbent is None else incumbent.schedule
        if given is not None:
            from formulations.okita.start import start_milp

            start = by_completion.start_milp_completion(model, given) if completion else start_milp(model, given)
        build_s = time.perf_counter() - t0
        outcome = solve_pyomo(model, time_limit=deadline.remaining(), rel_gap=REL_GAP if rel_gap is None else rel_gap,
                              threads=threads, tee=tee, start=start, deadline=deadline)
    except BuildTimeLimit as exc:
        return no_schedule_result(instance, "milp", Status.TIME_LIMIT, reason=str(exc), bound=None,
                                  runtime_s=deadline.elapsed())
    extra: dict[str, Any] = {"program": "2", "formulation": formulation, "n_vars": model.nvariables(),
                             "n_constraints": model.nconstraints(), "solve_s": round(outcome.runtime_s, 6),
                             "strengthen": strengthen, "fix": fix}
    if given is not None:
        extra["mip_start_values"] = outcome.start_values
    if incumbent is not None and outcome.status == Status.INFEASIBLE:
        # the incumbent lies in its own windows: a windowed model without a schedule is wrong, never an answer
        raise ModelError("okita/milp: the model within the completion windows is infeasible although the "
                         f"incumbent ({incumbent.source}, {upper}) lies in it")
    if incumbent is not None:
        extra["windows"] = {"upper_bound": upper, "from": incumbent.source, "completions": len(model.z),
                            "completions_unwindowed": by_completion.completion_count(instance),
                            "incumbent_s": round(incumbent.seconds, 6)}
        if not outcome.has_solution and outcome.status != Status.INFEASIBLE:
            # HiGHS found nothing in time: the incumbent (inside the windows) with the windowed model's bound,
            # which bounds the optimum since the optimum lies in the windows
            outcome = SolverOutcome(Status.TIME_LIMIT, upper, outcome.bound, outcome.runtime_s, outcome.message,
                                    False, outcome.translate_s, outcome.start_values)
            res = finish(FAMILY, instance, "milp", outcome, incumbent.schedule, extra=extra, build_s=build_s)
            res.extra.update(objective_parts(instance, incumbent.schedule))
            return res
    if outcome.status == Status.INFEASIBLE:
        return no_schedule_result(instance, "milp", Status.INFEASIBLE, bound=None,
                                  reason="HiGHS proved that no schedule trains every job by the horizon",
                                  runtime_s=outcome.runtime_s + build_s, extra=extra)
    if not outcome.has_solution:
        return no_schedule_result(instance, "milp", Status.TIME_LIMIT, bound=outcome.bound,
                                  reason="time limit without an incumbent", runtime_s=outcome.runtime_s + build_s,
                                  extra=extra)
    schedule = by_completion.extract_milp_completion(model, instance) if completion else extract_milp(model, instance)
    res = finish(FAMILY, instance, "milp", outcome, schedule, extra=extra, build_s=build_s)
    res.extra.update(objective_parts(instance, schedule))
    return res


def lp_relaxation(instance: Instance, *, time_limit: float = 60.0) -> float | None:
    """The LP relaxation's value: a lower bound on the optimum of program (2) (None unless solved)."""
    model = build_milp(instance, relax=True)
    outcome = solve_pyomo(model, time_limit=time_limit)
    return outcome.objective if outcome.status == Status.OPTIMAL else None
