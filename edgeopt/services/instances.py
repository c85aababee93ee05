"""Instances and results as values and files: generate (every count checked), load, save, schemas.

Part of the services layer; `edgeopt.api` re-exports the public names.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pydantic

from edgeopt import families as _families
from edgeopt.core import InputError, Result, Status, jsonio
from edgeopt.core.family import input_error
from edgeopt.services.comparison import Comparison
from edgeopt.services.lookup import _check_count, _check_seed, _type_name, check_choice, family


def generate(
    name: str,
    preset: str | None = None,
    *,
    seed: int = 0,
    jobs: int | None = None,
    servers: int | None = None,
    horizon: int | None = None,
    **options: Any,
) -> Any:
    """A seeded instance of family ``name`` (preset defaults to the family's first, ``small``).

    ``options`` are the family generator's own keyword arguments (`generator_options`), e.g.
    ``clusters=6, arrival_rate=4`` for tapfinger or ``cost="piecewise"`` for okita; a string value
    (as the CLI passes it) is converted to the argument's type. ``jobs``, ``servers`` and ``horizon``
    are counts >= 1 within the family's caps; a bool is no count (nor a seed, nor a numeric option):
    InputError naming it.
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a family name (str), got {_type_name(name)}")
    if preset is not None and not isinstance(preset, str):
        raise TypeError(f"preset: expected a preset name (str) or None, got {_type_name(preset)}")
    _check_seed(seed)
    spec = family(name)
    preset = preset or spec.presets[0]
    check_choice("preset", preset, list(spec.presets), f"{name} preset")
    jobs, servers, horizon = (_check_count(f, v) for f, v in (("jobs", jobs), ("servers", servers),
                                                              ("horizon", horizon)))
    if seed < 0:
        raise InputError("seed", f"must be >= 0, got {seed}")
    known = generator_options(name)
    for key, value in list(options.items()):
        check_choice(key, key, sorted(known), f"{name} generator option")
        options[key] = _convert_option(key, value, known[key])
    spec.check_limits(jobs=jobs, servers=servers, horizon=horizon, **options)  # before anything is drawn
    try:
        return spec.generate(preset, seed=seed, jobs=jobs, servers=servers, horizon=horizon, **options)
    except pydantic.ValidationError as exc:  # a combination of options the instance model refuses
        raise input_error(exc, None, root="generate") from None


#: The generator arguments every family shares (``generate``'s own parameters).
_COMMON_GENERATOR_ARGS = ("preset", "seed", "jobs", "servers", "horizon")


def generator_options(name: str) -> dict[str, Any]:
    """Family ``name``'s own generator options: keyword argument -> its type (from the annotations)."""
    import typing

    fn = family(name).generate
    try:
        hints = typing.get_type_hints(fn)
    except (NameError, TypeError):  # an annotation that does not resolve: fall back to the defaults' types
        hints = {}
    out = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.KEYWORD_ONLY and p.name not in _COMMON_GENERATOR_ARGS:
            out[p.name] = hints.get(p.name, type(p.default) if p.default is not None else str)
    return out


def _convert_option(key: str, value: Any, hint: Any) -> Any:
    """``value`` converted to ``hint`` (int, float, bool, a Literal's choices, or str); InputError naming ``key``."""
    import typing

    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is typing.Literal:
        choices = [str(a) for a in args]
        check_choice(key, str(value), choices, "value")
        return str(value)
    base = next((a for a in args if a in (bool, int, float, str)), args[0] if len(args) == 1 else hint)  # X | None -> X
    if typing.get_origin(base) is typing.Literal:
        return _convert_option(key, value, base)
    if base in (int, float) and isinstance(value, bool):  # True is an int to Python, never a count or rate
        raise InputError(key, f"expected {base.__name__}, got bool {value!r}: booleans are not numbers")
    if not isinstance(value, str):
        return value
    try:
        if base is bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError(value)
            return value.lower() in ("true", "1")
        if base is int:
            return int(value)
        if base is float:
            return float(value)
    except ValueError:
        raise InputError(key, f"expected {base.__name__}, got {value!r}") from None
    return value


def load(path: str | Path) -> Any:
    """Read and validate an instance file (``.json`` or ``.json.gz``); returns the instance.

    Its family is ``instance.family`` (`family_of` gives the `FamilySpec`).
    """
    return _families.load_instance(str(path))[1]


def load_result(path: str | Path) -> Result:
    """Read a result file (``.json`` or ``.json.gz``) written by `save` or ``edgeopt run -o``."""
    return Result.load(str(path))


def save(obj: Any, path: str | Path) -> None:
    """Write an instance, a `Result` or a `Comparison` as JSON, atomically.

    Results are written compact (no indentation: paper-size schedules are
    large); instances and comparisons indented, to be read by people. A path
    ending in ``.gz`` is gzip-compressed.
    """
    if isinstance(obj, Result):
        obj.save(str(path))
    elif isinstance(obj, Comparison):
        jsonio.write_json(path, obj.to_dict())
    elif hasattr(obj, "model_dump") and isinstance(getattr(obj, "family", None), str):
        jsonio.write_json(path, obj.model_dump(mode="json"))
    else:
        raise InputError("obj", f"cannot save a {type(obj).__name__} (an instance, Result or Comparison)")


def result_schema(family_name: str | None = None) -> dict[str, Any]:
    """JSON Schema of result files; with ``family_name`` its ``schedule`` is that family's schedule schema."""
    import pydantic

    schema = pydantic.TypeAdapter(Result).json_schema()
    schema["title"] = "edgeopt result"
    schema["description"] = (Result.__doc__ or "").strip().splitlines()[0]
    props = schema.get("properties", {})
    if "status" in props:
        props["status"] = {"title": "Status", "enum": [s.value for s in Status], "type": "string"}
    if family_name is not None:
        sched = family(family_name).schedule_type.model_json_schema()
        defs = sched.pop("$defs", {})
        schema.setdefault("$defs", {}).update(defs)
        props["schedule"] = {"anyOf": [sched, {"type": "null"}], "title": f"{family_name} schedule"}
        schema["title"] = f"edgeopt {family_name} result"
    return schema


