"""Commands that put algorithms side by side: ``compare`` and ``demo``, and their tables.

Registered by `edgeopt.cli`; the functions here are plain typer commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from edgeopt.commands.common import (
    METHOD_HELP,
    InputError,
    MaxInputBytes,
    Plugins,
    Seed,
    Table,
    WorkLimit,
    _fmt,
    _plain,
    _print_json,
    _progress_status,
    _run_progress,
    api,
    check_output_path,
    out,
    write_json,
)
from edgeopt.commands.plots import _check_figure_path


def compare(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    algorithms: Annotated[str, typer.Option(help=ALGORITHMS_HELP)] = "all",
    grid: Annotated[list[str] | None, typer.Option("--grid", help=GRID_HELP)] = None,
    optimal: Annotated[bool, typer.Option("--optimal", help="Also solve exactly and report ratios to the optimum "
                                          "(a model too large for the budget: ratios to --bound's bound).")] = False,
    bound: Annotated[bool, typer.Option("--bound", help="Also compute a certified lower bound: every ratio is to "
                                        "it, with the interval [bound, best] and its gap, at any size.")] = False,
    bound_method: Annotated[str, typer.Option("--bound-method", help="Bound method for --bound (`auto`: the "
                                              "family's strongest scalable one).")] = "auto",
    method: Annotated[str, typer.Option(help="Exact model used with --optimal. " + METHOD_HELP)] = "milp",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds for the exact model, and again for "
                                              "the bound.")] = 60.0,
    max_model_size: Annotated[int | None, typer.Option(
        "--max-model-size", help="Budget on the exact model's (and the bound's) estimated nonzeros "
        "(default 2,000,000), checked before any algorithm runs.")] = None,
    seed: Seed = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON on stdout.")] = False,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the comparison as JSON here.")] = None,
    plot: Annotated[Path | None, typer.Option(help="Write a bar chart (PNG/PDF/SVG).")] = None,
    max_input_bytes: MaxInputBytes = None,
    work_limit: WorkLimit = None,
    plugin: Plugins = None,
) -> None:
    """Run several algorithms on INSTANCE, validate each, and tabulate their objectives."""
    check_output_path(output)
    if plot is not None:
        _check_figure_path(plot, what="plot")
    inst = api.load(instance)
    spec = api.family_of(inst)
    names = _variant_labels(spec.name, algorithms, grid)  # a typo or bad parameter fails now, before any run
    total = len(names) + int(optimal) + int(bound)
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
            bound=bound,
            bound_method=bound_method,
            max_model_size=max_model_size,
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


#: The demo's work per exact solve: every small preset proves within a few units (at most about 10 CPU
#: seconds on an idle core), so its ratios are to the optimum however loaded the machine is.
DEMO_WORK_LIMIT = 200.0


def demo(
    family: Annotated[str | None, typer.Option(help="Only this family (default: every one).")] = None,
    seed: Seed = 0,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds per exact solve (a guard: the "
                                              "work limit stops it first).")] = 600.0,
    work_limit: Annotated[float, typer.Option("--work-limit", help="Deterministic work per exact solve: the "
                                              "same ratios on a busy machine as on an idle one.")] = DEMO_WORK_LIMIT,
    plugin: Plugins = None,
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
        skipped = api.unavailable_algorithms(spec.name)  # not registered here (tapfinger's learned policy without rl)
        if skipped:
            out.print(f"note: {spec.name} {', '.join(skipped)} skipped: {'; '.join(dict.fromkeys(skipped.values()))}",
                      markup=False, soft_wrap=True)


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
    lower, upper = comparison.interval()
    if comparison.reference_name == "bound" and upper is not None:
        caption += (f"\ninterval on the optimum: [{_fmt(lower, 8)} ({comparison.reference_method} bound), "
                    f"{_fmt(upper, 8)} (best schedule)], gap (best - bound) / best = {100 * comparison.gap():.1f} %")
    table = Table(*columns, caption=caption)
    order = sorted(comparison.rows, key=lambda r: (r.rank is None, r.kind == "bound", r.rank or 0))
    for row in order:
        ratio = f"{row.rejected} rejected" if row.status == "partial" else _fmt(row.ratio, 5)
        table.add_row(
            _plain(row.algorithm),
            _kind_label(row.kind, row.relaxed),
            row.status,
            _fmt(row.objective, 8) if row.kind != "bound" else f">= {_fmt(row.bound, 8)}",
            *([ratio] if header else []),
            "-" if row.rank is None else str(row.rank),
            "yes" if row.valid else "NO",
            f"{row.runtime_s:.3f}",
        )
    out.print(table)
    for note in comparison.notes:
        out.print(f"note: {note}", markup=False)
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
