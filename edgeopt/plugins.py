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

A single file reaches the command line without packaging: ``edgeopt run ALG inst.json --plugin
my_algos.py`` executes the file as a module of its own (`load_plugin_file`), so its decorators
register. Unlike an entry point, a file named by the user must load: one that raises or registers
nothing is an `InputError` (exit 2). `edgeopt.sweep.run_sweep` ships the files' text to its Dask
workers, which load them the same way.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import re
import stat
import sys
import threading
import types
import warnings
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

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


# ---- plugin files (``--plugin FILE.py``) -----------------------------------------------------------

#: Most plugin files one command loads: each is a module executed in this process (and on every Dask
#: worker of a sweep), so a shell glob that matched a whole directory is refused rather than run.
MAX_PLUGIN_FILES = 16
#: Largest plugin file read, in bytes: an algorithm is a page of code; a larger ``.py`` is more likely a
#: generated or wrong file, and a sweep ships every plugin's text to each of its workers.
MAX_PLUGIN_BYTES = 1 << 20


@dataclasses.dataclass(frozen=True)
class PluginFile:
    """A plugin file read by the driver: what a Dask worker needs to load the same algorithms without
    seeing the driver's disk (the text travels with the sweep's tasks).

    Attributes:
        path: the file as given (for messages, and as the filename of its tracebacks).
        module: the unique module name it is executed as (the same on the driver and on every worker, so
            that the registry's "registered again" check sees one source).
        source: its text.
        sha256: of the text: a worker executes each (module, text) once.
        registered: ``family/name`` of each algorithm it registered (on the driver).
        replaced: one line per algorithm it registered under a name that was already taken.
    """

    path: str
    module: str
    source: str
    sha256: str
    registered: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()


#: module name -> sha256 of the text executed as that module in this process
_FILES: dict[str, str] = {}
#: module name -> the plugin file it came from (to name it when another plugin replaces its algorithm)
_FILE_PATHS: dict[str, str] = {}
_LOCK = threading.RLock()


def _module_name(path: Path) -> str:
    """A module name unique to ``path`` that never starts with ``edgeopt.`` (those count as built-in, and
    built-in algorithms are not validated on every run) nor shadows an importable module."""
    stem = re.sub(r"\W", "_", path.stem) or "plugin"
    digest = hashlib.sha256(os.fsencode(os.path.abspath(path))).hexdigest()[:12]
    return f"_edgeopt_plugin_{stem}_{digest}"


def read_plugin_file(path: str | os.PathLike[str]) -> PluginFile:
    """The text of plugin file ``path``, checked before it is read: a ``.py`` regular file of at most
    `MAX_PLUGIN_BYTES` bytes (InputError naming ``plugin`` otherwise; a FIFO or device is never opened)."""
    from edgeopt.core.errors import InputError
    from edgeopt.core.jsonio import read_bytes

    text = os.fspath(path)
    p = Path(text)
    if p.suffix != ".py":
        raise InputError("plugin", f"{text}: expected a Python file ending in .py")
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError("plugin", f"file not found: {text}") from None
    except OSError as exc:
        raise InputError("plugin", f"cannot read {text}: {exc.strerror or type(exc).__name__}") from None
    if stat.S_ISREG(st.st_mode) and st.st_size > MAX_PLUGIN_BYTES:
        raise InputError("plugin", f"{text} is {st.st_size:,} bytes, above the {MAX_PLUGIN_BYTES:,}-byte cap "
                                   "of a plugin file")
    data = read_bytes(p, what="plugin", max_bytes=MAX_PLUGIN_BYTES)  # refuses a directory, FIFO or device
    try:
        source = importlib.util.decode_source(data)  # honours a coding cookie, as an import would
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise InputError(f"plugin {text}", f"{type(exc).__name__}: {_first_line(exc)}") from None
    return PluginFile(text, _module_name(p), source, hashlib.sha256(data).hexdigest())


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else "")[:300]


_AGAIN = re.compile(r"algorithm (\w+)/(.+) registered again")


def snapshot() -> dict[tuple[str, str], Any]:
    """Every registered algorithm, ``{(family, name): spec}``: two snapshots tell what a file registered.

    It reads the registry's table directly: a helper in `edgeopt.core.registry` would change that file,
    whose hash decides whether ``edgeopt algorithms`` may use its generated listing (`edgeopt.catalog`)."""
    from edgeopt.core import registry

    return {(family, name): spec for family, table in registry._REGISTRY.items() for name, spec in table.items()}


def _builtin(spec: Any) -> bool:
    module = getattr(spec.fn, "__module__", "") or ""
    return module == "edgeopt" or module.startswith("edgeopt.")


def _owner(spec: Any) -> str:
    module = getattr(spec.fn, "__module__", "") or ""
    if _builtin(spec):
        return "edgeopt's built-in one"
    if module in _FILE_PATHS:
        return f"the one from plugin {_FILE_PATHS[module]}"
    return f"the one from module {module}"


def load_plugin_file(plugin: str | os.PathLike[str] | PluginFile) -> PluginFile:
    """Execute a plugin file as its own module, so that its ``@api.register_algorithm`` decorators run.

    Returns the file with what it registered. A file already executed in this process with the same
    text is not executed again (a sweep's driver and workers load each plugin once). A file that
    raises while it runs, or registers no algorithm, is an InputError naming ``plugin FILE`` (its
    module is forgotten). An algorithm registered under a name that is taken replaces the earlier
    one, as the registry does for every registration; ``replaced`` says which, and whose it was.
    """

    pf = plugin if isinstance(plugin, PluginFile) else read_plugin_file(plugin)
    with _LOCK:  # a Dask worker with several threads starts several points at once
        return _execute(pf)


def _execute(pf: PluginFile) -> PluginFile:
    from edgeopt.core.errors import InputError
    from edgeopt.core.registry import registered

    if _FILES.get(pf.module) == pf.sha256 and pf.module in sys.modules:
        return pf
    load_plugins()  # the packages' algorithms first, so that a file replacing one of them says so
    before = snapshot()
    replaced: list[str] = []
    show = warnings.showwarning

    def note(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        # The registry warns just before it replaces an algorithm: the old one is still there to be named.
        again = _AGAIN.match(str(message))
        if again is None:
            show(message, category, filename, lineno, file, line)
            return
        family, name = again.groups()
        old = registered(family).get(name)
        replaced.append(f"{family}/{name} replaces {_owner(old) if old is not None else 'an earlier one'}")

    module = types.ModuleType(pf.module)
    module.__file__ = pf.path
    sys.modules[pf.module] = module  # dataclasses and pickling look the module up while it runs
    try:
        code = compile(pf.source, pf.path, "exec")
        with warnings.catch_warnings():
            warnings.filterwarnings("always", message=_AGAIN.pattern)
            warnings.showwarning = note
            exec(code, module.__dict__)  # noqa: S102 - running the file is what --plugin asks for
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a user's file: reported as one line
        sys.modules.pop(pf.module, None)
        _FILES.pop(pf.module, None)
        raise InputError(f"plugin {pf.path}", f"{type(exc).__name__}: {_first_line(exc)}") from None
    # what changed, less the built-in algorithms of a family the file imported
    new = [key for key, spec in snapshot().items() if before.get(key) is not spec and not _builtin(spec)]
    if not new:
        sys.modules.pop(pf.module, None)
        raise InputError(f"plugin {pf.path}", "registers no algorithm (decorate a function with "
                                              "@edgeopt.api.register_algorithm(FAMILY, NAME))")
    _FILES[pf.module] = pf.sha256
    _FILE_PATHS[pf.module] = pf.path
    return dataclasses.replace(pf, registered=tuple(f"{f}/{n}" for f, n in new), replaced=tuple(replaced))


def load_plugin_files(plugins: Sequence[str | os.PathLike[str] | PluginFile]) -> list[PluginFile]:
    """`load_plugin_file` for each of at most `MAX_PLUGIN_FILES` files, in order; a file named twice
    (by the same absolute path) is loaded once."""
    from edgeopt.core.errors import InputError

    if len(plugins) > MAX_PLUGIN_FILES:
        raise InputError("plugin", f"{len(plugins)} plugin files, at most {MAX_PLUGIN_FILES}")
    out: list[PluginFile] = []
    seen: set[str] = set()
    for plugin in plugins:
        pf = load_plugin_file(plugin)
        if pf.module not in seen:
            seen.add(pf.module)
            out.append(pf)
    return out
