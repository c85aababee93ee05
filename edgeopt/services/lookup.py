"""What is registered: families, algorithms, exact models and bounds, looked up by name with a clear
error and a "did you mean" for a typo.

Part of the services layer; `edgeopt.api` re-exports the public names.
"""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Callable, Sequence
from typing import Any

from edgeopt import families as _families
from edgeopt.core import AlgorithmSpec, FamilySpec, InputError, Result
from edgeopt.core.limits import (
    ModelSize,
)
from edgeopt.core.registry import unavailable


def did_you_mean(value: str, known: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known name, or ``""`` when none is close."""
    close = difflib.get_close_matches(value, list(known), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_choice(field: str, value: str, known: Sequence[str], what: str) -> None:
    """InputError naming ``field`` when ``value`` is not in ``known``, with the choices and a suggestion."""
    if value not in known:
        raise InputError(field, f"unknown {what} {value!r}{did_you_mean(value, known)} "
                                f"(known: {', '.join(known) or 'none'})")


def families() -> list[FamilySpec]:
    """Every implemented family."""
    return _families.available_families()


def family(name: str) -> FamilySpec:
    """The family called ``name`` (InputError if unknown or not implemented)."""
    return _families.get_family(name)


def family_of(instance: Any) -> FamilySpec:
    """The family an instance belongs to (from its ``family`` field)."""
    if isinstance(instance, Result):
        raise TypeError("instance: expected an instance, got a Result (the order is (instance, result))")
    name = getattr(instance, "family", None)
    if not isinstance(name, str) or not hasattr(instance, "model_dump"):
        raise TypeError(f"instance: expected an edgeopt instance (from api.load or api.generate), "
                        f"got {_type_name(instance)}")
    return family(name)


def _type_name(x: Any) -> str:
    return "None" if x is None else type(x).__name__


def _check_result(result: Any, name: str = "result") -> Result:
    """``result`` if it is a `Result`; TypeError naming ``name`` and what to pass otherwise."""
    if not isinstance(result, Result):
        hint = " (Result.from_dict(d) reads a dict; api.load_result a file)" if isinstance(result, dict) else ""
        raise TypeError(f"{name}: expected an edgeopt Result (from api.run or api.solve), "
                        f"got {_type_name(result)}{hint}")
    return result


def algorithms(name: str) -> dict[str, AlgorithmSpec]:
    """Registered algorithms of family ``name``."""
    return _families.algorithms(name)


def unavailable_algorithms(name: str) -> dict[str, str]:
    """Algorithms of family ``name`` that exist but are not registered here, with why (e.g. tapfinger's
    ``online`` without the ``rl`` extra)."""
    algorithms(name)  # imports the family, which marks them
    return unavailable(name)


def exact_method_names(name: str) -> list[str]:
    """The names of family ``name``'s exact models, without importing them (Pyomo, OR-Tools)."""
    from formulations import METHOD_NAMES

    algorithms(name)  # the family exists
    return list(METHOD_NAMES.get(name, ()))


def exact_methods(name: str) -> dict[str, Callable[..., Result]]:
    """Exact models of family ``name`` (``{"milp": ..., "cpsat": ...}``)."""
    return _families.solve_methods(name)


def method_takes(name: str, method: str, option: str) -> bool:
    """Whether family ``name``'s exact ``method`` takes the keyword ``option`` (e.g. ``hint``, ``fix``); False
    for an unknown method. Reads the signature (a lazy model is imported for it)."""
    import inspect

    fn = exact_methods(name).get(method)
    try:
        return fn is not None and option in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def check_algorithm(name: str, algorithm: str) -> AlgorithmSpec:
    """The registered algorithm ``algorithm`` of family ``name`` (InputError with a suggestion if unknown)."""
    table = algorithms(name)
    if not isinstance(algorithm, str):
        raise TypeError(f"algorithm: expected an algorithm name (str), got {_type_name(algorithm)}")
    missing = unavailable(name)
    if algorithm not in table and algorithm in missing:
        raise InputError("algorithm", f"{name} algorithm {algorithm!r} is not available here: {missing[algorithm]}")
    check_choice("algorithm", algorithm, sorted(table), f"{name} algorithm")
    return table[algorithm]


def is_builtin(algo: AlgorithmSpec) -> bool:
    """Whether ``algo`` is one of edgeopt's own algorithms (not a plug-in or a user's function)."""
    module = getattr(algo.fn, "__module__", "") or ""
    return module == "edgeopt" or module.startswith("edgeopt.")


def _formulations_table(name: str, table: str) -> dict[str, Any]:
    """``formulations.<name>.<table>`` of family ``name`` as a dict (empty if the package or table is missing)."""
    from formulations import table as formulations_table

    exact_methods(name)  # the family exists
    return formulations_table(name, table)


def model_sizes(name: str) -> dict[str, Callable[..., ModelSize]]:
    """Size estimators of family ``name``'s exact models, ``formulations.<name>.SIZES`` (empty if none)."""
    return _formulations_table(name, "SIZES")


def fixing_headroom(name: str, method: str) -> float:
    """How far above the size budget (a factor) family ``name``'s ``method`` may be estimated before its
    reduced-cost fixing and still have the guard wait for the fixed model: ``formulations.<name>.FIXING_HEADROOM``
    where the family sets it, else `edgeopt.core.limits.FIXING_HEADROOM`."""
    from edgeopt.core.limits import FIXING_HEADROOM

    return float(_formulations_table(name, "FIXING_HEADROOM").get(method, FIXING_HEADROOM))


def bound_methods(name: str) -> dict[str, Any]:
    """Certified lower bounds of family ``name``, ``formulations.<name>.LOWER_BOUNDS`` (empty if none)."""
    return _formulations_table(name, "LOWER_BOUNDS")


def _check_count(field: str, value: Any) -> int | None:
    """``value`` as a plain int >= 1 (None stays None). A bool is an int to Python but never a count
    (``jobs=True`` would be one job): InputError naming ``field``. A numpy integer becomes an int, so that
    the family's caps (`FamilySpec.check_limits`, which looks at ints) hold it too."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InputError(field, f"expected a count (int >= 1), got bool {value!r}: booleans are not counts")
    if not isinstance(value, numbers.Integral):
        raise TypeError(f"{field}: expected a count (int >= 1) or None, got {_type_name(value)} {value!r}")
    if value < 1:
        raise InputError(field, f"must be >= 1, got {value}")
    return int(value)


def _check_seed(seed: Any) -> None:
    if isinstance(seed, bool):  # an int to Python, but True is no seed: refused like a bool count
        raise InputError("seed", f"expected a non-negative int, got bool {seed!r}: booleans are not seeds")
    if not isinstance(seed, int):
        raise TypeError(f"seed: expected a non-negative int, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise InputError("seed", f"must be >= 0, got {seed}")


#: Longest time limit a solve accepts (a week): beyond it, the number is a typo, not a plan.
MAX_TIME_LIMIT = 7 * 24 * 3600.0


def _check_solver_limits(time_limit: Any, max_model_size: Any) -> None:
    """The ``time_limit`` and ``max_model_size`` arguments of `solve` and `bound`, checked once."""
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not (
            0 < time_limit <= MAX_TIME_LIMIT):
        raise InputError("time_limit", f"must be a number of seconds in (0, {MAX_TIME_LIMIT:g}], got {time_limit}")
    if max_model_size is not None and (isinstance(max_model_size, bool) or not isinstance(max_model_size, int)
                                       or max_model_size < 1):
        raise InputError("max_model_size", f"must be a positive integer (nonzeros), got {max_model_size!r}")
