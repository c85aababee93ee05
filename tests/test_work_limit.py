"""A work limit (``--work-limit``): exact solves stopped by deterministic work, not by the clock.

The wall-clock limit here is an hour, which no solve in this file comes near: what stops or lets finish
each solve is the work limit, so the outcomes below are the same on an idle and on a loaded machine.
"""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import InputError, Status
from edgeopt.core.limits import current_work_limit, work_limit
from formulations.common import _highs_work_options
from tests.reliability_helpers import assert_clean_error, cli

HOUR = 3600.0


@pytest.fixture(scope="module")
def inst():
    return api.generate("hetero", "small", seed=0, jobs=4)


def test_a_tiny_work_limit_stops_cpsat_the_same_way_twice(inst):
    a = api.solve(inst, method="cpsat", time_limit=HOUR, work_limit=1e-4)
    b = api.solve(inst, method="cpsat", time_limit=HOUR, work_limit=1e-4)
    assert a.status == b.status == Status.TIME_LIMIT
    assert (a.objective, a.bound) == (b.objective, b.bound)
    assert a.extra["work_limit"] == 1e-4
    if a.objective is not None:
        assert not api.validate(inst, a)


@pytest.mark.parametrize("method", ["milp", "cpsat"])
def test_an_ample_work_limit_proves_the_optimum(inst, method):
    res = api.solve(inst, method=method, time_limit=HOUR, work_limit=1000)
    assert res.status == Status.OPTIMAL and not api.validate(inst, res)
    other = api.solve(inst, method="cpsat" if method == "milp" else "milp", time_limit=HOUR, work_limit=1000)
    assert other.objective == pytest.approx(res.objective)


def test_highs_gets_a_node_limit_only_inside_the_block():
    assert current_work_limit() is None and _highs_work_options() == {}
    with work_limit(2.5):
        assert _highs_work_options() == {"mip_max_nodes": 250}
        with work_limit(None):
            assert _highs_work_options() == {}
    assert current_work_limit() is None


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "5", 1e7])
def test_a_bad_work_limit_is_refused_naming_it(inst, bad):
    with pytest.raises(InputError, match="work_limit"):
        api.solve(inst, method="cpsat", work_limit=bad)
    with pytest.raises(InputError, match="work_limit"):
        api.compare(inst, ["online"], optimal=True, work_limit=bad)


def test_cli_solve_and_compare_take_work_limit(inst, tmp_path, capsys):
    path = tmp_path / "i.json"
    api.save(inst, path)
    out = tmp_path / "r.json"
    assert cli("solve", path, "--method", "cpsat", "--time-limit", HOUR, "--work-limit", 1000, "-o", out) == 0
    res = api.load_result(out)
    assert res.status == Status.OPTIMAL and res.extra["work_limit"] == 1000
    assert cli("compare", path, "--algorithms", "online", "--optimal", "--method", "cpsat", "--work-limit", 1000,
               "--time-limit", HOUR, "--json") == 0
    capsys.readouterr()
    assert cli("solve", path, "--work-limit", 0) == 2
    err = capsys.readouterr().err
    assert_clean_error(err, "work_limit")


def test_compare_says_when_the_exact_solve_stopped_at_its_limit(inst, tmp_path, capsys):
    path = tmp_path / "i.json"
    api.save(inst, path)
    assert cli("compare", path, "--algorithms", "online", "--optimal", "--method", "cpsat", "--work-limit", 1e-4,
               "--time-limit", HOUR) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "note: cpsat stopped at its work limit of 0.0001 before proving optimality" in text
    assert "raise --work-limit" in text
    assert cli("compare", path, "--algorithms", "online", "--optimal", "--method", "cpsat", "--work-limit", 1000,
               "--time-limit", HOUR) == 0
    assert "note:" not in capsys.readouterr().out


def test_demo_proves_its_optima_by_work_not_by_the_clock(monkeypatch, capsys):
    """The demo passes its work limit (and a time limit that is only a guard) to every comparison."""
    from edgeopt.commands import compare as cli_module

    seen = []
    real = api.compare

    def spy(*args, **kwargs):
        seen.append((kwargs["time_limit"], kwargs["work_limit"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "compare", spy)
    assert cli("demo", "--family", "edgecloud") == 0
    assert seen == [(600.0, cli_module.DEMO_WORK_LIMIT)]
    assert "ratio to optimum" in " ".join(capsys.readouterr().out.split())


def test_a_sweep_point_solves_under_its_work_limit_and_keeps_old_keys():
    from edgeopt.sweep import SweepPoint, evaluate_point, limit_notes

    plain = SweepPoint("hetero", "small", seed=0, jobs=4, algorithms=("online",), optimal=True, method="cpsat",
                       time_limit=HOUR)
    assert plain.key == SweepPoint("hetero", "small", seed=0, jobs=4, algorithms=("online",), optimal=True,
                                   method="cpsat", time_limit=HOUR, work_limit=None).key
    tiny = SweepPoint(**{**plain.__dict__, "work_limit": 1e-4})
    assert tiny.key != plain.key
    rows = evaluate_point(tiny)
    exact = next(r for r in rows if r["kind"] == "exact")
    assert exact["status"] == "time_limit" and '"work_limit": 0.0001' in exact["params"]
    tail = "without a bound" if exact["bound"] is None else "with a bound (ratios to it)"
    assert limit_notes(rows) == [f"1 of 1 cpsat solves stopped at the work limit of 0.0001 {tail}"]
    proven = evaluate_point(SweepPoint(**{**plain.__dict__, "work_limit": 1000}))
    assert next(r for r in proven if r["kind"] == "exact")["status"] == "optimal" and limit_notes(proven) == []


def test_limit_notes_count_each_method_and_say_whether_a_bound_was_left():
    from edgeopt.sweep import limit_notes

    def row(status, bound, algorithm="milp", params='{"time_limit": 20}'):
        return {"kind": "exact", "algorithm": algorithm, "status": status, "bound": bound, "params": params,
                "error": None}

    rows = [row("time_limit", None) for _ in range(5)] + [{"kind": "online", "algorithm": "online"}]
    assert limit_notes(rows) == ["5 of 5 milp solves stopped at the 20 s limit without a bound"]
    rows = [row("time_limit", 3.0), row("optimal", 4.0), row("time_limit", None, "cpsat")]
    assert limit_notes(rows) == ["1 of 1 cpsat solves stopped at the 20 s limit without a bound",
                                 "1 of 2 milp solves stopped at the 20 s limit with a bound (ratios to it)"]
