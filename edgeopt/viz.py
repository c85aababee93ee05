"""Charts written once for every family: a Gantt chart, utilisation over time, a comparison bar chart.

A family hands this module family-free records (`GanttBar`, `UsageSeries`,
see `edgeopt.core.views`) through its adapters; nothing here knows a family.
Every function draws on an Axes it is given, or on a new figure, and returns
what it drew on. Nothing switches the matplotlib backend: a notebook keeps
its inline backend, and a headless process gets matplotlib's own fallback.
"""

from __future__ import annotations

import math
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


#: Above this many bars, bar texts are left out unless asked for: they could not be read anyway.
LABEL_LIMIT = 120


def plot_gantt(
    bars: Sequence[GanttBar],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    horizon: float | None = None,
    show_arrivals: bool = True,
    labels: bool | None = None,
    window: tuple[float, float] | None = None,
    legend: bool = True,
) -> Axes:
    """A Gantt chart: one band per resource row, one bar per (row, job, interval), coloured by job.

    Every bar is one rectangle of a single `PolyCollection` (gid ``gantt-bars``; its ``jobs`` attribute
    lists the job of each rectangle) and the arrivals one scatter (gid ``arrival``), so a chart of
    thousands of bars draws in about a second (benchmarks/gantt_speed.py).

    Args:
        bars: the family adapter's bars (`FamilySpec.gantt`).
        ax: draw here (a new figure sized to the rows when None).
        title: the chart's title.
        horizon: right end of the time axis in slots (default: the last bar's end).
        show_arrivals: mark each job's arrival with a small triangle on its bars' lanes.
        labels: write each bar's text on it where it fits (`edgeopt.core.views.bar_label`); None (the
            default): only when there are at most `LABEL_LIMIT` bars.
        window: ``(t0, t1)``: show only these slots (bars are clipped to them).
        legend: a legend of the arrival mark and of what the bar text says.

    Returns:
        The Axes drawn on. Bars that overlap in time on one row get lanes of
        their own (`assign_lanes`); the bar's label is written on it when it fits.
    """
    import numpy as np
    from matplotlib.collections import PolyCollection

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
    siblings = [a for a in ax.get_shared_x_axes().get_siblings(ax) if a is not ax and a.collections]
    t_end = max([t_end, *(a.get_xlim()[1] for a in siblings)])
    t_lo, t_hi = (0.0, t_end) if window is None else (float(window[0]), float(window[1]))
    ax.set_xlim(t_lo, t_hi)
    ax.set_ylim(-0.3, total_height - 0.1)
    n = len(bars)
    start = np.array([b.start for b in bars], dtype=float)
    end = np.array([b.end for b in bars], dtype=float)
    ys = np.array([base[b.row] + lanes[b.row] - 1 - lane_of[i] for i, b in enumerate(bars)], dtype=float)
    jobs = np.array([b.job for b in bars], dtype=int)
    verts = np.empty((n, 4, 2))
    verts[:, 0, 0] = verts[:, 1, 0] = start
    verts[:, 2, 0] = verts[:, 3, 0] = end
    verts[:, 0, 1] = verts[:, 3, 1] = ys + 0.07
    verts[:, 1, 1] = verts[:, 2, 1] = ys + 0.93
    import matplotlib

    cmap = matplotlib.colormaps[JOB_CMAP]
    colours = cmap(jobs % cmap.N) if n else np.empty((0, 4))
    coll = PolyCollection(list(verts), facecolors=colours, edgecolors="black",
                          linewidths=0.4 if n <= 400 else 0.15)
    coll.set_gid("gantt-bars")
    coll.jobs = jobs  # type: ignore[attr-defined]  # which job each rectangle is (tests, users)
    ax.add_collection(coll, autolim=False)
    if labels is None:
        labels = n <= LABEL_LIMIT
    if labels:
        fig = ax.figure
        width_pt = fig.get_figwidth() * 72 * ax.get_position().width
        pt_per_slot = width_pt / max(t_hi - t_lo, 1e-9)
        for i, b in enumerate(bars):
            lo, hi = max(b.start, t_lo), min(b.end, t_hi)
            room = (hi - lo) * pt_per_slot - 2
            # The full label when it fits, else the job id alone, else nothing (the colour still tells).
            text = next((t for t in (b.label, f"j{b.job}") if t and len(t) * _CHAR_PT <= room), "")
            if text:
                ax.text((lo + hi) / 2, ys[i] + 0.5, text, ha="center", va="center", fontsize=7, clip_on=True,
                        gid="bar-label")
    arrival_handle = None
    if show_arrivals:
        seen: dict[tuple[str, int, int], int] = {}
        for i, b in enumerate(bars):
            if b.arrival is not None:
                seen.setdefault((b.row, lane_of[i], b.job), i)
        idx = np.array(sorted(seen.values()), dtype=int)
        if len(idx):
            xs = np.array([bars[i].arrival for i in idx], dtype=float)
            dense = n > LABEL_LIMIT  # many marks: smaller, without outlines, so they do not hide the bars
            arrival_handle = ax.scatter(xs, ys[idx] + 0.93, marker="v", s=5 if dense else 14, c=colours[idx],
                                        edgecolors="none" if dense else "black", linewidths=0.4, clip_on=False,
                                        zorder=3, gid="arrival",
                                        label="job arrives (its colour)")
    # Row names 9 points apart at least: with more rows than fit, every k-th is named (greedy, top down).
    pt_per_unit = ax.figure.get_figheight() * 72 * ax.get_position().height / max(total_height, 1e-9)
    ticks, names, last = [], [], None
    for r in rows:
        centre = base[r] + lanes[r] / 2
        if last is None or (last - centre) * pt_per_unit >= 9:
            ticks.append(centre)
            names.append(r)
            last = centre
    ax.set_yticks(ticks, names)
    if len(names) < len(rows):
        ax.set_ylabel(f"{len(rows)} rows ({len(names)} named)", fontsize=8)
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
    if legend and n:
        _gantt_legend(ax, arrival_handle, bool(labels))
    return ax


#: The most time bins of `plot_heatmap`: its grid is rows x bins, whatever the horizon (10**7 slots).
MAX_HEAT_BINS = 300


def row_busy_time(bars: Sequence[GanttBar], t_lo: float, t_hi: float) -> dict[str, float]:
    """Per row, the time in [t_lo, t_hi) in which it holds at least one job (the union of its bars).

    What "busiest" means in `plot_heatmap`: overlapping jobs on a row count once, so a row full of
    short parallel jobs is not ranked above one busy the whole time.
    """
    spans: dict[str, list[tuple[float, float]]] = {}
    for b in bars:
        lo, hi = max(b.start, t_lo), min(b.end, t_hi)
        spans.setdefault(b.row, [])
        if hi > lo:
            spans[b.row].append((lo, hi))
    busy = {}
    for row, iv in spans.items():
        total, end = 0.0, -math.inf
        for lo, hi in sorted(iv):
            if hi > end:
                total += hi - max(lo, end)
                end = hi
        busy[row] = total
    return busy


def occupancy_grid(bars: Sequence[GanttBar], rows: Sequence[str], t_lo: float, t_hi: float,
                   max_bins: int = MAX_HEAT_BINS) -> tuple[Any, Any]:
    """(grid, edges): ``grid[i, k]`` is the mean number of jobs on ``rows[i]`` over time bin k.

    Bins are whole slots wide (ceil(span / max_bins) slots each) so at most ``max_bins`` of them cover
    [t_lo, t_hi): the grid is rows x bins whatever the horizon. Each bar adds its overlap with every
    bin it covers (a difference array for the bins it covers whole), so the cost is the bars plus the
    grid, never the slots.
    """
    import numpy as np

    if isinstance(max_bins, bool) or not isinstance(max_bins, int) or max_bins < 1:
        raise TypeError(f"max_bins: expected a positive int, got {max_bins!r}")
    span = max(t_hi - t_lo, 1e-9)
    width = float(max(1, math.ceil(span / max_bins)))
    nb = max(1, math.ceil(span / width))
    edges = t_lo + width * np.arange(nb + 1)
    index = {r: i for i, r in enumerate(rows)}
    keep = [b for b in bars if b.row in index and min(b.end, t_hi) > max(b.start, t_lo)]
    grid = np.zeros((len(rows), nb + 1))
    if keep:
        r = np.array([index[b.row] for b in keep])
        s = np.clip(np.array([b.start for b in keep], dtype=float), t_lo, t_hi)
        e = np.clip(np.array([b.end for b in keep], dtype=float), t_lo, t_hi)
        ks = np.minimum(((s - t_lo) // width).astype(int), nb - 1)
        ke = np.minimum(((e - t_lo) // width).astype(int), nb - 1)
        ke = np.where((e - t_lo) / width == ke, ke - 1, ke)  # an end on a bin edge ends in the bin before
        ke = np.maximum(ke, ks)
        one = ks == ke
        np.add.at(grid, (r[one], ks[one]), e[one] - s[one])
        many = ~one
        r, s, e, ks, ke = r[many], s[many], e[many], ks[many], ke[many]
        np.add.at(grid, (r, ks), edges[ks + 1] - s)  # the partial first bin
        np.add.at(grid, (r, ke), e - edges[ke])  # the partial last bin
        full = ke > ks + 1  # bins ks+1 .. ke-1 are covered whole: +width from ks+1, -width from ke
        diff = np.zeros_like(grid)
        np.add.at(diff, (r[full], ks[full] + 1), width)
        np.add.at(diff, (r[full], ke[full]), -width)
        grid += np.cumsum(diff, axis=1)
    return grid[:, :nb] / width, edges


def plot_heatmap(
    bars: Sequence[GanttBar],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    horizon: float | None = None,
    row_index: dict[str, int] | None = None,
    max_bins: int = MAX_HEAT_BINS,
) -> Axes:
    """A schedule too large for bars, as a heat map: one line per row (busiest on top) x time bins,
    coloured by the mean number of jobs the row holds in the bin; idle is white.

    A Gantt chart of hundreds of rows and a thousand jobs is a wall of colour: this shows where and
    when the load is, and which rows are busiest (named on the axis with their share of busy time, and
    their index when ``row_index`` gives it, so they can be picked for a zoomed-in Gantt chart).

    Args:
        bars: the family adapter's bars.
        ax: draw here (a new figure when None).
        title: the chart's title.
        horizon: right end of the time axis (default: the last bar's end).
        row_index: each row's index (shown as ``name [i]``).
        max_bins: the most time bins (`occupancy_grid`).

    Returns:
        The Axes; its image has gid ``schedule-heatmap`` and its ``rows`` attribute lists the rows top down.
    """
    import matplotlib
    import numpy as np

    t_end = max(horizon if horizon is not None else max((b.end for b in bars), default=1.0), 1.0)
    busy = row_busy_time(bars, 0.0, t_end)
    rows = sorted(busy, key=lambda r: (-busy[r], (row_index or {}).get(r, 0)))
    grid, edges = occupancy_grid(bars, rows, 0.0, t_end, max_bins)
    if ax is None:
        _, ax = _new_axes(9.0, min(9.0, 3.4 + 0.05 * len(rows)))
    cmap = matplotlib.colormaps["YlOrRd"].with_extremes(bad="white")
    shown = np.ma.masked_less_equal(grid, 1e-12)
    # The colour scale tops out at the 95th percentile of the busy cells: one row far busier than the
    # rest (a cloud with unlimited workers) would otherwise wash every other row out; more is saturated.
    positive = grid[grid > 1e-12]
    top = max(1.0, float(np.percentile(positive, 95))) if positive.size else 1.0
    im = ax.imshow(shown, aspect="auto", interpolation="nearest", cmap=cmap, origin="upper",
                   extent=(float(edges[0]), float(edges[-1]), len(rows), 0), vmin=0, vmax=top)
    im.set_gid("schedule-heatmap")
    ax.rows = rows  # type: ignore[attr-defined]  # top down (tests, users)
    ax.set_xlim(0, t_end)
    ax.set_ylim(len(rows), 0)
    width = float(edges[1] - edges[0]) if len(edges) > 1 else 1.0
    cbar = ax.figure.colorbar(im, ax=ax, pad=0.01, fraction=0.04,
                              extend="max" if positive.size and positive.max() > top else "neither")
    cbar.set_label(f"jobs on the row (mean over {width:g}-slot bins)", fontsize=8)
    cbar.ax.tick_params(labelsize=7)
    # Row names 9 points apart at least, from the busiest down: the top ones are always named.
    pt_per_row = ax.figure.get_figheight() * 72 * ax.get_position().height / max(len(rows), 1)
    step = max(1, math.ceil(9 / max(pt_per_row, 1e-9)))
    ticks = list(range(0, len(rows), step))
    names = []
    for i in ticks:
        r = rows[i]
        idx = f" [{row_index[r]}]" if row_index and r in row_index else ""
        names.append(f"{r}{idx} {busy[r] / t_end:.0%}")
    ax.set_yticks([i + 0.5 for i in ticks], names, fontsize=7 if len(rows) > 20 else 8)
    ax.tick_params(axis="y", length=0)
    ax.set_ylabel(f"{len(rows)} rows, busiest on top" + (f", 1 in {step} named" if step > 1 else "")
                  + "\nname [index] share of time busy", fontsize=8)
    ax.set_xlabel("time slot")
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def _gantt_legend(ax: Axes, arrival: Any, labelled: bool) -> None:
    """Below the time axis, outside the bars: the arrival mark and what a bar's text says."""
    from matplotlib.patches import Patch

    from edgeopt.core.views import BAR_LABEL_KEY

    handles, texts = [], []
    if arrival is not None:
        handles.append(arrival)
        texts.append("job arrives (in its colour)")
    key = "bar: one job on that row (colour = job)"
    if labelled:
        key += "; " + BAR_LABEL_KEY.removeprefix("bar text: ")
    handles.append(Patch(facecolor="0.8", edgecolor="black", linewidth=0.4))
    texts.append(_wrap(key, 70))
    from matplotlib.transforms import ScaledTranslation

    # 30 points under the axes: below the tick labels and the "time slot" label, whatever the height.
    below = ax.transAxes + ScaledTranslation(0, -30 / 72, ax.figure.dpi_scale_trans)
    ax.legend(handles, texts, loc="upper left", bbox_to_anchor=(0.0, 0.0), bbox_transform=below,
              fontsize=7, frameon=False, ncols=2, handlelength=1.2, borderaxespad=0.0)


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

    if isinstance(max_panels, bool) or not isinstance(max_panels, int) or max_panels < 1:
        raise TypeError(f"max_panels: expected a positive int, got {max_panels!r}")
    steps = [_steps(s) for s in series]
    shown = list(series)[:max_panels]
    n = max(1, len(shown))
    if fig is None:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(9.0, 0.9 + 1.15 * n), layout="constrained")
    from matplotlib.ticker import MaxNLocator

    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    # The time axis ends a little after the last slot anything is used in (the horizon is often far longer).
    busy = [float(t[1:][np.flatnonzero(u)[-1]]) for t, u in steps if np.any(u)]
    longest = max((float(t[-1]) for t, _ in steps[:len(shown)]), default=1.0)
    t_show = min(longest, int(max(busy) * 1.08) + 1) if busy else longest
    for ax, s, (t, used) in zip(axes, shown, steps, strict=False):
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
        ax.set_xlim(0, max(1, t_show))
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


def _steps(s: UsageSeries) -> tuple[Any, Any]:
    """(edges, used) of a series as float arrays: a per-slot series has edges 0, 1, ..., len(used)."""
    import numpy as np

    used = np.asarray(s.used, dtype=float)
    if s.edges is None:
        return np.arange(used.size + 1, dtype=float), used
    edges = np.asarray(s.edges, dtype=float)
    if edges.shape != (used.size + 1,):
        raise ValueError(f"usage series {s.resource!r}: {edges.size} edges for {used.size} steps "
                         f"(expected {used.size + 1})")
    return edges, used


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
    if ax is None:  # 2.2 inches more for the legend, right of the bars
        _, ax = _new_axes(max(5.0, 0.85 * len(rows) + 2.0) + 2.2, 3.8)
    xs = range(len(rows))
    values = [r.objective for r in rows]
    positive = [v for v in values if v > 0]
    # Values that span more than 10x: a log scale, or the small ones would be invisible.
    log = len(positive) == len(values) and len(positive) > 1 and max(positive) > 10 * min(positive)
    for x, r in zip(xs, rows, strict=True):
        partial = r.status == "partial"
        colour = KIND_COLOURS.get(_colour_kind(comparison.family, r), KIND_COLOURS["baseline"])
        bar = ax.bar(x, r.objective, color=colour,
                     alpha=0.5 if partial else 1.0, hatch="//" if partial else None,
                     edgecolor="red" if not r.valid else "black",
                     linewidth=1.5 if not r.valid else 0.5, gid=f"bar-{r.algorithm}")[0]
        note = f"{r.rejected} rejected" if partial else ("invalid" if not r.valid else "")
        # rows built by hand may carry only ``ratio``: the comparison's reference says what it is against
        to_opt = getattr(r, "ratio_to_optimum", None)
        to_bound = getattr(r, "ratio_to_bound", None)
        if to_opt is None and to_bound is None and r.ratio is not None:
            to_opt, to_bound = ((r.ratio, None) if comparison.reference_name == "optimum" else
                                (None, r.ratio) if comparison.reference_name == "bound" else (None, None))
        if to_opt is not None and not partial:
            note = f"x{to_opt:.3g}"
        elif to_bound is not None and not partial:
            note = f"<=x{to_bound:.3g}"  # against a bound: an upper estimate of the true ratio
        text = _value_text(r.objective) + (f"\n{note}" if note else "")  # the value on every bar
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), xytext=(0, 2),
                    textcoords="offset points", ha="center", va="bottom", fontsize=7, linespacing=1.0)
    handles = _comparison_legend(rows, comparison.family)
    if comparison.reference_name == "bound" and comparison.reference is not None:
        handles.append(ax.axhline(comparison.reference, ls="--", color="k", lw=1, label="exact model's lower bound"))
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), frameon=False,
                  borderaxespad=0.0)
    labels = [r.algorithm + (" (relaxed)" if r.relaxed else "") for r in rows]
    tilt = len(rows) > 4 or max(map(len, labels), default=0) > 12  # long names side by side would touch
    ax.set_xticks(list(xs), labels, rotation=30 if tilt else 0, ha="right" if tilt else "center")
    top = max(values, default=1.0)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(min(positive) / 2, top * 4)
        ax.set_ylabel("objective, log scale (lower is better)")
    else:
        ax.set_ylim(0, top * 1.22 if top > 0 else 1.0)
        ax.set_ylabel("objective (lower is better)")
    title = _wrap(f"{comparison.family}: {comparison.objective_name}", 70)
    ratio_note = {"optimum": "xR on a bar: its ratio to the proven optimum",
                  "bound": "<=xR on a bar: its ratio to the exact model's bound (an upper estimate)"}
    if comparison.reference_name in ratio_note:
        title += "\n" + ratio_note[comparison.reference_name]
    ax.set_title(title, fontsize=9)
    return ax


def _value_text(v: float) -> str:
    """``76,295`` (whole numbers in full, thousands separated), else 4 significant digits."""
    return f"{v:,.0f}" if float(v).is_integer() and abs(v) < 1e9 else f"{v:.4g}"


#: Bar colours of `plot_comparison` by the algorithm's kind (its legend names them); ``paper`` is the
#: family paper's own algorithm (`AlgorithmSpec.paper`), ``online`` any other online algorithm.
KIND_COLOURS = {"paper": "#dd8452", "online": "#ccb974", "baseline": "#4c72b0", "offline": "#8172b3",
                "exact": "#55a868"}
#: What the legend calls each of `KIND_COLOURS`.
KIND_NAMES = {"paper": "online (the paper's)", "online": "online (ours, not the paper's)", "baseline": "baseline",
              "offline": "offline heuristic", "exact": "exact model"}


def _colour_kind(family: str, row: Any) -> str:
    """``paper`` for a row of the family paper's own algorithm, by the registry's flag (`AlgorithmSpec.paper`),
    else the row's kind.

    The kind alone cannot tell: variants of ours (hetero's ``online_every_slot``) are ``online`` too and
    were drawn as the paper's. A variant label ``online[F=64]`` is the paper's algorithm with other
    parameters: its base name is looked up. A name the registry lacks (a row built by hand, an
    unloaded plug-in) is never the paper's.
    """
    from edgeopt.core.errors import InputError
    from edgeopt.families import algorithms

    try:
        algo = algorithms(family).get(str(row.algorithm).partition("[")[0])  # imports the family: registered
    except (InputError, TypeError):  # not a family of ours: nothing of it is the paper's
        algo = None
    return "paper" if algo is not None and algo.paper else str(row.kind)


def _comparison_legend(rows: Sequence[Any], family: str) -> list[Any]:
    """Legend handles: one per kind present, then the marks for partial and invalid results."""
    from matplotlib.patches import Patch

    names = KIND_NAMES
    present = {_colour_kind(family, r) for r in rows}
    kinds = [k for k in KIND_COLOURS if k in present]
    handles = [Patch(facecolor=KIND_COLOURS[k], edgecolor="black", linewidth=0.5, label=names[k]) for k in kinds]
    if any(r.status == "partial" for r in rows):
        handles.append(Patch(facecolor="white", hatch="//", edgecolor="black", label="partial: jobs rejected"))
    if any(not r.valid for r in rows):
        handles.append(Patch(facecolor="white", edgecolor="red", linewidth=1.5, label="invalid schedule"))
    return handles


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

