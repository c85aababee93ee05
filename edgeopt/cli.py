"""The ``edgeopt`` command. It parses arguments and calls the library; nothing more.

Exit codes: 0 success (``validate``: valid), 1 ``validate`` found violations
(including a false claim: a bound above the objective, an unfounded
``infeasible``, a claim ``--certify`` refutes; an undecided one is "not certified", exit 0) and
``run`` of a plug-in algorithm that returned an invalid result,
2 bad input (unreadable file, schema error, unknown family /
algorithm / method, a model above the size budget) with a one-line message
(every schema error listed on the lines below it) and no traceback, 130 Ctrl-C,
143 SIGTERM; a failing or interrupted command writes no output file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

_ORIG_ARGV = getattr(sys, "orig_argv", sys.argv)
if __name__ == "__main__" or (len(_ORIG_ARGV) > 1 and os.path.basename(_ORIG_ARGV[1]) == "edgeopt"):
    # Started as the command (not imported, nor re-imported by a multiprocessing child, which sees the
    # parent's sys.argv): a signal during the imports below (seconds) exits 130/143 at once instead of
    # killing the process by the signal (exit -2/-15).
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(128 + signum))
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(128 + signum))
from typing import Annotated, Any

import typer

from edgeopt.commands import bound, compare, instances, plots, solving, sweep, traces
from edgeopt.commands.common import (
    ARGV,
    Terminated,
    err,
    set_max_input_bytes,
)
from edgeopt.commands.instances import GENERATE_EPILOG, _options_help, _preset_help

app = typer.Typer(
    name="edgeopt",
    help="Schedule distributed ML training jobs on edge-cloud networks and ML clusters.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("edgeopt")
        except PackageNotFoundError:  # run from a source tree that was never installed
            from edgeopt import __version__ as v
        sys.stdout.write(f"edgeopt {v}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", callback=_version,
                                          is_eager=True)] = False,
) -> None:
    """Schedule distributed ML training jobs on edge-cloud networks and ML clusters."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             epilog=GENERATE_EPILOG + "see `edgeopt generate --help`")(instances.generate)
app.command("algorithms")(instances.list_algorithms)
app.command()(solving.run)
app.command()(solving.solve)
app.command()(solving.validate)
app.command()(compare.compare)
app.command()(instances.schema)
app.command("plot-schedule")(plots.plot_schedule)
app.command("plot-utilisation")(plots.plot_utilisation)
app.command()(compare.demo)
app.command()(sweep.sweep)


TRAIN_HELP = "Train a learned policy with MAPPO (rich progress bar, metrics.csv, atomic checkpoints)."


@app.command("train", help=TRAIN_HELP, add_help_option=False,
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def _train_placeholder(ctx: typer.Context) -> None:
    """Stands for `edgeopt.tapfinger.policy.cli.train` in listings; `main` swaps the real command in when
    ``train`` runs (importing it imports the tapfinger family)."""
    raise RuntimeError("edgeopt.cli.main replaces this command before it runs")  # pragma: no cover


def _real_train() -> Any:
    from edgeopt.tapfinger.policy.cli import train

    sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    sub.command("train")(train)
    return typer.main.get_command(sub)


def _fill_dynamic_help(command: Any, argv: list[str]) -> None:
    """Help texts that need every family imported, computed only for the command being run."""
    name = next((a for a in argv if not a.startswith("-")), None)
    if name == "train":
        command.commands["train"] = _real_train()
    if name in ("generate", "sweep"):
        for param in command.commands[name].params:
            if param.name == "preset":
                param.help = _preset_help()
        if name == "generate":
            command.commands[name].epilog = GENERATE_EPILOG + _options_help()


def _tidy_help(command: Any) -> None:
    """Help that reads as the README writes it: ``edgeopt run [OPTIONS] ALGORITHM INSTANCE`` (typer
    prints required arguments as ``{algorithm}``) and each command's whole first sentence in the list of
    commands (click cuts it at the terminal's width with "...")."""
    for sub in command.commands.values():
        if sub.help and not sub.short_help:
            first = " ".join(sub.help.strip().split("\n\n")[0].split())
            sub.short_help = first.split(". ")[0].rstrip(".")
        for param in sub.params:
            if getattr(param, "param_type_name", "") == "argument":
                shown = param.name.upper() if param.metavar is None else param.metavar
                shown = shown if param.required else f"[{shown}]"
                shown += "..." if param.nargs != 1 else ""
                param.get_usage_pieces = lambda ctx, shown=shown: [shown]


def _is_input_error(exc: BaseException) -> bool:
    errors = sys.modules.get("edgeopt.core.errors")  # raised only once it was imported
    return errors is not None and isinstance(exc, errors.InputError)


def _is_model_error(exc: BaseException) -> bool:
    errors = sys.modules.get("edgeopt.core.errors")
    return errors is not None and isinstance(exc, errors.ModelError)

app.command("download-trace")(traces.download_trace)
app.command("trace-stats")(traces.trace_stats)


app.command("bound")(bound.bound)


def native_output_to_stderr() -> None:
    """Send what native libraries write on file descriptor 1 to stderr, keeping ``sys.stdout`` on the real stdout.

    A solver library may print on descriptor 1 by itself: HiGHS 1.12 (pinned with OR-Tools) prints
    "HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();" from some MIP solves whatever its
    output flag, which would corrupt the JSON a command prints on stdout (``solve --json``). Descriptor 1 becomes
    a copy of stderr (for native code and child processes), and ``sys.stdout`` a new file on a copy of the
    original descriptor 1. Called once, by the command itself (`main` without ``argv``); nothing changes when
    the descriptors cannot be copied."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):
        return
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        return
    encoding, errors = getattr(sys.stdout, "encoding", None), getattr(sys.stdout, "errors", None)
    sys.stdout = os.fdopen(saved, "w", buffering=1 if os.isatty(saved) else -1, encoding=encoding, errors=errors)


def main(argv: list[str] | None = None) -> None:
    """Entry point: maps bad input to exit code 2 with a one-line message (all errors listed below it),
    Ctrl-C to 130 and SIGTERM to 143, in both cases without writing any output file.

    Run as the command (``argv`` None), a signal gives 130/143 whenever it arrives: during the
    imports (handlers set at the top of this module), during the command (KeyboardInterrupt or
    `Terminated` unwinds it) and while the process exits (`_exit`)."""
    import threading

    ARGV[:] = list(sys.argv[1:] if argv is None else argv)  # for the line that resumes an interrupted sweep
    if argv is None and threading.current_thread() is threading.main_thread():
        native_output_to_stderr()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # a shell's `cmd &` ignores it: keep that
            signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        try:
            _main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except KeyboardInterrupt:  # arrived while an error was being reported
            code = 130
        except Terminated:
            code = 143
        finally:
            if "edgeopt.core.jsonio" in sys.modules:  # the cap was set only if the reader was loaded
                set_max_input_bytes(None)
    except KeyboardInterrupt:  # ... or just as the command ended
        code = 130
    except Terminated:
        code = 143
    if argv is not None or threading.current_thread() is not threading.main_thread():
        sys.exit(code)
    _exit(code)


def _exit(code: int) -> None:
    """Leave the process with ``code``; a signal from now on makes it 130/143 at once.

    The interpreter's own shutdown puts the default handlers back before it ends, so a signal in
    that window killed the process (exit -2/-15): exit cleanly here instead (output flushed,
    ``atexit`` handlers run, every output file already whole), without that window."""
    import atexit

    late = lambda signum, frame: os._exit(128 + signum)
    signal.signal(signal.SIGINT, late)
    signal.signal(signal.SIGTERM, late)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    os._exit(code)


def _signal_behind(exc: BaseException) -> type[BaseException] | None:
    """KeyboardInterrupt or Terminated when ``exc`` was caused by one: a signal that arrives while a compiled
    extension initialises (e.g. ortools' ``cp_model_helper`` on its first import) comes out as
    ``ImportError: initialization failed`` raised from the handler's exception, and is still Ctrl-C or
    SIGTERM (exit 130 or 143, no traceback)."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, (KeyboardInterrupt, Terminated)):
            return KeyboardInterrupt if isinstance(link, KeyboardInterrupt) else Terminated
        link = link.__cause__ or link.__context__
    return None


def _main(argv: list[str] | None) -> None:
    command = typer.main.get_command(app)
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        _fill_dynamic_help(command, argv)
        _tidy_help(command)
        code = command.main(args=argv, prog_name="edgeopt", standalone_mode=False)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err.print("interrupted")
        sys.exit(130)
    except Terminated:
        err.print("terminated")
        sys.exit(143)
    except Exception as exc:
        signalled = _signal_behind(exc)
        if signalled is not None:
            err.print("interrupted" if signalled is KeyboardInterrupt else "terminated")
            sys.exit(130 if signalled is KeyboardInterrupt else 143)
        if isinstance(exc, MemoryError):  # a solver's std::bad_alloc comes out as MemoryError too
            detail = f" ({exc})" if str(exc) else ""
            err.print(f"error: out of memory{detail}: use a smaller instance or a lower --max-model-size, or "
                      "free memory; nothing was written", markup=False)
            sys.exit(1)
        if _is_model_error(exc):  # an algorithm returned an invalid result (api.run gives it no status)
            err.print(f"error: {exc}", markup=False)
            sys.exit(1)
        if _is_input_error(exc):
            details = exc.details  # type: ignore[attr-defined]
            err.print(f"error: {exc}", markup=False)
            if len(details) > 1:
                for line in details:
                    err.print(f"  {line}", markup=False)
            sys.exit(2)
        # Usage errors of the click that typer vendors (typer._click): no public name to catch them by.
        if type(exc).__name__ == "NoArgsIsHelpError":
            err.print(exc.format_message(), markup=False)  # type: ignore[attr-defined]
            sys.exit(2)
        if hasattr(exc, "format_message") and getattr(exc, "exit_code", None) == 2:
            err.print(f"error: {exc.format_message()}", markup=False)
            sys.exit(2)
        raise
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
