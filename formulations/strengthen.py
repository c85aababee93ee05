"""Shared machinery of the strengthened exact models (valid inequalities and symmetry breaking).

Every exact model of a family takes ``strengthen=True`` (the default): it then adds, on top of the
paper's constraints, inequalities that cut off no optimal schedule, so the optimum is unchanged
(``tests/<family>/test_strengthened_models.py`` compare both builds on random instances).
``strengthen=False`` builds the model as it was before, for comparison.

Two kinds live here, used by every family:

* ``valid_objective_floor`` (CP-SAT models): objective >= LB, with LB the family's certified lower bound
  (`edgeopt.api.bound`, its certificate re-checked by `edgeopt.api.check_bound`). Valid because
  LB is at most the optimum over complete schedules, which is what every exact model minimises
  (each model's objective is, at every feasible point, at least the true objective of the
  schedule it encodes). It gives CP-SAT, whose own bound is weak, the LP bound of the
  time-indexed relaxation at once. The MILPs do not get it: HiGHS's own LP bound is at least as
  strong there, and the extra dense row slowed it down (edgecloud, 32 jobs: proved in 2.2 s CPU
  without it, not within 60 s with it; benchmarks/exact_scale.py).
* ``identical_classes``: groups of interchangeable resources (servers, workers) for the
  symmetry-breaking rows each family writes itself: with h < h' identical, swapping everything
  placed on them maps a schedule to one with the same objective, so requiring a chosen
  aggregate of h to be at least the one of h' keeps at least one optimal schedule.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import Any

from edgeopt.core import Deadline

#: Most of the time limit spent on the certified bound before the model is built.
FLOOR_SHARE = 0.2
FLOOR_CAP_S = 15.0


def certified_floor(instance: Any, deadline: Deadline | None, *, share: float = FLOOR_SHARE,
                    cap_s: float = FLOOR_CAP_S) -> float | None:
    """The family's certified lower bound on ``instance`` (None when it fails, raises, times out or fails its check).

    Spends at most ``min(share * remaining, cap_s)`` seconds of ``deadline``. The bound's certificate is
    re-derived without a solver (`edgeopt.core.lowerbound.check_certificate`) before the number is used: an
    unchecked number could make a model claim a wrong optimum. The family's ``auto`` bound method is the one
    `edgeopt bound` uses (the first of ``formulations.<family>.LOWER_BOUNDS``).
    """
    from edgeopt.core import Status
    from edgeopt.core.lowerbound import check_certificate, compute_bound, find_method
    from formulations import table

    budget = cap_s if deadline is None else min(cap_s, share * deadline.remaining())
    if budget < 0.2:
        return None
    try:
        family = instance.family
        method = find_method(table(family, "LOWER_BOUNDS"), "auto", family)
        res = compute_bound(family, method, instance, deadline=Deadline(budget))
        if res.status != Status.BOUND or res.bound is None:
            return None
        checked = check_certificate(method, instance, res)
    except Exception:  # noqa: BLE001 - the floor is an optional aid: a bound that fails is not used, the model is still exact
        return None
    value = min(float(res.bound), float(checked))
    return value if math.isfinite(value) else None


def floor_in_model_units(floor: float, scale: float = 1.0, slack: float = 0.0, integral: bool = True) -> float:
    """``floor`` in a model's objective units (model value = ``scale`` * true value, up to ``slack`` true units).

    Lowered by a relative 1e-9 against float noise; rounded up only when the scaled objective is
    integral at every feasible point.
    """
    v = (floor - slack) * scale
    v -= 1e-9 * max(1.0, abs(v))
    return float(math.ceil(v)) if integral else v


def add_cpsat_floor(model: Any, floor_units: float) -> None:
    """Valid inequality on a CP-SAT model: its objective expression >= ``floor_units`` (model units).

    Read from the model's objective proto, so it applies to any model built with ``minimize``: the
    objective value is ``sum coeffs * vars + offset``.
    """
    obj = model.proto.objective
    if not obj.vars:
        return
    scaling = obj.scaling_factor or 1.0
    if scaling < 0:  # a maximisation: the floor does not apply
        return
    rhs = math.ceil(floor_units / scaling - obj.offset - 1e-9)
    terms = [coef * model.get_int_var_from_proto_index(v) if v >= 0 else
             -coef * model.get_int_var_from_proto_index(-v - 1) for v, coef in zip(obj.vars, obj.coeffs, strict=True)]
    model.add(sum(terms) >= rhs).with_name("valid_objective_floor")


def identical_classes(keys: Iterable[Hashable]) -> list[list[int]]:
    """Indices grouped by equal key, in index order; only groups of two or more."""
    groups: dict[Hashable, list[int]] = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def consecutive_pairs(classes: list[list[int]]) -> list[tuple[int, int]]:
    """(h, h') for consecutive members of each class: the chain a symmetry-breaking order needs."""
    return [(g[i], g[i + 1]) for g in classes for i in range(len(g) - 1)]
