"""The edgecloud validator's capacity check as an event sweep against the dense reference
(`validator_reference`): the same violations, messages and order on schedules of the family's
algorithms, randomly broken ones (every violation kind the validator reports is drawn) and the
hand-made cases of test_edgecloud_validator; and its memory does not grow with the horizon."""

from __future__ import annotations

import copy
import tracemalloc

import numpy as np
import pytest

from edgeopt import api
from edgeopt.edgecloud import Instance, Schedule, generate, validate
from edgeopt.edgecloud.schedule import JobRun
from tests.edgecloud import test_edgecloud_validator as hand
from tests.edgecloud.validator_reference import validate_reference

KINDS = {"coverage", "2a", "2b", "2c", "2e", "2f", "2g", "2h", "2i", "2j", "2k", "2l"}


def _same(inst, sched) -> list[tuple[str, str, int | None]]:
    if isinstance(sched, dict):
        sched = Schedule.model_validate(sched)
    got = [(v.equation, v.message, v.job) for v in validate(inst, sched)]
    assert got == [(v.equation, v.message, v.job) for v in validate_reference(inst, sched)]
    return got


def _pieces(run: dict) -> list[dict]:
    return run["segments"] if run.get("segments") else [run]


def _mutate(rng, inst, data) -> None:
    """One random change; most break a constraint, some leave the schedule valid."""
    S, T = len(inst.servers), inst.horizon
    if not data["jobs"]:
        data["rejected"] = data["rejected"][1:]
        return
    run = data["jobs"][rng.integers(len(data["jobs"]))]
    piece = _pieces(run)[rng.integers(len(_pieces(run)))]
    kind = rng.integers(14)
    if kind == 0:  # move in time (overlaps others: 2g / 2h; before release: 2i; past T: 2l)
        k = int(rng.integers(-4, 5))
        piece["start"] += k
        piece["end"] += k
    elif kind == 1:
        piece["end"] += int(rng.integers(-3, 3))
    elif kind == 2:  # more workers somewhere (2g, 2a, 2f)
        s = int(rng.integers(S + (rng.random() < 0.1)))
        piece["workers"] = {**piece["workers"], s: int(rng.integers(-1, 4))}
    elif kind == 3:
        piece["ps_server"] = int(rng.integers(-1, S + 1))
    elif kind == 4:
        piece["colocated"] = not piece["colocated"]
    elif kind == 5:  # another job's PS server and time (2h)
        other = data["jobs"][rng.integers(len(data["jobs"]))]
        o = _pieces(other)[0]
        piece.update(ps_server=o["ps_server"], start=o["start"], end=max(o["start"] + 1, piece["end"]))
    elif kind == 6:
        data["jobs"].append(copy.deepcopy(run))
    elif kind == 7:
        data["rejected"] = [*data["rejected"], int(rng.integers(-1, len(inst.jobs) + 1))]
    elif kind == 8:
        data["jobs"].remove(run)
    elif kind == 9:  # split into segments (2c outside a preemptive schedule)
        a, b = piece["start"], piece["end"]
        mid = (a + b) // 2
        seg = {k: copy.deepcopy(piece[k]) for k in ("workers", "ps_server", "colocated")}
        run["segments"] = [{"start": a, "end": mid, **seg}, {"start": mid + int(rng.integers(-1, 2)), "end": b, **seg}]
    elif kind == 10:
        run["start"] += int(rng.integers(-1, 2))
    elif kind == 11:
        run["end"] += int(rng.integers(-1, 2))
    elif kind == 12:
        run["job"] = int(rng.integers(-1, len(inst.jobs) + 1))
    elif kind == 13:  # stack everything on one server and type at one slot (many 2g cells)
        s = int(rng.integers(S))
        t = int(rng.integers(max(1, T - 2)))
        piece.update(start=t, end=t + 2, workers={s: int(inst.W()[s].max()) + 1})


@pytest.fixture(scope="module")
def schedules():
    out = []
    for seed in range(4):
        inst = generate("small", seed=seed, jobs=6)
        for algo in ("fifo", "drf", "preemptive", "online"):
            res = api.run(algo, inst)
            if res.schedule is not None:
                out.append((inst, res.schedule))
    return out


def test_algorithm_schedules_agree_with_the_reference(schedules):
    assert any(d.get("preemptive") for _, d in schedules)
    for inst, data in schedules:
        assert _same(inst, data) == []


def test_random_broken_schedules_agree_with_the_reference(schedules):
    rng = np.random.default_rng(11)
    seen: set[str] = set()
    for k in range(600):
        inst, base = schedules[k % len(schedules)]
        data = copy.deepcopy(base)
        for _ in range(int(rng.integers(1, 4))):
            _mutate(rng, inst, data)
        seen |= {eq for eq, _, _ in _same(inst, data)}
    assert seen >= KINDS, KINDS - seen


def test_hand_made_cases_agree_with_the_reference():
    inst = hand._instance()
    for sched, label in hand.NAMED:
        assert label in {eq for eq, _, _ in _same(inst, sched)}
    assert {eq for eq, _, _ in _same(inst, hand._broken(workers={1: 2}, ps_server=0, start=3, end=8))} == {"2h"}
    for segs, kw in (([hand._seg(4, 7), hand._seg(6, 8)], {}), ([hand._seg(4, 5), hand._seg(6, 8)], {"start": 3}),
                     ([hand._seg(4, 5), hand._seg(6, 8)], {"end": 9}), ([hand._seg(3, 4), hand._seg(6, 8)], {}),
                     ([hand._seg(4, 5), hand._seg(6, 8, colocated=True)], {})):
        assert _same(inst, hand._preemptive(0, segs, **kw))


def test_cells_over_capacity_counted_like_the_reference():
    """Several overlapping runs on one server: the first cell, its usage and the number of cells."""
    inst = hand._instance()
    sched = Schedule(jobs=[
        JobRun(job=0, start=1, end=9, workers={0: 2}, ps_server=0, colocated=True),
        JobRun(job=1, start=4, end=12, workers={0: 1, 1: 2}, ps_server=0, colocated=False)])
    got = _same(inst, sched)
    assert [m for eq, m, _ in got if eq in ("2g", "2h")] == [  # slots 4-8 on server 0
        "server 0 worker type 0 slot 4: 3 > W=2", "5 (server, type, slot) cells over capacity in total",
        "server 0 PS type 0 slot 4: 2 > P=1", "5 (server, type, slot) cells over capacity in total"]


def test_memory_does_not_grow_with_the_horizon():
    """A million-slot horizon: the reference filled servers x types x (T + 1) int64 arrays (about
    100 MB here); the sweep holds two events per run."""
    inst = Instance.model_validate({**hand._instance().model_dump(), "horizon": 1_000_000})
    sched = Schedule(jobs=[
        JobRun(job=0, start=1, end=999_000, workers={0: 2}, ps_server=0, colocated=True),
        JobRun(job=1, start=4, end=999_999, workers={0: 1, 1: 2}, ps_server=1, colocated=False)])
    validate(inst, sched)  # first-call allocations (lazy imports) are not the check's
    tracemalloc.start()
    try:
        got = validate(inst, sched)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [v.message for v in got] == ["server 0 worker type 0 slot 4: 3 > W=2",
                                        "998996 (server, type, slot) cells over capacity in total"]
    assert peak < 1_000_000, peak


def test_first_cell_in_server_then_type_order():
    """Cells over capacity on (server 1, type 0) from slot 2 and (server 0, type 1) from slot 5: the
    reference names server 0's first (row-major order of servers x types x slots)."""
    data = hand._instance().model_dump()
    data["servers"] = [{"workers": [2, 1], "ps": [1]}, {"workers": [1, 2], "ps": [1]},
                       {"is_cloud": True, "workers": [3, 3], "ps": [2]}]
    data["jobs"][1]["worker_type"] = 1
    inst = Instance.model_validate(data)
    sched = Schedule(jobs=[
        JobRun(job=0, start=2, end=8, workers={0: 1, 1: 2}, ps_server=0, colocated=False),
        JobRun(job=1, start=5, end=9, workers={0: 2, 1: 1}, ps_server=1, colocated=False)])
    got = [m for eq, m, _ in _same(inst, sched) if eq == "2g"]
    assert got == ["server 0 worker type 1 slot 5: 2 > W=1", "10 (server, type, slot) cells over capacity in total"]
