"""The shared charts: what is drawn (bars, labels, arrivals), and that nothing sticks out of the figure."""

from __future__ import annotations

import matplotlib
import pytest

from edgeopt import api, viz
from edgeopt.core.views import GanttBar, UsageSeries
from tests.reliability_helpers import prove, scheduled_ids

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
    for res in (api.run("online", inst), prove(api.solve, inst, method="cpsat")):
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


# ---- plots of hostile or mismatched inputs: bounded memory, checked selections, checked results ----------


def _dense_usage(family, inst, sched):
    """The per-slot computation the usage adapters made before their step series (slots x servers arrays),
    kept here to check that the step series give the same amounts slot by slot."""
    import numpy as np

    if family == "edgecloud":
        S, T = len(inst.servers), inst.horizon
        workers, ps = np.zeros((S, T + 1)), np.zeros(T + 1)
        for run in sched.jobs:
            for seg in run.pieces():
                lo, hi = max(0, seg.start), min(T, seg.end)
                if hi > lo:
                    for s, c in seg.workers.items():
                        workers[s, lo:hi] += c
                    ps[lo:hi] += 1
        return [*workers[:, :T], ps[:T]]
    if family == "hetero":
        from edgeopt.hetero.schedule import usage

        return list(usage(inst, sched).sum(axis=0))
    if family == "preemptive":
        S, T = len(inst.servers), inst.horizon
        busy = np.zeros((S, T))
        for js in sched.jobs:
            for c in js.chunks:
                np.add.at(busy[c.server], np.asarray(c.slots, dtype=np.int64), 1)
        return list(busy)
    if family == "okita":
        from edgeopt.okita.schedule import usage_per_slot

        return list(usage_per_slot(inst, sched).sum(axis=1).T)
    T = max([pl.end for pl in sched.placements] or [1])  # tapfinger
    used = np.zeros((len(inst.resources), T))
    for pl in sched.placements:
        for s in pl.runs():
            for r, name in enumerate(inst.resources):
                used[r, s.start:s.end] += s.allocation.get(name, 0)
    return list(used)


#: Per family, algorithms whose schedules differ in shape (preemptive segments, elastic chunks).
USAGE_ALGORITHMS = {"edgecloud": ["online", "preemptive"], "hetero": ["online", "tiresias"],
                    "preemptive": ["online", "srtf"], "okita": ["online", "fifo"], "tapfinger": ["greedy", "optimus"]}


@pytest.mark.parametrize("family", FAMILIES)
def test_usage_series_equal_the_per_slot_computation(family):
    """The step series (an event sweep, bounded by the schedule's size) hold the amounts the old
    servers x slots arrays held, slot by slot; a chart of them is the same."""
    import numpy as np

    spec = api.family(family)
    inst = api.generate(family, "small", seed=3)
    for name in USAGE_ALGORITHMS[family]:
        sched = spec.parse_schedule(api.run(name, inst).schedule)
        series = spec.usage(inst, sched)
        dense = _dense_usage(family, inst, sched)
        assert len(series) == len(dense)
        for s, d in zip(series, dense, strict=True):
            got = np.asarray(s.per_slot())
            assert got.shape == d.shape, (name, s.resource)
            assert np.allclose(got, d, rtol=1e-12, atol=1e-9), (name, s.resource)
            assert np.array_equal(got == 0, d == 0) or not np.allclose(d[got == 0], 0)


def test_step_usage_is_exactly_zero_where_nothing_runs():
    from edgeopt.core.views import UsageSeries, step_usage

    edges, used = step_usage([0, 2, 7], [4, 6, 9], [0.1, 0.2, 0.7], 12)  # 0.1 + 0.2 - 0.1 - 0.2 != 0 in floats
    assert edges == [0, 2, 4, 6, 7, 9, 12]
    assert used[3] == 0.0 and used[-1] == 0.0
    assert UsageSeries("x", used, 1.0, edges).per_slot()[:8] == pytest.approx([0.1, 0.1, 0.3, 0.3, 0.2, 0.2, 0, 0.7])
    assert step_usage([5, -3], [2, 10**12], [1, 2], 10) == ([0, 10], [2.0])  # empty ones dropped, clipped


def test_a_step_series_draws_the_chart_of_its_per_slot_series():
    import numpy as np

    from edgeopt.core.views import step_usage

    edges, used = step_usage([1, 3], [5, 8], [2, 1], 50)
    step = viz.plot_usage([UsageSeries("w", used, 4.0, edges)]).axes[0]
    dense = viz.plot_usage([UsageSeries("w", UsageSeries("w", used, 4.0, edges).per_slot(), 4.0)]).axes[0]
    assert step.get_xlim() == dense.get_xlim() and step.get_ylim() == dense.get_ylim()
    mid = np.arange(50) + 0.5
    for a, b in zip(step.patches, dense.patches, strict=True):
        (va, ea, _), (vb, eb, _) = a.get_data(), b.get_data()
        assert np.array_equal(np.asarray(va)[np.searchsorted(ea, mid) - 1], np.asarray(vb)[np.searchsorted(eb, mid) - 1])


@pytest.fixture(scope="module")
def hetero_files(tmp_path_factory):
    """A small hetero instance, its online result, another instance, and a result that drops job 0."""
    import json

    d = tmp_path_factory.mktemp("plots")
    inst = api.generate("hetero", "small", seed=2)
    api.save(inst, d / "i.json")
    api.save(api.generate("hetero", "small", seed=5), d / "other.json")
    res = api.run("online", inst)
    res.save(str(d / "r.json"))
    dropped = json.loads((d / "r.json").read_text())
    dropped["schedule"]["jobs"] = [js for js in dropped["schedule"]["jobs"] if js["job"] != 0]
    (d / "dropped.json").write_text(json.dumps(dropped))
    return d


def _plot(command, files, out, *extra, result="r.json", instance="i.json"):
    from tests.reliability_helpers import cli

    return cli(command, files / instance, files / result, "-o", out, *extra)


def test_plot_schedule_clips_a_huge_job_range_to_the_instance(hetero_files, tmp_path, capsys):
    """'0-1000000000' was expanded into a billion-entry list (MemoryError); it now selects every job."""
    from edgeopt.commands.plots import _job_selection

    assert _job_selection("0-1000000000", [0, 1, 2, 5]) == [0, 1, 2, 5]
    assert _job_selection("1-3,5", [0, 1, 2, 5]) == [1, 2, 5]
    assert _plot("plot-schedule", hetero_files, tmp_path / "g.png", "--jobs", "0-1000000000") == 0
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    inst = api.load(hetero_files / "i.json")
    ax = api.plot_schedule(inst, api.load_result(hetero_files / "r.json"), jobs=range(10**12))
    assert set(_gantt(ax)[1]) == set(scheduled_ids(api.load_result(hetero_files / "r.json")))


@pytest.mark.parametrize(("option", "value", "named"), [
    ("--jobs", "5000-6000", "--jobs"), ("--jobs", "9-3", "--jobs"), ("--jobs", "abc", "--jobs"),
    ("--jobs", "1,99999", "--jobs"), ("--jobs", ",", "--jobs"), ("--jobs", ",".join(["1"] * 10_001), "--jobs"),
    ("--jobs", "-5", "--jobs"), ("--servers", ",,", "--servers"), ("--servers", "no such server", "--servers"),
    ("--window", "inf:5", "--window"), ("--window", "1e9:1e10", "--window"), ("--window", "5:2", "--window"),
    ("--window", "3", "--window"),
])
def test_plot_schedule_refuses_an_absurd_or_empty_selection(hetero_files, tmp_path, capsys, option, value, named):
    from tests.reliability_helpers import assert_clean_error

    out = tmp_path / "g.png"
    assert _plot("plot-schedule", hetero_files, out, option, value) == 2
    err = capsys.readouterr().err
    assert_clean_error(err, f"error: {named}:")
    assert len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_api_plot_schedule_refuses_unknown_or_unscheduled_jobs(hetero_files):
    from edgeopt.core.errors import InputError

    inst, res = api.load(hetero_files / "i.json"), api.load_result(hetero_files / "r.json")
    with pytest.raises(InputError, match="jobs: not jobs of the instance: 99999"):
        api.plot_schedule(inst, res, jobs=[0, 99999])
    with pytest.raises(InputError, match="jobs: range"):
        api.plot_schedule(inst, res, jobs=range(10**6, 10**9))
    ax = api.plot_schedule(inst, res, window=(0, 10**9))  # the end is clipped to the horizon
    assert ax.get_xlim() == (0, inst.horizon)


@pytest.mark.parametrize("command", ["plot-schedule", "plot-utilisation"])
def test_plot_refuses_a_result_of_another_instance(hetero_files, tmp_path, capsys, command):
    from tests.reliability_helpers import assert_clean_error

    out = tmp_path / "p.png"
    assert _plot(command, hetero_files, out, instance="other.json") == 2
    err = capsys.readouterr().err
    assert_clean_error(err, "instance_sha256", "another instance")
    assert len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_api_plots_refuse_a_result_of_another_instance(hetero_files):
    from edgeopt.core.errors import InputError

    other, res = api.load(hetero_files / "other.json"), api.load_result(hetero_files / "r.json")
    for plot in (api.plot_schedule, api.plot_utilisation):
        with pytest.raises(InputError, match="another instance"):
            plot(other, res)


@pytest.mark.parametrize("command", ["plot-schedule", "plot-utilisation"])
def test_plot_draws_an_invalid_result_marked_with_a_warning(hetero_files, tmp_path, capsys, command):
    """A result that drops a job is drawn (to see what broke), never silently: one warning line naming
    the first violation, and INVALID in the title."""
    out = tmp_path / "p.svg"
    assert _plot(command, hetero_files, out, result="dropped.json") == 0
    lines = capsys.readouterr().err.strip().splitlines()
    warning = [ln for ln in lines if ln.startswith("warning:")]
    assert len(warning) == 1 and "INVALID" in warning[0] and "job 0" in warning[0], lines
    assert "neither scheduled nor" in warning[0]
    assert "INVALID" in out.read_text()
    assert _plot(command, hetero_files, tmp_path / "ok.png") == 0
    assert not [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning:")]


def test_api_plots_mark_an_invalid_result(hetero_files):
    inst, res = api.load(hetero_files / "i.json"), api.load_result(hetero_files / "dropped.json")
    with pytest.warns(api.InvalidResultWarning, match="job 0"):
        ax = api.plot_schedule(inst, res)
    assert ax.get_title().startswith("INVALID")
    with pytest.warns(api.InvalidResultWarning):
        fig = api.plot_utilisation(inst, res)
    assert fig.get_suptitle().startswith("INVALID")
    assert viz.overlaps_figure(fig) == []


def _char_device(path):
    import os
    import stat

    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # /dev/full's numbers, in the test's folder
    return path


def _fifo(path):
    import os

    os.mkfifo(path)
    return path


@pytest.mark.parametrize("make", [_fifo, _char_device], ids=["fifo", "char-device"])
@pytest.mark.parametrize("command", ["plot-schedule", "plot-utilisation"])
def test_plot_output_that_is_a_fifo_or_device_is_refused_and_kept(hetero_files, tmp_path, capsys, command, make):
    import os

    from tests.reliability_helpers import assert_clean_error

    out = make(tmp_path / "p.png")
    mode = os.lstat(out).st_mode
    assert _plot(command, hetero_files, out) == 2
    err = capsys.readouterr().err
    assert_clean_error(err, "not a regular file")
    assert len(err.strip().splitlines()) == 1, err
    assert os.lstat(out).st_mode == mode  # still the same node, never replaced


def test_comparison_marks_only_the_papers_algorithm_as_the_papers():
    """hetero's online_every_slot (ours, kind 'online') was coloured and named "online (the paper's)":
    the registry's `paper` flag decides, not the kind."""
    from edgeopt.core.registry import lookup

    api.algorithms("hetero")
    assert lookup("hetero", "online").paper and not lookup("hetero", "online_every_slot").paper
    assert all(lookup(f, "online").paper for f in FAMILIES if "online" in api.algorithms(f))
    rows = [_row("online", "online", "feasible", 12.0), _row("online_every_slot", "online", "feasible", 11.0),
            _row("online[F=64]", "online", "feasible", 13.0), _row("fifo", "baseline", "feasible", 14.0)]
    ax = api.Comparison.plot(_comparison(rows))
    colour = {b.get_gid(): b.get_facecolor() for b in _bars(ax)}
    assert colour["bar-online"] == colour["bar-online[F=64]"] != colour["bar-online_every_slot"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["online (the paper's)", "online (ours, not the paper's)", "baseline"]
    # a hand-built row of a name the registry lacks is never the paper's
    ax = api.Comparison.plot(_comparison([_row("mine", "online", "feasible", 1.0)]))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["online (ours, not the paper's)"]


# ---- choosing rows by index, and large schedules drawn as heat maps ---------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_plot_schedule_picks_rows_by_index_range_or_name_in_every_family(family):
    """Rows were chosen by the chart's names only ('h0-g3.8xlarge'); an index, a range or a name now all work,
    and the row of index i is the i-th server (site, cluster) of the instance, idle ones included."""
    inst = api.generate(family, "small", seed=1)
    name = "online" if "online" in api.algorithms(family) else "greedy"
    res = api.run(name, inst)
    spec = api.family(family)
    names = spec.gantt_rows(inst)
    bars = spec.gantt(inst, spec.parse_schedule(res.schedule))
    assert {b.row for b in bars} <= set(names)
    busy = sorted({names.index(b.row) for b in bars})
    i = busy[0]
    for rows in ([i], [str(i)], [names[i]], range(i, i + 1), [f"{i}-{i}"]):
        ax = api.plot_schedule(inst, res, rows=rows)
        assert [t.get_text() for t in ax.get_yticklabels()] == [names[i]], rows
    ax = api.plot_schedule(inst, res, rows=range(10**12))  # clipped to the instance's rows, never expanded
    assert {t.get_text() for t in ax.get_yticklabels()} == {b.row for b in bars}
    from edgeopt.core.errors import InputError

    with pytest.raises(InputError, match=rf"rows: no row index {len(names)} .*indices 0-{len(names) - 1}"):
        api.plot_schedule(inst, res, rows=[len(names)])


def test_plot_schedule_servers_error_is_one_short_line(tmp_path, capsys):
    """The error listed all 150 row names; it now shows 10, '... and N more' and the index range."""
    from edgeopt.services.plots import rows_hint
    from tests.reliability_helpers import assert_clean_error, cli

    inst = api.generate("hetero", "small", seed=2, servers=30)
    api.save(inst, tmp_path / "i.json")
    api.run("online", inst).save(str(tmp_path / "r.json"))
    names = api.family("hetero").gantt_rows(inst)
    assert rows_hint(names) == f"rows: {', '.join(names[:10])} ... and 20 more; or indices 0-29"
    for bad in ("nosuch", "30", "40-50", "3-1"):
        out = tmp_path / "g.png"
        assert cli("plot-schedule", tmp_path / "i.json", tmp_path / "r.json", "-o", out, "--servers", bad) == 2
        err = capsys.readouterr().err
        assert_clean_error(err, "error: --servers:")
        assert len(err.strip().splitlines()) == 1 and names[20] not in err, err
        assert not out.exists()
    assert cli("plot-schedule", tmp_path / "i.json", tmp_path / "r.json", "-o", tmp_path / "ok.png",
               "--servers", f"0-29,{names[0]}") == 0


def test_occupancy_grid_equals_the_slot_by_slot_count_and_bins_a_long_horizon():
    import numpy as np

    bars = [GanttBar("a", 0, 0, 7, arrival=0), GanttBar("a", 1, 3, 5, arrival=0), GanttBar("b", 2, 2, 3, arrival=0),
            GanttBar("b", 3, 9, 10, arrival=0)]
    grid, edges = viz.occupancy_grid(bars, ["a", "b"], 0.0, 10.0, max_bins=10)
    per_slot = np.zeros((2, 10))
    for b in bars:
        per_slot["ab".index(b.row), int(b.start):int(b.end)] += 1
    assert np.allclose(grid, per_slot) and list(edges) == list(range(11))
    grid, edges = viz.occupancy_grid(bars, ["a", "b"], 0.0, 10.0, max_bins=3)  # 4-slot bins: the mean
    expected = np.stack([per_slot[:, k:k + 4].sum(1) / 4 for k in (0, 4, 8)], axis=1)
    assert grid.shape == (2, 3) and np.allclose(grid, expected) and list(edges) == [0, 4, 8, 12]
    long = [GanttBar(f"r{k}", k, k * 10**5, k * 10**5 + 3 * 10**6) for k in range(50)]
    grid, _ = viz.occupancy_grid(long, [f"r{k}" for k in range(50)], 0.0, 10.0**7)
    assert grid.shape == (50, viz.MAX_HEAT_BINS)  # bounded, whatever the horizon
    assert np.allclose(grid.sum(1) * (10**7 / viz.MAX_HEAT_BINS), 3 * 10**6, rtol=1e-3)


def test_large_schedule_defaults_to_a_heat_map_and_explicit_choices_keep_the_bars(hetero_files, tmp_path,
                                                                                   capsys, monkeypatch):
    """A thousand-job Gantt chart was a wall of colour: above the scale thresholds the chart is a heat map
    whose title and stdout say how to zoom in; --jobs/--servers/--window (or --view bars) keep the bars."""
    from edgeopt.services import plots

    inst, res = api.load(hetero_files / "i.json"), api.load_result(hetero_files / "r.json")
    assert api.plot_schedule(inst, res).schedule_view == "bars"  # small: the labelled bars, as before
    monkeypatch.setattr(plots, "SCALE_ROWS", 1)  # this small instance counts as large
    ax = api.plot_schedule(inst, res)
    assert ax.schedule_view == "heatmap" and [im.get_gid() for im in ax.images] == ["schedule-heatmap"]
    assert "--servers" in ax.get_title() and "--window" in ax.get_title() and "--jobs" in ax.get_title()
    assert viz.overlaps_figure(ax.figure) == []
    busy = viz.row_busy_time(api.family("hetero").gantt(inst, api.family("hetero").parse_schedule(res.schedule)),
                             0, 10**9)
    assert [busy[r] for r in ax.rows] == sorted(busy.values(), reverse=True)  # busiest on top
    for kw in ({"jobs": [0]}, {"rows": [0]}, {"window": (0, 5)}, {"view": "bars"}):
        assert api.plot_schedule(inst, res, **kw).schedule_view == "bars", kw
    assert _plot("plot-schedule", hetero_files, tmp_path / "h.png") == 0
    out = capsys.readouterr().out
    assert out.startswith("note: ") and "heat map" in out and "--servers" in out and "--window" in out
    assert _plot("plot-schedule", hetero_files, tmp_path / "b.png", "--window", "0:5") == 0
    assert "heat map" not in capsys.readouterr().out
    assert _plot("plot-schedule", hetero_files, tmp_path / "x.png", "--view", "pie") == 2
    assert "--view" in capsys.readouterr().err
