"""Algorithms from other packages, found through the ``edgeopt.algorithms`` entry point group.

A third-party package declares, in its ``pyproject.toml``::

    [project.entry-points."edgeopt.algorithms"]
    my_greedy = "my_package.algorithms"

Loading the entry point imports ``my_package.algorithms``, whose ``@register``
decorators add its algorithms to the registry; when the entry point names a
callable instead (``"my_package.algorithms:setup"``) it is called with no
argument after the import, so it may register there. edgeopt loads every
plugin once, the first time a family is asked for (`edgeopt.families.get_family`),
i.e. at the start of every CLI command and API call. A plugin that fails to
load is reported with a warning naming it and skipped: one broken package
must not break edgeopt.
"""

from __future__ import annotations

import warnings
from importlib.metadata import EntryPoint, entry_points

GROUP = "edgeopt.algorithms"

_loaded: dict[str, str] = {}  # entry point name -> "ok" or the error
_started = False


def discovered() -> list[EntryPoint]:
    """Every entry point of the group, in name order."""
    return sorted(entry_points(group=GROUP), key=lambda ep: ep.name)


def load_plugins(*, force: bool = False) -> dict[str, str]:
    """Load every plugin once (again with ``force``); returns ``{name: "ok" | error}``."""
    global _started
    if _started and not force:
        return dict(_loaded)
    _started = True  # set first: a plugin that asks for a family while loading must not recurse
    if force:
        _loaded.clear()
    for ep in discovered():
        try:
            obj = ep.load()
            if callable(obj):
                obj()
            _loaded[ep.name] = "ok"
        except Exception as exc:  # noqa: BLE001 - any failure of foreign code is reported and skipped
            _loaded[ep.name] = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"edgeopt plugin {ep.name!r} ({ep.value}) failed to load: {_loaded[ep.name]}",
                          stacklevel=2)
    return dict(_loaded)
