"""Running algorithms and checking what they return: run, validate, third-party registration.

Part of the services layer; `edgeopt.api` re-exports the public names.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from typing import Any

from edgeopt.core import AlgorithmSpec, FamilySpec, InputError, Result, Status, Violation, lookup
from edgeopt.core.errors import ModelError
from edgeopt.services.lookup import (
    _check_result,
    _check_seed,
    check_algorithm,
    check_choice,
    family,
    family_of,
    is_builtin,
)
from edgeopt.solving.bounds import check_bound, check_optimal


def register_algorithm(
    family_name: str,
    name: str,
    *,
    kind: str = "offline",
    summary: str | None = None,
    randomized: bool = False,
    relaxed: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: make ``fn(instance, **params) -> schedule`` a registered algorithm of ``family_name``.

    ``fn`` returns the family's schedule (its pydantic model or the same data
    as a dict); jobs it gives up on go in the schedule's ``rejected`` list
    and make the result ``partial`` (in a family whose schedule has no such
    list, tapfinger, the tasks it leaves out are the rejected ones). The wrapper times ``fn`` and builds the
    `Result`, so the algorithm then runs, validates and compares like the
    built-in ones (`run`, `validate`, `compare`, ``edgeopt run``). Its
    tunables are ``fn``'s keyword-only arguments (typed, with a default,
    one-line meaning under ``Args:``); ``fn`` receives ``seed`` only if it
    declares it. Registering a name again replaces the earlier algorithm
    (with a warning when the function is a different one), so a notebook cell
    can be re-run.

    Args:
        family_name: the family it schedules.
        name: its name in tables and on the command line.
        kind: ``offline`` (sees every job; the default for a function of the
            whole instance), ``online`` or ``baseline``.
        summary: one line for ``edgeopt algorithms`` (default: the docstring's first line).
        randomized: whether the seed changes its output.
        relaxed: whether it schedules a relaxation of the family's model.
    """
    from edgeopt.core import register

    spec = family(family_name)
    check_choice("kind", kind, ["online", "baseline", "offline"], "algorithm kind")

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        takes_seed = "seed" in inspect.signature(fn).parameters

        @functools.wraps(fn)
        def algorithm(instance: Any, *, seed: int = 0, **params: Any) -> Result:
            t0 = time.perf_counter()
            schedule = fn(instance, seed=seed, **params) if takes_seed else fn(instance, **params)
            runtime = max(0.0, time.perf_counter() - t0)
            if isinstance(schedule, Result):
                return schedule
            if not hasattr(schedule, "model_dump"):
                schedule = spec.parse_schedule(schedule)
            rejected = getattr(schedule, "rejected", []) or []
            if spec.listed_jobs is not None and spec.listed_jobs(schedule)[1] is None:
                # a family whose schedule has no rejected list (tapfinger): the jobs it leaves out are rejected
                scheduled = set(spec.listed_jobs(schedule)[0])
                rejected = [j for j in spec.ids_of_jobs(instance) if j not in scheduled]
            return spec.algorithm_result(instance, name, schedule, runtime, rejected=rejected)

        line = summary or ((inspect.getdoc(fn) or "").splitlines() or [name])[0]
        register(family_name, name, kind=kind, summary=line, randomized=randomized,  # type: ignore[arg-type]
                 relaxed=relaxed)(algorithm)
        return fn

    return deco


def run(algorithm: str, instance: Any, *, seed: int = 0, **params: Any) -> Result:
    """Run a registered algorithm of the instance's family.

    What an algorithm from outside edgeopt returns (a plug-in, or one registered with
    `register_algorithm`) is validated before it is handed back: a result that breaks the family's
    rules (a job dropped, an objective that is not its schedule's, a false claim) is never given a
    status; `ModelError` is raised with its violations (``edgeopt run`` exits 1). The built-in
    algorithms are held to the same validator by the test suite instead of on every call.
    """
    spec = family_of(instance)
    _check_seed(seed)
    check_algorithm(spec.name, algorithm)
    algo = lookup(spec.name, algorithm)
    result = algo(instance, seed=seed, **params)
    if not is_builtin(algo):
        check_plugin_result(spec, instance, algo, result)
    return result


def check_plugin_result(spec: FamilySpec, instance: Any, algo: AlgorithmSpec, result: Any) -> None:
    """Raise `ModelError` when a registered algorithm's output is not a valid `Result` of ``instance``."""
    if not isinstance(result, Result):
        raise ModelError(f"algorithm {spec.name}/{algo.name} returned a {type(result).__name__}, not a Result")
    violations = spec.check_result(instance, result)
    if violations:
        shown = "; ".join(str(v) for v in violations[:3])
        more = f" (and {len(violations) - 3} more)" if len(violations) > 3 else ""
        raise ModelError(f"algorithm {spec.name}/{algo.name} returned an invalid result, given no status: "
                         f"{shown}{more}")


def validate(instance: Any, result: Result) -> list[Violation]:
    """Every violation of ``result`` on ``instance`` (empty list: valid).

    A ``bound`` result is also checked against its certificate (`check_bound`, no solver): a forged
    number or certificate is a violation named ``certificate``. So is an ``optimal`` result that carries a
    certificate (its proof is a certified bound that meets the objective, `check_optimal`).
    """
    spec = family_of(instance)
    violations = spec.check_result(instance, _check_result(result))
    if not violations and result.status == Status.BOUND:
        try:
            check_bound(instance, result)
        except (ModelError, InputError) as exc:
            violations.append(Violation("certificate", str(exc)))
    if not violations and result.status == Status.OPTIMAL and "certificate" in result.extra:
        try:
            check_optimal(instance, result)
        except (ModelError, InputError) as exc:
            violations.append(Violation("certificate", str(exc)))
    return violations
