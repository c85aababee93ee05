"""Parameter studies in one call: algorithm variants and grids in compare and sweep (issue 21, section 2),
and declared parameter ranges checked by the registry (issue 24, item 6)."""

from __future__ import annotations

import json

import pytest

from edgeopt import api
from edgeopt.cli import main
from edgeopt.core import InputError
from edgeopt.services.variants import Variant, parse_grid, parse_list, resolve
from edgeopt.sweep import COLUMNS, SweepPoint, read_sweep, run_sweep


def test_labels_parse_and_resolve_to_converted_parameters():
    assert parse_list("online[F=1],online[F=64,order=density],drf") == [
        ("online", {"F": "1"}), ("online", {"F": "64", "order": "density"}), ("drf", {})]
    got = resolve("hetero", ["online", ("online", {"F": 64}), "online[F=8.0]", Variant("drf")])
    assert [v.label for v in got] == ["online", "online[F=64]", "online[F=8]", "drf"]
    assert got[1].kwargs == {"F": 64.0} and isinstance(got[1].kwargs["F"], float)


def test_grids_multiply_per_algorithm():
    assert parse_grid(["online.F=1,8", "online.order=arrival,density", "fifo.workers=2"]) == [
        ("online", {"F": "1", "order": "arrival"}), ("online", {"F": "1", "order": "density"}),
        ("online", {"F": "8", "order": "arrival"}), ("online", {"F": "8", "order": "density"}),
        ("fifo", {"workers": "2"})]


@pytest.mark.parametrize("bad", ["online[G=1]", "online[F=-1]", "online[F=x]", "onlin", "online[F=1",
                                 "online[F]", ["online", "online[]"]])
def test_bad_variants_are_refused_before_anything_runs(bad):
    with pytest.raises(InputError):
        resolve("hetero", bad if isinstance(bad, list) else [bad])


def test_duplicate_variant_is_refused():
    with pytest.raises(InputError, match="twice"):
        resolve("hetero", ["online[F=8]", ("online", {"F": 8.0})])


def test_compare_labels_rows_with_the_variant_and_runs_it_with_its_parameters():
    inst = api.generate("hetero", "small", seed=1)
    table = api.compare(inst, ["online", ("online", {"F": 64}), "online[order=density]", "drf"])
    labels = [r.algorithm for r in table.rows]
    assert labels == ["online", "online[F=64]", "online[order=density]", "drf"]
    for row in table.rows:
        assert row.valid
    by = {r.algorithm: r for r in table.rows}
    assert by["online[F=64]"].objective == api.run("online", inst, F=64).objective
    assert by["online[order=density]"].objective == api.run("online", inst, order="density").objective
    assert json.loads(by["online[F=64]"].params)["F"] == 64.0
    assert json.loads(by["online"].params)["F"] is None  # every parameter the run used, defaults included
    frame = table.to_frame()
    assert list(frame.index) == labels and "params" in frame.columns


def test_sweep_rows_are_labelled_and_keep_the_stored_columns(tmp_path):
    points = [SweepPoint("hetero", "small", seed=s, algorithms=("online[F=1]", "online[F=64]", "drf"))
              for s in (0, 1)]
    rows = run_sweep(points, scheduler="sequential", store=tmp_path / "s")
    assert [r["algorithm"] for r in rows[:3]] == ["online[F=1]", "online[F=64]", "drf"]
    assert all(r["error"] is None for r in rows)
    inst = api.generate("hetero", "small", seed=1)
    assert rows[4]["objective"] == api.run("online", inst, F=64).objective
    df = read_sweep(tmp_path / "s")
    assert tuple(df.columns) == COLUMNS
    assert set(df["algorithm"]) == {"online[F=1]", "online[F=64]", "drf"}
    assert json.loads(df.loc[df["algorithm"] == "online[F=64]", "params"].iloc[0])["F"] == 64.0


def test_cli_compare_and_sweep_take_variants_and_grids(tmp_path, capsys):
    inst = tmp_path / "h.json"
    with pytest.raises(SystemExit) as e:
        main(["generate", "hetero", "-o", str(inst)])
    assert e.value.code == 0
    with pytest.raises(SystemExit) as e:
        main(["compare", str(inst), "--algorithms", "online[F=1],drf", "--grid", "online.F=8,64", "--json"])
    assert e.value.code == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["algorithm"] for r in doc["rows"]] == ["online[F=1]", "drf", "online[F=8]", "online[F=64]"]
    with pytest.raises(SystemExit) as e:
        main(["sweep", "hetero", "--seeds", "0", "--grid", "online.F=1,0", "--workers", "1"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "param.F" in err and "> 0" in err and len(err.strip().splitlines()) == 1


def test_declared_ranges_are_checked_by_the_registry(tmp_path, capsys):
    inst = tmp_path / "e.json"
    with pytest.raises(SystemExit):
        main(["generate", "edgecloud", "-o", str(inst)])
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(["run", "online", str(inst), "--param", "f1=-1"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: param.f1: must be > 0, got -1.0"
    ec = api.generate("edgecloud", "small", seed=0)
    with pytest.raises(InputError, match="param.f2: must be > 0"):
        api.run("online", ec, f2=0)
    assert api.run("online", ec, f1=0.5).status.value in ("feasible", "partial")


def test_every_declared_parameter_has_a_help_line_and_valid_range():
    from edgeopt.core.registry import check_range, parse_range

    for spec in api.families():
        for algo in api.algorithms(spec.name).values():
            for p in algo.params:
                assert p.help, f"{spec.name}/{algo.name}: parameter {p.name} has no help line"
                if p.range is not None:
                    parse_range(p.range)
                    assert check_range(p.default, p.range), f"{spec.name}/{algo.name}.{p.name} default out of range"


def test_ratios_say_what_they_are_against():
    from edgeopt.frames import records_frame
    from edgeopt.services.comparison import Row, _rank_and_ratio
    from edgeopt.sweep import summarise

    def row(name, obj):
        return Row(name, "online", "feasible", obj, None, None, True, 0.0, [])

    a, b = [row("x", 10.0)], [row("x", 10.0)]
    _rank_and_ratio(a, 5.0, "optimum")
    _rank_and_ratio(b, 4.0, "bound")
    assert (a[0].ratio_to_optimum, a[0].ratio_to_bound) == (2.0, None)
    assert (b[0].ratio_to_optimum, b[0].ratio_to_bound) == (None, 2.5)
    rows = [{"family": "f", "algorithm": "x", "ratio": 2.0, "reference": "optimum", "valid": True, "runtime_s": 0.0,
             "error": None},
            {"family": "f", "algorithm": "x", "ratio": 2.5, "reference": "bound", "valid": True, "runtime_s": 0.0,
             "error": None}]
    (s,) = summarise(rows)
    assert (s["mean_ratio"], s["n_optimum"], s["mean_ratio_to_bound"], s["n_bound"]) == (2.0, 1, 2.5, 1)
    frame = records_frame(rows)
    assert frame["ratio_to_optimum"].mean() == 2.0 and frame["ratio_to_bound"].mean() == 2.5


def test_compare_table_names_its_reference_and_is_sorted_by_rank(tmp_path, capsys):
    inst = tmp_path / "h.json"
    with pytest.raises(SystemExit):
        main(["generate", "hetero", "-o", str(inst)])
    with pytest.raises(SystemExit) as e:
        main(["compare", str(inst), "--algorithms", "drf,online,fifo"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    assert "ratio to" not in text  # no exact model: no ratio column, never "ratio to -"
    body = [ln for ln in text.splitlines() if ln.startswith("│")]
    ranks = [int(ln.split("│")[5]) for ln in body]
    assert ranks == sorted(ranks)


def test_tables_show_variant_labels_as_written(tmp_path, capsys):
    inst = tmp_path / "h.json"
    with pytest.raises(SystemExit):
        main(["generate", "hetero", "-o", str(inst)])
    with pytest.raises(SystemExit) as e:
        main(["compare", str(inst), "--grid", "online.order=arrival,density"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "online[order=arrival]" in out and "online[order=density]" in out  # not eaten as rich markup
