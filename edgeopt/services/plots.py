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
) -> Any:
    """Gantt chart of ``result``'s schedule: one row per server (or site), bars coloured by job.

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
        rows: draw only these rows (server, site or cluster names as the chart shows them).
        window: ``(t0, t1)``: draw only these slots (``t1`` is clipped to the horizon).
        labels: write bar texts; None: only when the chart has few enough bars to read them
            (`edgeopt.viz.LABEL_LIMIT`).

    Returns:
        The matplotlib Axes.
    """
    from edgeopt import viz

    spec, violations = _plot_check(instance, result)
    if spec.gantt is None:
        raise InputError("family", f"family {spec.name!r} has no gantt adapter (FamilySpec.gantt)")
    if title is None:
        title = f"{spec.name} / {result.algorithm}: {result.status.value}, objective {_short(result.objective)}"
        if result.rejected:
            title += f", {len(result.rejected)} rejected"
    wanted = _wanted_jobs(spec, instance, jobs)
    schedule = spec.parse_schedule(result.schedule)
    bars = _drawable(lambda: spec.gantt(instance, schedule), violations)
    bars, window, note = _select_bars(bars, wanted, rows, window, float(instance.horizon))
    # The time axis ends a little after the last bar or arrival shown (the horizon is often far longer).
    last = max([b.end for b in bars] + [b.arrival or 0 for b in bars] + [1])
    until = min(float(instance.horizon), math.ceil(last + max(1.0, 0.08 * last)))
    if note and title:
        title += f"\n{note}"
    return viz.plot_gantt(bars, ax=ax, title=_marked(title, violations), horizon=until, labels=labels,
                          window=window)


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
        if isinstance(rows, (str, bytes)):
            rows = [rows]
        rows = list(dict.fromkeys(rows))
        known = list(dict.fromkeys(b.row for b in bars))
        if len(rows) > len(known):
            raise InputError("rows", f"{len(rows)} rows named, the chart has {len(known)}")
        for r in rows:
            check_choice("rows", r, known, "row")
        bars = [b for b in bars if b.row in set(rows)]
        notes.append(f"rows {', '.join(rows)}" if len(rows) <= 4 else f"{len(rows)} rows")
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
