"""The trivial lower bounds of benchmarks/cross_family.py: never above a certified optimum, never above an
algorithm's objective on trace-driven instances; and its choice of windows by load."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from edgeopt import api, traces
from edgeopt.traces.instances import from_trace
from tests.reliability_helpers import load_certified

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("cross_family", ROOT / "benchmarks" / "cross_family.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BENCH = _bench()
CERTIFIED = sorted((p.parent.name, p.name[: -len(".optimum.json")])
                   for p in (ROOT / "instances").glob("*/*.optimum.json"))


@pytest.mark.parametrize("family, name", CERTIFIED)
def test_trivial_bound_never_above_a_certified_optimum(family, name):
    inst, record = load_certified(family, name)
    value, label = BENCH.trivial_bound(family, inst)
    assert label.startswith("trivial")
    assert value <= record["objective"] * (1 + 1e-9) + 1e-9, (family, name, value, record["objective"])


@pytest.mark.parametrize("family", BENCH.FAMILIES)
def test_trivial_bound_below_every_algorithm_on_a_trace_instance(tmp_path, family):
    lines = ["job_id,cluster,submit_time,duration_s,num_gpus"] + [
        f"j{k},c,{k * 1800},{600 + 3000 * (k % 5)},{[1, 2, 4, 8][k % 4]}" for k in range(14)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    inst = from_trace(family, traces.load_jobs(tmp_path / "t.csv"), seed=0, servers=3,
                      **BENCH.TRACE_OPTIONS.get(family, {}))
    value, _ = BENCH.trivial_bound(family, inst)
    assert value > 0
    for name, algo in api.algorithms(family).items():
        if family == "tapfinger" and name in ("online", "vanilla_marl"):
            continue  # policies: covered by the benchmark run (they need the rl extra's torch)
        result = api.run(name, inst)
        assert api.validate(inst, result) == []
        if result.status.value == "feasible" and not algo.relaxed:
            assert value <= result.objective * (1 + 1e-9), (family, name)


def test_windows_chosen_by_load():
    jobs = pd.DataFrame({"job_id": list("abcdefg"), "cluster": ["c"] * 6 + ["d"],
                         "submit_s": [0.0, 10.0, 7 * 86400.0 + 5, 14 * 86400.0, 21 * 86400.0, 28 * 86400.0 + 1, 0.0],
                         "duration_s": [3600.0, 3600.0, 36000.0, 7200.0, 1.0, 1.0, 1e6], "gpus": [1, 1, 1, 1, 1, 1, 64]})
    load = BENCH.weekly_load(jobs, "c")
    assert load["week"].tolist() == [0, 1, 2, 3]  # week 4 is not complete (the last submission is in it)
    assert BENCH.choose_windows(load) == {"quiet": 3, "typical": 0, "busiest": 1}


def _trace_jobs(tmp_path, n=14):
    lines = ["job_id,cluster,submit_time,duration_s,num_gpus"] + [
        f"j{k},c,{k * 1800},{600 + 3000 * (k % 5)},{[1, 2, 4, 8][k % 4]}" for k in range(n)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    return traces.load_jobs(tmp_path / "t.csv")


@pytest.mark.parametrize("family", BENCH.FAMILIES)
def test_certified_bound_is_checked_and_below_every_algorithm(tmp_path, family):
    inst = from_trace(family, _trace_jobs(tmp_path, 8), seed=0, servers=2, **BENCH.TRACE_OPTIONS.get(family, {}))
    out = BENCH.best_bound(family, inst, 30.0)
    cert = out["certified_bound"]
    assert cert["status"] == "bound" and cert["usable"], cert
    assert cert["checked"] == pytest.approx(cert["value"], rel=1e-9)
    assert out["bound"] == max(cert["checked"], out["trivial_bound"])
    assert out["bound_kind"] == ("certified" if cert["checked"] >= out["trivial_bound"] else "trivial")
    for name, algo in api.algorithms(family).items():
        if family == "tapfinger" and name in ("online", "vanilla_marl"):
            continue  # policies: covered by the benchmark run (they need the rl extra's torch)
        result = api.run(name, inst)
        assert api.validate(inst, result) == []
        if result.status.value == "feasible" and not algo.relaxed:
            assert out["bound"] <= result.objective * (1 + 1e-9), (family, name, out["bound"], result.objective)


def test_a_bound_whose_certificate_fails_its_check_is_not_used(tmp_path, monkeypatch):
    inst = from_trace("preemptive", _trace_jobs(tmp_path, 8), seed=0, servers=2)
    assert BENCH.best_bound("preemptive", inst, 30.0)["bound_kind"] == "certified"

    def broken(instance, result):
        raise BENCH.ModelError("certificate: gives a different number")

    monkeypatch.setattr(api, "check_bound", broken)
    out = BENCH.best_bound("preemptive", inst, 30.0)
    assert out["bound_kind"] == "trivial" and out["bound"] == out["trivial_bound"]
    assert not out["certified_bound"]["usable"] and "different number" in out["certified_bound"]["check_error"]


def test_every_ratio_names_its_bound(tmp_path):
    out = BENCH.run_family("preemptive", _trace_jobs(tmp_path), 0.0, "c", 10.0, 0, 30.0)
    ratios = [r for r in out["rows"] if "ratio_to_bound" in r]
    assert ratios and all(r["ratio_against"] == out["bound_kind"] for r in ratios)
    assert out["bound_name"].startswith(out["bound_kind"])
