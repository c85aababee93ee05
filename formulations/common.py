"""One place that owns solver options and statuses, for HiGHS (via Pyomo) and CP-SAT.

Each family's formulation module builds a model (``build_*``), calls
`solve_pyomo` or `solve_cpsat` here, extracts a schedule, and hands it to
`finish` which re-checks it with the family's validator: a solver's
"optimal" is never trusted on its own (shared/docs/STYLE.md, principle 5).

Facts behind the choices (shared/docs/SOLVERS.md): ``highspy==1.12.0`` must
match the HiGHS bundled in ortools 9.15; Pyomo's new HiGHS interface takes
``time_limit``/``rel_gap`` and needs ``raise_exception_on_nonoptimal_result
=False, load_solutions=False`` to return an incumbent at a time limit.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from edgeopt.core import FamilySpec, ModelError, Result, Status
from edgeopt.core.family import instance_sha256

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
    """

    status: Status
    objective: float | None
    bound: float | None
    runtime_s: float
    message: str
    has_solution: bool


def _finite(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def solve_pyomo(
    model: Any, *, time_limit: float = 60.0, rel_gap: float = REL_GAP, threads: int = 1, tee: bool = False
) -> SolverOutcome:
    """Solve a Pyomo model with HiGHS; load the incumbent into the model if there is one."""
    from pyomo.contrib.solver.common.results import TerminationCondition as TC
    from pyomo.contrib.solver.solvers.highs import Highs

    t0 = time.perf_counter()
    res = Highs().solve(
        model,
        time_limit=float(time_limit),
        rel_gap=rel_gap,
        threads=threads,
        tee=tee,
        raise_exception_on_nonoptimal_result=False,
        load_solutions=False,
    )
    runtime = max(0.0, time.perf_counter() - t0)
    tc = res.termination_condition
    obj = _finite(res.incumbent_objective)
    bound = _finite(res.objective_bound)
    has = obj is not None
    if has:
        res.solution_loader.load_vars()
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
    return SolverOutcome(status, obj, bound, runtime, tc.name, has)


def solve_cpsat(
    model: Any, *, time_limit: float = 60.0, workers: int = 2, rel_gap: float = 0.0, log: bool = False
) -> tuple[SolverOutcome, Any]:
    """Solve a CP-SAT model. Returns the outcome and the solver (to read values from)."""
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.relative_gap_limit = float(rel_gap)
    solver.parameters.log_search_progress = log
    t0 = time.perf_counter()
    code = solver.solve(model)
    runtime = max(0.0, time.perf_counter() - t0)
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
        raise ModelError(f"CP-SAT ended with {solver.status_name(code)}: {model.validate()}")
    return SolverOutcome(status, obj, bound, runtime, solver.status_name(code), has), solver


def finish(
    family: FamilySpec,
    instance: Any,
    algorithm: str,
    outcome: SolverOutcome,
    schedule: Any | None,
    *,
    extra: dict[str, Any] | None = None,
    build_s: float = 0.0,
) -> Result:
    """Validate the extracted schedule and turn a solver outcome into a `Result`.

    Raises `ModelError` when a solver's schedule fails the validator or its
    objective differs from the solver's: the model or the validator is wrong.
    """
    extra = dict(extra or {})
    extra.setdefault("solver_message", outcome.message)
    extra["build_s"] = round(build_s, 6)
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
        if outcome.objective is not None and abs(objective - outcome.objective) > 1e-5 * max(1.0, abs(objective)):
            raise ModelError(
                f"{family.name}/{algorithm}: solver objective {outcome.objective} != schedule objective {objective}"
            )
        sched_dict = schedule.model_dump(mode="json")
    bound = outcome.bound
    if bound is not None and objective is not None and bound > objective:
        # A bound above the incumbent is rounding noise at optimality; clamp it.
        bound = objective
    return Result(
        family=family.name,
        algorithm=algorithm,
        status=outcome.status,
        objective=objective,
        bound=bound,
        runtime_s=outcome.runtime_s + build_s,
        schedule=sched_dict,
        instance_sha256=instance_sha256(instance),
        extra=extra,
    )
