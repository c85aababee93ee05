"""Where the CLI and the test suites find the families and their exact models.

Families are imported by name, lazily, so that ``edgeopt.core`` never imports
a family and a family that is not written yet is reported as such instead of
breaking the others. Exact models live in ``formulations.<family>`` and expose
``METHODS: dict[str, Callable[..., Result]]`` with the signature
``solve(instance, *, time_limit: float = 60.0, **options) -> Result``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from edgeopt.core import FamilySpec, InputError, Result, registered
from edgeopt.core.jsonio import read_json
from edgeopt.core.registry import set_exact_methods_provider

#: Every family of the project, in the order of the README's table.
FAMILY_NAMES = ("edgecloud", "hetero", "tapfinger", "preemptive", "okita")


def _is_missing(exc: ModuleNotFoundError, module: str) -> bool:
    return exc.name is not None and module.startswith(exc.name)


def get_family(name: str) -> FamilySpec:
    """The `FamilySpec` of family ``name``; importing it registers its algorithms."""
    if not isinstance(name, str):
        raise TypeError(f"family: expected a family name (str), got {type(name).__name__}")
    if name not in FAMILY_NAMES:
        import difflib

        close = difflib.get_close_matches(name, FAMILY_NAMES, n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise InputError("family", f"unknown family {name!r}{hint} (known: {', '.join(FAMILY_NAMES)})")
    module = f"edgeopt.{name}"
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if _is_missing(exc, module):
            raise InputError("family", f"family {name!r} is not implemented yet") from None
        raise
    from edgeopt.plugins import load_plugins

    load_plugins()  # third-party algorithms (entry point group edgeopt.algorithms), once
    return mod.FAMILY


def available_families() -> list[FamilySpec]:
    """The families that are implemented, in table order."""
    out = []
    for name in FAMILY_NAMES:
        try:
            out.append(get_family(name))
        except InputError:
            continue
    return out


def algorithms(name: str) -> dict[str, Any]:
    """Registered algorithms of a family (imports the family)."""
    get_family(name)
    return registered(name)


def solve_methods(name: str) -> dict[str, Callable[..., Result]]:
    """Exact models of a family, ``{method: solve}``; empty when none is written yet."""
    get_family(name)
    module = f"formulations.{name}"
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if _is_missing(exc, module):
            return {}
        raise
    return dict(getattr(mod, "METHODS", {}))


# The core checks that an ``optimal`` claim comes from one of these (it cannot import formulations itself).
set_exact_methods_provider(lambda name: list(solve_methods(name)))


def load_instance(path: str) -> tuple[FamilySpec, Any]:
    """Read an instance file, find its family from its ``family`` field, and validate it.

    A file that is not what it says gets one line instead of a page of schema errors: a result
    file ("this is a result file"), or the data of another family ("this is a FAMILY file").
    """
    data = read_json(path, what="instance")
    if not isinstance(data, dict):
        raise InputError("instance", "an instance file must hold a JSON object")
    if {"algorithm", "status", "schedule"} <= set(data):
        raise InputError("instance", f"{path}: this is a result file, not an instance")
    name = data.get("family")
    if not isinstance(name, str):
        other = family_of_data(data)
        hint = f" (this is {_a(other)} file by its fields)" if other else ""
        raise InputError("instance.family", f"missing or not a string{hint}")
    spec = get_family(name)
    try:
        return spec, spec.parse_instance(data)
    except InputError:
        other = family_of_data(data, exclude=name)
        if other is not None:
            raise InputError("instance.family", f"{path}: this is {_a(other)} file, but its family field "
                                                f"says {name!r}") from None
        raise


def family_of_data(data: dict[str, Any], *, exclude: str | None = None) -> str | None:
    """The family whose instance model ``data`` fits (its ``family`` field aside), if exactly one does.

    Only families whose model has every key of ``data`` and whose required fields are all there
    are tried, so a damaged file of the right family is never mistaken for another one.
    """
    keys = set(data) - {"family"}
    fits = []
    for spec in available_families():
        fields = spec.instance_type.model_fields
        required = {n for n, f in fields.items() if f.is_required()}
        if spec.name == exclude or not (keys <= set(fields) and required <= keys):
            continue
        try:
            spec.parse_instance({**data, "family": spec.name})
        except InputError:
            continue
        fits.append(spec.name)
    return fits[0] if len(fits) == 1 else None


def _a(name: str) -> str:
    """``a hetero``, ``an okita``."""
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"
