"""One registry of algorithms per family, with declared parameters.

A family registers each of its algorithms (the paper's online algorithm and
its baselines) with `register`. Every algorithm has one signature,
``fn(instance, *, seed: int = 0, **params) -> Result``, so the CLI, the
conformance tests and the benchmarks treat them alike.

Parameters are declared once, by the function's own keyword-only arguments:
their annotation gives the type, their default the default, and the line
``name: meaning`` under ``Args:`` in the docstring (or ``register(...,
params={"name": "meaning"})``) the one-line meaning that ``edgeopt
algorithms`` prints. `AlgorithmSpec.check_params` converts and checks the
``key=value`` strings of ``edgeopt run --param``.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import types
import typing
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Literal

from edgeopt.core.errors import InputError
from edgeopt.core.result import Result

Kind = Literal["online", "baseline", "offline"]
AlgorithmFn = Callable[..., Result]


@dataclasses.dataclass(frozen=True)
class Param:
    """A declared parameter of an algorithm.

    Attributes:
        name: keyword name.
        type: ``int``, ``float``, ``bool`` or ``str`` (after removing ``| None``).
        default: the default value (None allowed: "chosen by the algorithm").
        help: one-line meaning.
        choices: allowed values, for ``Literal[...]`` annotations.
        optional: whether ``None`` is an accepted value.
        range: bounds of a number as comparisons, e.g. ``"> 0"`` or ``">= 0, <= 1"`` (see `check_range`).
    """

    name: str
    type: type
    default: Any
    help: str = ""
    choices: tuple[Any, ...] | None = None
    optional: bool = False
    range: str | None = None

    def convert(self, value: Any, *, field: str | None = None) -> Any:
        """``value`` (a string from the CLI or a Python value) as this parameter's type."""
        field = field or f"param.{self.name}"
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null")):
            if self.optional:
                return None
            raise InputError(field, "must not be none")
        try:
            if self.type is bool:
                if isinstance(value, bool):
                    out: Any = value
                elif str(value).lower() in ("1", "true", "yes", "on"):
                    out = True
                elif str(value).lower() in ("0", "false", "no", "off"):
                    out = False
                else:
                    raise ValueError(value)
            elif self.type is int:
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError(value)
                out = int(value) if not isinstance(value, str) else int(value.strip())
            elif self.type is float:
                out = float(value)
                if not math.isfinite(out):
                    raise ValueError(value)
            else:
                out = self.type(value)
        except (TypeError, ValueError):
            raise InputError(field, f"must be a {self.type.__name__}, got {value!r}") from None
        if self.choices is not None and out not in self.choices:
            raise InputError(field, f"must be one of {list(self.choices)}, got {out!r}")
        if self.range is not None and not check_range(out, self.range):
            raise InputError(field, f"must be {self.range}, got {out!r}")
        return out

    def describe(self) -> dict[str, Any]:
        d = {"name": self.name, "type": self.type.__name__, "default": self.default, "help": self.help}
        if self.choices is not None:
            d["choices"] = list(self.choices)
        if self.range is not None:
            d["range"] = self.range
        return d


_COMPARE: dict[str, Callable[[float, float], bool]] = {
    ">": lambda x, b: x > b, ">=": lambda x, b: x >= b, "<": lambda x, b: x < b, "<=": lambda x, b: x <= b,
}
_BOUND = re.compile(r"^\s*(>=|<=|>|<)\s*(-?[0-9.]+(?:e-?[0-9]+)?)\s*$")


def parse_range(text: str) -> list[tuple[str, float]]:
    """``">= 0, <= 1"`` -> ``[(">=", 0.0), ("<=", 1.0)]`` (ValueError on anything else)."""
    out = []
    for part in text.split(","):
        m = _BOUND.match(part)
        if not m:
            raise ValueError(f"bad range {text!r}: write comparisons such as '> 0' or '>= 0, <= 1'")
        out.append((m.group(1), float(m.group(2))))
    return out


def check_range(value: Any, text: str) -> bool:
    """Whether the number ``value`` satisfies every comparison of ``text`` (None always does)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    return all(_COMPARE[op](value, bound) for op, bound in parse_range(text))


@dataclasses.dataclass(frozen=True)
class AlgorithmSpec:
    """A registered algorithm.

    Attributes:
        family: the family it schedules.
        name: its name on the command line (``online``, ``fifo``...).
        kind: ``online`` (jobs revealed at arrival: the paper's algorithm or a variant of it),
            ``baseline`` (compared against in the paper) or ``offline`` (sees all jobs; a heuristic
            reference).
        fn: ``fn(instance, *, seed=0, **params) -> Result``.
        summary: one line for ``edgeopt algorithms``.
        randomized: whether ``seed`` changes its output.
        relaxed: whether it schedules a relaxation of the family's model (e.g.
            a preemptive baseline of a non-preemptive problem). Its objective
            may then lie below the exact optimum, so no ">= optimum" check
            applies to it; its schedules are still validated (under the
            relaxation's own rules).
        params: its declared parameters (from ``fn``'s keyword-only arguments).
        paper: whether it is the family paper's own algorithm (charts mark only these as the paper's:
            an ``online`` variant of ours, such as hetero's ``online_every_slot``, is not).
    """

    family: str
    name: str
    kind: Kind
    fn: AlgorithmFn
    summary: str
    randomized: bool = False
    relaxed: bool = False
    params: tuple[Param, ...] = ()
    paper: bool = False

    def __call__(self, instance: Any, *, seed: int = 0, **params: Any) -> Result:
        return self.fn(instance, seed=seed, **self.check_params(params))

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise InputError(f"param.{name}", f"{self.family}/{self.name} has no parameter {name!r} (known: {known})")

    def check_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Convert and check ``params`` against the declared parameters (InputError naming the key)."""
        return {k: self.param(k).convert(v) for k, v in params.items()}

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}


_REGISTRY: dict[str, dict[str, AlgorithmSpec]] = {}
#: family -> {algorithm: why it is not registered here} (e.g. an optional extra that is not installed)
_UNAVAILABLE: dict[str, dict[str, str]] = {}

_ARGS_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.+)$")


def _doc_args(fn: Callable[..., Any]) -> dict[str, str]:
    """``{name: first line of meaning}`` from a Google-style ``Args:`` section."""
    doc = inspect.getdoc(fn) or ""
    out: dict[str, str] = {}
    in_args = False
    for line in doc.splitlines():
        if line.strip() in ("Args:", "Parameters:"):
            in_args = True
            continue
        if in_args:
            if line and not line.startswith(" "):
                in_args = False
                continue
            m = _ARGS_LINE.match("  " + line.lstrip()) if line.startswith("    ") and not line.startswith(
                "     ") else None
            if m:
                out[m.group(1)] = m.group(2).strip()
    return out


def _base_type(annotation: Any) -> tuple[type, bool, tuple[Any, ...] | None]:
    """(scalar type, accepts None, Literal choices) of an annotation."""
    optional = False
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        optional = len(rest) < len(args)
        annotation = rest[0] if len(rest) == 1 else str
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return type(args[0]), optional, tuple(args)
    if annotation in (int, float, bool, str):
        return annotation, optional, None
    return str, optional, None


def declared_params(fn: Callable[..., Any], help: Mapping[str, str] | None = None,
                    ranges: Mapping[str, str] | None = None) -> tuple[Param, ...]:
    """The parameters ``fn`` declares: its keyword-only arguments other than ``seed``; ``ranges`` gives
    the bounds of numeric ones (``{"F": "> 0"}``), checked when the registry converts a value."""
    try:
        hints = typing.get_type_hints(fn)
    except (NameError, TypeError):  # unresolvable annotations fall back to the default's type
        hints = {}
    docs = {**_doc_args(fn), **(help or {})}
    ranges = dict(ranges or {})
    names = [p.name for p in inspect.signature(fn).parameters.values()]
    for key, text in ranges.items():
        if key not in names:
            raise ValueError(f"range given for {key!r}, which {fn.__qualname__} does not take")
        parse_range(text)  # a malformed range is a bug of the registration: fail at import
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind != inspect.Parameter.KEYWORD_ONLY or p.name == "seed":
            continue
        default = None if p.default is inspect.Parameter.empty else p.default
        ann = hints.get(p.name, type(default) if default is not None else str)
        typ, optional, choices = _base_type(ann)
        out.append(Param(p.name, typ, default, docs.get(p.name, ""), choices, optional or default is None,
                         ranges.get(p.name)))
    return tuple(out)


def register(
    family: str,
    name: str,
    *,
    kind: Kind,
    summary: str,
    randomized: bool = False,
    relaxed: bool = False,
    params: Mapping[str, str] | None = None,
    ranges: Mapping[str, str] | None = None,
    paper: bool = False,
) -> Callable[[AlgorithmFn], AlgorithmFn]:
    """Decorator registering ``fn`` as algorithm ``name`` of ``family``.

    Registering a name again replaces the earlier algorithm with a warning,
    so a notebook cell that defines an algorithm can be re-run.

    Args:
        family: the family's name.
        name: the algorithm's name.
        kind: ``online``, ``baseline`` or ``offline``.
        summary: one line for ``edgeopt algorithms``.
        randomized: whether the seed changes the output.
        relaxed: whether it schedules a relaxation of the family's model.
        params: one-line meanings of parameters, where the docstring has none.
        ranges: bounds of numeric parameters as comparisons (``{"f1": "> 0"}``), checked before a run.
        paper: the family paper's own algorithm (`AlgorithmSpec.paper`).
    """

    def deco(fn: AlgorithmFn) -> AlgorithmFn:
        table = _REGISTRY.setdefault(family, {})
        old = table.get(name)
        same_source = old is not None and (old.fn.__module__, old.fn.__qualname__) == (
            fn.__module__, fn.__qualname__)
        if old is not None and old.fn is not fn and not same_source:
            warnings.warn(f"algorithm {family}/{name} registered again: the new one replaces it", stacklevel=2)
        table[name] = AlgorithmSpec(
            family, name, kind, fn, summary, randomized, relaxed, declared_params(fn, params, ranges), paper
        )
        return fn

    return deco


def mark_unavailable(family: str, name: str, reason: str) -> None:
    """Record that ``family``/``name`` exists but is not registered in this environment, and why
    (e.g. "needs the rl extra: pip install 'edgeopt[rl]'"), so an unknown-algorithm error can say so."""
    _UNAVAILABLE.setdefault(family, {})[name] = reason


def unavailable(family: str) -> dict[str, str]:
    """``{algorithm: reason}`` of the algorithms of ``family`` that exist but are not registered here."""
    return {k: v for k, v in _UNAVAILABLE.get(family, {}).items() if k not in _REGISTRY.get(family, {})}


def unregister(family: str, name: str) -> None:
    """Remove an algorithm (for tests and notebooks)."""
    _REGISTRY.get(family, {}).pop(name, None)


def registered(family: str) -> dict[str, AlgorithmSpec]:
    """The algorithms registered so far for ``family`` (import the family first)."""
    return dict(_REGISTRY.get(family, {}))


def lookup(family: str, name: str) -> AlgorithmSpec:
    table = _REGISTRY.get(family, {})
    if name not in table:
        if name in unavailable(family):
            raise InputError("algorithm", f"{family} algorithm {name!r} is not available: {unavailable(family)[name]}")
        known = ", ".join(sorted(table)) or "none"
        raise InputError("algorithm", f"unknown algorithm {name!r} for family {family!r} (known: {known})")
    return table[name]


#: Where the names of a family's exact methods come from: set by `edgeopt.families` (the exact models live
#: above the core, in ``formulations``, and the core imports nothing above it).
_EXACT_PROVIDER: Callable[[str], Any] | None = None


def set_exact_methods_provider(provider: Callable[[str], Any] | None) -> None:
    """Install ``provider(family) -> names of its exact methods`` (done once by `edgeopt.families`)."""
    global _EXACT_PROVIDER
    _EXACT_PROVIDER = provider


def exact_method_names(family: str) -> set[str] | None:
    """The names of ``family``'s exact methods (the only producers allowed to claim ``optimal``), or None
    when no provider is installed (the claim is then not checked)."""
    if _EXACT_PROVIDER is None:
        return None
    try:
        return {str(n) for n in _EXACT_PROVIDER(family)}
    except Exception:  # noqa: BLE001 - an unknown family has no exact method to vouch for a claim
        return None
