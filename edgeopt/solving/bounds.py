"""Certified lower bounds on the optimum and their check without a solver.

Part of the services layer; `edgeopt.api` re-exports the public names.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import Result, Status
from edgeopt.core.family import instance_sha256
from edgeopt.core.limits import (
    BuildTimeLimit,
    Deadline,
)
from edgeopt.services.lookup import _check_solver_limits, bound_methods, family_of


def bound(instance: Any, *, method: str = "auto", time_limit: float = 60.0,
          max_model_size: int | None = None) -> Result:
    """A certified lower bound on the optimum over complete schedules, within ``time_limit`` for the whole call.

    Status ``bound``, the number in ``bound``, no schedule, ``extra["certificate"]`` (checked by
    `check_bound` without a solver). ``method="auto"`` picks the family's strongest scalable bound.
    The model-size budget is the one of `solve` (``max_model_size`` nonzeros).
    """
    from edgeopt.core.lowerbound import compute_bound, find_method

    spec = family_of(instance)
    _check_solver_limits(time_limit, max_model_size)
    chosen = find_method(bound_methods(spec.name), method, spec.name)
    deadline = Deadline(time_limit)
    try:
        return compute_bound(spec.name, chosen, instance, max_model_size=max_model_size, deadline=deadline)
    except BuildTimeLimit as exc:
        return Result(family=spec.name, algorithm=chosen.name, status=Status.TIME_LIMIT, objective=None, bound=None,
                      runtime_s=deadline.elapsed(), schedule=None, instance_sha256=instance_sha256(instance),
                      extra={"reason": str(exc) or f"time limit of {time_limit:g} s reached", "method": chosen.name})


def bound_refusal(instance: Any, *, method: str = "auto", max_model_size: int | None = None) -> str | None:
    """Why `bound` would refuse ``method`` on ``instance`` for its model's size, or None when it fits (or the
    method gives no estimate); computed without building anything, as `edgeopt.solving.exact.refusal`."""
    from edgeopt.core import InputError
    from edgeopt.core.limits import guard_size
    from edgeopt.core.lowerbound import find_method

    spec = family_of(instance)
    chosen = find_method(bound_methods(spec.name), method, spec.name)
    if chosen.size is None:
        return None
    try:
        guard_size(chosen.size(instance), method=f"bound {chosen.name}", max_nonzeros=max_model_size)
    except InputError as exc:
        return exc.message
    return None


def check_bound(instance: Any, result: Result) -> float:
    """Recompute a ``bound`` result's number from its certificate, without a solver; `ModelError` if it fails."""
    from edgeopt.core.lowerbound import check_certificate, find_method

    spec = family_of(instance)
    return check_certificate(find_method(bound_methods(spec.name), result.algorithm, spec.name), instance, result)


def check_optimal(instance: Any, result: Result) -> float:
    """Re-check an ``optimal`` result whose proof is a certified bound (``extra["certificate"]``, the bound's
    method named in it) without a solver; `ModelError` when it does not reach the objective or does not check."""
    from edgeopt.core import ModelError
    from edgeopt.core.lowerbound import check_optimal_certificate, find_method

    spec = family_of(instance)
    cert = result.extra.get("certificate") if isinstance(result.extra, dict) else None
    name = cert.get("method") if isinstance(cert, dict) else None
    methods = bound_methods(spec.name)
    if not isinstance(name, str) or name not in methods:
        raise ModelError(f"certificate: names no bound method of {spec.name} ({name!r})")
    return check_optimal_certificate(find_method(methods, name, spec.name), instance, result)
