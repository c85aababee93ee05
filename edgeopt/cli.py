"""The ``edgeopt`` command. It parses arguments and calls the library; nothing more.

Exit codes: 0 success (``validate``: valid), 1 ``validate`` found violations
(including a false claim: a bound above the objective, an unfounded
``infeasible``...), 2 bad input (unreadable file, schema error, unknown family /
algorithm / method, a model above the size budget) with a one-line message
(every schema error listed on the lines below it) and no traceback, 130 Ctrl-C,
143 SIGTERM; a failing or interrupted command writes no output file.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from edgeopt import api
from edgeopt.core import InputError, Result
from edgeopt.core.jsonio import dumps, write_json


def _preset_help() -> str:
    """The presets of every implemented family, for --help (families import in well under a second)."""
    listing = "; ".join(f"{s.name}: {', '.join(s.presets)}" for s in api.families())
    return f"Generator preset; the family's first is the default ({listing})."


PRESET_HELP = _preset_help()
METHOD_HELP = ("Exact model: milp (Pyomo + HiGHS) or cpsat (OR-Tools CP-SAT); `edgeopt algorithms FAMILY` "
               "lists a family's exact models.")

app = typer.Typer(
    name="edgeopt",
    help="Schedule distributed ML training jobs on edge-cloud networks and ML clusters.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
# Piped output (logs, CI) gets a fixed width wide enough that tables keep names whole.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 110)
err = Console(stderr=True, highlight=False, soft_wrap=True)

OutFile = Annotated[Path | None, typer.Option("-o", "--output", help="Write the result/instance JSON here.")]
Seed = Annotated[int, typer.Option("--seed", help="Random seed (same seed, same output).")]


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


def _print_json(obj: Any) -> None:
    """Machine-readable output on stdout (one JSON document)."""
    sys.stdout.write(dumps(obj))


def _fmt(x: float | None, digits: int = 6) -> str:
    if x is None:
        return "-"
    return f"{x:.{digits}g}"


def _options_help() -> str:
    """Each family's own generator options, for --help."""
    parts = []
    for s in api.families():
        opts = api.generator_options(s.name)
        if opts:
            parts.append(f"{s.name}: " + ", ".join("--" + k.replace("_", "-") for k in opts))
    return "; ".join(parts)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             epilog="Family options (e.g. `edgeopt generate tapfinger --preset paper --clusters 6 --arrival-rate 4`): "
                    + _options_help())
def generate(
    ctx: typer.Context,
    family: Annotated[str, typer.Argument(help="Problem family, e.g. hetero.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Instance file to write.")],
    preset: Annotated[str | None, typer.Option(help=PRESET_HELP)] = None,
    jobs: Annotated[int | None, typer.Option(help="Number of jobs (overrides the preset).")] = None,
    servers: Annotated[int | None, typer.Option(help="Number of servers (overrides the preset).")] = None,
    horizon: Annotated[int | None, typer.Option(help="Number of slots T (overrides the preset).")] = None,
    seed: Seed = 0,
) -> None:
    """Generate a seeded instance of FAMILY and write it as JSON.

    Options of the family's own generator follow as ``--name VALUE`` (listed below).
    """
    options = _family_options(ctx.args)
    instance = api.generate(family, preset, seed=seed, jobs=jobs, servers=servers, horizon=horizon, **options)
    write_json(output, instance.model_dump(mode="json"))
    n_jobs = len(getattr(instance, "jobs", []))
    err.print(f"wrote {output} ({family}, {n_jobs} jobs, seed {seed})")


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


@app.command("algorithms")
def list_algorithms(
    family: Annotated[str | None, typer.Argument(help="Only this family.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")] = False,
) -> None:
    """List the registered algorithms (and exact models) of each family."""
    specs = api.families() if family is None else [api.family(family)]
    if as_json:
        _print_json([
            {"family": spec.name, "algorithm": algo.name, "kind": algo.kind, "relaxed": algo.relaxed,
             "randomized": algo.randomized, "summary": algo.summary, "params": [p.describe() for p in algo.params]}
            for spec in specs for algo in api.algorithms(spec.name).values()
        ] + [{"family": spec.name, "algorithm": m, "kind": "exact", "relaxed": False, "randomized": False,
              "summary": f"exact model, `edgeopt solve --method {m}`", "params": []}
             for spec in specs for m in api.exact_methods(spec.name)])
        return
    table = Table("family", "algorithm", "kind", "summary", "parameters (default)")
    for spec in specs:
        for algo in api.algorithms(spec.name).values():
            params = "; ".join(f"{p.name}={p.default!r}: {p.help}" if p.help else f"{p.name}={p.default!r}"
                               for p in algo.params)
            table.add_row(spec.name, algo.name, _kind_label(algo.kind, algo.relaxed), algo.summary, params)
        for method in api.exact_methods(spec.name):
            table.add_row(spec.name, method, "exact", f"exact model, `edgeopt solve --method {method}`", "")
    out.print(table)


@app.command()
def run(
    algorithm: Annotated[str, typer.Argument(help="Algorithm name (see `edgeopt algorithms`).")],
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    output: OutFile = None,
    seed: Seed = 0,
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="KEY=VALUE, repeatable; see `edgeopt algorithms FAMILY` for each algorithm's parameters.")] = None,
) -> None:
    """Run ALGORITHM on INSTANCE and print (or write) its result."""
    inst = api.load(instance)
    spec = api.family_of(inst)
    params = _parse_params(param or [])
    api.check_algorithm(spec.name, algorithm).check_params(params)  # reject a bad key or value before running
    with _run_progress(f"{spec.name}/{algorithm}, slots"):
        result = api.run(algorithm, inst, seed=seed, **params)
    _emit(result, output)


@app.command()
def solve(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    method: Annotated[str, typer.Option(help=METHOD_HELP)] = "milp",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds for the whole call, model building "
                                                                   "included.")] = 60.0,
    output: OutFile = None,
    max_model_size: Annotated[int | None, typer.Option(
        "--max-model-size", help="Budget on the model's estimated nonzeros (default 2,000,000, about 3 GB); "
        "larger models are refused before they are built.")] = None,
    warm_start: Annotated[str | None, typer.Option(
        "--warm-start", help="ALG or best: run registered algorithm(s) first; the incumbent is never worse.")] = None,
) -> None:
    """Solve INSTANCE exactly (optimal, or incumbent + bound at the time limit)."""
    inst = api.load(instance)
    spec = api.family_of(inst)
    with _progress_status(f"solving {spec.name} with {method} (limit {time_limit:g} s)"):
        result = api.solve(inst, method=method, time_limit=time_limit, max_model_size=max_model_size,
                           warm_start=warm_start)
    _emit(result, output)


@app.command()
def validate(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    result: Annotated[Path, typer.Argument(help="Result JSON file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of text.")] = False,
) -> None:
    """Check RESULT against INSTANCE: exit 0 if valid, 1 with the violations listed."""
    inst = api.load(instance)
    spec = api.family_of(inst)
    res = Result.load(str(result))
    violations = spec.check_result(inst, res)
    if as_json:
        _print_json({"valid": not violations, "family": res.family, "algorithm": res.algorithm,
                     "status": res.status.value, "objective": res.objective,
                     "violations": [{"equation": v.equation, "message": v.message, "job": v.job}
                                    for v in violations]})
        if violations:
            raise typer.Exit(1)
        return
    if not violations:
        out.print(f"valid: {res.family}/{res.algorithm}, objective {_fmt(res.objective)}")
        return
    out.print(f"invalid: {len(violations)} violation(s)")
    for v in violations:
        out.print(f"  {v}")
    raise typer.Exit(1)


@app.command()
def compare(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    algorithms: Annotated[str, typer.Option(help="'all' or a comma-separated list.")] = "all",
    optimal: Annotated[bool, typer.Option("--optimal", help="Also solve exactly and report ratios.")] = False,
    method: Annotated[str, typer.Option(help="Exact model used with --optimal. " + METHOD_HELP)] = "milp",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds for the exact model.")] = 60.0,
    seed: Seed = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON on stdout.")] = False,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the comparison as JSON here.")] = None,
    plot: Annotated[Path | None, typer.Option(help="Write a bar chart (PNG/PDF/SVG).")] = None,
) -> None:
    """Run several algorithms on INSTANCE, validate each, and tabulate their objectives."""
    inst = api.load(instance)
    spec = api.family_of(inst)
    names = list(api.algorithms(spec.name)) if algorithms == "all" else [
        a.strip() for a in algorithms.split(",") if a.strip()]
    for name in names:  # a typo fails now, not after the others ran
        api.check_algorithm(spec.name, name)
    total = len(names) + (1 if optimal else 0)
    with _run_progress("current algorithm, slots") as progress:
        task = progress.add_task("comparing", total=total)
        started = [0]

        def tick(label: str) -> None:
            # Called as each step starts: the steps before it are done.
            progress.update(task, description=f"running {label}", completed=started[0])
            started[0] += 1

        comparison = api.compare(
            inst,
            names,
            optimal=optimal,
            method=method,
            time_limit=time_limit,
            seed=seed,
            on_step=tick,
        )
        progress.update(task, completed=total)
    if as_json:
        _print_json(comparison.to_dict())
    else:
        _print_comparison(comparison)
    if output is not None:
        write_json(output, comparison.to_dict())
    if plot is not None:
        comparison.plot(plot)


@app.command()
def schema(
    what: Annotated[str, typer.Argument(help="A family (its instance schema), or 'result'.")],
    family: Annotated[str | None, typer.Option(
        help="With 'result': describe this family's schedule inside the result.")] = None,
) -> None:
    """Print the JSON Schema of a family's instance files, or of result files (`schema result`)."""
    if what == "result":
        sys.stdout.write(dumps(api.result_schema(family)))
        return
    sys.stdout.write(dumps(api.family(what).instance_type.model_json_schema()))


def _load_pair(instance: Path, result: Path) -> tuple[Any, Result]:
    inst = api.load(instance)
    res = api.load_result(result)
    return inst, res


def _save_figure(fig: Any, output: Path) -> None:
    import matplotlib.pyplot as plt

    if output.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InputError("output", f"expected a .png, .svg or .pdf file, got {output.name!r}")
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=150)
    plt.close(fig)
    err.print(f"wrote {output}")


@app.command("plot-schedule")
def plot_schedule(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    result: Annotated[Path, typer.Argument(help="Result JSON file (from `edgeopt run/solve -o`).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Image to write: .png, .svg or .pdf.")],
) -> None:
    """Draw RESULT's schedule as a Gantt chart: one row per server (or site), bars coloured by job."""
    inst, res = _load_pair(instance, result)
    _save_figure(api.plot_schedule(inst, res).figure, output)


@app.command("plot-utilisation")
def plot_utilisation(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    result: Annotated[Path, typer.Argument(help="Result JSON file (from `edgeopt run/solve -o`).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Image to write: .png, .svg or .pdf.")],
) -> None:
    """Draw the capacity RESULT's schedule uses over time, per resource."""
    inst, res = _load_pair(instance, result)
    _save_figure(api.plot_utilisation(inst, res), output)


@app.command()
def demo(
    family: Annotated[str | None, typer.Option(help="Only this family (default: every one).")] = None,
    seed: Seed = 0,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds per exact solve.")] = 30.0,
) -> None:
    """Generate a small instance per family, run every algorithm and the exact model, print a table."""
    specs = api.families() if family is None else [api.family(family)]
    for spec in specs:
        inst = api.generate(spec.name, None, seed=seed)
        has_exact = bool(api.exact_methods(spec.name))
        with _progress_status(f"{spec.name}: running every algorithm"):
            comparison = api.compare(inst, None, optimal=has_exact, time_limit=time_limit, seed=seed)
        out.print(f"\n[bold]{spec.name}[/bold] - {spec.paper}; small instance, seed {seed}")
        _print_comparison(comparison)


def _parse_params(items: list[str]) -> dict[str, str]:
    """['k=5', 'alpha=on_tau'] -> {'k': '5', ...} (converted later against the declared parameters)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError("param", f"expected KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _parse_seeds(text: str) -> list[int]:
    """'0-19' or '1,4,7' or '3' -> list of seeds (one rule for the CLI and the benchmarks)."""
    from edgeopt.bench import parse_seeds

    return parse_seeds(text)


@app.command()
def sweep(
    family: Annotated[str, typer.Argument(help="Problem family.")],
    seeds: Annotated[str, typer.Option(help="Seeds: 'A-B' or 'a,b,c'.")] = "0-9",
    preset: Annotated[str | None, typer.Option(help=PRESET_HELP)] = None,
    jobs: Annotated[str | None, typer.Option(help="Job counts, comma-separated (one sweep axis).")] = None,
    servers: Annotated[int | None, typer.Option(help="Number of servers.")] = None,
    horizon: Annotated[int | None, typer.Option(help="Number of slots.")] = None,
    algorithms: Annotated[str, typer.Option(help="'all' or a comma-separated list.")] = "all",
    optimal: Annotated[bool, typer.Option("--optimal", help="Solve each instance exactly too.")] = False,
    method: Annotated[str, typer.Option(help="Exact model used with --optimal. " + METHOD_HELP)] = "milp",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds per exact solve.")] = 60.0,
    address: Annotated[str | None, typer.Option(help="Dask scheduler address (default: a LocalCluster).")] = None,
    workers: Annotated[int, typer.Option(help="LocalCluster worker processes.")] = 2,
    json_file: Annotated[Path | None, typer.Option("--json", help="Write every row as JSON.")] = None,
    store: Annotated[Path | None, typer.Option(
        "--store", help="Parquet dataset directory: each instance's rows are written as soon as it finishes; "
        "a rerun with the same --store computes only what is missing (read it with edgeopt.sweep.read_sweep).")] = None,
    retry_errors: Annotated[bool, typer.Option(
        "--retry-errors", help="With --store: recompute the stored cells that recorded an error.")] = False,
) -> None:
    """Run algorithms over many seeded instances on Dask and summarise the ratios.

    Ctrl-C or SIGTERM stops the sweep (exit 130 / 143); with --store every finished instance is kept.
    On a SLURM cluster, start Dask workers with dask-jobqueue and pass --address (docs/sweeps.md).
    """
    from edgeopt.sweep import SweepPoint, run_sweep, summarise

    api.generate(family, preset, seed=0)  # fail fast on a bad family or preset
    names = None if algorithms == "all" else tuple(a.strip() for a in algorithms.split(",") if a.strip())
    unknown = sorted(set(names or ()) - set(api.algorithms(family)))
    if unknown:
        raise InputError("algorithms", f"unknown algorithm {unknown[0]!r} for family {family!r}")
    job_counts: list[int | None] = [None]
    if jobs is not None:
        try:
            job_counts = [int(x) for x in jobs.split(",")]
        except ValueError:
            raise InputError("jobs", f"expected comma-separated integers, got {jobs!r}") from None
    points = [
        SweepPoint(family, preset, seed=s, jobs=n, servers=servers, horizon=horizon, algorithms=names,
                   optimal=optimal, method=method, time_limit=time_limit)
        for n in job_counts
        for s in _parse_seeds(seeds)
    ]
    with _progress() as progress:
        task = progress.add_task(f"sweep over {len(points)} instances", total=len(points))
        rows = run_sweep(points, address=address, n_workers=workers, store=store, retry_errors=retry_errors,
                         on_done=lambda done, total: progress.update(task, completed=done, total=total))
    table = Table("algorithm", "n", "errors", "valid", "mean ratio", "max ratio", "mean runtime s")
    for s in summarise(rows):
        table.add_row(s["algorithm"], str(s["n"]), str(s["errors"]), f"{s['valid']:.0%}", _fmt(s["mean_ratio"], 5),
                      _fmt(s["max_ratio"], 5), f"{s['mean_runtime_s']:.3f}")
    out.print(table)
    if json_file is not None:
        write_json(json_file, rows)


def _emit(result: Result, output: Path | None) -> None:
    if output is not None:
        result.save(str(output))
        err.print(
            f"{result.family}/{result.algorithm}: {result.status.value}, objective {_fmt(result.objective)}, "
            f"bound {_fmt(result.bound)}, {result.runtime_s:.3f} s -> {output}"
        )
    else:
        sys.stdout.write(result.to_json())


def _kind_label(kind: str, relaxed: bool) -> str:
    """An algorithm's kind as the tables show it; a relaxed one may beat the optimum."""
    return kind + " (relaxed)" if relaxed else kind


def _print_comparison(comparison: api.Comparison) -> None:
    table = Table(
        "algorithm", "kind", "status", "objective", "ratio to " + comparison.reference_name, "rank", "valid",
        "runtime s",
        caption=f"objective: {comparison.objective_name} (lower is better); partial results (jobs rejected) "
        "get no ratio and no rank",
    )
    for row in comparison.rows:
        table.add_row(
            row.algorithm,
            _kind_label(row.kind, row.relaxed),
            row.status,
            _fmt(row.objective, 8),
            f"{row.rejected} rejected" if row.status == "partial" else _fmt(row.ratio, 5),
            "-" if row.rank is None else str(row.rank),
            "yes" if row.valid else "NO",
            f"{row.runtime_s:.3f}",
        )
    out.print(table)


class Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C (no output file is left half-written), then exit 143."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


from edgeopt.tapfinger.policy.cli import train as _train_policy

app.command("train")(_train_policy)

from edgeopt.bound_cli import bound as _bound

app.command("bound")(_bound)


def main(argv: list[str] | None = None) -> None:
    """Entry point: maps bad input to exit code 2 with a one-line message (all errors listed below it),
    Ctrl-C to 130 and SIGTERM to 143, in both cases without writing any output file."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="edgeopt", standalone_mode=False)
    except InputError as exc:
        err.print(f"error: {exc}", markup=False)
        if len(exc.details) > 1:
            for line in exc.details:
                err.print(f"  {line}", markup=False)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err.print("interrupted")
        sys.exit(130)
    except Terminated:
        err.print("terminated")
        sys.exit(143)
    except Exception as exc:
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
