"""The validator breaks each constraint of program (2) once, and names its equation."""

from __future__ import annotations

import copy

import pytest

from edgeopt import api
from edgeopt.okita import FAMILY, generate
from edgeopt.okita.schedule import Schedule, SlotEntry, objective, objective_parts, validate


@pytest.fixture(scope="module")
def base():
    inst = generate("small", seed=0)
    res = api.run("online", inst)
    sched = FAMILY.parse_schedule(res.schedule)
    assert validate(inst, sched) == []
    return inst, sched.model_dump(mode="json")


def _labels(inst, data) -> set[str]:
    return {v.equation for v in validate(inst, Schedule.model_validate(data))}


def _first_training(data):
    for js in data["jobs"]:
        for e in js["slots"]:
            if e["transfers"]:
                return js, e
    raise AssertionError("no training slot")


def test_each_broken_constraint_is_named(base):
    inst, good = base
    cases = {}

    d = copy.deepcopy(good)  # (2a): one chunk never trained
    js, e = _first_training(d)
    a, b, c = e["transfers"][0]
    e["transfers"][0] = [a, b, c - 1]
    e["trained"][str(b)] -= 1
    cases["2a"] = d

    d = copy.deepcopy(good)  # (3): more chunks moved out of a site than it holds
    js, e = _first_training(d)
    a, b, c = e["transfers"][0]
    e["transfers"][0] = [a, b, c + inst.jobs[js["job"]].data_chunks[a] + 1]
    e["trained"][str(b)] += inst.jobs[js["job"]].data_chunks[a] + 1
    cases["3"] = d

    d = copy.deepcopy(good)  # (2b): too few workers for what is trained
    js, e = _first_training(d)
    b = e["transfers"][0][1]
    e["workers"][str(b)] = 0
    cases["2b"] = d

    d = copy.deepcopy(good)  # (2c): workers without a PS
    js, e = _first_training(d)
    e["ps_site"] = None
    cases["2c"] = d

    d = copy.deepcopy(good)  # arrival: training before the job arrived
    for js in d["jobs"]:
        if inst.jobs[js["job"]].arrival > 0:
            js["slots"][0]["slot"] = inst.jobs[js["job"]].arrival - 1
            break
    cases["arrival"] = d

    d = copy.deepcopy(good)  # horizon: a slot past T - 1
    d["jobs"][0]["slots"][-1]["slot"] = inst.horizon
    cases["horizon"] = d

    d = copy.deepcopy(good)  # (2f): workers on a site that does not exist
    js, e = _first_training(d)
    e["workers"][str(len(inst.sites))] = 1
    cases["2f"] = d

    d = copy.deepcopy(good)  # (2g): PS on a site that does not exist
    js, e = _first_training(d)
    e["ps_site"] = len(inst.sites) + 3
    cases["2g"] = d

    d = copy.deepcopy(good)  # (2e): a slot listed twice
    d["jobs"][0]["slots"].append(copy.deepcopy(d["jobs"][0]["slots"][0]))
    cases["2e"] = d

    for label, data in cases.items():
        assert label in _labels(inst, data), (label, _labels(inst, data))


def test_capacity_2d_is_checked_per_site_resource_and_slot(base):
    inst, good = base
    d = copy.deepcopy(good)
    _js, e = _first_training(d)
    site = next(iter(e["workers"]))
    e["workers"][site] += 1000
    assert "2d" in _labels(inst, d)


def test_a_ps_without_workers_and_trained_not_matching_moves_are_named(base):
    inst, good = base
    d = copy.deepcopy(good)
    _js, e = _first_training(d)
    e.update(workers={}, transfers=[], trained={})  # the PS stays, the workers go
    assert "2c" in _labels(inst, d)
    d = copy.deepcopy(good)
    _js, e = _first_training(d)
    e["trained"] = {}
    assert "2b" in _labels(inst, d)


def test_every_job_scheduled_or_rejected_once(base):
    inst, good = base
    d = copy.deepcopy(good)
    dropped = d["jobs"].pop()["job"]
    assert any(v.equation == "2a" and v.job == dropped for v in validate(inst, Schedule.model_validate(d)))
    d["rejected"] = [dropped]
    assert validate(inst, Schedule.model_validate(d)) == []
    d = copy.deepcopy(good)
    d["rejected"] = [d["jobs"][0]["job"]]
    assert "2a" in _labels(inst, d)


def test_objective_parts_add_up_and_match_a_hand_computed_slot():
    inst = generate("small", seed=0)
    j = inst.jobs[0]
    r_data = next(r for r, c in enumerate(j.data_chunks) if c)
    # everything trained in one slot at a remote site r2, PS at a third site: every term is non-zero
    r2 = (r_data + 1) % 3
    ps = (r_data + 2) % 3
    D = j.total_chunks
    workers = -(-D * j.epochs // int(j.worker_chunks_per_slot))
    transfers = [(r, r2, c) for r, c in enumerate(j.data_chunks) if c]
    e = SlotEntry(slot=j.arrival, workers={r2: workers}, ps_site=ps, transfers=transfers, trained={r2: D})
    from edgeopt.okita.schedule import JobSchedule

    sched = Schedule(jobs=[JobSchedule(job=0, slots=[e])], rejected=[1, 2])
    assert [v for v in validate(inst, sched) if v.equation != "2d"] == []
    parts = objective_parts(inst, sched)
    q = inst.bandwidth_cost_per_mb
    transfer = sum(q[r][r2] * j.chunk_size_mb * c for r, _, c in transfers)
    exchange = q[r2][ps] * j.param_size_mb * workers
    latency = float(j.cost(1))
    assert parts["transfer"] == pytest.approx(transfer)
    assert parts["exchange"] == pytest.approx(exchange)
    assert parts["latency"] == pytest.approx(latency)
    assert parts["bandwidth"] == pytest.approx(transfer + exchange)
    assert objective(inst, sched) == pytest.approx(latency + transfer + exchange)
