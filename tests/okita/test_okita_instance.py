"""Instances of the okita family: generators, shapes, and one clear error per bad field."""

from __future__ import annotations

import numpy as np
import pytest

from edgeopt import api
from edgeopt.core import InputError
from edgeopt.okita import FAMILY, generate
from edgeopt.okita.instance import PRESETS


def _data(**changes):
    d = generate("small", seed=1).model_dump(mode="json")
    d.update(changes)
    return d


@pytest.mark.parametrize("preset", ["small", "testbed"])
def test_generators_round_trip_and_are_seeded(preset):
    a = generate(preset, seed=4)
    assert FAMILY.parse_instance(a.model_dump(mode="json")) == a
    assert generate(preset, seed=4) == a and generate(preset, seed=5) != a


def test_paper_preset_follows_sec_v_b():
    inst = generate("paper", seed=0)
    assert (len(inst.sites), len(inst.jobs), inst.horizon) == (50, 100, 150)
    q = inst.q
    off = q[~np.eye(50, dtype=bool)]
    assert np.allclose(q, q.T) and off.min() >= 0.02 and off.max() <= 0.08 and np.all(np.diag(q) == 0)
    for j in inst.jobs:
        assert 10 <= min(j.data_chunks) and max(j.data_chunks) <= 20
        assert 20 <= j.chunk_size_mb <= 60 and 30 <= j.param_size_mb <= 575
        assert 5 <= j.chunks_per_worker <= 15
        assert j.latency_cost.kind == "exponential" and 20 <= j.latency_cost.tau <= 100
        assert 0 <= j.worker_demand[0] <= 4 and 1 <= j.worker_demand[1] <= 10 and j.ps_demand[0] == 0
    assert {j.latency_cost.kind for j in generate("paper_linear", seed=0, jobs=5).jobs} == {"linear"}
    pw = generate("paper_piecewise", seed=0, jobs=5).jobs
    assert all(j.latency_cost.kind == "piecewise" and 3 <= j.latency_cost.c <= 5 for j in pw)


def test_testbed_preset_follows_sec_v_a():
    inst = generate("testbed", seed=0)
    assert len(inst.sites) == 9 and inst.horizon == 30 and len(inst.jobs) == 10
    assert all(s.capacity[:3] == [1.0, 12.0, 16.0] for s in inst.sites)
    assert all(j.total_chunks in (27, 115, 150) and j.chunk_size_mb == 2 and 20 <= j.epochs <= 30
               and j.arrival < 10 for j in inst.jobs)


def test_every_preset_is_listed_and_unknown_preset_is_an_input_error():
    assert PRESETS[0] == "small"
    with pytest.raises(InputError, match="preset"):
        api.generate("okita", "nope", seed=0)


def test_latency_cost_kinds_evaluate_as_the_paper_defines_them():
    inst = generate("small", seed=0)
    x = np.array([1, 2, 5])
    from edgeopt.okita.instance import ExponentialCost, LinearCost, PiecewiseCost, TableCost

    assert np.allclose(ExponentialCost(tau=10).evaluate(x), 10 * np.exp(0.25 * x))
    assert np.allclose(LinearCost(tau=2, b=5).evaluate(x), 2 * x + 5)
    assert np.allclose(PiecewiseCost(tau1=1, tau2=9, c=3).evaluate(x), [1, 1, 9])
    assert np.allclose(TableCost(values=[1, 2, 3]).evaluate(x), [1, 2, 3])  # held constant past its end
    table = inst.latency_table(0)
    job = inst.jobs[0]
    assert table.shape == (inst.horizon,)
    t = inst.horizon - 1
    assert table[t] == pytest.approx(float(job.cost(t - job.arrival + 1)))  # f_i(t - a_i + 1)


@pytest.mark.parametrize("path, value, field", [
    (("jobs", 0, "latency_cost"), {"kind": "piecewise", "tau1": 50, "tau2": 10, "c": 3}, "jobs.0.latency_cost"),
    (("jobs", 0, "latency_cost"), {"kind": "table", "values": [1, 3, 2]}, "jobs.0.latency_cost"),
    (("jobs", 0, "latency_cost"), {"kind": "linear", "tau": -1, "b": 0}, "jobs.0.latency_cost"),
    (("jobs", 0, "latency_cost"), {"kind": "exponential", "tau": 1e12}, "jobs.0.latency_cost"),
    (("jobs", 0, "chunk_size_mb"), float("nan"), "jobs.0.chunk_size_mb"),
    (("jobs", 0, "data_chunks"), [0, 0, 0], "jobs.0"),
    (("jobs", 0, "data_chunks"), [1, 1], "instance"),
    (("jobs", 0, "worker_chunks_per_slot"), 0.5, "jobs.0"),
    (("jobs", 0, "arrival"), 99, "instance"),
    (("jobs", 0, "id"), 5, "instance"),
    (("sites", 0, "capacity"), [1, 2, 3], "instance"),
    (("sites", 0, "capacity"), [1, -2, 3, 4], "sites.0"),
    (("bandwidth_cost_per_mb", 0), [0.5, 0.1, 0.1], "instance"),
    (("bandwidth_cost_per_mb", 1), [-0.1, 0, 0.1], "instance"),
    (("bandwidth_cost_per_mb",), [[0, 1], [1, 0]], "instance"),
])
def test_bad_fields_are_one_line_input_errors_naming_the_field(path, value, field):
    d = _data()
    node = d
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    with pytest.raises(InputError) as exc:
        FAMILY.parse_instance(d)
    expected = field if field == "instance" else f"instance.{field}"
    assert exc.value.field.startswith(expected), exc.value
    assert "\n" not in str(exc.value)


def test_exponential_cost_overflowing_the_horizon_is_rejected():
    d = _data(horizon=4000)
    d["jobs"][0]["latency_cost"] = {"kind": "exponential", "tau": 50}
    with pytest.raises(InputError, match="latency_cost"):
        FAMILY.parse_instance(d)
