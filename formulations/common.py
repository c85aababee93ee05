"""One place that owns solver options and statuses, for HiGHS (via Pyomo) and CP-SAT.

Each family's formulation module builds a model (``build_*``), calls
`solve_pyomo` or `solve_cpsat` here, extracts a schedule, and hands it to
`finish` which re-checks it with the family's validator: a solver's
"optimal" is never trusted on its own (a schedule that fails the validator
is an error, not a result).

Facts behind the choices (docs/solvers.md): ``highspy==1.12.0`` must
match the HiGHS bundled in ortools 9.15; Pyomo's new HiGHS interface takes
``time_limit``/``rel_gap`` and needs ``raise_exception_on_nonoptimal_result
=False, load_solutions=False`` to return an incumbent at a time limit.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import math
import time
from collections.abc import Callable
from typing import Any

# Imported here, before any deadline starts: `Deadline.guard` must never interrupt an extension
# module's initialisation (a half-imported module stays broken for the rest of the process). OR-Tools
# is imported by each family's ``cpsat`` module instead, loaded only for a CP-SAT solve and before its
# deadline starts (`formulations.LazyFunction`): a MILP solve does not pay its 0.3 s import.
# The models need only ``pyomo.core`` (components, expressions, suffixes) and the HiGHS interface:
# ``pyomo.environ`` would also load every Pyomo plug-in (solvers, transformations, DAE, GDP, ...), which
# doubles the import (0.24 s of CPU instead of 0.11 s) and changes no model or solution
# (tests/test_solve_imports.py solves every family both ways).
import pyomo.core  # noqa: F401
from pyomo.contrib.solver.solvers import highs as _pyomo_highs  # noqa: F401

from edgeopt.core import BuildTimeLimit, Deadline, FamilySpec, InputError, ModelError, Result, Status
from edgeopt.core.family import ZERO_GAP_RTOL, instance_sha256
from edgeopt.core.limits import HIGHS_NODES_PER_WORK_UNIT, current_work_limit
from formulations import highs_process


def __getattr__(name: str) -> Any:
    """``common.cp_model``, OR-Tools' CP-SAT module, imported on first use (tests patch its solver here)."""
    if name == "cp_model":
        from ortools.sat.python import cp_model

        return cp_model
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: CP-SAT's integers: every variable's domain within +-2^62 and no linear expression (the objective
#: included) reaching 2^63 in absolute value (its model validator). A family whose scaled data can pass
#: this refuses its model before building it (`cpsat_overflow`); beyond it OR-Tools raises a TypeError
#: while building, or CP-SAT answers MODEL_INVALID.
CPSAT_MAX_INT = 2**62


def cpsat_overflow(what: str, value: float, unit: str = "") -> InputError:
    """The refusal of a CP-SAT model whose integer ``value`` (``what``, in the model's units) passes
    `CPSAT_MAX_INT`: exit 2, naming what overflows and the way out (the MILP takes floats)."""
    units = f" ({unit})" if unit else ""
    return InputError("instance", f"the cpsat model cannot hold this instance: {what} is {value:.3g} in the "
                      f"model's integers{units}, above CP-SAT's 2^62 = {CPSAT_MAX_INT:.3g}; use --method milp")


#: Relative gap under which a MIP is called optimal.
REL_GAP = 1e-6


@dataclasses.dataclass
class SolverOutcome:
    """What a solver said, before any schedule is extracted.

    Attributes:
        status: optimal / feasible / time_limit / infeasible.
        objective: incumbent objective (None when there is none).
        bound: best proven lower bound (None when unknown).
        runtime_s: solve time.
        message: the solver's own termination word.
        has_solution: whether variable values were loaded.
        translate_s: of ``runtime_s``, the time Pyomo took to translate the model for HiGHS (0 for CP-SAT).
        start_values: how many variable values a MIP start / hints handed to the solver (0: none).
    """

    status: Status
    objective: float | None
    bound: float | None
    runtime_s: float
    message: str
    has_solution: bool
    translate_s: float = 0.0
    start_values: int = 0


def _finite(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


#: Pyomo's checks for changes in a model it has translated already, all off: `solve_pyomo` translates the
#: model itself (to measure that time) and then solves it unchanged.
_NO_UPDATES = {key: False for key in (
    "check_for_new_or_removed_constraints", "check_for_new_or_removed_vars", "check_for_new_or_removed_params",
    "check_for_new_objective", "update_constraints", "update_vars", "update_parameters",
    "update_named_expressions", "update_objective")}


def _empty_pyomo(model: Any) -> SolverOutcome | None:
    """The outcome of a model without variables (no jobs): its objective is a constant, optimal at once.

    HiGHS answers such a model with status *unknown* and no solution, which is not an answer.
    """
    import pyomo.core as pyo

    if model.nvariables() > 0:
        return None
    objs = list(model.component_data_objects(pyo.Objective, active=True))
    value = float(pyo.value(objs[0].expr)) if objs else 0.0
    return SolverOutcome(Status.OPTIMAL, value, value, 0.0, "empty model (no variables)", True)


def mip_start_vector(model: Any, start: Any) -> list[tuple[Any, float]]:
    """A MIP start for every discrete variable of ``model``: ``start``'s value, else 0.

    ``start`` maps Pyomo variables to values (a ``ComponentMap``: a family's inverse of its ``extract``: the nonzero
    values of a schedule). Discrete variables it does not name are 0 (the schedule does not use
    them); continuous ones it does not name are left out, and HiGHS completes them by solving the
    model with the discrete ones fixed. Values outside a variable's bounds are clipped.
    """
    import pyomo.environ as pyo

    out: list[tuple[Any, float]] = []
    named = {id(v): float(x) for v, x in start.items()}
    for v in model.component_data_objects(pyo.Var, active=True):
        if v.fixed:
            continue
        value = named.get(id(v))
        if value is None:
            if v.is_continuous():
                continue
            value = 0.0
        lb, ub = v.lb, v.ub
        if lb is not None:
            value = max(value, float(lb))
        if ub is not None:
            value = min(value, float(ub))
        out.append((v, value))
    return out


def _mip_start_columns(opt: Any, model: Any, start: Any) -> tuple[Any, Any] | None:
    """``start`` as HiGHS columns and values, after Pyomo translated ``model`` (None when it names none).

    Pyomo's HiGHS interface has no warm-start option, so this reads its variable-to-column map
    (``_pyomo_var_to_solver_var_map``, pyomo 6.10). HiGHS checks the start itself (``Highs.setSolution``,
    sparse): a feasible one becomes the first incumbent, an infeasible one is dropped (and a partial one
    completed by a sub-MIP).
    """
    import numpy as np

    col = opt._pyomo_var_to_solver_var_map
    pairs = [(col[id(v)], x) for v, x in mip_start_vector(model, start) if id(v) in col]
    if not pairs:
        return None
    return (np.array([i for i, _ in pairs], dtype=np.int32), np.array([x for _, x in pairs], dtype=np.float64))


def _termination(model_status: str) -> Any:
    """Pyomo's termination condition for a HiGHS model status name, as Pyomo's HiGHS interface maps it
    (``killed``: the child process was ended at the deadline, `formulations.highs_process`)."""
    from pyomo.contrib.solver.common.results import TerminationCondition as TC

    return {
        "kOptimal": TC.convergenceCriteriaSatisfied, "kInfeasible": TC.provenInfeasible,
        "kUnboundedOrInfeasible": TC.infeasibleOrUnbounded, "kUnbounded": TC.unbounded,
        "kObjectiveBound": TC.objectiveLimit, "kObjectiveTarget": TC.objectiveLimit,
        "kTimeLimit": TC.maxTimeLimit, "kIterationLimit": TC.iterationLimit, "kSolutionLimit": TC.iterationLimit,
        "kInterrupt": TC.interrupted, "killed": TC.maxTimeLimit,
        "kLoadError": TC.error, "kModelError": TC.error, "kPresolveError": TC.error, "kSolveError": TC.error,
        "kPostsolveError": TC.error,
    }.get(model_status, TC.unknown)


def _solve_in_child(opt: Any, *, time_limit: float, rel_gap: float, threads: int, tee: bool,
                    options: dict[str, Any], start: tuple[Any, Any] | None) -> tuple[Any, float | None, float | None]:
    """Solve the model Pyomo translated into ``opt`` in a child process the deadline can kill
    (`formulations.highs_process`), and load its incumbent into the Pyomo variables.

    Returns Pyomo's termination condition, the incumbent's objective and the bound, as ``opt.solve``'s
    results would give them.
    """
    answer = highs_process.solve_in_child(
        opt._solver_model, {"output_flag": bool(tee), "threads": int(threads), "mip_rel_gap": float(rel_gap),
                            **options}, time_limit=time_limit, start=start, tee=tee)
    if answer.model_status.startswith("died"):
        raise ModelError(f"HiGHS's child process {answer.model_status} gave no answer")
    if answer.col_value is not None:
        for v_id, col in opt._pyomo_var_to_solver_var_map.items():
            opt._vars[v_id][0].set_value(float(answer.col_value[col]), skip_validation=True)
    return _termination(answer.model_status), _finite(answer.objective), _finite(answer.bound)


def solve_pyomo(
    model: Any, *, time_limit: float = 60.0, rel_gap: float = REL_GAP, threads: int = 1, tee: bool = False,
    deadline: Deadline | None = None, start: Any = None, highs_options: dict[str, Any] | None = None,
) -> SolverOutcome:
    """Solve a Pyomo model with HiGHS; load the incumbent into the model if there is one.

    With a ``deadline`` (started when the solve was asked for), HiGHS gets the time that is left after
    building and translating the model, so ``time_limit`` bounds the whole call; a deadline already
    spent (after building, or after the translation) raises `BuildTimeLimit`. The Pyomo-to-HiGHS
    translation is done first (`Highs.set_instance`) and measured (``translate_s``): HiGHS's own clock
    starts only after it, and it takes about as long as building the model (1.3x on the hetero small
    preset), so it must not come out of HiGHS's share by a guess.

    ``start``: a MIP start (`mip_start_vector`), variable -> value, typically a family's
    ``start_milp(model, schedule)``; HiGHS takes it as its first incumbent when it is feasible.
    ``highs_options``: further HiGHS options by name (e.g. ``mip_max_improving_sols``).

    A model of at least `highs_process.MIN_NONZEROS` nonzeros is solved by HiGHS in a child process that is
    killed at the time limit (plus a small grace), since HiGHS's presolve can run far past its own limit on
    such models; the answer and the loaded values are the same as in-process.
    """
    import highspy  # noqa: F401 - loaded now: Pyomo would import it on first use, inside the guard below
    from pyomo.contrib.solver.common.results import TerminationCondition as TC
    from pyomo.contrib.solver.solvers.highs import Highs

    empty = _empty_pyomo(model)
    if empty is not None:
        return empty
    if deadline is not None:
        deadline.check("model building")
    t0 = time.perf_counter()
    opt = Highs()
    opt.config.tee = tee
    if deadline is not None:
        with deadline.guard("the translation of the model to HiGHS"):
            opt.set_instance(model)  # the Pyomo-to-HiGHS translation
        time_limit = min(time_limit, deadline.remaining())
    else:
        opt.set_instance(model)
    columns = _mip_start_columns(opt, model, start) if start else None
    given = 0 if columns is None else len(columns[0])
    translate_s = time.perf_counter() - t0
    options = {**_highs_work_options(), **dict(highs_options or {})}
    if opt._solver_model.getNumNz() >= highs_process.MIN_NONZEROS:
        # large: HiGHS's presolve may overrun the limit without looking at the clock; a child can be killed
        tc, obj, bound = _solve_in_child(opt, time_limit=float(time_limit), rel_gap=rel_gap, threads=threads,
                                         tee=tee, options=options, start=columns)
        has = obj is not None
    else:
        if columns is not None:
            opt._solver_model.setSolution(given, columns[0], columns[1])
        res = opt.solve(
            model,
            time_limit=float(time_limit),
            rel_gap=rel_gap,
            threads=threads,
            tee=tee,
            raise_exception_on_nonoptimal_result=False,
            load_solutions=False,
            auto_updates=_NO_UPDATES,
            solver_options=options,
        )
        tc = res.termination_condition
        obj = _finite(res.incumbent_objective)
        bound = _finite(res.objective_bound)
        has = obj is not None
        if has:
            res.solution_loader.load_vars()
    runtime = max(0.0, time.perf_counter() - t0)
    if tc == TC.convergenceCriteriaSatisfied and has:
        status = Status.OPTIMAL
    elif tc in (TC.provenInfeasible, TC.infeasibleOrUnbounded, TC.locallyInfeasible):
        status = Status.INFEASIBLE
    elif tc in (TC.maxTimeLimit, TC.iterationLimit, TC.interrupted):
        status = Status.TIME_LIMIT
    elif has:
        status = Status.FEASIBLE
    else:
        raise ModelError(f"HiGHS ended with {tc.name} and no solution")
    if status == Status.OPTIMAL and bound is None:
        bound = obj
    return SolverOutcome(status, obj, bound, runtime, tc.name, has, translate_s, given)


def _highs_work_options() -> dict[str, Any]:
    """HiGHS's node limit for the work limit in force (`edgeopt.core.limits.work_limit`), if any."""
    units = current_work_limit()
    if units is None:
        return {}
    return {"mip_max_nodes": max(1, round(units * HIGHS_NODES_PER_WORK_UNIT))}


def solve_cpsat(
    model: Any, *, time_limit: float = 60.0, workers: int = 2, rel_gap: float = 0.0, log: bool = False,
    deadline: Deadline | None = None, params: dict[str, Any] | None = None, stop_below: float | None = None,
) -> tuple[SolverOutcome, Any]:
    """Solve a CP-SAT model. Returns the outcome and the solver (to read values from).

    ``stop_below``: stop the search at its first solution whose objective (model units) is at most this
    (status ``time_limit``, unless CP-SAT proved it optimal by then), from a solution callback: reduced-cost
    fixing restarts from each better schedule with more variables fixed (`formulations.fixing`).

    CP-SAT would catch Ctrl-C itself and return its incumbent as if the time limit had been hit,
    hiding the interruption. So its own SIGINT handler is off and the search runs in a helper
    thread while this one waits: Ctrl-C (or SIGTERM turned into an exception by the CLI) reaches
    Python here, stops the search, and is re-raised, so the caller writes nothing (exit 130).
    With a ``deadline``, the search gets only the time left of it. ``params``: further CP-SAT
    parameters by name (e.g. ``cp_model_presolve=False`` for the LNS's small windows).
    """
    import threading

    from ortools.sat.python import cp_model  # already loaded by the family's cpsat module

    if deadline is not None:
        deadline.check("model building")
        time_limit = max(0.05, min(time_limit, deadline.remaining()))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.relative_gap_limit = float(rel_gap)
    solver.parameters.log_search_progress = log
    solver.parameters.catch_sigint_signal = False
    # interleaved search is CP-SAT's deterministic multi-worker mode: two solves of one instance give the
    # same schedule (the README's promise: only the timing fields differ)
    solver.parameters.interleave_search = True
    units = current_work_limit()
    if units is not None:  # deterministic: the same stopping point on any machine (limits.work_limit)
        solver.parameters.max_deterministic_time = float(units)
    for key, value in (params or {}).items():
        setattr(solver.parameters, key, value)
    box: dict[str, Any] = {}
    callback = None
    if stop_below is not None:
        class _StopBelow(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                if self.objective_value <= stop_below:
                    self.stop_search()

        callback = _StopBelow()

    def search() -> None:
        try:
            box["code"] = solver.solve(model, callback)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc

    t0 = time.perf_counter()
    worker = threading.Thread(target=search, name="cpsat-search", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except BaseException:
        solver.stop_search()
        worker.join()
        # Release CP-SAT now: kept alive by the traceback's frames until interpreter shutdown, its
        # destructor runs after the runtime is gone and aborts the process (std::terminate, exit -6).
        solver = None
        box.clear()
        gc.collect()
        raise
    runtime = max(0.0, time.perf_counter() - t0)
    if "error" in box:
        raise box["error"]
    code = box["code"]
    has = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    obj = solver.objective_value if has else None
    bound = _finite(solver.best_objective_bound) if code != cp_model.INFEASIBLE else None
    if code == cp_model.OPTIMAL:
        status = Status.OPTIMAL
        bound = obj if bound is None else bound
    elif code == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    elif code in (cp_model.FEASIBLE, cp_model.UNKNOWN):
        status = Status.TIME_LIMIT
    else:
        problem = model.validate()
        if code == cp_model.MODEL_INVALID and ("overflow" in problem or "kint64max" in problem):
            # data too large for CP-SAT's 64-bit integers, which the family's own check did not foresee
            raise InputError("instance", "the cpsat model cannot hold this instance: its integers overflow "
                             f"CP-SAT's 64-bit range ({problem.splitlines()[0][:120]}); use --method milp")
        raise ModelError(f"CP-SAT ended with {solver.status_name(code)}: {problem}")
    return SolverOutcome(status, obj, bound, runtime, solver.status_name(code), has), solver


def complete_hints(model: Any, *, time_limit: float = 5.0) -> bool:
    """Turn ``model``'s partial CP-SAT hints (a schedule's decisions) into a complete, feasible hint.

    CP-SAT's search may fail to extend a hint that leaves the auxiliary variables open (measured on
    a hetero neighbourhood of the paper preset: no solution in 14 s from hints that are feasible).
    So the model is solved once with every hinted variable fixed to its hint
    (``fix_variables_to_their_hinted_value``, one worker), and that whole solution replaces the
    hints. Returns whether it worked; when it did not (the hints are infeasible, or the time ran
    out) the hints are left as they were.
    """
    from ortools.sat.python import cp_model  # already loaded by the family's cpsat module

    proto = model.Proto()
    if not proto.solution_hint.vars:
        return False
    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    solver.parameters.max_time_in_seconds = max(0.01, float(time_limit))
    solver.parameters.num_workers = 1
    solver.parameters.catch_sigint_signal = False
    code = solver.solve(model)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return False
    values = [int(v) for v in solver.response_proto.solution]
    proto.clear_solution_hint()
    proto.solution_hint.vars.extend(range(len(values)))
    proto.solution_hint.values.extend(values)
    return True


def time_limit_result(family: FamilySpec | str, instance: Any, algorithm: str, reason: str,
                      runtime_s: float) -> Result:
    """Status ``time_limit`` with no incumbent and no bound: the deadline passed before a solver ran."""
    name = family if isinstance(family, str) else family.name
    return Result(family=name, algorithm=algorithm, status=Status.TIME_LIMIT, objective=None, bound=None,
                  runtime_s=runtime_s, schedule=None, instance_sha256=instance_sha256(instance),
                  extra={"reason": reason})


def finish(
    family: FamilySpec,
    instance: Any,
    algorithm: str,
    outcome: SolverOutcome,
    schedule: Any | None,
    *,
    extra: dict[str, Any] | None = None,
    build_s: float = 0.0,
    rounding: float = 0.0,
    epigraph: bool = False,
) -> Result:
    """Validate the extracted schedule and turn a solver outcome into a `Result`.

    The result's objective is always the schedule's, recomputed by the family; the solver's own value
    only checks the model. Two ways a correct model's value may differ from it, declared by the caller:

    * ``rounding``: the most the model's objective can differ from the true cost of any solution (a
      CP-SAT model works on costs scaled and rounded to integers). The bound is lowered by it, so it
      bounds the true optimum, not only the rounded model's.
    * ``epigraph``: the model states some costs as variables bounded below by them (``z >= cost``), so
      an incumbent that is not optimal may carry slack: its model value is then only at least its cost.
      At a proven optimum the slack is zero.

    A proven optimum whose true gap (schedule objective minus the lowered bound) exceeds
    `edgeopt.core.family.ZERO_GAP_RTOL` is reported ``feasible`` with that bound: rounding cost it the proof.

    Raises `ModelError` when a solver's schedule fails the validator or its objective differs from the
    solver's beyond these allowances (above it, for an epigraph incumbent): the model or the validator is
    wrong.
    """
    extra = dict(extra or {})
    extra.setdefault("solver_message", outcome.message)
    # every wall-clock time in one place (Result.runtime_s and extra["timings"]): nothing else differs
    # between two runs of the same solve
    timings = dict(extra.pop("timings", {}))
    timings["build_s"] = round(build_s, 6)
    timings["solve_s"] = round(outcome.runtime_s, 6)
    if outcome.translate_s:
        timings["translate_s"] = round(outcome.translate_s, 6)  # of solve_s: Pyomo's translation for HiGHS
    for key in ("build_s", "solve_s"):
        extra.pop(key, None)
    extra["timings"] = timings
    if outcome.status == Status.INFEASIBLE:
        extra.setdefault("reason", f"the solver proved the exact model infeasible ({outcome.message})")
    objective = None
    sched_dict = None
    if schedule is not None:
        violations = family.validate(instance, schedule)
        if violations:
            raise ModelError(
                f"{family.name}/{algorithm}: solver schedule fails the validator: "
                + "; ".join(map(str, violations[:5]))
            )
        objective = float(family.objective(instance, schedule))
        if outcome.objective is not None:
            allowed = rounding + 1e-5 * max(1.0, abs(objective))
            excess = outcome.objective - objective  # model value above the true cost: slack or rounding
            loose = epigraph and outcome.status != Status.OPTIMAL
            if excess < -allowed or (excess > allowed and not loose):
                raise ModelError(
                    f"{family.name}/{algorithm}: solver objective {outcome.objective} != schedule objective "
                    f"{objective} (allowed: {allowed:.3g}{', or above it' if loose else ''})"
                )
        sched_dict = schedule.model_dump(mode="json")
    bound = outcome.bound
    if bound is not None and rounding:
        bound -= rounding
        extra.setdefault("bound_rounding", rounding)
    if bound is not None and objective is not None and bound > objective:
        # A bound above the incumbent is rounding noise at optimality; clamp it.
        bound = objective
    status = outcome.status
    if (status == Status.OPTIMAL and objective is not None and bound is not None
            and objective - bound > ZERO_GAP_RTOL * max(1.0, abs(objective))):
        status = Status.FEASIBLE
        extra.setdefault("reason", f"the solver proved its rounded model optimal, but rounding the costs leaves a "
                                   f"gap of {objective - bound:.6g} to the bound on the true optimum")
    return Result(
        family=family.name,
        algorithm=algorithm,
        status=status,
        objective=objective,
        bound=bound,
        runtime_s=outcome.runtime_s + build_s,
        schedule=sched_dict,
        instance_sha256=instance_sha256(instance),
        extra=extra,
    )


def write_certified(
    folder: Any,
    name: str,
    instance: Any,
    methods: dict[str, Callable[..., Result]],
    *,
    time_limit: float,
    golden: dict[str, Callable[[Any], Any]] | None = None,
    rel_tol: float = 1e-6,
    abs_tol: float = 0.0,
) -> dict[str, Any]:
    """Certify ``instance`` with every exact model and write ``<name>.json`` and ``<name>.optimum.json``.

    Every method must prove optimality and the optima must agree (spread at most
    ``max(abs_tol, rel_tol * max(1, least optimum))``), else `SystemExit` and nothing is written.
    ``golden`` adds named values of the instance to the record (an LP relaxation, a bound), as the
    instances/<family>/make_certified.py scripts keep them. Returns the record.
    """
    from edgeopt.core import jsonio

    results = {m: fn(instance, time_limit=time_limit) for m, fn in methods.items()}
    for m, r in results.items():
        if r.status != Status.OPTIMAL:
            raise SystemExit(f"{name}: {m} did not prove optimality ({r.status.value})")
    values = [r.objective for r in results.values()]
    if max(values) - min(values) > max(abs_tol, rel_tol * max(1.0, min(values))):
        raise SystemExit(f"{name}: the exact models disagree: {values}")
    jsonio.write_json(str(folder / f"{name}.json"), instance.model_dump(mode="json"))
    record = {
        "instance": f"{name}.json",
        "objective": min(values),
        **{key: value(instance) for key, value in (golden or {}).items()},
        "certified_by": {m: {"status": r.status.value, "objective": r.objective, "bound": r.bound,
                             "runtime_s": round(r.runtime_s, 3)} for m, r in results.items()},
        "instance_sha256": next(iter(results.values())).instance_sha256,
    }
    jsonio.write_json(str(folder / f"{name}.optimum.json"), record)
    return record


def deadline_bounded(family: str, method: str) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Make ``solve(instance, *, time_limit, deadline, **options)`` honour ``time_limit`` for the whole call.

    The wrapper starts the `Deadline` on entry and hands it to the solve function, which builds its
    model inside ``deadline.guard()`` and passes ``deadline=`` to `solve_pyomo` / `solve_cpsat`. A
    deadline that passes before the solver ran becomes status ``time_limit`` with no incumbent and the
    reason, instead of a model that keeps building.
    """

    def deco(fn: Callable[..., Result]) -> Callable[..., Result]:
        @functools.wraps(fn)
        def wrapper(instance: Any, *, time_limit: float = 60.0, **options: Any) -> Result:
            deadline = Deadline(time_limit)
            try:
                return fn(instance, time_limit=time_limit, deadline=deadline, **options)
            except BuildTimeLimit as exc:
                return time_limit_result(family, instance, method, str(exc), deadline.elapsed())

        return wrapper

    return deco
