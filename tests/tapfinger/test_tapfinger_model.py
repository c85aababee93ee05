"""Instance, progress models and validator of the tapfinger family."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from edgeopt.core import InputError
from edgeopt.tapfinger import FAMILY, generate
from edgeopt.tapfinger.instance import Instance
from edgeopt.tapfinger.schedule import Placement, Schedule, Segment, validate
from edgeopt.tapfinger.speedup import ProgressModel, read_progress_table, run_duration

EXAMPLE_TABLE = Path(__file__).resolve().parents[2] / "instances" / "tapfinger" / "example_progress_table.csv"


def test_insensitive_takes_four_timesteps_whatever_the_allocation():
    m = ProgressModel(kind="insensitive")
    assert {run_duration(m, c, g, 10.0) for c in (2, 8, 16) for g in (1, 4, 16)} == {4}


def test_sensitive_follows_tanh_sqrt_recurrence():
    m = ProgressModel(kind="sensitive")
    for g, expected in ((1, 21), (2, 10), (4, 5), (10, 2), (16, 2)):
        p, k = 0.0, 0
        while p < 1 - 1e-9:  # the recurrence written out independently of progress.py
            p += math.tanh(g / 16) * math.sqrt(1.2 - p)
            k += 1
        assert k == expected
        assert run_duration(m, 2, g, 10.0) == expected
        assert run_duration(m, 16, g, 10.0) == expected  # CPU above the minimum has no effect


def test_cpu_sensitive_is_faster_with_more_cpus_until_saturation():
    m = ProgressModel(kind="cpu_sensitive")
    d = [run_duration(m, c, 4, 10.0) for c in (2, 4, 8, 16)]
    assert d[0] > d[2] and d[2] == d[3]


def test_table_model_from_csv_uses_covered_fastest_entry():
    m = read_progress_table(EXAMPLE_TABLE)
    secs = {(e.cpu, e.gpu): e.seconds for e in m.table}
    c, g = min(secs)
    assert run_duration(m, c, g, 10.0) == math.ceil(secs[(c, g)] / 10.0 - 1e-9)
    assert run_duration(m, 0, 0, 10.0) > 10_000  # covers no entry: never finishes


def test_bad_table_is_an_input_error(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("cpu,gpu,sec\n2,1,30\n")
    with pytest.raises(InputError, match="header"):
        read_progress_table(p)


def test_generators_respect_the_paper_settings():
    inst = generate("paper", seed=3)
    assert len(inst.clusters) == 3 and all(c.capacity == [16, 16] for c in inst.clusters)
    assert len(inst.tasks) == 192
    assert sum(t.task_type for t in inst.tasks) == 96  # half of each type
    assert all(t.min_resources == [2, 1] for t in inst.tasks)
    six = generate("paper", seed=3, clusters=6, arrival_rate=4)
    assert len(six.clusters) == 6 and len(six.tasks) == 384
    rate = len(six.tasks) / (six.tasks[-1].arrival + 1)
    assert 3 < rate < 5
    assert generate("paper6", seed=3).model_dump() == six.model_dump()
    het = generate("hetero_clusters", seed=1)
    assert het.clusters[0].capacity == [4, 4] and het.clusters[-1].capacity == [32, 32]


def test_bounded_fields_are_input_errors():
    data = generate("small", seed=0).model_dump(mode="json")
    data["clusters"][0]["capacity"] = [-1, 4]
    with pytest.raises(InputError, match="capacity"):
        FAMILY.parse_instance(data)
    data = generate("small", seed=0).model_dump(mode="json")
    data["tasks"][0]["reachable_clusters"] = [5]
    with pytest.raises(InputError, match="reachable_clusters"):
        FAMILY.parse_instance(data)
    with pytest.raises(InputError, match="preset"):
        generate("nope")


def _one_task() -> Instance:
    return FAMILY.parse_instance({
        "family": "tapfinger", "horizon": 12, "clusters": [{"capacity": [4, 4]}, {"capacity": [4, 4]}],
        "task_types": [{"name": "i", "progress": {"kind": "insensitive"}},
                       {"name": "s", "progress": {"kind": "sensitive"}}],
        "tasks": [{"id": 0, "arrival": 1, "task_type": 0, "min_resources": [2, 1], "reachable_clusters": [0]},
                  {"id": 1, "arrival": 1, "task_type": 0, "min_resources": [2, 1], "reachable_clusters": [0, 1]}],
    })


def _eqs(inst, placements) -> set[str]:
    return {v.equation for v in validate(inst, Schedule(placements=placements))}


def test_validator_names_each_broken_equation():
    inst = _one_task()
    ok = Placement(task=0, cluster=0, start=1, end=5, allocation={"cpu": 2, "gpu": 1})
    assert _eqs(inst, [ok]) == set()
    assert "2" in _eqs(inst, [ok, ok.model_copy(update={"task": 1})])  # two starts on cluster 0 at t=1
    assert "3" in _eqs(inst, [ok, ok])
    assert "D_j" in _eqs(inst, [ok.model_copy(update={"cluster": 1})])
    assert "8" in _eqs(inst, [ok.model_copy(update={"allocation": {"cpu": 1, "gpu": 1}})])
    assert "8" in _eqs(inst, [ok.model_copy(update={"allocation": {"cpu": 5, "gpu": 1}})])
    assert "6" in _eqs(inst, [ok.model_copy(update={"start": 0, "end": 4})])
    assert "phi" in _eqs(inst, [ok.model_copy(update={"end": 6})])
    assert "T" in _eqs(inst, [ok.model_copy(update={"start": 9, "end": 13})])
    big = {"cpu": 3, "gpu": 1}
    assert "5" in _eqs(inst, [ok.model_copy(update={"allocation": big}),
                              Placement(task=1, cluster=0, start=2, end=6, allocation=big)])


def test_segments_pay_the_switch_overhead():
    inst = _one_task()
    a = {"cpu": 2, "gpu": 1}
    # 2 steps, pause, resume: the resumed first step counts half -> 0.5 + 0.125 + 0.25 + 0.25 >= 1 at t=8
    segs = [Segment(start=1, end=3, allocation=a), Segment(start=5, end=8, allocation=a)]
    pl = Placement(task=0, cluster=0, start=1, end=8, allocation=a, segments=segs)
    assert _eqs(inst, [pl]) == set()
    assert "phi" in _eqs(inst, [pl.model_copy(update={"end": 7, "segments": [segs[0], Segment(
        start=5, end=7, allocation=a)]})])


def test_noise_is_a_reproducible_scenario():
    a = generate("paper", seed=1, noise=0.1)
    b = generate("paper", seed=1, noise=0.1)
    assert a.noise_of(3) == b.noise_of(3)
    assert all(abs(u) <= 0.1 for u in a.noise_of(3))
    assert generate("paper", seed=1).noise_of(3) is None
