"""Commands that draw one result: ``plot-schedule`` and ``plot-utilisation``.

Registered by `edgeopt.cli`; the functions here are plain typer commands.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer

from edgeopt.commands.common import (
    InputError,
    MaxInputBytes,
    Result,
    _same_family,
    api,
    check_output_path,
    err,
    out,
)


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


def plot_schedule(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    result: Annotated[Path, typer.Argument(help="Result JSON file (from `edgeopt run/solve -o`).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Image to write: .png, .svg or .pdf.")],
    jobs: Annotated[str | None, typer.Option(
        help="Only these jobs, e.g. '1,2,5', '0-9' or both ('0-9,15'); a range is clipped to the instance's ids.")]
    = None,
    servers: Annotated[str | None, typer.Option(
        help="Only these rows (servers, sites or clusters): indices, ranges or the chart's names, "
             "comma-separated, e.g. '0-9', '3,17' or 'h0-g3.8xlarge'.")] = None,
    window: Annotated[str | None, typer.Option(help="Only slots T0:T1, e.g. '0:50' (T1 is clipped to the horizon).")]
    = None,
    labels: Annotated[bool | None, typer.Option(
        "--labels/--no-labels", help="Bar texts on or off (default: on up to 120 bars, where they can be read).")] = None,
    view: Annotated[str, typer.Option(
        help="auto: bars, or a heat map (rows x time, busiest rows on top) above 40 rows or 200 jobs when "
             "no --jobs/--servers/--window is given; bars; heatmap.")] = "auto",
    max_input_bytes: MaxInputBytes = None,
) -> None:
    """Draw RESULT's schedule as a Gantt chart: one row per server (or site), bars coloured by job.

    A large schedule is drawn as a heat map unless --jobs, --servers or --window picks a part of it
    (a line on stdout says how). RESULT must be a result of INSTANCE (exit 2 otherwise); an invalid
    one is drawn marked INVALID.
    """
    _check_figure_path(output)
    inst, res = _load_pair(instance, result)
    job_ids = _job_selection(jobs, api.family_of(inst).ids_of_jobs(inst)) if jobs is not None else None
    rows = None
    if servers is not None:
        # names, indices and 'A-B' ranges alike: the API reads each item (`services.plots.parse_id_item`)
        rows = list(dict.fromkeys(r.strip() for r in servers.split(",", MAX_PLOT_ITEMS) if r.strip()))
        if not rows or len(rows) > MAX_PLOT_ITEMS:
            raise InputError("--servers", f"expected 1 to {MAX_PLOT_ITEMS:,} comma-separated rows (names, "
                             f"indices or ranges 'A-B'), got {_clip(servers)!r}")
    span = None
    if window is not None:
        t0, _, t1 = window.partition(":")
        try:
            span = (float(t0), float(t1))
        except ValueError:
            raise InputError("--window", f"expected T0:T1 in slots, e.g. 0:50, got {_clip(window)!r}") from None
    with _plot_options({"jobs": "--jobs", "rows": "--servers", "window": "--window", "view": "--view"}):
        ax = api.plot_schedule(inst, res, jobs=job_ids, rows=rows, window=span, labels=labels, view=view)
    _save_figure(ax.figure, output)
    if getattr(ax, "schedule_view", "bars") == "heatmap" and (jobs, servers, window) == (None, None, None):
        out.print(f"note: {ax.zoom_hint}", markup=False, soft_wrap=True)


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

    from edgeopt.services.plots import parse_id_item

    known = sorted({int(j) for j in ids})
    span = f"the instance's job ids are {known[0]}-{known[-1]}" if known else "the instance has no jobs"
    items = text.split(",", MAX_PLOT_ITEMS)
    if len(items) > MAX_PLOT_ITEMS:
        raise InputError("--jobs", f"more than {MAX_PLOT_ITEMS:,} items; select many jobs with a range 'A-B'")
    chosen: set[int] = set()
    for item in items:
        if not item.strip():
            continue
        parsed = parse_id_item(item, "--jobs")
        if parsed is None:
            raise InputError("--jobs", f"expected job ids 'a,b,c', ranges 'A-B' or both, got {_clip(text)!r}")
        if isinstance(parsed, tuple):
            lo, hi = parsed
            inside = known[bisect.bisect_left(known, lo):bisect.bisect_right(known, hi)]  # clipped, not expanded
            if not inside:
                raise InputError("--jobs", f"{item.strip()} holds no job of the instance ({span})")
            chosen.update(inside)
            continue
        j = parsed
        k = bisect.bisect_left(known, j)
        if k == len(known) or known[k] != j:
            raise InputError("--jobs", f"{j} is not a job of the instance ({span})")
        chosen.add(j)
    if not chosen:
        raise InputError("--jobs", f"no job selected by {_clip(text)!r}")
    return sorted(chosen)


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
