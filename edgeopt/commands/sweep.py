"""The ``sweep`` command: many seeded instances on Dask, summarised.

Registered by `edgeopt.cli`; the functions here are plain typer commands.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from edgeopt.commands.common import (
    ARGV,
    METHOD_HELP,
    PRESET_HELP,
    InputError,
    Plugins,
    Table,
    Terminated,
    WorkLimit,
    _fmt,
    _plain,
    _progress,
    api,
    check_output_path,
    err,
    out,
    write_json,
)
from edgeopt.commands.compare import ALGORITHMS_HELP, GRID_HELP, _variant_labels


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
    bound: Annotated[bool, typer.Option("--bound", help="Also a certified lower bound per instance: ratios to it "
                                        "where no optimum is proven, at any size.")] = False,
    bound_method: Annotated[str, typer.Option("--bound-method", help="Bound method for --bound (`auto`: the "
                                              "family's strongest scalable one).")] = "auto",
    method: Annotated[str, typer.Option(help="Exact model used with --optimal. " + METHOD_HELP)] = "milp",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds per exact solve (and per bound).")]
    = 60.0,
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
    plugin: Plugins = None,
    dashboard: Annotated[bool, typer.Option(
        "--dashboard", help="Serve the LocalCluster's Dask dashboard on localhost:8787 (needs bokeh); "
        "off by default, so no port is taken.")] = False,
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
    check_size(len(seed_list) * len(job_counts), n_algorithms + bool(optimal) + bool(bound), "algorithms")
    if optimal:
        api.check_choice("method", method, api.exact_method_names(family), f"{family} exact method")
    if bound:
        from edgeopt.core.lowerbound import find_method

        find_method(api.bound_methods(family), bound_method, family)  # a typo fails here, not in every cell
    points = [
        SweepPoint(family, preset, seed=s, jobs=n, servers=servers, horizon=horizon, algorithms=names,
                   optimal=optimal, method=method, time_limit=time_limit, work_limit=work_limit, bound=bound,
                   bound_method=bound_method)
        for n in job_counts
        for s in seed_list
    ]
    with _progress() as progress, _report_interruption(points, store):
        task = progress.add_task(f"sweep over {len(points)} instances", total=len(points))
        rows = run_sweep(points, address=address, n_workers=workers, store=store, retry_errors=retry_errors,
                         plugins=plugin or (), dashboard=dashboard,
                         on_done=lambda done, total: progress.update(task, completed=done, total=total))
    table = Table("algorithm", "n", "errors", "valid", "mean ratio to optimum (n)", "max", "mean ratio to bound (n)",
                  "max", "mean runtime s",
                  caption="a ratio to a bound (a certified lower bound, or the exact model's at its limit) is an "
                  "upper estimate of the true ratio; ratios to the optimum and to a bound are never averaged "
                  "together")
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

        command = "edgeopt " + shlex.join(ARGV)
        if store is None:
            err.print("sweep interrupted: nothing was kept (no --store); to keep finished instances, run it with "
                      f"--store DIR: {command} --store DIR", markup=False)
        else:
            from edgeopt.sweep import stored_cells

            kept = len(stored_cells(store) & {p.key for p in points})
            err.print(f"sweep interrupted: {kept} of {len(points)} instances are stored in {store}; "
                      f"resume with: {command}", markup=False)
        raise
