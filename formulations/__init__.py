"""Exact models (Pyomo + HiGHS, OR-Tools CP-SAT) of the five papers' programs."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

#: Each family's exact methods by name, known without importing Pyomo or OR-Tools (``edgeopt algorithms``
#: lists them at start-up speed); tests/test_cli_startup.py checks it against every family's ``METHODS``.
METHOD_NAMES: dict[str, tuple[str, ...]] = {
    "edgecloud": ("milp", "cpsat"),
    "hetero": ("milp", "cpsat"),
    "tapfinger": ("milp", "cpsat"),
    "preemptive": ("milp", "cpsat"),
    "okita": ("milp", "cpsat"),
}


class LazyFunction:
    """``module.name``, imported on first use: a family's CP-SAT model is imported only when it is asked
    for, so a ``milp`` solve does not pay OR-Tools' import (0.3 s of CPU with the pandas it loads).

    Calling it calls the function. `load` imports it now: `edgeopt.api.solve` does so before its
    `Deadline` starts, so the time limit never interrupts an extension module's initialisation.
    """

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name
        self._fn: Callable[..., Any] | None = None

    def load(self) -> Callable[..., Any]:
        if self._fn is None:
            self._fn = getattr(importlib.import_module(self.module), self.name)
        return self._fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    @property
    def __signature__(self) -> Any:
        """The function's own signature, for `inspect.signature` (which options it takes, e.g. ``hint``)."""
        import inspect

        return inspect.signature(self.load())

    def __repr__(self) -> str:
        return f"LazyFunction({self.module}.{self.name})"


def table(family: str, name: str) -> dict[str, Any]:
    """``formulations.<family>.<name>`` (``METHODS``, ``SIZES``, ``LOWER_BOUNDS``...) as a dict; empty when the
    family has no package here or the package no such table. The one place that looks the tables up, for
    the formulations themselves and for the services above them."""
    try:
        mod = importlib.import_module(f"formulations.{family}")
    except ModuleNotFoundError as exc:
        if exc.name not in ("formulations", f"formulations.{family}"):
            raise  # a missing dependency of an existing package is a real error
        return {}
    return dict(getattr(mod, name, {}))


def loaded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself, imported now if it is a `LazyFunction`."""
    return fn.load() if isinstance(fn, LazyFunction) else fn


def lazy_attributes(package: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for ``package``: ``names`` maps an attribute to the submodule that
    defines it (an attribute named like its submodule is the submodule), imported on first access."""

    def __getattr__(attr: str) -> Any:
        if attr not in names:
            raise AttributeError(f"module {package!r} has no attribute {attr!r}")
        module = importlib.import_module(f"{package}.{names[attr]}")
        return module if attr == names[attr] else getattr(module, attr)

    return __getattr__
