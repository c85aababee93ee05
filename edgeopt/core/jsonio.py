"""Canonical JSON: hashing, byte-identical output and all-or-nothing writes.

A path ending in ``.gz`` is written and read gzip-compressed (e.g. ``result.json.gz``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from edgeopt.core.errors import InputError


def _default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _clean(obj: Any) -> Any:
    """Replace non-finite floats by None so that the output is strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _is_plain(obj: Any) -> bool:
    """Whether ``obj`` is JSON data already: str-keyed dicts, lists, str, int, bool, None, finite floats.

    Such data dumps to the canonical bytes directly; anything else (numpy
    values, tuples, int keys, NaN) takes the converting path of `dumps`.
    """
    stack = [obj]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is dict:
            for k in x:
                if type(k) is not str:
                    return False
            stack.extend(x.values())
        elif t is list:
            stack.extend(x)
        elif t is float:
            if not math.isfinite(x):
                return False
        elif not (t is str or t is int or t is bool or x is None):
            return False
    return True


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """Deterministic JSON text (sorted keys), the same bytes for the same data."""
    if not _is_plain(obj):  # convert numpy values, int keys, tuples and NaN first (slower)
        obj = _clean(json.loads(json.dumps(obj, default=_default)))
    return json.dumps(obj, sort_keys=True, indent=indent, allow_nan=False) + "\n"


def sha256_of(obj: Any) -> str:
    """SHA-256 of the canonical compact JSON of ``obj``."""
    return hashlib.sha256(dumps(obj, indent=None).encode()).hexdigest()


def write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> None:
    """Write ``obj`` as canonical JSON atomically: the file is whole or absent.

    ``indent=None`` writes compact JSON (results: no whitespace); a path ending
    in ``.gz`` is gzip-compressed (with a fixed mtime, so equal data give equal bytes).
    """
    text = dumps(obj, indent=indent)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        if target.suffix == ".gz":
            with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
                fh.write(text.encode())
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
        # mkstemp creates the file 0600; give it the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: str | os.PathLike[str], *, what: str = "file") -> Any:
    """Read a JSON file; any failure becomes an `InputError` naming the file."""
    p = Path(path)
    try:
        text = gzip.decompress(p.read_bytes()).decode() if p.suffix == ".gz" else p.read_text()
    except FileNotFoundError:
        raise InputError(what, f"file not found: {p}") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise InputError(what, f"cannot read {p}: {exc.__class__.__name__}") from None
    return loads(text, what=what, name=str(p))


#: Deepest nesting of arrays/objects a file may have: every family's data is a few levels deep,
#: and Python's JSON decoder and pydantic recurse once per level (a RecursionError past ~1000).
MAX_DEPTH = 64


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _depth_ok(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether no array/object in ``text`` nests deeper than ``limit`` (brackets inside strings ignored)."""
    raw = np.frombuffer(_STRING.sub("", text).encode(), dtype=np.uint8)
    step = np.isin(raw, (ord("["), ord("{"))).astype(np.int64) - np.isin(raw, (ord("]"), ord("}")))
    return raw.size == 0 or int(np.cumsum(step).max()) <= limit


def loads(text: str, *, what: str = "file", name: str = "input") -> Any:
    """Parse JSON text; malformed or too deeply nested text becomes an `InputError` named ``what``."""
    if text.count("[") + text.count("{") > MAX_DEPTH and not _depth_ok(text):
        raise InputError(what, f"{name} nests arrays/objects deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(what, f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    except (RecursionError, ValueError) as exc:  # ValueError: e.g. an integer with too many digits
        raise InputError(what, f"{name} cannot be decoded: {exc.__class__.__name__}: {exc}"[:300]) from None


# -- paths into a JSON tree (tests, the CLI probe, scripts that edit an instance file) ------------

JsonPath = tuple[str | int, ...]


def tree_paths(node: Any, prefix: JsonPath = ()) -> Iterator[tuple[JsonPath, Any]]:
    """Every ``(path, value)`` of a JSON tree, depth first, the root (path ``()``) included."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from tree_paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from tree_paths(v, (*prefix, i))


def number_paths(node: Any) -> list[JsonPath]:
    """Paths of the numbers of a JSON tree (booleans are not numbers here), depth first."""
    return [p for p, v in tree_paths(node) if isinstance(v, (int, float)) and not isinstance(v, bool)]


def get_path(node: Any, path: JsonPath) -> Any:
    """The value at ``path``."""
    for key in path:
        node = node[key]
    return node


def set_path(node: Any, path: JsonPath, value: Any) -> None:
    """Replace the value at ``path`` (not the root) in place."""
    get_path(node, path[:-1])[path[-1]] = value
