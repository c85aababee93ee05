"""The Python API: what the CLI, the notebooks and the sweeps call.

>>> from edgeopt import api
>>> inst = api.generate("hetero", "small", seed=1)          # doctest: +SKIP
>>> res = api.run("online", inst)                           # doctest: +SKIP
>>> opt = api.solve(inst, method="milp", time_limit=10)     # doctest: +SKIP
>>> res.objective / opt.objective                           # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from edgeopt import families as _families
from edgeopt.core import AlgorithmSpec, FamilySpec, InputError, Result, Status, Violation, lookup
from edgeopt.core.family import instance_sha256
from edgeopt.core.limits import BuildTimeLimit, Deadline, ModelSize, guard_size


def families() -> list[FamilySpec]:
    """Every implemented family."""
    return _families.available_families()


def family(name: str) -> FamilySpec:
    """The family called ``name`` (InputError if unknown or not implemented)."""
    return _families.get_family(name)


def family_of(instance: Any) -> FamilySpec:
    """The family an instance belongs to (from its ``family`` field)."""
    name = getattr(instance, "family", None)
    if not isinstance(name, str):
        raise InputError("instance.family", "missing")
    return family(name)


def algorithms(name: str) -> dict[str, AlgorithmSpec]:
    """Registered algorithms of family ``name``."""
    return _families.algorithms(name)


def exact_methods(name: str) -> dict[str, Callable[..., Result]]:
    """Exact models of family ``name`` (``{"milp": ..., "cpsat": ...}``)."""
    return _families.solve_methods(name)


def generate(
    name: str,
    preset: str | None = None,
    *,
    seed: int = 0,
    jobs: int | None = None,
    servers: int | None = None,
    horizon: int | None = None,
) -> Any:
    """A seeded instance of family ``name`` (preset defaults to the family's first, ``small``)."""
    spec = family(name)
    preset = preset or spec.presets[0]
    if preset not in spec.presets:
        raise InputError("preset", f"unknown preset {preset!r} for {name} (known: {', '.join(spec.presets)})")
    for field, value in (("jobs", jobs), ("servers", servers), ("horizon", horizon)):
        if value is not None and value < 1:
            raise InputError(field, f"must be >= 1, got {value}")
    if seed < 0:
        raise InputError("seed", f"must be >= 0, got {seed}")
    return spec.generate(preset, seed=seed, jobs=jobs, servers=servers, horizon=horizon)


def load(path: str | Path) -> tuple[FamilySpec, Any]:
    """Read and validate an instance file; returns its family and the instance."""
    return _families.load_instance(str(path))


def run(algorithm: str, instance: Any, *, seed: int = 0, **params: Any) -> Result:
    """Run a registered algorithm of the instance's family."""
    spec = family_of(instance)
    return lookup(spec.name, algorithm)(instance, seed=seed, **params)


def model_sizes(name: str) -> dict[str, Callable[..., ModelSize]]:
    """Size estimators of family ``name``'s exact models, ``formulations.<name>.SIZES`` (empty if none)."""
    import importlib

    exact_methods(name)  # the family exists
    try:
        mod = importlib.import_module(f"formulations.{name}")
    except ModuleNotFoundError:
        return {}
    return dict(getattr(mod, "SIZES", {}))


def solve(
    instance: Any,
    *,
    method: str = "milp",
    time_limit: float = 60.0,
    max_model_size: int | None = None,
    **options: Any,
) -> Result:
    """Solve an instance with one of its family's exact models, within ``time_limit`` for the whole call.

    Before anything is built, the model's size is estimated (``formulations.<family>.SIZES``) and a
    model above the budget is refused with an `InputError` that gives the size and what to do
    (exit 2 in the CLI). The budget is ``max_model_size`` nonzeros, default
    `edgeopt.core.limits.DEFAULT_MAX_NONZEROS` (2,000,000, about 3 GB through Pyomo). The estimate,
    the model building and the solve share one `Deadline`: a deadline that passes before the solver
    ran gives status ``time_limit`` with no incumbent and ``extra["reason"]``.
    """
    spec = family_of(instance)
    methods = exact_methods(spec.name)
    if method not in methods:
        known = ", ".join(sorted(methods)) or "none yet"
        raise InputError("method", f"unknown exact method {method!r} for {spec.name} (known: {known})")
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not (
            0 < time_limit <= MAX_TIME_LIMIT):
        raise InputError("time_limit", f"must be a number of seconds in (0, {MAX_TIME_LIMIT:g}], got {time_limit}")
    if max_model_size is not None and (isinstance(max_model_size, bool) or not isinstance(max_model_size, int)
                                       or max_model_size < 1):
        raise InputError("max_model_size", f"must be a positive integer (nonzeros), got {max_model_size!r}")
    deadline = Deadline(time_limit)
    size = None
    estimator = model_sizes(spec.name).get(method)
    try:
        if estimator is not None:
            with deadline.guard("the model size estimate"):
                size = estimator(instance)
            guard_size(size, method=method, max_nonzeros=max_model_size)
        result = methods[method](instance, time_limit=deadline.remaining(), **options)
    except BuildTimeLimit as exc:
        result = Result(family=spec.name, algorithm=method, status=Status.TIME_LIMIT, objective=None, bound=None,
                        runtime_s=deadline.elapsed(), schedule=None, instance_sha256=instance_sha256(instance),
                        extra={"reason": str(exc)})
    if size is not None:
        result.extra["model_size"] = {"variables": size.variables, "constraints": size.constraints,
                                      "nonzeros": size.nonzeros}
    return result


#: Longest time limit a solve accepts (a week): beyond it, the number is a typo, not a plan.
MAX_TIME_LIMIT = 7 * 24 * 3600.0


def validate(instance: Any, result: Result) -> list[Violation]:
    """Every violation of ``result`` on ``instance`` (empty list: valid)."""
    return family_of(instance).check_result(instance, result)


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


@dataclasses.dataclass
class Comparison:
    """Algorithms side by side on one instance, each validated, with ratios to a reference.

    ``reference_name`` says what the ratios divide by: ``optimum`` (a proven
    optimum), ``bound`` (a proven lower bound at a time limit) or ``-``.
    """

    family: str
    objective_name: str
    rows: list[Row]
    reference: float | None
    reference_name: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def plot(self, path: str | Path) -> None:
        """Bar chart of the objectives (the reference as a dashed line)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        rows = [r for r in self.rows if r.objective is not None]
        fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(rows) + 1), 3.2))
        ax.bar([r.algorithm for r in rows], [r.objective for r in rows], color="#4c72b0")
        if self.reference is not None:
            ax.axhline(self.reference, ls="--", color="k", lw=1, label=self.reference_name)
            ax.legend()
        ax.set_ylabel(self.objective_name)
        ax.set_title(f"{self.family}: objective per algorithm (lower is better)")
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)


def _row(spec: FamilySpec, instance: Any, result: Result, kind: str, relaxed: bool = False) -> Row:
    violations = [str(v) for v in spec.check_result(instance, result)]
    return Row(
        algorithm=result.algorithm,
        kind=kind,
        status=result.status.value,
        objective=result.objective,
        bound=result.bound,
        ratio=None,
        valid=not violations,
        runtime_s=result.runtime_s,
        violations=violations,
        relaxed=relaxed,
        rejected=len(result.rejected),
    )


def _rank_and_ratio(rows: list[Row], reference: float | None) -> None:
    """Ratios to ``reference`` and ranks (1 = best objective) for complete, valid rows only."""
    comparable = [r for r in rows if r.valid and r.objective is not None
                  and r.status in ("optimal", "feasible", "time_limit")]
    for row in comparable:
        if reference:
            row.ratio = row.objective / reference
    for rank, row in enumerate(sorted(comparable, key=lambda r: r.objective), start=1):
        row.rank = rank


def compare(
    instance: Any,
    names: Sequence[str] | None = None,
    *,
    optimal: bool = False,
    method: str = "milp",
    time_limit: float = 60.0,
    seed: int = 0,
    on_step: Callable[[str], None] | None = None,
) -> Comparison:
    """Run algorithms (default: all registered) and optionally an exact model on ``instance``.

    Ratios are objective / optimum when the exact model proved optimality,
    objective / bound (an upper estimate of the true ratio) when it stopped at
    its time limit with a bound, and absent otherwise. Results that gave up on
    jobs (status ``partial``) get neither a ratio nor a rank: their objective
    covers fewer jobs; tables show "k rejected" instead. Invalid rows are not
    ranked either. Rows of algorithms that solve a relaxation (``relaxed``)
    keep their ratio, which may be below 1.
    """
    spec = family_of(instance)
    table = algorithms(spec.name)
    names = list(table) if names is None else list(names)
    rows: list[Row] = []
    for name in names:
        if on_step:
            on_step(name)
        algo = lookup(spec.name, name)
        rows.append(_row(spec, instance, algo(instance, seed=seed), algo.kind, algo.relaxed))
    reference, reference_name = None, "-"
    if optimal:
        if on_step:
            on_step(method)
        exact = solve(instance, method=method, time_limit=time_limit)
        rows.append(_row(spec, instance, exact, "exact"))
        if exact.status == Status.OPTIMAL:
            reference, reference_name = exact.objective, "optimum"
        elif exact.bound is not None and exact.bound > 0:
            reference, reference_name = exact.bound, "bound"
    _rank_and_ratio(rows, reference)
    return Comparison(spec.name, spec.objective_name, rows, reference, reference_name)
