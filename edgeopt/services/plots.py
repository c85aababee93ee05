"""Charts of one result on its instance: Gantt and utilisation, each checked against the instance first.

Part of the services layer; `edgeopt.api` re-exports the public names.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from edgeopt.core import FamilySpec, InputError, Result, Violation
from edgeopt.core.family import instance_sha256
from edgeopt.services.lookup import _check_result, check_choice, family_of


class InvalidResultWarning(UserWarning):
    """A chart drew a result that its instance's validator rejects; the chart's title says INVALID.

    `plot_schedule` and `plot_utilisation` still draw such a result (seeing a broken schedule is how one
    finds what broke it); the CLI prints this warning as one ``warning:`` line on stderr.
    """


def plot_schedule(
    instance: Any,
    result: Result,
    ax: Any = None,
    *,
    title: str | None = None,
    jobs: Sequence[int] | range | None = None,
    rows: Sequence[str] | None = None,
    window: tuple[float, float] | None = None,
    labels: bool | None = None,
    view: str = "auto",
) -> Any:
    """Gantt chart of ``result``'s schedule: one row per server (or site), bars coloured by job.

    At scale (more than `SCALE_ROWS` rows or `SCALE_JOBS` jobs to draw, and no ``jobs``, ``rows`` or
    ``window`` chosen) the default is a heat map instead (`edgeopt.viz.plot_heatmap`): rows x time
    bins coloured by the jobs held, busiest rows on top and named with their index, and a title saying
    how to zoom in. Thousand-job Gantt charts were a wall of colour. Choosing ``jobs``, ``rows`` or
    ``window`` draws bars, as does ``view="bars"``.

    The result must be one of ``instance`` (its ``instance_sha256``, as `validate` compares it):
    another instance's result is refused (InputError), since its bars would be drawn on rows and
    arrivals it was never computed for. A result the validator rejects (a dropped job, an overfull
    server) is drawn, its title starting with INVALID and the first violation, and an
    `InvalidResultWarning` is issued.

    Args:
        instance: the instance the result schedules.
        result: any algorithm's or exact model's result with a schedule.
        ax: a matplotlib Axes to draw on (a new figure when None).
        title: defaults to family, algorithm, status and objective.
        jobs: draw only these jobs (ids of the instance); a ``range`` is clipped to the instance's
            ids, never expanded (``range(10**9)`` is every job).
        rows: draw only these rows: names as the chart shows them (``h0-g3.8xlarge``, ``site 2``) or
            indices of the servers (sites, clusters) of the instance: ints, ``range``s (clipped to the
            instance, never expanded) or strings ``"3"``, ``"0-9"`` (a name wins over an index).
        window: ``(t0, t1)``: draw only these slots (``t1`` is clipped to the horizon).
        labels: write bar texts; None: only when the chart has few enough bars to read them
            (`edgeopt.viz.LABEL_LIMIT`).
        view: ``auto`` (bars, or a heat map at scale), ``bars`` or ``heatmap``.

    Returns:
        The matplotlib Axes. Its ``schedule_view`` attribute says what was drawn (``bars`` or
        ``heatmap``); for a heat map, ``zoom_hint`` is a line naming the busiest rows and the options
        that zoom in (the CLI prints it).
    """
    from edgeopt import viz

    spec, violations = _plot_check(instance, result)
    if spec.gantt is None:
        raise InputError("family", f"family {spec.name!r} has no gantt adapter (FamilySpec.gantt)")
    if title is None:
        title = f"{spec.name} / {result.algorithm}: {result.status.value}, objective {_short(result.objective)}"
        if result.rejected:
            title += f", {len(result.rejected)} rejected"
    check_choice("view", view, VIEWS, "view")
    explicit = jobs is not None or rows is not None or window is not None
    wanted = _wanted_jobs(spec, instance, jobs)
    schedule = spec.parse_schedule(result.schedule)
    bars = _drawable(lambda: spec.gantt(instance, schedule), violations)
    names = list(spec.gantt_rows(instance)) if spec.gantt_rows is not None else \
        list(dict.fromkeys(b.row for b in bars))
    chosen = _resolve_rows(names, rows) if rows is not None else None
    bars, window, note = _select_bars(bars, wanted, chosen, window, float(instance.horizon))
    # The time axis ends a little after the last bar or arrival shown (the horizon is often far longer).
    last = max([b.end for b in bars] + [b.arrival or 0 for b in bars] + [1])
    until = min(float(instance.horizon), math.ceil(last + max(1.0, 0.08 * last)))
    n_rows, n_jobs = len({b.row for b in bars}), len({b.job for b in bars})
    if view == "auto":
        view = "heatmap" if not explicit and (n_rows > SCALE_ROWS or n_jobs > SCALE_JOBS) else "bars"
    if view == "heatmap":
        index = {n: i for i, n in reversed(list(enumerate(names)))}  # a name used twice: its first index
        size = f"{n_rows:,} rows x {n_jobs:,} jobs"
        head = f"heat map of {size}" + (" (too many for bars)" if not explicit else "")
        title = (title + "\n" if title else "") + head + "; zoom in: --servers, --window, --jobs"
        if note:
            title += f"\n{note}"
        ax = viz.plot_heatmap(bars, ax=ax, title=_marked(title, violations), horizon=until, row_index=index)
        ax.schedule_view = "heatmap"
        ax.zoom_hint = _zoom_hint(ax.rows, index, size, until)
        return ax
    if note and title:
        title += f"\n{note}"
    ax = viz.plot_gantt(bars, ax=ax, title=_marked(title, violations), horizon=until, labels=labels,
                        window=window)
    ax.schedule_view = "bars"
    return ax


#: What `plot_schedule` can draw.
VIEWS = ("auto", "bars", "heatmap")
#: Above this many rows or jobs on the chart, ``view="auto"`` draws a heat map (labelled bars of more
#: are unreadable: about 40 rows fit a page at a legible lane height; 200 jobs cycle 20 colours ten times).
SCALE_ROWS = 40
SCALE_JOBS = 200
#: The most rows a chart's ``rows`` may list one by one (a range is clipped, not listed).
MAX_PLOT_ROWS = 10_000


def _zoom_hint(rows_top_down: Sequence[str], index: dict[str, int], size: str, until: float) -> str:
    """One line: the chart is a heat map, and the options that draw bars of a part of it."""
    top = [str(index[r]) for r in rows_top_down[:5] if r in index]
    busiest = f"--servers {','.join(top)} (the busiest), " if top else ""
    first = f"--window 0:{max(1, math.ceil(until / 10)):g}"
    return (f"{size} are too many for labelled bars: drew a heat map (busiest rows on top). Zoom in with "
            f"{busiest}--servers 0-9, {first} or --jobs 0-49; --view bars draws every bar anyway")


def parse_id_item(item: str, field: str) -> int | tuple[int, int] | None:
    """``"7"`` -> 7, ``"A-B"`` -> (A, B); None for anything else (a name, or malformed).

    The one reading of ids and id ranges that a chart's job and row selections share (``--jobs``,
    ``--servers``, ``rows=["0-9"]``). At most 18 digits: a longer number is no id, and Python refuses
    to convert a string of more than 4,300 digits. A reversed range is an InputError naming ``field``.
    """
    import re

    m = re.fullmatch(r"\s*([0-9]{1,18})\s*(?:-\s*([0-9]{1,18})\s*)?", item)
    if m is None:
        return None
    if m[2] is None:
        return int(m[1])
    lo, hi = int(m[1]), int(m[2])
    if lo > hi:
        raise InputError(field, f"range {lo}-{hi} is empty (A must be <= B in 'A-B')")
    return lo, hi


def rows_hint(names: Sequence[str], limit: int = 10) -> str:
    """The chart's rows in short: at most ``limit`` names, "... and N more", and the index range."""
    if not names:
        return "the chart has no rows"
    shown = ", ".join(names[:limit]) + (f" ... and {len(names) - limit:,} more" if len(names) > limit else "")
    return f"rows: {shown}; or indices 0-{len(names) - 1}"


def _resolve_rows(names: list[str], rows: Any) -> list[str]:
    """The row names ``rows`` selects (in the order given, each once); InputError naming ``rows``.

    An item is a name of ``names``, an index into it (int, or a string of digits), or a range of
    indices (``range``, or ``"A-B"``) clipped to it: a range is never expanded beyond the rows, so
    ``"0-1000000000"`` is every row. A name wins over the index it might also read as.
    """
    import itertools
    import numbers

    if isinstance(rows, (str, bytes, range)) or not hasattr(rows, "__iter__"):
        rows = [rows]
    listed = list(itertools.islice(iter(rows), MAX_PLOT_ROWS + 1))
    if len(listed) > MAX_PLOT_ROWS:
        raise InputError("rows", f"more than {MAX_PLOT_ROWS:,} rows listed (a range 'A-B' selects many)")
    known = set(names)
    n = len(names)
    chosen: list[str] = []
    for item in listed:
        if isinstance(item, bool) or not isinstance(item, (str, numbers.Integral, range)):
            raise TypeError(f"rows: expected row names, indices or ranges, got {item!r}")
        if isinstance(item, str) and item in known:
            chosen.append(item)
            continue
        what = parse_id_item(item, "rows") if isinstance(item, str) else item
        if isinstance(what, tuple):
            what = range(what[0], what[1] + 1)
        if isinstance(what, range):
            inside = [names[i] for i in range(n) if i in what]  # membership is arithmetic: no expansion
            if not inside:
                raise InputError("rows", f"{_clip(str(item))} holds no row index ({rows_hint(names)})")
            chosen.extend(inside)
        elif what is None:
            from edgeopt.services.lookup import did_you_mean

            raise InputError("rows", f"unknown row {_clip(str(item))!r}{did_you_mean(str(item), names)} "
                                     f"({rows_hint(names)})")
        elif not 0 <= int(what) < n:
            raise InputError("rows", f"no row index {int(what)} ({rows_hint(names)})")
        else:
            chosen.append(names[int(what)])
    if not chosen:
        raise InputError("rows", f"no row selected ({rows_hint(names)})")
    return list(dict.fromkeys(chosen))


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


#: The most job ids a chart's ``jobs`` may list one by one (a ``range`` is clipped, not listed).
MAX_PLOT_JOBS = 100_000


def _wanted_jobs(spec: FamilySpec, instance: Any, jobs: Any) -> set[int] | None:
    """The instance's job ids among ``jobs`` (None: all). Ids the instance lacks, or none of its own,
    are an InputError naming ``jobs``; the ids are never expanded beyond the instance's own."""
    if jobs is None:
        return None
    ids = [int(j) for j in spec.ids_of_jobs(instance)]
    if isinstance(jobs, range):
        wanted = {j for j in ids if j in jobs}  # membership in a range is arithmetic: no expansion
        if not wanted:
            raise InputError("jobs", f"{jobs} holds no job of the instance ({_id_span(ids)})")
        return wanted
    if isinstance(jobs, (str, bytes)) or not hasattr(jobs, "__iter__"):
        raise TypeError(f"jobs: expected a list of job ids (int), got {jobs!r}")
    import itertools
    import numbers

    listed = list(itertools.islice(iter(jobs), MAX_PLOT_JOBS + 1))
    if len(listed) > MAX_PLOT_JOBS:
        raise InputError("jobs", f"more than {MAX_PLOT_JOBS:,} job ids listed (a range selects many)")
    if not all(isinstance(j, numbers.Integral) and not isinstance(j, bool) for j in listed):
        raise TypeError(f"jobs: expected a list of job ids (int), got {listed[:10]!r}")
    known = set(ids)
    unknown = sorted({int(j) for j in listed} - known)
    if unknown:
        shown = ", ".join(map(str, unknown[:5])) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise InputError("jobs", f"not jobs of the instance: {shown} ({_id_span(ids)})")
    if not listed:
        raise InputError("jobs", "no job selected (an empty list)")
    return {int(j) for j in listed}


def _id_span(ids: Sequence[int]) -> str:
    return f"its ids are {min(ids)}-{max(ids)}" if ids else "it has no jobs"


def _select_bars(bars: list[Any], jobs: set[int] | None, rows: Sequence[str] | None,
                 window: tuple[float, float] | None, horizon: float) -> tuple[list[Any], Any, str]:
    """The bars of the chosen jobs and rows that overlap ``window``; a note of what was selected."""
    notes = []
    if jobs is not None:
        bars = [b for b in bars if b.job in jobs]
        if not bars:
            shown = ", ".join(map(str, sorted(jobs)[:5])) + (" ..." if len(jobs) > 5 else "")
            raise InputError("jobs", f"none of the selected jobs ({shown}) is scheduled in this result")
        notes.append(f"jobs {', '.join(map(str, sorted(jobs)))}" if len(jobs) <= 8 else f"{len(jobs)} jobs")
    if rows is not None:
        wanted_rows = set(rows)
        bars = [b for b in bars if b.row in wanted_rows]
        if not bars:
            shown = ", ".join(rows[:5]) + (" ..." if len(rows) > 5 else "")
            raise InputError("rows", f"no job of this result (of the selected jobs) runs on {shown}: idle")
        idle = len(wanted_rows - {b.row for b in bars})
        notes.append((f"rows {', '.join(rows)}" if len(rows) <= 4 else f"{len(rows)} rows")
                     + (f" ({idle} idle, not drawn)" if idle else ""))
    if window is not None:
        try:
            t0, t1 = (float(x) for x in window)
        except (TypeError, ValueError):
            raise TypeError(f"window: expected (t0, t1) in slots, got {window!r}") from None
        if not (math.isfinite(t0) and math.isfinite(t1) and 0 <= t0 < t1):
            raise InputError("window", f"expected 0 <= t0 < t1, got ({t0:g}, {t1:g})")
        if t0 >= horizon:
            raise InputError("window", f"starts at {t0:g}, at or after the horizon ({horizon:g} slots)")
        t1 = min(t1, horizon)
        bars = [b for b in bars if b.end > t0 and b.start < t1]
        window = (t0, t1)
        notes.append(f"slots {t0:g}-{t1:g}")
    return bars, window, ("shown: " + "; ".join(notes)) if notes else ""


def plot_utilisation(instance: Any, result: Result, fig: Any = None, *, title: str | None = None) -> Any:
    """Used capacity over time per resource of ``result``'s schedule; returns the matplotlib Figure.

    The result must be one of ``instance`` and an invalid one is drawn marked, as in `plot_schedule`.
    """
    from edgeopt import viz

    spec, violations = _plot_check(instance, result)
    if spec.usage is None:
        raise InputError("family", f"family {spec.name!r} has no usage adapter (FamilySpec.usage)")
    if title is None:
        title = f"{spec.name} / {result.algorithm}: capacity in use"
    schedule = spec.parse_schedule(result.schedule)
    series = _drawable(lambda: spec.usage(instance, schedule), violations)
    return viz.plot_usage(series, fig=fig, title=_marked(title, violations))


def _plot_check(instance: Any, result: Result) -> tuple[FamilySpec, list[Violation]]:
    """The family, and the violations of ``result`` (`FamilySpec.check_result`, as `validate` finds them).

    A result of another family or instance (``instance_sha256``), or without a schedule, cannot be
    drawn on ``instance``: InputError. Violations are returned, and warned of (`InvalidResultWarning`):
    an invalid result is still drawn, marked.
    """
    import warnings

    spec = family_of(instance)
    _check_result(result)
    if result.family != spec.name:
        raise InputError("result.family", f"result of family {result.family!r}, instance of {spec.name!r}")
    if result.instance_sha256 != instance_sha256(instance):
        raise InputError("result.instance_sha256", "the result is of another instance (its instance_sha256 "
                         "is not this instance's hash): not drawn on this one")
    if result.schedule is None:
        raise InputError("result.schedule", f"{result.algorithm} returned no schedule ({result.status.value})")
    violations = [v for v in spec.check_result(instance, result)]
    if violations:
        warnings.warn(InvalidResultWarning(
            f"{spec.name}/{result.algorithm} result is INVALID ({len(violations)} violation(s)), drawn anyway; "
            f"first: {_one_line(str(violations[0]))}"), stacklevel=3)
    return spec, violations


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _marked(title: str | None, violations: list[Violation]) -> str | None:
    """``title`` under an INVALID line naming the first violation, when there is one."""
    if not violations:
        return title
    mark = f"INVALID ({len(violations)} violation(s)): {_one_line(str(violations[0]), 70)}"
    return f"{mark}\n{title}" if title else mark


def _drawable(adapter: Callable[[], Any], violations: list[Violation]) -> Any:
    """The adapter's records; an invalid schedule the adapter cannot even read is an InputError."""
    if not violations:
        return adapter()
    try:
        return adapter()
    except (IndexError, KeyError, ValueError, TypeError, AttributeError) as exc:
        raise InputError("result", f"invalid and cannot be drawn ({exc.__class__.__name__}: {exc}); "
                         f"first violation: {_one_line(str(violations[0]))}") from None


def _short(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"
