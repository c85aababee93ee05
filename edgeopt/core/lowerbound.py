"""Certified lower bounds: a family describes a relaxation, this module computes and checks the bound.

A family registers `BoundMethod` objects (``formulations.<family>.LOWER_BOUNDS``). Each rebuilds,
deterministically from the instance, either

* a `TimeIndexedRelaxation` (or an object with its pricing interface, `edgeopt.core.colgen`):
  the bound is the Lagrangian value L(pi) at prices found by column generation, or
* a `LinearProgram` (`edgeopt.core.lpbound`): the bound is the weak-duality value of HiGHS's duals.

`compute_bound` returns a `Result` with status ``bound``, the number in ``bound``, no schedule, and
``extra["certificate"]``: the multipliers (sparse), the relaxation's fingerprint (sha256 of every
number in it), the integrality step and the family's trivial bound. `check_certificate` rebuilds the
relaxation from the instance, compares the fingerprint and recomputes the bound from the
multipliers alone, without a solver: a bound it cannot reproduce (to 1e-6 relative) is an error,
never a number.

Rounding: when every objective value of a complete schedule is a multiple of ``step`` (integer
completion times and unit weights: step 1), the bound is rounded up to a multiple of it. The
family's trivial bound (each job alone) is taken as a floor: the result is max(rounded, trivial),
and the check recomputes both.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from edgeopt.core.colgen import column_generation, constant_buckets, lagrangian
from edgeopt.core.errors import InputError, ModelError
from edgeopt.core.family import instance_sha256
from edgeopt.core.limits import Deadline, ModelSize, guard_size
from edgeopt.core.lpbound import LinearProgram, dual_bound, round_up, solve_lp
from edgeopt.core.result import Result, Status

#: Relative tolerance of the certificate check.
CHECK_RTOL = 1e-6
#: Version of the certificate format (bump when a relaxation builder changes what it builds).
CERTIFICATE_VERSION = 1


@dataclasses.dataclass(frozen=True)
class BoundMethod:
    """A family's lower bound.

    Attributes:
        name: the method name (``edgeopt bound --method NAME``).
        summary: one line: what is relaxed.
        relax: ``relax(instance) -> TimeIndexedRelaxation | LinearProgram`` (deterministic).
        trivial: ``trivial(instance) -> float``: the family's existing trivial bound (a floor).
        step: ``step(instance) -> float | None``: every complete schedule's objective is a multiple of it.
        size: ``size(instance) -> ModelSize``: estimated before anything is built (the size guard).
        bound_of: what the number bounds, in words.
        offset: ``offset(instance) -> float`` added to the relaxation's value (e.g. a constant the
            relaxation leaves out); recomputed by the check.
    """

    name: str
    summary: str
    relax: Callable[[Any], Any]
    trivial: Callable[[Any], float] | None = None
    step: Callable[[Any], float | None] | None = None
    size: Callable[[Any], ModelSize] | None = None
    bound_of: str = "the optimum over schedules of every job"
    offset: Callable[[Any], float] | None = None


def _multipliers(y: np.ndarray) -> dict[str, Any]:
    flat = np.asarray(y, dtype=float).ravel()
    nz = np.flatnonzero(flat)
    return {"shape": list(np.shape(y)), "index": [int(i) for i in nz], "value": [float(v) for v in flat[nz]]}


def _dense(data: Any, expected: tuple[int, ...]) -> np.ndarray:
    """The multipliers as a dense array of shape ``expected`` (the rebuilt relaxation's).

    The stated shape is compared with ``expected`` before anything is allocated: a certificate that
    claims a [100000, 100000] array is refused, not built (it once took 74.5 GiB). Non-finite values
    and indices outside the array are refused too.
    """
    try:
        shape = tuple(int(s) for s in data["shape"])
        if shape != expected:
            raise ModelError(f"certificate: multipliers of shape {shape}, the relaxation needs {expected}")
        size = math.prod(expected) if expected else 1
        idx = np.asarray(data["index"], dtype=np.int64)
        val = np.asarray(data["value"], dtype=float)
        if idx.ndim != 1 or idx.shape != val.shape or (idx.size and (idx.min() < 0 or idx.max() >= size)):
            raise ValueError("index/value mismatch")
        if not np.isfinite(val).all():
            raise ValueError("a multiplier is not finite")
        out = np.zeros(size)
        out[idx] = val
        return out.reshape(expected)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise ModelError(f"certificate: unreadable multipliers ({exc})") from None


def _evaluate(relaxation: Any, multipliers: np.ndarray, bucket: Any = None) -> float:
    """The certified value of the relaxation at these multipliers (no solver). Prices that are exactly
    constant on buckets of ``bucket`` slots are evaluated at the breakpoints only (same value)."""
    if isinstance(relaxation, LinearProgram):
        try:
            return dual_bound(relaxation, multipliers)
        except ModelError:
            return -math.inf  # these multipliers certify nothing; the trivial bound remains
    starts = None
    if isinstance(bucket, int) and not isinstance(bucket, bool) and bucket > 1:
        starts = constant_buckets(np.maximum(np.nan_to_num(multipliers, nan=0.0, posinf=0.0, neginf=0.0), 0.0),
                                  bucket)
    return lagrangian(relaxation, multipliers, starts).value


def _finish(method: BoundMethod, instance: Any, raw: float) -> tuple[float, float, float | None, float]:
    """(bound, rounded relaxation value, step, trivial)."""
    offset = float(method.offset(instance)) if method.offset else 0.0
    step = method.step(instance) if method.step else None
    rounded = round_up(raw + offset, step)
    trivial = float(method.trivial(instance)) if method.trivial else -math.inf
    return max(rounded, trivial), rounded, step, trivial


def compute_bound(family: str, method: BoundMethod, instance: Any, *, time_limit: float = 60.0,
                  max_model_size: int | None = None, deadline: Deadline | None = None) -> Result:
    """Compute, certify and return the bound of ``method`` on ``instance`` within ``time_limit`` (whole call)."""
    import scipy.sparse  # noqa: F401 - the relaxations' matrices: an extension loaded before any guard starts

    deadline = deadline or Deadline(time_limit)
    timings: dict[str, float] = {}
    size = None
    if method.size is not None:
        with deadline.guard("the model size estimate"):
            size = method.size(instance)
        guard_size(size, method=f"bound {method.name}", max_nonzeros=max_model_size)
    t0 = deadline.elapsed()
    with deadline.guard("building the relaxation"):
        relaxation = method.relax(instance)
    timings["build_s"] = deadline.elapsed() - t0
    extra: dict[str, Any] = {"method": method.name, "bound_of": method.bound_of, "relaxation": method.summary}
    if size is not None:
        extra["model_size"] = {"variables": size.variables, "constraints": size.constraints,
                               "nonzeros": size.nonzeros}
    empty = relaxation.empty_jobs() if hasattr(relaxation, "empty_jobs") else []
    if empty:
        return Result(family, method.name, Status.INFEASIBLE, None, None, deadline.elapsed(), None,
                      instance_sha256(instance), {**extra, "timings": timings, "reason":
                      f"jobs {empty[:10]} fit no start in the horizon even in the relaxation: no complete "
                      "schedule exists"})
    t0 = deadline.elapsed()
    budget = None if max_model_size is None else int(max_model_size)
    if isinstance(relaxation, LinearProgram):
        guard_size(ModelSize(relaxation.shape[1], relaxation.shape[0], int(relaxation.A.nnz)),
                   method=f"bound {method.name}", max_nonzeros=max_model_size)
        sol = solve_lp(relaxation, time_limit=deadline.remaining())
        # no duals (stopped at the time limit before any): zero multipliers, still a valid (weak) bound
        multipliers = sol.row_dual if sol.row_dual is not None else np.zeros(relaxation.shape[0])
        bucket = None
        extra["solver"] = {"status": sol.status, "lp_value": sol.value}
        kind = "lp-duals"
    else:
        cg = column_generation(relaxation, deadline=deadline, max_nonzeros=budget or 2_000_000)
        multipliers = cg.prices
        bucket = cg.bucket
        extra["solver"] = {"bucket": cg.bucket, "master_lp": cg.master_lp, "iterations": cg.iterations,
                           "columns": cg.columns,
                           "converged": cg.converged, "stop": cg.stop_reason}
        if cg.levels:  # finer buckets were tried after the first level converged: (bucket, L, seconds) each
            extra["solver"]["levels"] = [list(level) for level in cg.levels]
        kind = "lagrangian"
    timings["solve_s"] = deadline.elapsed() - t0
    t0 = deadline.elapsed()
    # column generation's value is already L at these prices, by the same solver-free evaluation (one
    # pricing pass, which on a long horizon can take as long as the whole time limit): not repeated
    raw = _evaluate(relaxation, multipliers, bucket) if kind == "lp-duals" else cg.value
    bound, rounded, step, trivial = _finish(method, instance, raw)
    if not math.isfinite(bound):
        raise ModelError(f"bound {method.name}: no finite bound (relaxation value {raw}, no trivial bound)")
    timings["certify_s"] = deadline.elapsed() - t0
    extra["certificate"] = {
        "version": CERTIFICATE_VERSION, "kind": kind, "method": method.name,
        "fingerprint": relaxation.fingerprint(), "multipliers": _multipliers(multipliers),
        "relaxation_value": raw if math.isfinite(raw) else None, "bucket": bucket, "step": step, "rounded": rounded,
        "trivial": trivial if math.isfinite(trivial) else None, "bound": bound,
    }
    extra["timings"] = {k: round(v, 6) for k, v in timings.items()}
    return Result(family, method.name, Status.BOUND, None, bound, deadline.elapsed(), None,
                  instance_sha256(instance), extra)


def check_certificate(method: BoundMethod, instance: Any, result: Result) -> float:
    """Recompute ``result.bound`` from its certificate, independently of any solver; return it.

    Raises:
        ModelError: the certificate is missing, names another instance or relaxation, or gives a
            different number (beyond `CHECK_RTOL` relative).
    """
    cert = result.extra.get("certificate") if isinstance(result.extra, dict) else None
    if not isinstance(cert, dict):
        raise ModelError("certificate: missing (extra.certificate)")
    if result.instance_sha256 != instance_sha256(instance):
        raise ModelError("certificate: the result is for another instance")
    if cert.get("method") != method.name or cert.get("version") != CERTIFICATE_VERSION:
        raise ModelError(f"certificate: made by method {cert.get('method')!r} version {cert.get('version')!r}, "
                         f"checked as {method.name!r} version {CERTIFICATE_VERSION}")
    relaxation = method.relax(instance)
    if relaxation.fingerprint() != cert.get("fingerprint"):
        raise ModelError("certificate: the relaxation rebuilt from the instance differs from the one certified")
    expected = tuple(relaxation.shape[:1]) if isinstance(relaxation, LinearProgram) else (
        relaxation.n_rows, relaxation.horizon)
    y = _dense(cert.get("multipliers"), expected)
    raw = _evaluate(relaxation, y, cert.get("bucket"))
    bound, _, _, _ = _finish(method, instance, raw)
    stated = result.bound
    if stated is None or not math.isfinite(bound) or abs(bound - stated) > CHECK_RTOL * max(1.0, abs(bound)):
        raise ModelError(f"certificate: recomputed bound {bound!r}, the result states {stated!r}")
    return bound


def check_optimal_certificate(method: BoundMethod, instance: Any, result: Result) -> float:
    """Re-check an ``optimal`` result proven by a certified bound alone: its ``extra["certificate"]`` (a bound's
    certificate, as `compute_bound` writes it) must recompute, without a solver, the bound it states, and that
    bound must reach the result's objective. Returns the bound.

    Raises:
        ModelError: no certificate, one that does not check (`check_certificate`), or a bound below the objective.
    """
    cert = result.extra.get("certificate") if isinstance(result.extra, dict) else None
    if not isinstance(cert, dict):
        raise ModelError("certificate: missing (extra.certificate)")
    stated = cert.get("bound")
    if isinstance(stated, bool) or not isinstance(stated, (int, float)):
        raise ModelError(f"certificate: states no bound ({stated!r})")
    bound = check_certificate(method, instance, dataclasses.replace(result, bound=float(stated)))
    obj = result.objective
    if obj is None or bound < obj - CHECK_RTOL * max(1.0, abs(obj)):
        raise ModelError(f"certificate: proves every schedule costs >= {bound:g}, not the objective {obj}")
    return bound


def certificate_multipliers(relaxation: Any, result: Result) -> np.ndarray:
    """The multipliers of ``result``'s certificate as a dense array shaped for ``relaxation`` (the one
    `check_certificate` evaluates): LP row duals ``[rows]`` or prices ``[rows, slots]``. Reduced-cost fixing
    (`formulations.fixing`) reads its prices here; `ModelError` when the certificate is unreadable."""
    cert = result.extra.get("certificate") if isinstance(result.extra, dict) else None
    if not isinstance(cert, dict):
        raise ModelError("certificate: missing (extra.certificate)")
    expected = tuple(relaxation.shape[:1]) if isinstance(relaxation, LinearProgram) else (
        relaxation.n_rows, relaxation.horizon)
    return _dense(cert.get("multipliers"), expected)


def find_method(methods: dict[str, BoundMethod], name: str, family: str) -> BoundMethod:
    """The method called ``name`` (``auto``: the first registered), InputError otherwise."""
    if not methods:
        raise InputError("method", f"family {family!r} has no certified lower bound")
    if name == "auto":
        return next(iter(methods.values()))
    if name not in methods:
        raise InputError("method", f"unknown {family} bound method {name!r} (known: auto, {', '.join(methods)})")
    return methods[name]
