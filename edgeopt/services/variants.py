"""Algorithm variants: an algorithm with some of its declared parameters set, for parameter studies.

A variant is written ``name[key=value,key=value]`` (``online[F=64]``) on the command line and in
tables, or given to the API as a name, a ``(name, {key: value})`` pair or a `Variant`. A grid
``online.F=1,8,64`` stands for ``online[F=1]``, ``online[F=8]``, ``online[F=64]``; several grids
of one algorithm multiply. Every variant is checked against the algorithm's declared parameters
(name, type, range) before anything runs, and its label is the canonical text of the converted
values, so ``online[F=64]`` and ``("online", {"F": "64"})`` are the same row.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Iterable, Mapping
from typing import Any

from edgeopt.core import InputError
from edgeopt.services import lookup


@dataclasses.dataclass(frozen=True)
class Variant:
    """An algorithm name and the parameters it runs with (only those set; the rest take defaults)."""

    name: str
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def label(self) -> str:
        """``online`` or ``online[F=64,stretch=2.0]`` (parameters in the order given)."""
        if not self.params:
            return self.name
        return f"{self.name}[{','.join(f'{k}={_text(v)}' for k, v in self.params)}]"

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)

    def params_json(self, defaults: Mapping[str, Any]) -> str:
        """Every parameter the run used (defaults updated by this variant's), as sorted JSON."""
        return json.dumps({**defaults, **self.kwargs}, sort_keys=True, default=str)


def _text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))  # F=64, not F=64.0
    return str(value)


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside square brackets."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def parse_label(text: str, field: str = "algorithms") -> tuple[str, dict[str, str]]:
    """``"online[F=64,stretch=2]"`` -> ``("online", {"F": "64", "stretch": "2"})`` (values unconverted)."""
    text = text.strip()
    if "[" not in text:
        if "]" in text or not text:
            raise InputError(field, f"bad algorithm {text!r} (write name or name[key=value,...])")
        return text, {}
    name, _, rest = text.partition("[")
    if not rest.endswith("]") or not name.strip():
        raise InputError(field, f"bad variant {text!r} (write name[key=value,...])")
    params: dict[str, str] = {}
    for item in _split_top(rest[:-1]):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise InputError(field, f"bad parameter {item!r} in {text!r} (write key=value)")
        params[key.strip()] = value.strip()
    return name.strip(), params


def parse_list(text: str, field: str = "algorithms") -> list[tuple[str, dict[str, str]]]:
    """``"online[F=1],online[F=64],drf"`` -> one ``(name, params)`` per variant."""
    items = _split_top(text)
    if not items:
        raise InputError(field, f"expected a comma-separated list of algorithms, got {text!r}")
    return [parse_label(t, field) for t in items]


def parse_grid(grids: Iterable[str]) -> list[tuple[str, dict[str, str]]]:
    """``["online.F=1,8,64", "online.order=arrival,density"]`` -> the product, per algorithm, in order."""
    axes: dict[str, list[tuple[str, list[str]]]] = {}
    for text in grids:
        head, eq, values = text.partition("=")
        name, dot, key = head.strip().partition(".")
        vals = [v.strip() for v in values.split(",") if v.strip()]
        if not eq or not dot or not name or not key or not vals:
            raise InputError("grid", f"bad grid {text!r} (write algorithm.param=v1,v2,...)")
        axes.setdefault(name, []).append((key.strip(), vals))
    out = []
    for name, keyed in axes.items():
        for combo in itertools.product(*[vals for _, vals in keyed]):
            out.append((name, {k: v for (k, _), v in zip(keyed, combo)}))
    return out


def resolve(family: str, items: Any, field: str = "algorithms") -> list[Variant]:
    """Variants of ``family`` from names, ``name[k=v]`` labels, ``(name, {k: v})`` pairs or `Variant`s,
    each checked against the algorithm's declared parameters (InputError naming the first bad one).

    A single string is one algorithm (never its letters). Duplicate labels are refused: rows are keyed
    by label.
    """

    if isinstance(items, (str, Variant)) or (isinstance(items, tuple) and len(items) == 2
                                             and isinstance(items[0], str) and isinstance(items[1], Mapping)):
        items = [items]
    if not isinstance(items, Iterable) or isinstance(items, (bytes, Mapping)):
        raise TypeError(f"{field}: expected a list of algorithm names, (name, params) pairs or Variants, "
                        f"got {type(items).__name__}")
    items = list(items)
    if not items:
        raise InputError(field, "expected at least one algorithm, got an empty list")
    out: list[Variant] = []
    for item in items:
        if isinstance(item, Variant):
            name, raw = item.name, item.kwargs
        elif isinstance(item, str):
            name, raw = parse_label(item, field)
        elif (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str)
              and isinstance(item[1], Mapping)):
            name, raw = item[0], dict(item[1])
        else:
            raise TypeError(f"{field}: expected an algorithm name, a (name, params) pair or a Variant, "
                            f"got {item!r}")
        spec = lookup.check_algorithm(family, name)
        try:
            converted = spec.check_params(raw)
        except InputError as exc:
            raise InputError(exc.field, f"{exc.message} (in {field} {item!r})") from None
        out.append(Variant(name, tuple(converted.items())))
    labels = [v.label for v in out]
    dup = next((x for x in labels if labels.count(x) > 1), None)
    if dup is not None:
        raise InputError(field, f"{dup!r} is listed twice")
    return out
