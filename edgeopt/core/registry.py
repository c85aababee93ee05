"""One registry of algorithms per family.

A family registers each of its algorithms (the paper's online algorithm and
its baselines) with `register`. Every algorithm has one signature,
``fn(instance, *, seed: int = 0, **params) -> Result``, so the CLI, the
conformance tests and the benchmarks treat them alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal

from edgeopt.core.errors import InputError
from edgeopt.core.result import Result

Kind = Literal["online", "baseline", "offline"]
AlgorithmFn = Callable[..., Result]


@dataclasses.dataclass(frozen=True)
class AlgorithmSpec:
    """A registered algorithm.

    Attributes:
        family: the family it schedules.
        name: its name on the command line (``online``, ``fifo``...).
        kind: ``online`` (the paper's algorithm), ``baseline`` (compared against
            in the paper) or ``offline`` (sees all jobs; a heuristic reference).
        fn: ``fn(instance, *, seed=0, **params) -> Result``.
        summary: one line for ``edgeopt algorithms``.
        randomized: whether ``seed`` changes its output.
        relaxed: whether it schedules a relaxation of the family's model (e.g.
            a preemptive baseline of a non-preemptive problem). Its objective
            may then lie below the exact optimum, so no ">= optimum" check
            applies to it; its schedules are still validated (under the
            relaxation's own rules).
    """

    family: str
    name: str
    kind: Kind
    fn: AlgorithmFn
    summary: str
    randomized: bool = False
    relaxed: bool = False

    def __call__(self, instance: Any, *, seed: int = 0, **params: Any) -> Result:
        return self.fn(instance, seed=seed, **params)


_REGISTRY: dict[str, dict[str, AlgorithmSpec]] = {}


def register(
    family: str,
    name: str,
    *,
    kind: Kind,
    summary: str,
    randomized: bool = False,
    relaxed: bool = False,
) -> Callable[[AlgorithmFn], AlgorithmFn]:
    """Decorator registering ``fn`` as algorithm ``name`` of ``family``."""

    def deco(fn: AlgorithmFn) -> AlgorithmFn:
        table = _REGISTRY.setdefault(family, {})
        if name in table and table[name].fn is not fn:
            raise ValueError(f"algorithm {family}/{name} registered twice")
        table[name] = AlgorithmSpec(family, name, kind, fn, summary, randomized, relaxed)
        return fn

    return deco


def registered(family: str) -> dict[str, AlgorithmSpec]:
    """The algorithms registered so far for ``family`` (import the family first)."""
    return dict(_REGISTRY.get(family, {}))


def lookup(family: str, name: str) -> AlgorithmSpec:
    table = _REGISTRY.get(family, {})
    if name not in table:
        known = ", ".join(sorted(table)) or "none"
        raise InputError("algorithm", f"unknown algorithm {name!r} for family {family!r} (known: {known})")
    return table[name]
