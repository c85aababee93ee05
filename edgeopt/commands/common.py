"""What every command module shares: lazy names of the library, the consoles, option types and parsing.

The command modules (``edgeopt/commands/*.py``) and the entry point (`edgeopt.cli`) import from here,
never from each other upwards. Nothing here imports the library at start-up: ``edgeopt --version`` and
``--help`` stay fast (benchmarks/cli_startup.py), and the library is loaded by the first command that
uses a name below (`_Lazy`).
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console


class _Lazy:
    """A module (or one of its names) imported on first use, so that ``edgeopt --version``, ``--help``
    and commands that need no family start without importing the families, numpy, scipy or Pyomo
    (benchmarks/cli_startup.py measures it)."""

    def __init__(self, module: str, name: str | None = None) -> None:
        self._where = (module, name)

    def _target(self) -> Any:
        import importlib

        module, name = self._where
        mod = importlib.import_module(module)
        return mod if name is None else getattr(mod, name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._target(), attr)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)


api: Any = _Lazy("edgeopt.api")
InputError: Any = _Lazy("edgeopt.core.errors", "InputError")
Result: Any = _Lazy("edgeopt.core.result", "Result")
dumps: Any = _Lazy("edgeopt.core.jsonio", "dumps")
write_json: Any = _Lazy("edgeopt.core.jsonio", "write_json")
check_output_path: Any = _Lazy("edgeopt.core.jsonio", "check_output_path")
set_max_input_bytes: Any = _Lazy("edgeopt.core.jsonio", "set_max_input_bytes")
Table: Any = _Lazy("rich.table", "Table")


PRESET_HELP = "Generator preset; the family's first is the default (`edgeopt generate --help` lists them)."
METHOD_HELP = ("Exact model: milp (Pyomo + HiGHS) or cpsat (OR-Tools CP-SAT); `edgeopt algorithms FAMILY` "
               "lists a family's exact models.")

# Piped output (logs, CI) gets a fixed width wide enough that tables keep names whole.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 110)
err = Console(stderr=True, highlight=False, soft_wrap=True)

WorkLimit = Annotated[float | None, typer.Option(
    "--work-limit", help="Also stop the exact solver after this much deterministic work (CP-SAT deterministic "
    "seconds; 100 HiGHS nodes a unit): unlike --time-limit, the same result on any machine at any load.")]
OutFile = Annotated[Path | None, typer.Option("-o", "--output", help="Write the result JSON here.")]


def _set_input_cap(value: int | None) -> int | None:
    if value is not None:
        set_max_input_bytes(value)  # InputError (exit 2) for a value < 1
    return value


MaxInputBytes = Annotated[int | None, typer.Option(
    "--max-input-bytes", callback=_set_input_cap,
    help="Refuse input files larger than this many bytes before reading them (default 64 MiB, "
         "after gzip decompression).")]
Seed = Annotated[int, typer.Option("--seed", help="Random seed (same seed, same output).")]


def _load_plugin_option(value: list[Path] | None) -> list[Path] | None:
    """Load the ``--plugin`` files as soon as the option is parsed (it is eager), before the command reads
    an algorithm name; a replaced algorithm is said on stderr, once per name."""
    if value:
        from edgeopt.plugins import load_plugin_files

        for pf in load_plugin_files(value):  # InputError (exit 2) naming plugin: a bad file, or too many
            for line in pf.replaced:
                err.print(f"warning: plugin {pf.path}: {line}", markup=False)
    return value


Plugins = Annotated[list[Path] | None, typer.Option(
    "--plugin", metavar="FILE.py", callback=_load_plugin_option, is_eager=True,
    help="A Python file whose @api.register_algorithm functions become usable here (repeatable, at most 16; "
         "docs/custom_algorithms.md).")]


def _print_json(obj: Any) -> None:
    """Machine-readable output on stdout (one JSON document)."""
    sys.stdout.write(dumps(obj))


def _fmt(x: float | None, digits: int = 6) -> str:
    if x is None:
        return "-"
    return f"{x:.{digits}g}"


def _family_options(args: list[str]) -> dict[str, str]:
    """``['--arrival-rate', '4', '--cost=linear']`` -> ``{'arrival_rate': '4', 'cost': 'linear'}``."""
    out: dict[str, str] = {}
    k = 0
    while k < len(args):
        arg = args[k]
        if not arg.startswith("--") or len(arg) == 2:
            raise InputError("arguments", f"unexpected argument {arg!r} (family options are --name VALUE)")
        name, eq, value = arg[2:].partition("=")
        if not eq:
            if k + 1 == len(args):
                raise InputError(name.replace("-", "_"), f"--{name} needs a value")
            value, k = args[k + 1], k + 1
        out[name.replace("-", "_")] = value
        k += 1
    return out


def _plain(text: str) -> str:
    """``text`` shown as written in a rich table: ``online[order=density]`` is a variant, not markup."""
    from rich.markup import escape

    return escape(text)


def _progress_status(message: str) -> Any:
    """A spinner on stderr while something runs (silent when stderr is not a terminal)."""
    if not err.is_terminal:
        return contextlib.nullcontext()
    return err.status(message, spinner="dots")


def _progress() -> Any:
    """A progress bar with counts (done / total) on stderr; disabled when stderr is not a terminal."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err, transient=True, disable=not err.is_terminal)


@contextlib.contextmanager
def _run_progress(description: str) -> Any:
    """A bar for one algorithm run, fed by its own reports (`edgeopt.core.progress`): slots of the
    horizon simulated. It appears once the run has taken a second; silent when stderr is not a terminal."""
    from edgeopt.core import progress as run_progress

    with _progress() as bar:
        task = bar.add_task(description, total=None, visible=False)
        t0 = time.monotonic()

        def show(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total, visible=time.monotonic() - t0 >= 1.0)

        with run_progress.listening(show):
            yield bar


def _same_family(name: str, res: Result, path: Path) -> None:
    """A result of another family than the instance is a wrong file (exit 2), not a violation."""
    if res.family != name:
        raise InputError("result", f"{path} is a {res.family} result, the instance is a {name} file")


class Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C (no output file is left half-written), then exit 143."""


#: The arguments of the running command (for the line that resumes an interrupted sweep); `edgeopt.cli.main` sets it.
ARGV: list[str] = []
