"""Algorithms side by side on one instance, each validated, ranked, with ratios to a named reference.

Part of the services layer; `edgeopt.api` re-exports the public names.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edgeopt.core import FamilySpec, InputError, Result, Status, jsonio, lookup
from edgeopt.core.limits import (
    check_work_limit,
)
from edgeopt.services.lookup import (
    _check_seed,
    _check_solver_limits,
    algorithms,
    bound_methods,
    check_choice,
    exact_methods,
    family_of,
)
from edgeopt.services.running import check_plugin_result
from edgeopt.solving.bounds import bound as certified_bound
from edgeopt.solving.bounds import bound_refusal
from edgeopt.solving.exact import refusal, solve

#: The status a comparison row shows for a result that failed validation (`compare` ranks it nowhere).
INVALID = "invalid"


@dataclasses.dataclass
class Row:
    """One line of a comparison."""

    algorithm: str
    kind: str
    status: str
    objective: float | None
    bound: float | None
    ratio: float | None
    valid: bool
    runtime_s: float
    violations: list[str]
    relaxed: bool = False
    rejected: int = 0
    rank: int | None = None
    #: every parameter the run used, as sorted JSON (the same column as a stored sweep's)
    params: str = "{}"
    #: ``ratio`` split by what it is against: a proven optimum, or the exact model's bound (never both)
    ratio_to_optimum: float | None = None
    ratio_to_bound: float | None = None


@dataclasses.dataclass
class Comparison:
    """Algorithms side by side on one instance, each validated, with ratios to a reference.

    ``reference_name`` says what the ratios divide by: ``optimum`` (a proven
    optimum), ``bound`` (a proven lower bound: the exact model's at its limit, or a certified one)
    or ``-``; ``reference_method`` names the method that gave it (``milp``, ``worker_lp``, ...).
    ``notes`` say what the table cannot: an exact model refused for its size and the bound used
    instead, a limit that stopped a solve.
    """

    family: str
    objective_name: str
    rows: list[Row]
    reference: float | None
    reference_name: str
    reference_method: str | None = None
    notes: list[str] = dataclasses.field(default_factory=list)

    def interval(self) -> tuple[float | None, float | None]:
        """[lower, upper] on the optimum: the reference (an optimum or a bound; None without one) and the
        best objective of a complete, valid, non-relaxed row (None without one)."""
        upper = [r.objective for r in self.rows if r.valid and r.objective is not None and not r.relaxed
                 and r.kind != "bound" and r.status in ("optimal", "feasible", "time_limit")]
        return self.reference, (min(upper) if upper else None)

    def gap(self) -> float | None:
        """(best - lower) / best over `interval` (the solvers' convention), or None when either end is missing."""
        lower, upper = self.interval()
        if lower is None or upper is None or upper <= 0:
            return None
        return max(0.0, (upper - lower) / upper)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def plot(self, path: str | Path | None = None, *, ax: Any = None) -> Any:
        """Bar chart of the objectives (`edgeopt.viz.plot_comparison`); returns the matplotlib Axes.

        With ``path`` the chart is also written there (PNG, SVG or PDF by extension)
        and its figure closed. The matplotlib backend is never switched.
        """
        from edgeopt import viz

        ax = viz.plot_comparison(self, ax=ax)
        if path is not None:
            import matplotlib.pyplot as plt

            with jsonio.atomic_file(path, what="plot") as tmp:  # whole or absent
                ax.figure.savefig(tmp, dpi=150, format=Path(path).suffix.lower().lstrip(".") or None)
            plt.close(ax.figure)
        return ax

    def to_frame(self) -> Any:
        """One row per algorithm as a pandas DataFrame (see `edgeopt.frames.comparison_frame`)."""
        from edgeopt.frames import comparison_frame

        return comparison_frame(self)


def _row(spec: FamilySpec, instance: Any, result: Result, kind: str, relaxed: bool = False) -> Row:
    violations = [str(v) for v in spec.check_result(instance, result)]
    return Row(
        algorithm=result.algorithm,
        kind=kind,
        # a result that fails validation keeps no status of its own: it is never ranked or given a ratio
        status=result.status.value if not violations else INVALID,
        objective=result.objective,
        bound=result.bound,
        ratio=None,
        valid=not violations,
        runtime_s=result.runtime_s,
        violations=violations,
        relaxed=relaxed,
        rejected=len(result.rejected),
    )


def _rank_and_ratio(rows: list[Row], reference: float | None, reference_name: str = "optimum") -> None:
    """Ratios to ``reference`` (a proven ``optimum`` or a ``bound``) and ranks (1 = best objective) for
    complete, valid rows only; the ratio also goes to ``ratio_to_optimum`` or ``ratio_to_bound``."""
    comparable = [r for r in rows if r.valid and r.objective is not None and r.kind != "bound"
                  and r.status in ("optimal", "feasible", "time_limit")]
    for row in comparable:
        if reference:
            row.ratio = row.objective / reference
            if reference_name == "optimum":
                row.ratio_to_optimum = row.ratio
            else:
                row.ratio_to_bound = row.ratio
    for rank, row in enumerate(sorted(comparable, key=lambda r: r.objective), start=1):
        row.rank = rank


def compare(
    instance: Any,
    names: Any = None,
    *,
    optimal: bool = False,
    method: str = "milp",
    time_limit: float = 60.0,
    seed: int = 0,
    on_step: Callable[[str], None] | None = None,
    work_limit: float | None = None,
    bound: bool = False,
    bound_method: str = "auto",
    max_model_size: int | None = None,
) -> Comparison:
    """Run algorithms (default: all registered) and optionally an exact model on ``instance``.

    ``names`` lists algorithms or variants of them: ``"online"``, ``"online[F=64]"``,
    ``("online", {"F": 64})`` or an `edgeopt.services.variants.Variant`; a single string is one algorithm.
    Every variant is checked against the declared parameters before anything runs; its row is
    labelled with the variant (``online[F=64]``) and its ``params`` column holds every parameter
    the run used.

    Ratios are objective / optimum when the exact model proved optimality,
    objective / bound (an upper estimate of the true ratio) when it stopped at
    its time limit with a bound, and absent otherwise. Results that gave up on
    jobs (status ``partial``) get neither a ratio nor a rank: their objective
    covers fewer jobs; tables show "k rejected" instead. Invalid rows are not
    ranked either. Rows of algorithms that solve a relaxation (``relaxed``)
    keep their ratio, which may be below 1.

    ``work_limit`` bounds the exact solve by deterministic work as well as by ``time_limit`` (see `solve`):
    the way to get the same reference on a busy machine as on an idle one.

    ``bound``: also compute a certified lower bound (`edgeopt.solving.bounds.bound` with
    ``bound_method``, within ``time_limit``) and give every ratio against it unless the exact model
    proved an optimum: the interval [bound, best schedule] at any size (`Comparison.interval`, `gap`).
    With ``optimal``, the exact model's size is estimated before anything runs; a model above the
    budget (``max_model_size`` nonzeros, the default of `solve`) is not built and the certified bound
    takes its place, with a note saying so.
    """
    from edgeopt.services.variants import resolve

    spec = family_of(instance)
    _check_seed(seed)
    table = algorithms(spec.name)
    # Reject a typo or a bad parameter before running anything: a long comparison must not fail at its end.
    variants = resolve(spec.name, list(table) if names is None else names, "names")
    plan = plan_reference(spec, instance, optimal=optimal, bound=bound, method=method, bound_method=bound_method,
                          time_limit=time_limit, work_limit=work_limit, max_model_size=max_model_size)
    rows: list[Row] = []
    for variant in variants:
        if on_step:
            on_step(variant.label)
        algo = lookup(spec.name, variant.name)
        res = algo(instance, seed=seed, **variant.kwargs)
        if not isinstance(res, Result):
            check_plugin_result(spec, instance, algo, res)  # raises: nothing to tabulate
        row = _row(spec, instance, res, algo.kind, algo.relaxed)
        row.algorithm, row.params = variant.label, variant.params_json(algo.defaults())
        rows.append(row)
    extra, reference, reference_name, reference_method = reference_rows(
        spec, instance, plan, method=method, bound_method=bound_method, time_limit=time_limit,
        work_limit=work_limit, max_model_size=max_model_size, on_step=on_step)
    rows += extra
    _rank_and_ratio(rows, reference, reference_name)
    return Comparison(spec.name, spec.objective_name, rows, reference, reference_name, reference_method, plan.notes)


@dataclasses.dataclass
class ReferencePlan:
    """What gives a comparison its reference, decided before any algorithm runs (`plan_reference`)."""

    optimal: bool
    bound: bool
    notes: list[str] = dataclasses.field(default_factory=list)


def plan_reference(spec: FamilySpec, instance: Any, *, optimal: bool, bound: bool, method: str, bound_method: str,
                   time_limit: float, work_limit: float | None, max_model_size: int | None) -> ReferencePlan:
    """Check the reference's options and sizes without building anything, so that a long comparison (or a
    sweep point) never fails after its algorithms ran. An exact model above the size budget gives way to
    the certified bound, with a note; a bound above it too is an `InputError` naming ``instance``."""
    notes: list[str] = []
    if optimal or bound:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or time_limit <= 0:
            raise InputError("time_limit", f"must be a number of seconds > 0, got {time_limit!r}")
        _check_solver_limits(time_limit, max_model_size)
    if bound:
        from edgeopt.core.lowerbound import find_method

        find_method(bound_methods(spec.name), bound_method, spec.name)  # a typo fails now, before any run
    if optimal:
        check_choice("method", method, sorted(exact_methods(spec.name)), f"{spec.name} exact method")
        check_work_limit(work_limit)
        why, waits = refusal(instance, method=method, max_model_size=max_model_size)
        if waits and bound_methods(spec.name) and bound_refusal(
                instance, method=bound_method, max_model_size=max_model_size) is None:
            # the model's guard waits for its reduced-cost fixing: only the solve can tell whether the fixed
            # model fits, and the certified bound is there to fall back on (`reference_rows`)
            why = None
        if why is not None:
            if not bound_methods(spec.name):
                raise InputError("instance", why)
            optimal, bound = False, True
            notes.append(_no_exact_note(why))
    if bound and (why := bound_refusal(instance, method=bound_method, max_model_size=max_model_size)) is not None:
        raise InputError("instance", why if not notes else f"{notes[0].split(';')[0]}, and {why}")
    return ReferencePlan(optimal, bound, notes)


def _no_exact_note(why: str) -> str:
    return (f"no exact solve: {why.split(': use a smaller instance')[0]}; the ratios are to a certified lower bound "
            "instead (`edgeopt bound`), so they are upper estimates of the true ratios")


def reference_rows(spec: FamilySpec, instance: Any, plan: ReferencePlan, *, method: str, bound_method: str,
                   time_limit: float, work_limit: float | None, max_model_size: int | None,
                   on_step: Callable[[str], None] | None = None) -> tuple[list[Row], float | None, str, str | None]:
    """The rows of the exact model and the certified bound that ``plan`` asks for, and the reference they
    give: ``(rows, reference, "optimum" | "bound" | "-", method that gave it)``. A proven optimum wins; else
    the larger of the exact model's bound and the certified one. A row that fails validation (an exact
    schedule the validator refutes, a bound whose certificate does not recompute) is never a reference.
    A bound that found nothing within ``time_limit`` adds a note to ``plan``."""
    rows: list[Row] = []
    reference, reference_name, reference_method = None, "-", None
    if plan.optimal:
        if on_step:
            on_step(method)
        try:
            exact = solve(instance, method=method, time_limit=time_limit, work_limit=work_limit,
                          max_model_size=max_model_size)
        except InputError as exc:
            # refused after its reduced-cost fixing (`plan_reference` made sure the bound can stand in)
            if exc.field != "instance" or "above the budget" not in exc.message or not bound_methods(spec.name):
                raise
            plan.optimal, plan.bound = False, True
            plan.notes.append(_no_exact_note(exc.message))
            exact = None
    if plan.optimal and exact is not None:
        row = _row(spec, instance, exact, "exact")
        row.params = json.dumps({"time_limit": time_limit} | ({} if work_limit is None else {"work_limit": work_limit}))
        rows.append(row)
        if row.valid and exact.status == Status.OPTIMAL:
            reference, reference_name, reference_method = exact.objective, "optimum", method
        elif row.valid and exact.bound is not None and exact.bound > 0:
            reference, reference_name, reference_method = exact.bound, "bound", method
    if plan.bound and reference_name != "optimum":
        if on_step:
            on_step(f"bound ({bound_method})")
        lower = certified_bound(instance, method=bound_method, time_limit=time_limit, max_model_size=max_model_size)
        row = _row(spec, instance, lower, "bound")
        row.params = json.dumps({"method": lower.algorithm, "time_limit": time_limit})
        rows.append(row)
        if row.valid and lower.bound is not None and lower.bound > 0 and (reference is None or lower.bound > reference):
            reference, reference_name, reference_method = lower.bound, "bound", lower.algorithm
        elif lower.bound is None:
            plan.notes.append(f"the {lower.algorithm} bound stopped at its {time_limit:g} s time limit without a "
                              "bound: raise --time-limit")
    return rows, reference, reference_name, reference_method
