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
import json
import os
import signal
import sys
import time

_ORIG_ARGV = getattr(sys, "orig_argv", sys.argv)
if __name__ == "__main__" or (len(_ORIG_ARGV) > 1 and os.path.basename(_ORIG_ARGV[1]) == "edgeopt"):
    # Started as the command (not imported, nor re-imported by a multiprocessing child, which sees the
    # parent's sys.argv): a signal during the imports below (seconds) exits 130/143 at once instead of
    # killing the process by the signal (exit -2/-15).
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(128 + signum))
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(128 + signum))
from pathlib import Path
from typing import Annotated, Any

import typer

from edgeopt.commands.common import (  # noqa: F401 - the names the commands below share
    METHOD_HELP,
    PRESET_HELP,
    InputError,
    MaxInputBytes,
    OutFile,
    Result,
    Seed,
    Table,
    WorkLimit,
    _family_options,
    _fmt,
    _Lazy,
    _plain,
    _print_json,
    _set_input_cap,
    api,
    check_output_path,
    dumps,
    err,
    out,
    set_max_input_bytes,
    write_json,
)


def _preset_help() -> str:
    """The presets of every implemented family, for --help (imports every family: filled in by `main`
    only for the command being run, see `_DYNAMIC_HELP`)."""
    listing = "; ".join(f"{s.name}: {', '.join(s.presets)}" for s in api.families())
    return f"Generator preset; the family's first is the default ({listing})."



app = typer.Typer(
    name="edgeopt",
    help="Schedule distributed ML training jobs on edge-cloud networks and ML clusters.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


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




def _options_help() -> str:
    """Each family's own generator options, for --help."""
    parts = []
    for s in api.families():
        opts = api.generator_options(s.name)
        if opts:
            parts.append(f"{s.name}: " + ", ".join("--" + k.replace("_", "-") for k in opts))
    return "; ".join(parts)


GENERATE_EPILOG = "Family options (e.g. `edgeopt generate tapfinger --preset paper --clusters 6 --arrival-rate 4`): "


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             epilog=GENERATE_EPILOG + "see `edgeopt generate --help`")
def generate(
    ctx: typer.Context,
    family: Annotated[str, typer.Argument(help="Problem family, e.g. hetero.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Instance file to write.")],
    preset: Annotated[str | None, typer.Option(help=PRESET_HELP)] = None,
    jobs: Annotated[int | None, typer.Option(help="Number of jobs (overrides the preset).")] = None,
    servers: Annotated[int | None, typer.Option(help="Number of servers (overrides the preset).")] = None,
    horizon: Annotated[int | None, typer.Option(help="Number of slots T (overrides the preset).")] = None,
    seed: Seed = 0,
    trace: Annotated[Path | None, typer.Option(help="Build the instance from this job trace (ITP, Alibaba, "
                                                    "Philly, Helios; see docs/families/FAMILY.md).")] = None,
    machines: Annotated[Path | None, typer.Option(help="With --trace: machine list for the capacities.")] = None,
    window: Annotated[str | None, typer.Option(help="With --trace: START:END on the trace's clock (14d:21d).")]
    = None,
    cluster: Annotated[str | None, typer.Option(help="With --trace: only this cluster of the trace.")] = None,
    max_input_bytes: MaxInputBytes = None,
) -> None:
    """Generate a seeded instance of FAMILY and write it as JSON.

    Options of the family's own generator follow as ``--name VALUE`` (listed below).
    """
    if trace is not None or machines is not None or window is not None or cluster is not None:
        from edgeopt.commands.traces import generate_from_trace

        generate_from_trace(family, output, trace, machines, window, cluster, jobs, servers, seed,
                            preset, horizon, ctx.args)
        return
    options = _family_options(ctx.args)
    _check_generate_options(family, options)
    check_output_path(output)
    instance = api.generate(family, preset, seed=seed, jobs=jobs, servers=servers, horizon=horizon, **options)
    write_json(output, instance.model_dump(mode="json"))
    n_jobs = len(getattr(instance, "jobs", []))
    err.print(f"wrote {output} ({family}, {n_jobs} jobs, seed {seed})")


def _check_generate_options(family: str, options: dict[str, str]) -> None:
    """An unknown ``--option`` of ``generate``: suggest the closest of every option it takes."""
    if not options:
        return
    own = [f"--{k.replace('_', '-')}" for k in api.generator_options(family)]
    common = ["--output", "--preset", "--jobs", "--servers", "--horizon", "--seed"]
    for key in options:
        opt = f"--{key.replace('_', '-')}"
        if opt not in own:
            raise InputError(key, f"unknown option {opt} for generate {family}{api.did_you_mean(opt, own + common)} "
                                  f"(options: {', '.join(common)}; {family}'s own: {', '.join(own) or 'none'})")




@app.command("algorithms")
def list_algorithms(
    family: Annotated[str | None, typer.Argument(help="Only this family.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")] = False,
) -> None:
    """List the registered algorithms (and exact models) of each family."""
    from edgeopt import catalog

    rows = catalog.rows(family)  # without importing the families when the generated copy is up to date
    if as_json:
        sys.stdout.write(catalog.dumps(rows))
        return
    table = Table("family", "algorithm", "kind", "summary", "parameters (default)")
    families = list(dict.fromkeys(r["family"] for r in rows))
    for row in sorted(rows, key=lambda r: families.index(r["family"])):  # a family's algorithms, then its models
        params = "; ".join(f"{p['name']}={p['default']!r}" + (f": {p['help']}" if p["help"] else "")
                           for p in row["params"])
        table.add_row(row["family"], row["algorithm"], _kind_label(row["kind"], row["relaxed"]),
                      _plain(row["summary"]), _plain(params))
    out.print(table)


@app.command()
def run(
    algorithm: Annotated[str, typer.Argument(help="Algorithm name (see `edgeopt algorithms`).")],
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    output: OutFile = None,
    seed: Seed = 0,
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="KEY=VALUE, repeatable; see `edgeopt algorithms FAMILY` for each algorithm's parameters.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout (also with -o; "
                                                         "without -o it is printed anyway).")] = False,
    max_input_bytes: MaxInputBytes = None,
) -> None:
    """Run ALGORITHM on INSTANCE and print (or write) its result."""
    check_output_path(output)
    inst = api.load(instance)
    spec = api.family_of(inst)
    params = _parse_params(param or [])
    api.check_algorithm(spec.name, algorithm).check_params(params)  # reject a bad key or value before running
    with _run_progress(f"{spec.name}/{algorithm}, slots"):
        result = api.run(algorithm, inst, seed=seed, **params)
    _emit(result, output)
    if as_json and output is not None:
        sys.stdout.write(result.to_json())


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
    max_input_bytes: MaxInputBytes = None,
    warm_start: Annotated[str | None, typer.Option(
        "--warm-start", help="ALG or best: run registered algorithm(s) first; the incumbent is never worse.")] = None,
    lns: Annotated[bool, typer.Option(
        "--lns", help="Improve the warm start (default best) by large-neighbourhood search with --method until "
        "the time limit.")] = False,
    work_limit: WorkLimit = None,
) -> None:
    """Solve INSTANCE exactly (optimal, or incumbent + bound at the time limit)."""
    check_output_path(output)
    inst = api.load(instance)
    spec = api.family_of(inst)
    with _progress_status(f"solving {spec.name} with {method} (limit {time_limit:g} s)"):
        result = api.solve(inst, method=method, time_limit=time_limit, max_model_size=max_model_size,
                           warm_start=warm_start, lns=lns, work_limit=work_limit)
    _emit(result, output)


@app.command()
def validate(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    result: Annotated[Path, typer.Argument(help="Result JSON file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of text.")] = False,
    certify: Annotated[bool, typer.Option("--certify", help="Also re-prove the optimality and bound claims: "
                                          "re-solve small instances exactly, use a lower bound for larger ones. "
                                          "Exit 1 if a claim is false; 'not certified' (exit 0) when undecided.")] = False,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds for --certify.")] = 60.0,
    max_input_bytes: MaxInputBytes = None,
) -> None:
    """Check RESULT against INSTANCE: exit 0 if valid, 1 with the violations listed (or a claim --certify refutes)."""
    from edgeopt.solving import certify as certification

    inst = api.load(instance)
    spec = api.family_of(inst)
    res = Result.load(str(result))
    if certify and not (0 < time_limit <= api.MAX_TIME_LIMIT):
        raise InputError("time_limit", f"must be a number of seconds in (0, {api.MAX_TIME_LIMIT:g}], got {time_limit}")
    _same_family(spec.name, res, result)
    violations = api.validate(inst, res)  # a bound result's certificate is recomputed too (no solver)
    claims = certification.claims(spec, res)
    cert = certification.certify(inst, res, time_limit=time_limit) if certify and not violations else None
    failed = bool(violations) or (cert is not None and cert.verdict == certification.FALSE)
    if as_json:
        report = {"valid": not violations, "family": res.family, "algorithm": res.algorithm,
                  "status": res.status.value, "objective": res.objective,
                  "violations": [{"equation": v.equation, "message": v.message, "job": v.job}
                                 for v in violations],
                  "checked": [c.claim for c in claims if c.checked],
                  "not_checked": [c.claim for c in claims if not c.checked]}
        if certify:
            report["certify"] = cert.to_dict() if cert is not None else {  # an invalid result claims falsely
                "verdict": certification.FALSE, "claims": [], "evidence": ["the result is invalid: see violations"]}
        _print_json(report)
        if failed:
            raise typer.Exit(1)
        return
    if violations:
        out.print(f"invalid: {len(violations)} violation(s)")
        for v in violations:
            out.print(f"  {v}")
    else:
        out.print(f"valid: {res.family}/{res.algorithm}, objective {_fmt(res.objective)}")
    out.print("checked: " + "; ".join(c.claim for c in claims if c.checked))
    unchecked = [c.claim for c in claims if not c.checked]
    out.print("not checked: " + ("; ".join(unchecked) if unchecked else "none"))
    if certify and cert is None:
        out.print("certify: false (the result is invalid)")
    if cert is not None:
        out.print(f"certify: {cert.verdict}")
        for c in cert.claims:
            out.print(f"  {c.verdict}: {c.claim} ({c.evidence})")
    if failed:
        raise typer.Exit(1)


@app.command()
def compare(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    algorithms: Annotated[str, typer.Option(help=ALGORITHMS_HELP)] = "all",
    grid: Annotated[list[str] | None, typer.Option("--grid", help=GRID_HELP)] = None,
    optimal: Annotated[bool, typer.Option("--optimal", help="Also solve exactly and report ratios.")] = False,
    method: Annotated[str, typer.Option(help="Exact model used with --optimal. " + METHOD_HELP)] = "milp",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds for the exact model.")] = 60.0,
    seed: Seed = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON on stdout.")] = False,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the comparison as JSON here.")] = None,
    plot: Annotated[Path | None, typer.Option(help="Write a bar chart (PNG/PDF/SVG).")] = None,
    max_input_bytes: MaxInputBytes = None,
    work_limit: WorkLimit = None,
) -> None:
    """Run several algorithms on INSTANCE, validate each, and tabulate their objectives."""
    check_output_path(output)
    if plot is not None:
        _check_figure_path(plot, what="plot")
    inst = api.load(instance)
    spec = api.family_of(inst)
    names = _variant_labels(spec.name, algorithms, grid)  # a typo or bad parameter fails now, before any run
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
            work_limit=work_limit,
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
    from edgeopt.families import FAMILY_NAMES

    api.check_choice("family", what, [*FAMILY_NAMES, "result"], "family (or result) schema")
    sys.stdout.write(dumps(api.family(what).instance_type.model_json_schema()))


def _same_family(name: str, res: Result, path: Path) -> None:
    """A result of another family than the instance is a wrong file (exit 2), not a violation."""
    if res.family != name:
        raise InputError("result", f"{path} is a {res.family} result, the instance is a {name} file")


def _load_pair(instance: Path, result: Path) -> tuple[Any, Result]:
    inst = api.load(instance)
    res = api.load_result(result)
    _same_family(api.family_of(inst).name, res, result)
    return inst, res


def _check_figure_path(output: Path, *, what: str = "output") -> None:
    if output.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InputError(what, f"expected a .png, .svg or .pdf file, got {output.name!r}")
    check_output_path(output, what=what)


def _save_figure(fig: Any, output: Path) -> None:
    import matplotlib.pyplot as plt

    from edgeopt.core.jsonio import atomic_file

    _check_figure_path(output)
    with atomic_file(output) as tmp:
        fig.savefig(tmp, dpi=150, format=output.suffix.lower().lstrip("."))
    plt.close(fig)
    err.print(f"wrote {output}")


@app.command("plot-schedule")
def plot_schedule(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    result: Annotated[Path, typer.Argument(help="Result JSON file (from `edgeopt run/solve -o`).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Image to write: .png, .svg or .pdf.")],
    jobs: Annotated[str | None, typer.Option(
        help="Only these jobs, e.g. '1,2,5', '0-9' or both ('0-9,15'); a range is clipped to the instance's ids.")]
    = None,
    servers: Annotated[str | None, typer.Option(
        help="Only these rows (servers, sites or clusters as the chart names them), comma-separated.")] = None,
    window: Annotated[str | None, typer.Option(help="Only slots T0:T1, e.g. '0:50' (T1 is clipped to the horizon).")]
    = None,
    labels: Annotated[bool | None, typer.Option(
        "--labels/--no-labels", help="Bar texts on or off (default: on up to 120 bars, where they can be read).")] = None,
    max_input_bytes: MaxInputBytes = None,
) -> None:
    """Draw RESULT's schedule as a Gantt chart: one row per server (or site), bars coloured by job.

    RESULT must be a result of INSTANCE (exit 2 otherwise); an invalid one is drawn marked INVALID.
    """
    _check_figure_path(output)
    inst, res = _load_pair(instance, result)
    job_ids = _job_selection(jobs, api.family_of(inst).ids_of_jobs(inst)) if jobs is not None else None
    rows = None
    if servers is not None:
        rows = list(dict.fromkeys(r.strip() for r in servers.split(",", MAX_PLOT_ITEMS) if r.strip()))
        if not rows or len(rows) > MAX_PLOT_ITEMS:
            raise InputError("--servers", f"expected 1 to {MAX_PLOT_ITEMS:,} comma-separated row names, "
                             f"got {_clip(servers)!r}")
    span = None
    if window is not None:
        t0, _, t1 = window.partition(":")
        try:
            span = (float(t0), float(t1))
        except ValueError:
            raise InputError("--window", f"expected T0:T1 in slots, e.g. 0:50, got {_clip(window)!r}") from None
    with _plot_options({"jobs": "--jobs", "rows": "--servers", "window": "--window"}):
        ax = api.plot_schedule(inst, res, jobs=job_ids, rows=rows, window=span, labels=labels)
    _save_figure(ax.figure, output)


@app.command("plot-utilisation")
def plot_utilisation(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    result: Annotated[Path, typer.Argument(help="Result JSON file (from `edgeopt run/solve -o`).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Image to write: .png, .svg or .pdf.")],
    max_input_bytes: MaxInputBytes = None,
) -> None:
    """Draw the capacity RESULT's schedule uses over time, per resource.

    RESULT must be a result of INSTANCE (exit 2 otherwise); an invalid one is drawn marked INVALID.
    """
    _check_figure_path(output)
    inst, res = _load_pair(instance, result)
    with _plot_options({}):
        fig = api.plot_utilisation(inst, res)
    _save_figure(fig, output)


#: The most comma-separated items --jobs or --servers may hold (ranges 'A-B' select many jobs in one item).
MAX_PLOT_ITEMS = 10_000


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _job_selection(text: str, ids: list[int]) -> list[int]:
    """--jobs 'a,b,c', 'A-B' or a mix ('0-9,15') as the instance's job ids it selects.

    A range is clipped to the instance's ids, never expanded: '0-1000000000' selects every job of the
    instance instead of building a billion-entry list. A malformed or reversed item, an id the instance
    lacks, a range that holds none of its jobs, or more than `MAX_PLOT_ITEMS` items: InputError naming --jobs.
    """
    import bisect

    known = sorted({int(j) for j in ids})
    span = f"the instance's job ids are {known[0]}-{known[-1]}" if known else "the instance has no jobs"
    items = text.split(",", MAX_PLOT_ITEMS)
    if len(items) > MAX_PLOT_ITEMS:
        raise InputError("--jobs", f"more than {MAX_PLOT_ITEMS:,} items; select many jobs with a range 'A-B'")
    chosen: set[int] = set()
    for item in items:
        if not item.strip():
            continue
        if "-" in item:
            lo, hi = _job_range(item, text)
            inside = known[bisect.bisect_left(known, lo):bisect.bisect_right(known, hi)]  # clipped, not expanded
            if not inside:
                raise InputError("--jobs", f"{item.strip()} holds no job of the instance ({span})")
            chosen.update(inside)
            continue
        try:
            j = int(item)
        except ValueError:
            raise InputError("--jobs", f"expected job ids 'a,b,c', ranges 'A-B' or both, got {_clip(text)!r}") from None
        k = bisect.bisect_left(known, j)
        if k == len(known) or known[k] != j:
            raise InputError("--jobs", f"{j} is not a job of the instance ({span})")
        chosen.add(j)
    if not chosen:
        raise InputError("--jobs", f"no job selected by {_clip(text)!r}")
    return sorted(chosen)


def _job_range(item: str, text: str) -> tuple[int, int]:
    """'A-B' as (A, B), A <= B, both >= 0 (InputError naming --jobs)."""
    try:
        lo, hi = (int(x) for x in item.split("-", 1))
    except ValueError:
        raise InputError("--jobs", f"expected job ids 'a,b,c', ranges 'A-B' or both, got {_clip(text)!r}") from None
    if lo > hi:
        raise InputError("--jobs", f"range {lo}-{hi} is empty (A must be <= B in 'A-B')")
    return lo, hi


@contextlib.contextmanager
def _plot_options(options: dict[str, str]) -> Any:
    """Around an api plot call: its InputErrors on ``jobs``/``rows``/``window`` name the command's options,
    and an `api.InvalidResultWarning` (a result the validator rejects, still drawn) becomes one
    ``warning:`` line on stderr."""
    import warnings

    from edgeopt.core.errors import InputError as Error  # the real class (this module's name is lazy)

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", api.InvalidResultWarning)
            yield
    except Error as exc:
        if exc.field in options:
            raise InputError(options[exc.field], exc.message) from None
        raise
    for w in caught:
        if issubclass(w.category, api.InvalidResultWarning):
            err.print(f"warning: {w.message}", markup=False, highlight=False, soft_wrap=True)
        else:  # not ours: shown as it would have been
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)


#: The demo's work per exact solve: every small preset proves within a few units (at most about 10 CPU
#: seconds on an idle core), so its ratios are to the optimum however loaded the machine is.
DEMO_WORK_LIMIT = 200.0


@app.command()
def demo(
    family: Annotated[str | None, typer.Option(help="Only this family (default: every one).")] = None,
    seed: Seed = 0,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds per exact solve (a guard: the "
                                              "work limit stops it first).")] = 600.0,
    work_limit: Annotated[float, typer.Option("--work-limit", help="Deterministic work per exact solve: the "
                                              "same ratios on a busy machine as on an idle one.")] = DEMO_WORK_LIMIT,
) -> None:
    """Generate a small instance per family, run every algorithm and the exact model, print a table."""
    specs = api.families() if family is None else [api.family(family)]
    for spec in specs:
        inst = api.generate(spec.name, None, seed=seed)
        has_exact = bool(api.exact_methods(spec.name))
        with _progress_status(f"{spec.name}: running every algorithm"):
            comparison = api.compare(inst, None, optimal=has_exact, time_limit=time_limit, seed=seed,
                                     work_limit=work_limit)
        out.print(f"\n[bold]{spec.name}[/bold] - {spec.paper}; small instance, seed {seed}")
        _print_comparison(comparison)


ALGORITHMS_HELP = ("'all' or a comma-separated list of algorithms or variants, e.g. "
                   "'online[F=1],online[F=64],drf' (parameters: `edgeopt algorithms FAMILY`).")
GRID_HELP = ("ALGO.PARAM=V1,V2,... (repeatable): add one variant per value, e.g. --grid online.F=1,8,64; "
             "two grids of one algorithm multiply. With --grid, --algorithms defaults to none.")


def _variant_labels(family: str, algorithms: str, grid: list[str] | None) -> list[str]:
    """The labels of ``--algorithms`` and ``--grid``, each checked against the declared parameters.

    Grids of one algorithm multiply: their product is counted before it is built, and more variants than
    a sweep has cells are refused (InputError naming ``grid``)."""
    from edgeopt.services.variants import parse_grid, parse_list, resolve
    from edgeopt.sweep import MAX_CELLS

    sizes: dict[str, int] = {}
    for text in grid or []:
        head, _, values = text.partition("=")
        name = head.partition(".")[0].strip()
        sizes[name] = sizes.get(name, 1) * max(1, sum(1 for v in values.split(",") if v.strip()))
    if sum(sizes.values()) > MAX_CELLS:
        raise InputError("grid", f"{sum(sizes.values()):,} variants, more than the {MAX_CELLS:,} cells a sweep "
                                 "may hold")
    if algorithms == "all":
        items = [] if grid else list(api.algorithms(family))
    else:
        items = parse_list(algorithms)
    items += parse_grid(grid or [])
    return [v.label for v in resolve(family, items, "algorithms")]


def _parse_params(items: list[str]) -> dict[str, str]:
    """['k=5', 'alpha=on_tau'] -> {'k': '5', ...} (converted later against the declared parameters)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError("param", f"expected KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _parse_seeds(text: str, most: int | None = None) -> list[int]:
    """'0-19' or '1,4,7' or '3' -> list of seeds (one rule for the CLI and the benchmarks).

    With ``most``, more seeds than that are refused (InputError naming ``seeds``) from the text alone,
    before a list is built: '0-99999999999' was a MemoryError. A seed must fit the store's int64 column.
    """
    from edgeopt.bench import parse_seeds

    if most is not None:
        lo, sep, hi = text.partition("-")
        try:
            count = int(hi) - int(lo) + 1 if sep else sum(1 for x in text.split(",") if x.strip())
        except ValueError:
            count = 0  # not a range of integers: parse_seeds names what is wrong
        if count > most:
            from edgeopt.sweep import MAX_POINTS

            raise InputError("seeds", f"{text!r} is {count:,} seeds, at most {most:,} here (a sweep holds at "
                                      f"most {MAX_POINTS:,} instances: seeds x job counts)")
    seeds = parse_seeds(text)
    if max(seeds) > 2**63 - 1:
        raise InputError("seeds", f"a seed must be below 2**63 (the store's 64-bit column), got {max(seeds)}")
    return seeds


@app.command()
def sweep(
    family: Annotated[str, typer.Argument(help="Problem family.")],
    seeds: Annotated[str, typer.Option(help="Seeds: 'A-B' or 'a,b,c'. A sweep holds at most 100,000 instances "
                                            "(seeds x job counts) and 500,000 cells (x algorithms).")] = "0-9",
    preset: Annotated[str | None, typer.Option(help=PRESET_HELP)] = None,
    jobs: Annotated[str | None, typer.Option(help="Job counts, comma-separated (one sweep axis).")] = None,
    servers: Annotated[int | None, typer.Option(help="Number of servers.")] = None,
    horizon: Annotated[int | None, typer.Option(help="Number of slots.")] = None,
    algorithms: Annotated[str, typer.Option(help=ALGORITHMS_HELP)] = "all",
    grid: Annotated[list[str] | None, typer.Option("--grid", help=GRID_HELP)] = None,
    optimal: Annotated[bool, typer.Option("--optimal", help="Solve each instance exactly too.")] = False,
    method: Annotated[str, typer.Option(help="Exact model used with --optimal. " + METHOD_HELP)] = "milp",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds per exact solve.")] = 60.0,
    address: Annotated[str | None, typer.Option(help="Dask scheduler address (default: a LocalCluster).")] = None,
    workers: Annotated[int | None, typer.Option(
        help=f"LocalCluster worker processes, one thread each (default: one per core, {os.cpu_count() or 1} here; "
        "at most 4 per core: a worker keeps one core busy, so more only add processes and memory).")] = None,
    json_file: Annotated[Path | None, typer.Option("--json", help="Write every row as JSON.")] = None,
    store: Annotated[Path | None, typer.Option(
        "--store", help="Parquet dataset directory: each instance's rows are written as soon as it finishes; "
        "a rerun with the same --store computes only what is missing (read it with edgeopt.sweep.read_sweep).")] = None,
    retry_errors: Annotated[bool, typer.Option(
        "--retry-errors", help="With --store: recompute the stored cells that recorded an error.")] = False,
    work_limit: WorkLimit = None,
) -> None:
    """Run algorithms over many seeded instances on Dask and summarise the ratios.

    Ctrl-C or SIGTERM stops the sweep (exit 130 / 143); with --store every finished instance is kept.
    On a SLURM cluster, start Dask workers with dask-jobqueue and pass --address (docs/sweeps.md).
    """
    from edgeopt.core.limits import check_work_limit
    from edgeopt.sweep import (
        MAX_POINTS,
        SweepPoint,
        check_size,
        check_store_path,
        check_workers,
        default_workers,
        error_kinds,
        limit_notes,
        run_sweep,
        summarise,
    )

    check_work_limit(work_limit)

    # Every option is checked here, before a list is expanded or a process started: a sweep that cannot
    # run is refused with exit 2, never left to fill memory or a table of error cells.
    workers = default_workers() if workers is None else check_workers(workers, "workers")
    check_output_path(json_file, what="json")
    if store is not None:
        check_store_path(store)
    if not 0 < time_limit <= api.MAX_TIME_LIMIT:  # also NaN
        raise InputError("time_limit", f"must be a number of seconds in (0, {api.MAX_TIME_LIMIT:g}], got {time_limit}")
    spec = api.family(family)
    job_counts: list[int | None] = [None]
    if jobs is not None:
        try:
            job_counts = [int(x) for x in jobs.split(",")]
        except ValueError:
            raise InputError("jobs", f"expected comma-separated integers, got {jobs!r}") from None
        for n in job_counts:
            if n < 1:
                raise InputError("jobs", f"must be >= 1, got {n}")
        spec.check_limits(jobs=max(job_counts))  # the largest is refused here, before it is drawn
    seed_list = _parse_seeds(seeds, most=max(1, MAX_POINTS // len(job_counts)))
    check_size(len(seed_list) * len(job_counts), 1, "jobs" if len(job_counts) > 1 else "seeds")
    # One instance with the first values: a bad preset, a server count or horizon above the family's caps,
    # or a combination the instance model refuses fails here (exit 2), not in every cell.
    first = min((n for n in job_counts if n is not None), default=None)
    api.generate(family, preset, seed=seed_list[0], jobs=first, servers=servers, horizon=horizon)
    names = None if algorithms == "all" and not grid else tuple(_variant_labels(family, algorithms, grid))
    n_algorithms = len(names) if names is not None else len(api.algorithms(family))
    check_size(len(seed_list) * len(job_counts), n_algorithms + bool(optimal), "algorithms")
    if optimal:
        api.check_choice("method", method, api.exact_method_names(family), f"{family} exact method")
    points = [
        SweepPoint(family, preset, seed=s, jobs=n, servers=servers, horizon=horizon, algorithms=names,
                   optimal=optimal, method=method, time_limit=time_limit, work_limit=work_limit)
        for n in job_counts
        for s in seed_list
    ]
    with _progress() as progress, _report_interruption(points, store):
        task = progress.add_task(f"sweep over {len(points)} instances", total=len(points))
        rows = run_sweep(points, address=address, n_workers=workers, store=store, retry_errors=retry_errors,
                         on_done=lambda done, total: progress.update(task, completed=done, total=total))
    table = Table("algorithm", "n", "errors", "valid", "mean ratio to optimum (n)", "max", "mean ratio to bound (n)",
                  "max", "mean runtime s",
                  caption="a ratio to the exact model's bound (it stopped at its time limit) is an upper estimate "
                  "of the true ratio; the two are never averaged together")
    def best_first(s: dict) -> tuple:
        ratio = s["mean_ratio"] if s["mean_ratio"] is not None else s["mean_ratio_to_bound"]
        return (ratio is None, ratio or 0.0, s["algorithm"])

    for s in sorted(summarise(rows), key=best_first):  # best mean ratio first, as a comparison ranks
        table.add_row(_plain(s["algorithm"]), str(s["n"]), str(s["errors"]), f"{s['valid']:.0%}",
                      f"{_fmt(s['mean_ratio'], 5)} ({s['n_optimum']})", _fmt(s["max_ratio"], 5),
                      f"{_fmt(s['mean_ratio_to_bound'], 5)} ({s['n_bound']})", _fmt(s["max_ratio_to_bound"], 5),
                      f"{s['mean_runtime_s']:.3f}")
    out.print(table)
    for note in limit_notes(rows):  # a limit that bit is said, not left to a "-" in the ratio columns
        out.print(f"note: {note}", markup=False)
    kinds = error_kinds(rows)
    for kind in kinds[:5]:  # the reason of each kind of error cell, which the table only counts
        err.print(f"errors: {kind['count']} cell(s): {kind['message']} (first at seed {kind['seed']}, "
                  f"algorithm {kind['algorithm']})", markup=False)
    if len(kinds) > 5:
        err.print(f"errors: {len(kinds) - 5} more kinds of error (every cell's error is in --json and --store)",
                  markup=False)
    if json_file is not None:
        write_json(json_file, rows)


@contextlib.contextmanager
def _report_interruption(points: list[Any], store: Path | None) -> Any:
    """On Ctrl-C or SIGTERM, say what the sweep kept and the command that resumes it, then let it unwind."""
    try:
        yield
    except (KeyboardInterrupt, Terminated):
        import shlex

        command = "edgeopt " + shlex.join(_ARGV)
        if store is None:
            err.print("sweep interrupted: nothing was kept (no --store); to keep finished instances, run it with "
                      f"--store DIR: {command} --store DIR", markup=False)
        else:
            from edgeopt.sweep import stored_cells

            kept = len(stored_cells(store) & {p.key for p in points})
            err.print(f"sweep interrupted: {kept} of {len(points)} instances are stored in {store}; "
                      f"resume with: {command}", markup=False)
        raise


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


#: The ratio column's header, by what the ratios are against (no column when there is no reference).
RATIO_HEADER = {"optimum": "ratio to optimum", "bound": "ratio to bound (upper estimate)"}


def _print_comparison(comparison: api.Comparison) -> None:
    """The comparison as a table, best rank first (unranked rows last, in their order)."""
    header = RATIO_HEADER.get(comparison.reference_name)
    columns = ["algorithm", "kind", "status", "objective", *([header] if header else []), "rank", "valid",
               "runtime s"]
    caption = f"objective: {comparison.objective_name} (lower is better); partial results (jobs rejected) get "
    caption += "no ratio and no rank" if header else "no rank; no exact model ran (or it found no bound): no ratios"
    table = Table(*columns, caption=caption)
    order = sorted(comparison.rows, key=lambda r: (r.rank is None, r.rank or 0))
    for row in order:
        ratio = f"{row.rejected} rejected" if row.status == "partial" else _fmt(row.ratio, 5)
        table.add_row(
            _plain(row.algorithm),
            _kind_label(row.kind, row.relaxed),
            row.status,
            _fmt(row.objective, 8),
            *([ratio] if header else []),
            "-" if row.rank is None else str(row.rank),
            "yes" if row.valid else "NO",
            f"{row.runtime_s:.3f}",
        )
    out.print(table)
    for row in comparison.rows:
        if row.kind == "exact" and row.status == "time_limit":
            out.print(_limit_note(row, comparison.reference_name), markup=False)


def _limit_note(row: api.Row, reference_name: str) -> str:
    """Say that an exact solve stopped at its limit, what the ratios are then, and how to get a proof."""
    limit = json.loads(row.params or "{}")
    by_work = "work_limit" in limit and row.runtime_s < 0.95 * limit.get("time_limit", float("inf"))
    then = "ratios are to its bound (upper estimates of the true ratios)" if reference_name == "bound" else \
        "it found no bound, so there are no ratios"
    if by_work:
        return (f"note: {row.algorithm} stopped at its work limit of {limit['work_limit']:g} before proving "
                f"optimality: {then}; raise --work-limit")
    return (f"note: {row.algorithm} stopped at its {limit.get('time_limit', 0):g} s time limit before proving "
            f"optimality: {then}; raise --time-limit, or give --work-limit for a result that does not depend on "
            "how busy the machine is")


class Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C (no output file is left half-written), then exit 143."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


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


def _is_input_error(exc: BaseException) -> bool:
    errors = sys.modules.get("edgeopt.core.errors")  # raised only once it was imported
    return errors is not None and isinstance(exc, errors.InputError)


def _is_model_error(exc: BaseException) -> bool:
    errors = sys.modules.get("edgeopt.core.errors")
    return errors is not None and isinstance(exc, errors.ModelError)

from edgeopt.commands import traces as _traces_cli

app.command("download-trace")(_traces_cli.download_trace)
app.command("trace-stats")(_traces_cli.trace_stats)


#: The arguments of the running command (for the line that resumes an interrupted sweep).
_ARGV: list[str] = []

from edgeopt.commands.bound import bound as _bound

app.command("bound")(_bound)


def main(argv: list[str] | None = None) -> None:
    """Entry point: maps bad input to exit code 2 with a one-line message (all errors listed below it),
    Ctrl-C to 130 and SIGTERM to 143, in both cases without writing any output file.

    Run as the command (``argv`` None), a signal gives 130/143 whenever it arrives: during the
    imports (handlers set at the top of this module), during the command (KeyboardInterrupt or
    `Terminated` unwinds it) and while the process exits (`_exit`)."""
    import threading

    global _ARGV
    _ARGV = list(sys.argv[1:] if argv is None else argv)
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


def _main(argv: list[str] | None) -> None:
    command = typer.main.get_command(app)
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        _fill_dynamic_help(command, argv)
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
