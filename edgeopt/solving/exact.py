"""Exact solves within one time limit (and optionally a work limit) for the whole call, with the
model-size budget checked before anything is built.

Part of the services layer; `edgeopt.api` re-exports the public names.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

from edgeopt.core import InputError, Result, Status
from edgeopt.core.family import instance_sha256
from edgeopt.core.limits import (
    DEFAULT_MAX_NONZEROS,
    BuildTimeLimit,
    Deadline,
    ModelSize,
    check_work_limit,
    deferred_size_guard,
    guard_size,
    work_limit_scope,
)
from edgeopt.services.lookup import (
    _check_solver_limits,
    check_choice,
    exact_methods,
    families,
    family_of,
    fixing_headroom,
    method_takes,
    model_sizes,
)


def solve(
    instance: Any,
    *,
    method: str = "milp",
    time_limit: float = 60.0,
    max_model_size: int | None = None,
    warm_start: str | None = None,
    lns: bool = False,
    work_limit: float | None = None,
    **options: Any,
) -> Result:
    """Solve an instance with one of its family's exact models, within ``time_limit`` for the whole call.

    ``work_limit``: also stop the solver after this much deterministic work (`edgeopt.core.limits.work_limit`:
    CP-SAT deterministic seconds, 100 HiGHS nodes a unit). Unlike ``time_limit`` it stops at the same point
    on any machine at any load, so a result obtained under it is reproducible; ``extra["work_limit"]``
    records it.

    ``warm_start``: a registered algorithm's name or ``best``: it runs first (inside the time limit)
    and the incumbent returned is never worse than its schedule (`edgeopt.solving.warmstart`).
    ``lns``: improve the warm start (default ``best``) by a large-neighbourhood search whose windows
    are solved with ``method`` until ``time_limit``; status ``time_limit`` (`edgeopt.solving.warmstart.solve_lns`).

    Before anything is built, the model's size is estimated (``formulations.<family>.SIZES``) and a
    model above the budget is refused with an `InputError` that gives the size and what to do
    (exit 2 in the CLI). The budget is ``max_model_size`` nonzeros, default
    `edgeopt.core.limits.DEFAULT_MAX_NONZEROS` (2,000,000, about 3 GB through Pyomo). The estimate,
    the model building and the solve share one `Deadline`: a deadline that passes before the solver
    ran gives status ``time_limit`` with no incumbent and ``extra["reason"]``.
    """
    from formulations import loaded

    spec = family_of(instance)
    methods = exact_methods(spec.name)
    check_choice("method", method, sorted(methods), f"{spec.name} exact method")
    _check_solver_limits(time_limit, max_model_size)
    if work_limit is not None:
        with work_limit_scope(check_work_limit(work_limit)):
            result = solve(instance, method=method, time_limit=time_limit, max_model_size=max_model_size,
                           warm_start=warm_start, lns=lns, **options)
        result.extra["work_limit"] = float(work_limit)
        return result
    # Only the chosen model's solver is imported (a MILP solve never loads OR-Tools), and now, before the
    # deadline starts: its clock must never interrupt an extension module's initialisation.
    solve_model = loaded(methods[method])
    if "fix" in options:
        _check_fix(spec.name, method, options["fix"], lns=lns)
    estimator = model_sizes(spec.name).get(method)
    estimator = None if estimator is None else loaded(estimator)
    if lns:
        from edgeopt.solving.warmstart import solve_lns

        return solve_lns(instance, method=method, time_limit=time_limit, warm_start=warm_start or "best",
                         max_model_size=max_model_size, **options)
    if warm_start is not None:
        from edgeopt.solving.warmstart import solve_warm

        return solve_warm(instance, method=method, time_limit=time_limit, warm_start=warm_start, solve=solve,
                          max_model_size=max_model_size, **options)
    deadline = Deadline(time_limit)
    size = None
    deferred: Any = contextlib.nullcontext()
    try:
        if estimator is not None:
            with deadline.guard("the model size estimate"):
                size = estimator(instance)
            if _waits_for_fixing(spec.name, method, size, max_model_size, options):
                # the model fixing leaves is guarded instead, before it is built (`guard_built`)
                deferred = deferred_size_guard(DEFAULT_MAX_NONZEROS if max_model_size is None else int(max_model_size),
                                               size, method)
            else:
                guard_size(size, method=method, max_nonzeros=max_model_size)
        with deferred:
            result = solve_model(instance, time_limit=deadline.remaining(), **options)
    except BuildTimeLimit as exc:
        result = Result(family=spec.name, algorithm=method, status=Status.TIME_LIMIT, objective=None, bound=None,
                        runtime_s=deadline.elapsed(), schedule=None, instance_sha256=instance_sha256(instance),
                        extra={"reason": str(exc)})
    if size is not None:
        result.extra["model_size"] = {"variables": size.variables, "constraints": size.constraints,
                                      "nonzeros": size.nonzeros}
        if not isinstance(deferred, contextlib.nullcontext):
            # the estimate above is the unfixed model's; the guard judged the model fixing left (guard_built)
            result.extra["model_size"]["guarded_after_fixing"] = True
    return result




def _waits_for_fixing(family: str, method: str, size: ModelSize, max_model_size: int | None,
                      options: dict[str, Any]) -> bool:
    """Whether the size guard of ``method``'s model waits for what its reduced-cost fixing leaves: the unfixed
    estimate is above the budget but within the family's headroom (`fixing_headroom`), and fixing is on."""
    budget = DEFAULT_MAX_NONZEROS if max_model_size is None else int(max_model_size)
    return budget < size.nonzeros <= fixing_headroom(family, method) * budget and _fixes(family, method, options)


def _fixes(family: str, method: str, options: dict[str, Any]) -> bool:
    """Whether ``method`` will try reduced-cost fixing with ``options``: it takes ``fix`` and ``fix`` is on (given,
    or the model's default). Whether fixing then applies (instance size, a certified bound) the model decides;
    where it does not, `guard_built` refuses on the unfixed estimate."""
    if not method_takes(family, method, "fix"):
        return False
    if "fix" in options:
        return bool(options["fix"])
    return inspect.signature(exact_methods(family)[method]).parameters["fix"].default is True


def fixing_methods() -> list[str]:
    """``family method`` of every exact model that takes ``fix`` (reduced-cost fixing), for error messages."""
    return [f"{fam.name} {name}" for fam in families() for name in exact_methods(fam.name)
            if method_takes(fam.name, name, "fix")]


def _check_fix(family: str, method: str, fix: Any, *, lns: bool) -> None:
    """``fix`` reaches only a whole-model solve whose model has reduced-cost fixing; anything else is an
    `InputError` on ``fix`` (exit 2 in the CLI), never a TypeError from deep inside the model."""
    if not isinstance(fix, bool):
        raise InputError("fix", f"must be true or false, got {fix!r}")
    if lns:
        raise InputError("fix", "reduced-cost fixing applies to a whole-model solve, and the LNS solves windows: "
                                "drop --fix or --lns")
    if not method_takes(family, method, "fix"):
        raise InputError("fix", f"the {family} {method} model has no reduced-cost fixing (models that have it: "
                                f"{', '.join(fixing_methods())})")


def refusal(instance: Any, *, method: str = "milp", max_model_size: int | None = None) -> tuple[str | None, bool]:
    """Why `solve` would refuse ``method``'s model of ``instance`` for its size on the unfixed estimate (None
    when it fits), and whether `solve` would wait for the model's reduced-cost fixing instead of refusing
    (`_waits_for_fixing`, default options: only the solve can tell whether the fixed model fits).

    The same estimate and budget as `solve` (``formulations.<family>.SIZES``; a method without an
    estimate is never refused here), computed once and without building anything: `compare` asks first, so
    that it never runs every algorithm only to be refused at the end.
    """
    from formulations import loaded

    spec = family_of(instance)
    check_choice("method", method, sorted(exact_methods(spec.name)), f"{spec.name} exact method")
    estimator = model_sizes(spec.name).get(method)
    if estimator is None:
        return None, False
    size: ModelSize = loaded(estimator)(instance)
    try:
        guard_size(size, method=method, max_nonzeros=max_model_size)
    except InputError as exc:
        return exc.message, _waits_for_fixing(spec.name, method, size, max_model_size, {})
    return None, False
