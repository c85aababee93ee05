"""Reduced-cost fixing: an incumbent and a certified Lagrangian bound shrink an exact model before its search.

With a complete schedule of value UB (the incumbent), prices pi >= 0 of the family's certified
time-indexed relaxation (`edgeopt.core.colgen`, the ``auto`` bound of ``formulations.<family>.LOWER_BOUNDS``)
and the relaxation's reduced costs rc at pi (`edgeopt.core.colgen.reduced_costs`), every schedule that puts
job j on relaxation column c costs at least L(pi) + rc_j(c) (Fisher 1981: the other jobs' reduced costs are
>= 0 and the priced capacity rows only lower the sum). So a variable of the exact model that maps to columns
with L(pi) + rc > cutoff is used by no schedule of value <= cutoff and is fixed to 0 before the model is
built. The cutoff is the best value a strictly better schedule can have: UB - step when every objective is a
multiple of ``step`` (the bound's integrality step), else UB (then ties with the incumbent survive too).

What the exact model then proves is about the schedules better than the incumbent only:

* it finds none (the model is infeasible, or its optimum is above the cutoff, or its bound passes the
  cutoff): the incumbent is optimal;
* it finds one of value z: every schedule better than the incumbent survived the fixing, so z is the optimum
  when the search proves it (its bound reaches z).

`conclude` turns the search's outcome into one about the whole problem; the caller's `formulations.common.finish`
validates whichever schedule it returns. A family plugs in by mapping its model's variables onto the
relaxation's columns (e.g. `formulations.edgecloud.fixing`): a variable may be fixed only through columns that
every schedule using it can be mapped to (its relaxed mode, or any mode dominating it: no longer, no more
demand, no later).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from edgeopt.core import Deadline, FamilySpec, Status

#: Most of the time limit spent on the certified prices before the model is built (as the objective floor).
PRICES_SHARE = 0.25
PRICES_CAP_S = 20.0
#: A variable is fixed only when its lower bound passes the cutoff by this relative margin (float noise).
FIX_RTOL = 1e-7


@dataclasses.dataclass
class Incumbent:
    """A complete, validated schedule, its objective and where it came from."""

    schedule: Any
    objective: float
    source: str
    seconds: float


def best_incumbent(spec: FamilySpec, instance: Any, *, hint: Any = None, algorithms: Sequence[str] = (),
                   deadline: Deadline | None = None) -> Incumbent | None:
    """The best complete, validated schedule among ``hint`` and the registered ``algorithms`` (run with seed 0).

    A hint or an algorithm's result that is partial or fails the validator is skipped; the algorithms after
    the first one run only while ``deadline`` has time left (they are the family's fast list schedulers).
    """
    from edgeopt.core.lns import complete_and_valid
    from edgeopt.core.registry import lookup

    t0 = time.perf_counter()
    best: tuple[Any, float, str] | None = None

    def offer(schedule: Any, source: str) -> None:
        nonlocal best
        if schedule is None or not complete_and_valid(spec, instance, schedule):
            return
        obj = float(spec.objective(instance, schedule))
        if math.isfinite(obj) and (best is None or obj < best[1]):
            best = (schedule, obj, source)

    if hint is not None:
        with contextlib.suppress(Exception):  # an unreadable hint is no incumbent; the algorithms still run
            offer(spec.parse_schedule(hint), "hint")
    for name in algorithms:
        if best is not None and deadline is not None and deadline.remaining(floor=0.0) <= 0.0:
            break
        res = lookup(spec.name, name)(instance, seed=0)
        if res.schedule is not None:
            offer(spec.parse_schedule(res.schedule), name)
    if best is None:
        return None
    return Incumbent(best[0], best[1], best[2], time.perf_counter() - t0)


def incumbent_and_prices(spec: FamilySpec, instance: Any, *, hint: Any, algorithms: Sequence[str],
                         deadline: Deadline, prices_of: Any) -> tuple[Incumbent | None, Prices | None, dict[str, float]]:
    """The incumbent (`best_incumbent` of ``hint`` and ``algorithms``) and, when there is one, the certified prices
    (``prices_of(instance, deadline)``, e.g. `certified_prices`); the timings ``incumbent_s`` and ``bound_s``, each
    also in CPU seconds of the process (``*_cpu_s``). The first step of a family's fixing
    (``formulations.<family>.fixing.prepare_fixing``)."""
    timings: dict[str, float] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    with deadline.guard("the incumbent for reduced-cost fixing"):
        incumbent = best_incumbent(spec, instance, hint=hint, algorithms=algorithms, deadline=deadline)
    timings["incumbent_s"], timings["incumbent_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    if incumbent is None:
        return None, None, timings
    t0, c0 = time.perf_counter(), time.process_time()
    prices = prices_of(instance, deadline)
    timings["bound_s"], timings["bound_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    return incumbent, prices, timings


@dataclasses.dataclass
class Prices:
    """Certified prices of the family's ``auto`` relaxation and the reduced costs of every column at them.

    Attributes:
        relaxation: the relaxation rebuilt from the instance (`edgeopt.core.colgen.TimeIndexedRelaxation`).
        costs: `edgeopt.core.colgen.ReducedCosts` at the prices (``costs.value`` is L(pi), float-safe).
        lagrangian: L(pi) plus the method's offset: every complete schedule costs at least this plus the reduced
            cost of any one job's column.
        bound: the certified bound (L rounded up to the step, floored by the trivial bound).
        step: every complete schedule's objective is a multiple of it (None: unknown).
        certificate: the bound's certificate (`edgeopt.core.lowerbound.compute_bound`), which re-checks the prices.
        seconds: time spent (bound and reduced costs).
    """

    relaxation: Any
    costs: Any
    lagrangian: float
    bound: float
    step: float | None
    certificate: dict[str, Any]
    method: str
    seconds: float


def certified_prices(instance: Any, deadline: Deadline | None, *, share: float = PRICES_SHARE,
                     cap_s: float = PRICES_CAP_S, method: str = "auto") -> Prices | None:
    """The family's ``auto`` bound (or its bound called ``method``) with its prices and reduced costs, spending
    at most ``min(share * remaining, cap_s)`` seconds of ``deadline``; None when the bound fails, times out, or
    is no time-indexed relaxation (then nothing is fixed: the model stays exact, only larger).

    The reduced costs and L(pi) are recomputed here from the certificate's prices by enumeration, without a
    solver (as `edgeopt.core.lowerbound.check_certificate` does), so a fixing decision never rests on a
    solver's tolerance.
    """
    from edgeopt.core.colgen import TimeIndexedRelaxation, reduced_costs
    from edgeopt.core.lowerbound import certificate_multipliers, compute_bound, find_method
    from edgeopt.core.lpbound import round_up
    from formulations import table

    t0 = time.perf_counter()
    budget = cap_s if deadline is None else min(cap_s, share * deadline.remaining())
    if budget < 0.2:
        return None
    family = instance.family
    method = find_method(table(family, "LOWER_BOUNDS"), method, family)
    try:
        res = compute_bound(family, method, instance, deadline=Deadline(budget))
    except Exception:  # noqa: BLE001 - no bound, no fixing: the exact model is still exact
        return None
    if res.status != Status.BOUND or res.bound is None:
        return None
    cert = res.extra["certificate"]
    rel = method.relax(instance)
    if not isinstance(rel, TimeIndexedRelaxation) or rel.fingerprint() != cert["fingerprint"]:
        return None
    pi = certificate_multipliers(rel, res)
    costs = reduced_costs(rel, pi)
    offset = float(method.offset(instance)) if method.offset else 0.0
    step = method.step(instance) if method.step else None
    lagrangian = costs.value + offset
    trivial = float(method.trivial(instance)) if method.trivial else -math.inf
    bound = max(round_up(lagrangian, step), trivial)
    return Prices(rel, costs, lagrangian, bound, step, cert, method.name, time.perf_counter() - t0)


def lns_incumbent(spec: FamilySpec, instance: Any, start: Incumbent, hood: Any, seconds: float, *,
                  sub_limit: float = 2.0, max_passes: int = 2, lower: float | None = None) -> Incumbent:
    """``start`` improved by the family's large-neighbourhood search (`edgeopt.core.lns.search` with the
    neighbourhood ``hood``) for at most ``seconds``, or until ``max_passes`` sweeps improve nothing, or until it
    reaches ``lower`` (a certified bound); ``start`` itself when the search fails or finds nothing better."""
    from edgeopt.core.lns import search

    t0 = time.perf_counter()
    try:
        sched, obj, _ = search(spec, instance, spec.parse_schedule(start.schedule), hood, deadline=Deadline(seconds),
                               sub_limit=sub_limit, max_passes=max_passes, lower=lower)
    except Exception:  # noqa: BLE001 - no better incumbent: fixing still works with the one it has
        return start
    if not obj < start.objective:
        return start
    return Incumbent(sched, float(obj), f"{start.source}+lns", start.seconds + time.perf_counter() - t0)


def improve_incumbent(spec: FamilySpec, instance: Any, incumbent: Incumbent, bound: float | None, hood: Any,
                      seconds: float, timings: dict[str, float], **options: Any) -> Incumbent:
    """`lns_incumbent` (``options`` passed on) when ``seconds`` is at least 0.5, the incumbent is above the certified
    ``bound`` (None: none known), and no deterministic work limit is in force: the search stops on the clock, so
    under a work limit it is left out and the fixed model is the same at any load. Adds ``lns_s`` and
    ``lns_cpu_s`` to ``timings`` and to their ``incumbent_s`` and ``incumbent_cpu_s``. The second step of a family's
    fixing, after `incumbent_and_prices`."""
    from edgeopt.core.limits import current_work_limit

    above = bound is None or incumbent.objective > bound
    if not (seconds >= 0.5 and above and current_work_limit() is None):
        return incumbent
    t0, c0 = time.perf_counter(), time.process_time()
    better = lns_incumbent(spec, instance, incumbent, hood, seconds, **options)
    timings["lns_s"], timings["lns_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    timings["incumbent_s"] = timings.get("incumbent_s", 0.0) + timings["lns_s"]
    timings["incumbent_cpu_s"] = timings.get("incumbent_cpu_s", 0.0) + timings["lns_cpu_s"]
    return better


def cutoff(upper: float, step: float | None) -> float:
    """The largest objective a schedule strictly better than ``upper`` can have: the multiple of ``step``
    below ``upper`` when every objective is a multiple of ``step``, else ``upper`` itself."""
    if step is None or not step > 0:
        return float(upper)
    k = math.ceil(upper / step - 1e-9) - 1
    return float(k * step)


def last_step(objective: float, prices: Prices) -> bool:
    """Whether a schedule strictly better than ``objective`` would have to sit at the certified bound itself
    (the objective is one step above it)."""
    return cutoff(objective, prices.step) <= prices.bound + tolerance(prices.bound)


def tolerance(value: float) -> float:
    """How far a lower bound must pass the cutoff before a variable is fixed (float noise only)."""
    return FIX_RTOL * max(1.0, abs(value))


@dataclasses.dataclass
class Fixing:
    """What the fixing decided: the incumbent, the cutoff, how many variables it removed, its timings."""

    incumbent: Incumbent
    prices: Prices
    cutoff: float
    #: whether only strictly better schedules are kept (cutoff below the incumbent), or ties too (cutoff = its value)
    strict: bool = True
    columns: int = 0
    fixed: int = 0
    jobs_without_column: list[int] = dataclasses.field(default_factory=list)
    fixing_s: float = 0.0
    #: the incumbents before this one (objective, source), when the search improved on them and fixing ran again
    history: list[tuple[float, str]] = dataclasses.field(default_factory=list)

    @property
    def last_step(self) -> bool:
        """Whether only a schedule at the certified bound itself could beat the incumbent (`last_step`)."""
        return last_step(self.incumbent.objective, self.prices)

    @property
    def better(self) -> float:
        """The largest value of a schedule strictly better than the incumbent (`cutoff` of its value)."""
        return cutoff(self.incumbent.objective, self.prices.step)

    def solver_cutoff(self) -> float:
        """The objective bound to hand a MIP solver (HiGHS's ``objective_bound``): above the cutoff by half a
        step, so that a schedule at the cutoff is kept and none at the incumbent's value."""
        step = self.prices.step
        return self.cutoff + (0.5 * step if step else tolerance(self.cutoff))

    def record(self) -> dict[str, Any]:
        """``extra["fixing"]`` of the result."""
        return {
            "incumbent": self.incumbent.objective, "incumbent_from": self.incumbent.source,
            "bound": self.prices.bound, "bound_method": self.prices.method, "lagrangian": self.prices.lagrangian,
            "cutoff": self.cutoff, "strict": self.strict, "variables": self.columns, "fixed": self.fixed,
            "fixed_share": round(self.fixed / self.columns, 6) if self.columns else 0.0,
            "rounds": len(self.history) + 1,
            "incumbents": [obj for obj, _ in self.history] + [self.incumbent.objective],
            # the prices every fixing decision was made at: with the incumbent's value they re-derive which
            # variables were fixed, without a solver (`edgeopt.core.lowerbound.check_certificate` checks them)
            "bound_certificate": self.prices.certificate,
        }


def improved_incumbent(spec: FamilySpec, instance: Any, schedule: Any, fixing: Fixing, source: str
                       ) -> Incumbent | None:
    """``schedule`` as the next incumbent, when it is complete, valid and better than the current one (value at
    most the cutoff); None otherwise."""
    from edgeopt.core.lns import complete_and_valid

    if schedule is None or not complete_and_valid(spec, instance, schedule):
        return None
    obj = float(spec.objective(instance, schedule))
    if not obj <= fixing.better + tolerance(fixing.better):
        return None
    return Incumbent(schedule, obj, source, 0.0)


def keep_mask(lower: np.ndarray, cut: float) -> np.ndarray:
    """Which entries of ``lower`` (lower bounds on every schedule using a variable) survive the cutoff."""
    return ~(lower > cut + tolerance(cut))


def conclude(outcome: Any, fixing: Fixing, *, floor: float | None = None) -> tuple[Any, bool]:
    """The search's outcome on the fixed model, as one about the whole problem; and whether the incumbent is
    the schedule to return (True) or the solver's (False).

    Every schedule better than the incumbent (value <= cutoff) is in the fixed model, so: the optimum is
    min(incumbent, the fixed model's optimum), and min(incumbent, the fixed model's bound) bounds it from
    below (as does ``floor``, the certified bound). Status ``optimal`` only when that bound reaches the
    returned objective (up to the cutoff's step); otherwise ``time_limit`` with both numbers.
    """
    from formulations.common import SolverOutcome

    ub = fixing.incumbent.objective
    cut = fixing.cutoff
    floor = fixing.prices.bound if floor is None else max(floor, fixing.prices.bound)
    better = (outcome.has_solution and outcome.objective is not None
              and outcome.objective <= cut + tolerance(cut))
    if outcome.status == Status.INFEASIBLE:
        reduced_bound = math.inf  # no schedule of value <= cutoff exists
    elif outcome.status == Status.OPTIMAL and outcome.objective is not None:
        reduced_bound = outcome.objective if outcome.bound is None else min(outcome.bound, outcome.objective)
    else:
        reduced_bound = outcome.bound if outcome.bound is not None else -math.inf
    if better:
        objective = float(outcome.objective)
        bound = max(floor, min(reduced_bound, objective))
        closed = outcome.status == Status.OPTIMAL or bound >= objective - tolerance(objective)
        status = Status.OPTIMAL if closed else Status.TIME_LIMIT
        return dataclasses.replace(outcome, status=status, bound=objective if closed else bound), False
    bound = max(floor, min(reduced_bound, ub))
    closed = bound > fixing.better + tolerance(fixing.better) or bound >= ub - tolerance(ub)
    status = Status.OPTIMAL if closed else Status.TIME_LIMIT
    message = outcome.message if outcome.status != Status.INFEASIBLE else f"{outcome.message}: nothing better"
    return SolverOutcome(status, ub, ub if closed else bound, outcome.runtime_s, message, True,
                         outcome.translate_s, outcome.start_values), True


def skipped_search(fixing: Fixing) -> Any | None:
    """The outcome of a search that need not run, or None: when the certified bound already passes the cutoff,
    or the fixing left some job no variable, no schedule better than the incumbent exists (`conclude` then
    returns the incumbent, optimal)."""
    from formulations.common import SolverOutcome

    cut = fixing.better
    if fixing.prices.bound > cut + tolerance(cut):
        why = "no search: the certified bound meets the incumbent"
    elif fixing.jobs_without_column:
        why = f"no search: reduced-cost fixing left job {fixing.jobs_without_column[0]} no variable"
    else:
        return None
    return SolverOutcome(Status.INFEASIBLE, None, None, 0.0, why, False)


def add_cpsat_cutoff(model: Any, cutoff_units: float) -> None:
    """The cut-off on a CP-SAT model: its objective expression <= ``cutoff_units`` (model units, rounded down).

    Read from the model's objective proto, as `formulations.strengthen.add_cpsat_floor`. Only schedules better
    than the incumbent are asked for; the incumbent itself is kept outside the model.
    """
    obj = model.proto.objective
    if not obj.vars:
        return
    scaling = obj.scaling_factor or 1.0
    if scaling < 0:  # a maximisation: no cut-off of this kind
        return
    rhs = math.floor(cutoff_units / scaling - obj.offset + 1e-9)
    terms = [coef * model.get_int_var_from_proto_index(v) if v >= 0 else
             -coef * model.get_int_var_from_proto_index(-v - 1) for v, coef in zip(obj.vars, obj.coeffs, strict=True)]
    model.add(sum(terms) <= rhs).with_name("fixing_objective_cutoff")
