"""The loaded families by name: each `FamilySpec` adds itself here when it is made.

Kept apart from `edgeopt.core.family` so that `edgeopt.core.result` can find a family's adapters by
name (`Result.to_frame`) without importing the module that defines `FamilySpec`, which imports
`Result` itself.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core.errors import InputError

_SPECS: dict[str, Any] = {}


def add_spec(spec: Any) -> None:
    """Make ``spec`` (a `FamilySpec`) findable by its name."""
    _SPECS[spec.name] = spec


def spec_named(name: str) -> Any:
    """The `FamilySpec` called ``name``, once its package is imported (InputError otherwise)."""
    if name not in _SPECS:
        raise InputError("family", f"family {name!r} is not loaded (import edgeopt.{name} or use edgeopt.api)")
    return _SPECS[name]
