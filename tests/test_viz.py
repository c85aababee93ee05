"""The shared charts: what is drawn (bars, labels, arrivals), and that nothing sticks out of the figure."""

from __future__ import annotations

import matplotlib
import pytest

from edgeopt import api, viz
from edgeopt.core.views import GanttBar, UsageSeries
from tests.reliability_helpers import scheduled_ids

plt = pytest.importorskip("matplotlib.pyplot")
FAMILIES = [s.name for s in api.families()]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _bars(ax, prefix="bar-"):
    return [p for p in ax.patches if (p.get_gid() or "").startswith(prefix)]


def _gantt(ax):
    """(the Gantt's bar collection, the job of each rectangle, each rectangle's (x0, x1, y0, y1))."""
    (coll,) = [c for c in ax.collections if c.get_gid() == "gantt-bars"]
    boxes = [(p.vertices[:, 0].min(), p.vertices[:, 0].max(), p.vertices[:, 1].min(), p.vertices[:, 1].max())
             for p in coll.get_paths()]
    return coll, list(coll.jobs), boxes


def _arrivals(ax):
    return sum(len(c.get_offsets()) for c in ax.collections if c.get_gid() == "arrival")


def _texts(ax, gid):
    return [t for t in ax.texts if t.get_gid() == gid]


def test_gantt_draws_one_bar_per_record_and_lanes_for_overlaps():
    bars = [
        GanttBar("server 0", 0, 0, 4, "j0 2w", arrival=0),
        GanttBar("server 0", 1, 2, 6, "j1 1w", arrival=1),  # overlaps j0 on server 0: a second lane
        GanttBar("server 1", 2, 5, 9, "j2 3w", arrival=3),
    ]
    rows, lanes, lane_of = viz.assign_lanes(bars)
    assert rows == ["server 0", "server 1"]
    assert lanes == {"server 0": 2, "server 1": 1}
    assert lane_of[0] != lane_of[1]
    ax = viz.plot_gantt(bars, title="t", horizon=10)
    _, jobs, boxes = _gantt(ax)
    assert jobs == [0, 1, 2]
    assert [b[:2] for b in boxes] == [(0, 4), (2, 6), (5, 9)]
    # Overlapping bars of one row do not overlap on the chart.
    b0, b1 = boxes[0], boxes[1]
    assert b0[3] <= b1[2] or b1[3] <= b0[2]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["server 0", "server 1"]
    assert {t.get_text() for t in _texts(ax, "bar-label")} == {"j0 2w", "j1 1w", "j2 3w"}
    assert _arrivals(ax) == 3
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("arrives" in t for t in legend) and any("2w+1ps" in t for t in legend)
    assert ax.get_xlim() == (0, 10)
    assert viz.overlaps_figure(ax.figure) == []
    # Bars of one job share a colour; different jobs differ.
    assert viz.job_colour(0) != viz.job_colour(1)


def test_gantt_label_falls_back_to_job_id_on_short_bars():
    ax = viz.plot_gantt([GanttBar("r", 7, 0, 1, "j7 with a long label"), GanttBar("r", 8, 1, 200, "long")],
                        horizon=200)
    labels = [t.get_text() for t in _texts(ax, "bar-label")]
    assert "j7 with a long label" not in labels and "long" in labels


def test_drawing_never_switches_the_backend():
    before = matplotlib.get_backend()
    ax = viz.plot_gantt([GanttBar("r", 0, 0, 2, "j0")])
    viz.plot_usage([UsageSeries("gpu", [1, 2, 0], 4.0)])
    assert matplotlib.get_backend() == before
    assert ax.figure is not None


def test_usage_one_panel_per_series_capacity_dashed_infinite_capacity_omitted():
    fig = viz.plot_usage([UsageSeries("gpu", [1, 2, 0, 3], 4.0), UsageSeries("cloud", [0, 5, 5, 0], float("inf"))],
                         title="use")
    assert len(fig.axes) == 2
    gpu, cloud = fig.axes
    assert gpu.get_ylabel() == "gpu" and cloud.get_ylabel() == "cloud"
    assert gpu.get_ylim()[1] >= 4.0 and cloud.get_ylim()[1] >= 5.0
    assert len(gpu.patches) == 2 and len(cloud.patches) == 1  # used + capacity; no capacity line for inf
    assert viz.overlaps_figure(fig) == []


def _comparison(rows, reference=None, reference_name="-"):
    return api.Comparison("hetero", "total weighted completion time sum_j w_j (t_j + d_j) " * 2, rows,
                          reference, reference_name)


def _row(name, kind, status, objective, *, valid=True, rejected=0, ratio=None):
    return api.Row(name, kind, status, objective, None, ratio, valid, 0.01, [], rejected=rejected)


def test_comparison_draws_optimum_once_hatches_partial_and_keeps_labels_inside():
    rows = [_row("online", "online", "feasible", 12.0, ratio=1.2), _row("greedy", "baseline", "partial", 7.0,
            rejected=3), _row("bad", "baseline", "feasible", 9.0, valid=False), _row("milp", "exact", "optimal", 10.0,
            ratio=1.0)]
    ax = api.Comparison.plot(_comparison(rows, 10.0, "optimum"))
    bars = _bars(ax)
    assert len(bars) == 4  # one per algorithm; the optimum is its bar, not also a line
    assert not [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["online", "greedy", "bad", "milp"]
    greedy = next(b for b in bars if b.get_gid() == "bar-greedy")
    assert greedy.get_hatch() == "//"
    notes = " | ".join(t.get_text() for t in ax.texts)
    assert "3 rejected" in notes and "invalid" in notes and "x1.2" in notes
    assert all(f"{v:.4g}" in notes for v in (12.0, 7.0, 9.0, 10.0))  # the value on every bar
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["online (the paper's)", "baseline", "exact model", "partial: jobs rejected",
                      "invalid schedule"]
    assert ax.get_yscale() == "linear"
    assert len(ax.get_ylabel()) <= 30  # short label; the formula is in the title
    assert "sum_j" in ax.get_title()
    assert viz.overlaps_figure(ax.figure) == []


def test_comparison_draws_a_bound_as_a_line():
    rows = [_row("online", "online", "feasible", 12.0, ratio=1.5), _row("milp", "exact", "time_limit", 11.0,
                                                                          ratio=11 / 8)]
    ax = api.Comparison.plot(_comparison(rows, 8.0, "bound"))
    dashed = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert len(dashed) == 1 and dashed[0].get_ydata()[0] == 8.0


def test_comparison_plot_writes_a_file(tmp_path):
    path = tmp_path / "c.svg"
    ax = _comparison([_row("online", "online", "feasible", 3.0)]).plot(path)
    assert path.read_text().lstrip().startswith("<?xml")
    assert not plt.fignum_exists(ax.figure.number)  # closed after saving




@pytest.mark.parametrize("family", FAMILIES)
def test_family_gantt_and_usage_of_online_and_optimum(family):
    """Every scheduled job appears on the chart; the utilisation never exceeds a finite capacity."""
    inst = api.generate(family, "small", seed=2)
    for res in (api.run("online", inst), api.solve(inst, method="cpsat", time_limit=20)):
        assert api.validate(inst, res) == []
        ax = api.plot_schedule(inst, res)
        assert set(_gantt(ax)[1]) == set(scheduled_ids(res))
        assert res.algorithm in ax.get_title()
        assert viz.overlaps_figure(ax.figure) == []
        fig = api.plot_utilisation(inst, res)
        spec = api.family(family)
        for s in spec.usage(inst, spec.parse_schedule(res.schedule)):
            assert max(s.used) <= (max(s.capacity) if isinstance(s.capacity, list) else s.capacity) + 1e-9
        assert viz.overlaps_figure(fig) == []


def test_side_by_side_shares_the_time_axis():
    inst = api.generate("edgecloud", "small", seed=0)
    _, (left, right) = viz.side_by_side(2)
    api.plot_schedule(inst, api.run("online", inst), ax=left)
    api.plot_schedule(inst, api.run("fifo", inst), ax=right)
    assert left.get_xlim() == right.get_xlim()


def test_overlap_check_catches_a_cut_off_label():
    """The check the other tests rely on does fail on a label that leaves the figure (today's old chart)."""
    fig, ax = plt.subplots(figsize=(3, 2))  # no layout engine: a long y label is cut off
    ax.set_ylabel("total weighted completion time sum_j w_j (t_j + d_j) of every job " * 2)
    assert viz.overlaps_figure(fig) != []


def test_comparison_uses_a_log_scale_when_values_span_more_than_10x():
    rows = [_row("online", "online", "feasible", 5.0), _row("fifo", "baseline", "feasible", 400.0)]
    ax = api.Comparison.plot(_comparison(rows))
    assert ax.get_yscale() == "log" and "log" in ax.get_ylabel()
    ax = api.Comparison.plot(_comparison([_row("online", "online", "feasible", 5.0),
                                          _row("fifo", "baseline", "feasible", 40.0)]))
    assert ax.get_yscale() == "linear"


def test_gantt_labels_are_off_by_default_above_the_readable_size_and_can_be_forced():
    many = [GanttBar(f"r{k % 7}", k, k, k + 3, f"j{k} 1w", arrival=k) for k in range(viz.LABEL_LIMIT + 1)]
    assert _texts(viz.plot_gantt(many), "bar-label") == []
    assert _texts(viz.plot_gantt(many, labels=True), "bar-label") != []
    assert _texts(viz.plot_gantt(many[:5], labels=False), "bar-label") == []


def test_plot_schedule_selects_jobs_rows_and_a_window():
    inst = api.generate("hetero", "small", seed=2)
    res = api.run("online", inst)
    all_jobs = set(_gantt(api.plot_schedule(inst, res))[1])
    some = sorted(all_jobs)[:2]
    ax = api.plot_schedule(inst, res, jobs=some)
    assert set(_gantt(ax)[1]) == set(some) and "shown: jobs" in ax.get_title()
    row = api.family("hetero").gantt(inst, api.family("hetero").parse_schedule(res.schedule))[0].row
    ax = api.plot_schedule(inst, res, rows=[row])
    assert [t.get_text() for t in ax.get_yticklabels()] == [row]
    ax = api.plot_schedule(inst, res, window=(2, 5))
    assert ax.get_xlim() == (2, 5)
    assert all(b[1] > 2 and b[0] < 5 for b in _gantt(ax)[2])
    with pytest.raises(Exception, match="rows"):
        api.plot_schedule(inst, res, rows=["no such row"])
    with pytest.raises(Exception, match="window"):
        api.plot_schedule(inst, res, window=(5, 2))


@pytest.mark.parametrize("family", FAMILIES)
def test_one_labelling_convention_across_families(family):
    import re

    inst = api.generate(family, "small", seed=1)
    name = "online" if "online" in api.algorithms(family) else "greedy"
    spec = api.family(family)
    bars = spec.gantt(inst, spec.parse_schedule(api.run(name, inst).schedule))
    assert bars
    for b in bars:
        assert re.fullmatch(r"j\d+( \d+(\.\d+)?[a-z_]+(\+\d+(\.\d+)?[a-z_]+)*)?", b.label), b.label
