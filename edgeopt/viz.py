"""Charts written once for every family: a Gantt chart, utilisation over time, a comparison bar chart.

A family hands this module family-free records (`GanttBar`, `UsageSeries`,
see `edgeopt.core.views`) through its adapters; nothing here knows a family.
Every function draws on an Axes it is given, or on a new figure, and returns
what it drew on. Nothing switches the matplotlib backend: a notebook keeps
its inline backend, and a headless process gets matplotlib's own fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from edgeopt.core.views import GanttBar, UsageSeries

if TYPE_CHECKING:  # matplotlib is imported lazily: `import edgeopt` must stay cheap
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Colours of jobs (cycled): 20 distinguishable hues.
JOB_CMAP = "tab20"
#: Approximate width of one character of bar text, in points (fontsize 7).
_CHAR_PT = 4.4


def _new_axes(width: float, height: float) -> tuple[Figure, Axes]:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    return fig, ax


def job_colour(job: int) -> Any:
    """The colour of job ``job`` (the same in every chart)."""
    import matplotlib

    cmap = matplotlib.colormaps[JOB_CMAP]
    return cmap(job % cmap.N)


def assign_lanes(bars: Sequence[GanttBar]) -> tuple[list[str], dict[str, int], list[int]]:
    """Rows in order of first appearance, lanes per row, and the lane of every bar.

    Bars that overlap in time on one row (two jobs sharing a server) go to
    separate lanes of that row, so no bar hides another: greedy interval
    partitioning by start time, which uses the fewest lanes.
    """
    rows: list[str] = []
    for b in bars:
        if b.row not in rows:
            rows.append(b.row)
    lane_of = [0] * len(bars)
    lanes: dict[str, int] = {}
    for row in rows:
        idx = sorted((i for i, b in enumerate(bars) if b.row == row), key=lambda i: (bars[i].start, bars[i].end))
        lane_end: list[float] = []
        for i in idx:
            b = bars[i]
            for k, end in enumerate(lane_end):
                if end <= b.start:
                    lane_of[i], lane_end[k] = k, b.end
                    break
            else:
                lane_of[i] = len(lane_end)
                lane_end.append(b.end)
        lanes[row] = max(1, len(lane_end))
    return rows, lanes, lane_of


def plot_gantt(
    bars: Sequence[GanttBar],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    horizon: float | None = None,
    show_arrivals: bool = True,
) -> Axes:
    """A Gantt chart: one band per resource row, one bar per (row, job, interval), coloured by job.

    Args:
        bars: the family adapter's bars (`FamilySpec.gantt`).
        ax: draw here (a new figure sized to the rows when None).
        title: the chart's title.
        horizon: right end of the time axis in slots (default: the last bar's end).
        show_arrivals: mark each job's arrival with a small triangle on its bars' lanes.

    Returns:
        The Axes drawn on. Bars that overlap in time on one row get lanes of
        their own (`assign_lanes`); the bar's label is written on it when it fits.
    """
    rows, lanes, lane_of = assign_lanes(bars)
    # Each row gets a band of height 1 split into its lanes; rows are listed top to bottom.
    base: dict[str, float] = {}
    y = 0.0
    for row in reversed(rows):
        base[row] = y
        y += lanes[row] + 0.4
    total_height = max(y, 1.0)
    if ax is None:
        _, ax = _new_axes(9.0, min(12.0, 1.2 + 0.32 * total_height))
    t_end = horizon if horizon is not None else max((b.end for b in bars), default=1.0)
    t_end = max(t_end, 1.0)
    # Axes that share this one's time axis (side by side) all show the longest of their charts.
    siblings = [a for a in ax.get_shared_x_axes().get_siblings(ax) if a is not ax and a.patches]
    t_end = max([t_end, *(a.get_xlim()[1] for a in siblings)])
    ax.set_xlim(0, t_end)
    ax.set_ylim(-0.3, total_height - 0.1)
    fig = ax.figure
    width_pt = fig.get_figwidth() * 72 * ax.get_position().width
    pt_per_slot = width_pt / t_end
    arrivals_drawn: set[tuple[str, int, int]] = set()
    for i, b in enumerate(bars):
        y0 = base[b.row] + lanes[b.row] - 1 - lane_of[i]
        colour = job_colour(b.job)
        ax.barh(y0 + 0.5, b.end - b.start, left=b.start, height=0.86, color=colour, edgecolor="black",
                linewidth=0.4, gid=f"bar-job{b.job}")
        room = (b.end - b.start) * pt_per_slot - 2
        # The full label when it fits, else the job id alone, else nothing (the colour still tells).
        text = next((t for t in (b.label, f"j{b.job}") if t and len(t) * _CHAR_PT <= room), "")
        if text:
            ax.text((b.start + b.end) / 2, y0 + 0.5, text, ha="center", va="center", fontsize=7,
                    clip_on=True, gid="bar-label")
        key = (b.row, lane_of[i], b.job)
        if show_arrivals and b.arrival is not None and key not in arrivals_drawn:
            arrivals_drawn.add(key)
            ax.plot([b.arrival], [y0 + 0.93], marker="v", markersize=4, color=colour, markeredgecolor="black",
                    markeredgewidth=0.4, linestyle="none", clip_on=False, gid="arrival")
    ax.set_yticks([base[r] + lanes[r] / 2 for r in rows], rows)
    ax.tick_params(axis="y", length=0)
    for row in rows[:-1]:  # thin separators between rows
        ax.axhline(base[row] - 0.2, color="0.85", lw=0.6, zorder=0)
    ax.set_xlabel("time slot")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="x", color="0.9", lw=0.5, zorder=0)
    ax.set_axisbelow(True)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_usage(
    series: Sequence[UsageSeries],
    *,
    fig: Figure | None = None,
    title: str | None = None,
    max_panels: int = 12,
) -> Figure:
    """Used capacity over time: one small panel per resource, used as a filled step, capacity dashed.

    Args:
        series: the family adapter's series (`FamilySpec.usage`).
        fig: draw into this (empty) figure; a new one when None.
        title: the figure's title.
        max_panels: draw at most this many panels (the first ones), saying how many were left out.

    Returns:
        The Figure; its axes are ``fig.axes`` in the order of ``series``.
    """
    import numpy as np

    shown = list(series)[:max_panels]
    n = max(1, len(shown))
    if fig is None:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(9.0, 0.9 + 1.15 * n), layout="constrained")
    from matplotlib.ticker import MaxNLocator

    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for ax, s in zip(axes, shown, strict=False):
        used = np.asarray(s.used, dtype=float)
        t = np.arange(len(used) + 1)
        ax.stairs(used, t, fill=True, color="#4c72b0", alpha=0.75, label="used")
        cap = np.broadcast_to(np.asarray(s.capacity, dtype=float), used.shape)
        finite = np.isfinite(cap)
        if finite.any():
            ax.stairs(np.where(finite, cap, np.nan), t, color="black", linestyle="--", lw=1, label="capacity")
            top = float(np.nanmax(np.where(finite, cap, np.nan)))
        else:
            top = 0.0
        top = max(top, float(used.max(initial=0.0)))
        ax.set_ylim(0, top * 1.12 if top > 0 else 1.0)
        ax.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=bool(np.allclose(used, np.round(used)))))
        ax.set_ylabel(s.resource, rotation=0, ha="right", va="center", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_xlim(0, max(1, len(used)))
    axes[-1].set_xlabel("time slot")
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    if shown:  # outside the panels, where it hides no data
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", fontsize=7, ncols=2, frameon=False)
    left_out = len(series) - len(shown)
    note = f" ({left_out} more resources not shown)" if left_out > 0 else ""
    if title or note:
        fig.suptitle((title or "") + note, fontsize=10)
    return fig


def plot_comparison(comparison: Any, *, ax: Axes | None = None) -> Axes:
    """Objective per algorithm as bars, lower is better.

    The exact model's result is one bar like the others (the optimum is
    drawn once); when the exact model stopped at its time limit, its bound
    is a dashed line labelled ``bound``. Partial results (jobs given up on)
    are hatched with "k rejected" on the bar: their objective covers fewer
    jobs and is not comparable. Invalid results are outlined in red.
    The y label is short; the objective's formula is the title.

    Args:
        comparison: an `edgeopt.api.Comparison`.
        ax: draw here (a new figure when None).

    Returns:
        The Axes drawn on.
    """
    rows = [r for r in comparison.rows if r.objective is not None]
    if ax is None:
        _, ax = _new_axes(max(5.0, 0.85 * len(rows) + 2.0), 3.8)
    colours = {"online": "#dd8452", "exact": "#55a868"}
    xs = range(len(rows))
    for x, r in zip(xs, rows, strict=True):
        partial = r.status == "partial"
        bar = ax.bar(x, r.objective, color=colours.get(r.kind, "#4c72b0"), alpha=0.5 if partial else 1.0,
                     hatch="//" if partial else None, edgecolor="red" if not r.valid else "black",
                     linewidth=1.5 if not r.valid else 0.5, gid=f"bar-{r.algorithm}")[0]
        note = f"{r.rejected} rejected" if partial else ("invalid" if not r.valid else "")
        if r.ratio_to_optimum is not None and not partial:
            note = f"x{r.ratio_to_optimum:.3g}"
        elif r.ratio_to_bound is not None and not partial:
            note = f"<=x{r.ratio_to_bound:.3g}"  # against a bound: an upper estimate of the true ratio
        if note:
            ax.annotate(note, (bar.get_x() + bar.get_width() / 2, bar.get_height()), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7)
    if comparison.reference_name == "bound" and comparison.reference is not None:
        ax.axhline(comparison.reference, ls="--", color="k", lw=1, label="exact model's lower bound")
        ax.legend(fontsize=8, loc="lower right")
    labels = [r.algorithm + (" (relaxed)" if r.relaxed else "") for r in rows]
    ax.set_xticks(list(xs), labels, rotation=30 if len(rows) > 4 else 0, ha="right" if len(rows) > 4 else "center")
    ax.set_ylabel("objective (lower is better)")
    top = max((r.objective for r in rows), default=1.0)
    ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
    title = _wrap(f"{comparison.family}: {comparison.objective_name}", 70)
    ratio_note = {"optimum": "xR on a bar: its ratio to the proven optimum",
                  "bound": "<=xR on a bar: its ratio to the exact model's bound (an upper estimate)"}
    if comparison.reference_name in ratio_note:
        title += "\n" + ratio_note[comparison.reference_name]
    ax.set_title(title, fontsize=9)
    return ax


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def side_by_side(n: int, *, width: float = 13.0, height: float = 4.0) -> tuple[Figure, list[Axes]]:
    """A row of ``n`` axes for charts compared side by side (e.g. an algorithm's Gantt and the optimum's)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, n, figsize=(width, height), layout="constrained", sharex=True, squeeze=False)
    return fig, list(axes[0])


def overlaps_figure(fig: Figure) -> list[str]:
    """Texts of the figure's titles, labels and tick labels that stick out of the figure (empty: none).

    Used by the tests and usable on any figure before saving it.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    box = fig.bbox
    bad = []
    for ax in fig.axes:
        # Tick labels outside the view limits exist but are not drawn: leave them out.
        (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        xt = [t for t in ax.get_xticklabels() if x0 - 1e-9 <= t.get_position()[0] <= x1 + 1e-9]
        yt = [t for t in ax.get_yticklabels() if y0 - 1e-9 <= t.get_position()[1] <= y1 + 1e-9]
        texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *xt, *yt]
        for t in texts:
            if not t.get_visible() or not t.get_text():
                continue
            bb = t.get_window_extent(renderer)
            if bb.x0 < box.x0 - 1 or bb.y0 < box.y0 - 1 or bb.x1 > box.x1 + 1 or bb.y1 > box.y1 + 1:
                bad.append(t.get_text())
    return bad

