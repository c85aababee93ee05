"""Checks shared by the hetero tests and benchmarks: both exact models against each other, the
validator and every registered algorithm.

``agreement(instance)`` solves program (2)/(15) with every exact model and runs every registered
algorithm, and returns the problems it found (empty when all is well): a model that did not prove
optimality, two models that disagree on the optimum (1e-6 relative), a schedule that fails the
validator, an algorithm whose objective is below the optimum, an algorithm that rejects jobs of an
instance the exact models scheduled completely.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from edgeopt.core import Status, registered

RTOL = 1e-6


@dataclasses.dataclass
class Agreement:
    """What `agreement` saw on one instance."""

    optimum: float | None
    exact: dict[str, Any]
    algorithms: dict[str, Any]
    problems: list[str]


def agreement(instance: Any, *, time_limit: float = 30.0, algorithms: bool = True) -> Agreement:
    """Solve ``instance`` with every exact model, run every registered algorithm, collect problems."""
    from edgeopt.hetero import FAMILY
    from formulations.hetero import METHODS

    problems: list[str] = []
    exact = {name: fn(instance, time_limit=time_limit) for name, fn in METHODS.items()}
    for name, res in exact.items():
        if res.status != Status.OPTIMAL:
            problems.append(f"{name}: status {res.status.value}, not optimal")
            continue
        bad = FAMILY.check_result(instance, res)
        if bad:
            problems.append(f"{name}: " + "; ".join(map(str, bad[:3])))
    values = [r.objective for r in exact.values() if r.status == Status.OPTIMAL]
    optimum = min(values) if values else None
    if values and max(values) - min(values) > RTOL * max(1.0, abs(min(values))):
        problems.append("exact models disagree: " + ", ".join(f"{n}={r.objective}" for n, r in exact.items()))
    algos: dict[str, Any] = {}
    if algorithms:
        for name, spec in sorted(registered("hetero").items()):
            res = spec(instance, seed=0)
            algos[name] = res
            bad = FAMILY.check_result(instance, res)
            if bad:
                problems.append(f"algorithm {name}: " + "; ".join(map(str, bad[:3])))
            if res.status != Status.FEASIBLE and optimum is not None:
                problems.append(f"algorithm {name}: status {res.status.value} (rejected "
                                f"{res.extra.get('rejected')}) on an instance with an optimal schedule")
            if res.status == Status.FEASIBLE and optimum is not None and res.objective < optimum - RTOL * optimum:
                problems.append(f"algorithm {name}: objective {res.objective} below the optimum {optimum}")
    return Agreement(optimum, exact, algos, problems)
