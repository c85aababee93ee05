"""The preemptive validator on runs of slots against the per-slot reference (`validator_reference`):
the same violations, messages and order on schedules of the family's algorithms, randomly broken
ones (every violation kind the validator reports is drawn) and the hand-made cases of
test_preemptive_validator; and its memory does not grow with the number of (chunk, slot) pairs."""

from __future__ import annotations

import copy
import tracemalloc

import numpy as np
import pytest

from edgeopt import api
from edgeopt.core.result import Result
from edgeopt.preemptive import generate, validate
from edgeopt.preemptive.schedule import Schedule
from tests.preemptive.test_preemptive_validator import CASES, good_schedule, make_instance
from tests.preemptive.validator_reference import validate_reference

KINDS = {"schedule", "migration", "2a", "2b", "4e", "2d", "2e", "2f", "2i", "2k", "cloud-no-preemption", "7b"}


def _same(inst, data) -> list[tuple[str, str, int | None]]:
    sched = Schedule.model_validate(data)
    got = [(v.equation, v.message, v.job) for v in validate(inst, sched)]
    assert got == [(v.equation, v.message, v.job) for v in validate_reference(inst, sched)]
    return got


def _chunk(rng, data):
    jobs = [js for js in data["jobs"] if js["chunks"]]
    js = jobs[rng.integers(len(jobs))]
    return js, js["chunks"][rng.integers(len(js["chunks"]))]


def _mutate(rng, inst, data) -> None:
    """One random change; most break a constraint, some leave the schedule valid."""
    T = inst.horizon
    js, c = _chunk(rng, data)
    slots = c["slots"]
    kind = rng.integers(20)
    if kind == 0:
        c["slots"] = [t + int(rng.integers(-3, 4)) for t in slots]
    elif kind == 1 and slots:
        slots.insert(int(rng.integers(len(slots))), slots[int(rng.integers(len(slots)))])
    elif kind == 2:
        rng.shuffle(slots)
    elif kind == 3:
        c["server"] = int(rng.integers(len(inst.servers)))
        sv = inst.servers[c["server"]]
        c["worker"] = int(rng.integers(4 if sv.is_cloud else len(sv.workers)))
    elif kind == 4 and slots:
        del slots[int(rng.integers(len(slots)))]
    elif kind == 5:
        slots.append((max(slots) if slots else 0) + int(rng.integers(1, 4)))
    elif kind == 6:
        twin = copy.deepcopy(c)
        if rng.random() < 0.5:
            twin["worker"] = (twin["worker"] + 1) % max(1, len(inst.servers[twin["server"]].workers))
        twin["slots"] = [t + int(rng.integers(0, 3)) for t in twin["slots"]]
        js["chunks"].append(twin)
    elif kind == 7:
        c["chunk"] = int(rng.integers(inst.jobs[js["job"]].chunks + 1))
    elif kind == 8 and js["ps"]:
        p = js["ps"][rng.integers(len(js["ps"]))]
        p["start"] += int(rng.integers(-2, 3))
        p["end"] = max(p["start"] + 1, p["end"] + int(rng.integers(-2, 3)))
    elif kind == 9 and js["ps"]:
        p = copy.deepcopy(js["ps"][rng.integers(len(js["ps"]))])
        p["start"] += int(rng.integers(-2, 3))
        p["end"] = p["start"] + int(rng.integers(1, 4))
        js["ps"].append(p)
    elif kind == 10 and js["ps"]:
        del js["ps"][rng.integers(len(js["ps"]))]
    elif kind == 11 and js["ps"]:
        p = js["ps"][rng.integers(len(js["ps"]))]
        p["server"] = int(rng.integers(len(inst.servers)))
        p["ps"] = int(rng.integers(3))
    elif kind == 12:
        c["slots"] = [t - T if rng.random() < 0.5 else t + T for t in slots]
    elif kind == 13:
        other, oc = _chunk(rng, data)  # onto another chunk's worker and slots: 2d
        c.update(server=oc["server"], worker=oc["worker"], slots=list(oc["slots"]))
    elif kind == 14:
        c["slots"] = []
    elif kind == 15 and inst.cloud is not None:
        lo = inst.release(js["job"], inst.cloud)
        n = max(1, len(slots))
        c.update(server=inst.cloud, worker=int(rng.integers(3)), slots=[lo + 2 * i for i in range(n)])
    elif kind == 16:
        j = int(rng.integers(len(inst.jobs) + 2))
        if rng.random() < 0.5:
            data["rejected"] = [*data.get("rejected", []), j]
        else:
            data["jobs"][rng.integers(len(data["jobs"]))]["job"] = j
    elif kind == 17 and len(slots) > 2:
        c["slots"] = slots[: len(slots) // 2] + [t + 2 for t in slots[len(slots) // 2:]]
    elif kind == 18:
        c["server"] = len(inst.servers) + int(rng.integers(2))
    elif kind == 19 and js["ps"]:
        p = js["ps"][rng.integers(len(js["ps"]))]
        other, _ = _chunk(rng, data)
        if other["ps"]:
            p.update({k: other["ps"][0][k] for k in ("server", "ps", "start", "end")})


@pytest.fixture(scope="module")
def schedules():
    out = []
    for seed, storage in ((0, False), (1, True), (2, False), (3, True)):
        inst = generate("small", seed=seed, storage=storage)
        for algo in ("srtf", "tiresias_l", "online"):
            res = api.run(algo, inst)
            if res.schedule is not None:
                out.append((inst, res.schedule))
    return out


def test_algorithm_schedules_agree_with_the_reference(schedules):
    for inst, data in schedules:
        assert _same(inst, data) == []


def test_random_broken_schedules_agree_with_the_reference(schedules):
    rng = np.random.default_rng(7)
    seen: set[str] = set()
    for k in range(600):
        inst, base = schedules[k % len(schedules)]
        data = copy.deepcopy(base)
        for _ in range(int(rng.integers(1, 4))):
            _mutate(rng, inst, data)
        seen |= {eq for eq, _, _ in _same(inst, data)}
    assert seen >= KINDS, KINDS - seen


@pytest.mark.parametrize("equation", sorted(CASES))
def test_hand_made_cases_agree_with_the_reference(equation):
    data = copy.deepcopy(good_schedule())
    CASES[equation](data)
    assert sorted({eq for eq, _, _ in _same(make_instance(), data)}) == [equation]


def test_overlaps_counted_like_the_reference():
    """2d / 2f / 2e with several overlapping stretches, runs touching end to start, unsorted slots."""
    inst = make_instance(horizon=40)
    data = good_schedule()
    data["jobs"][0]["chunks"][0]["slots"] = [5, 3, 4, 9, 10, 11, 20, 21]
    data["jobs"][1]["chunks"][0]["slots"] = [4, 5, 10, 12, 21, 22, 22]
    data["jobs"][1]["chunks"].append({"chunk": 0, "server": 0, "worker": 0, "slots": [11, 12, 13]})
    data["jobs"][0]["ps"] = [{"server": 0, "ps": 0, "start": 3, "end": 6}, {"server": 0, "ps": 0, "start": 5, "end": 12},
                             {"server": 0, "ps": 0, "start": 12, "end": 13}, {"server": 1, "ps": 0, "start": 20, "end": 25}]
    data["jobs"][1]["ps"] = [{"server": 0, "ps": 0, "start": 11, "end": 14}, {"server": 1, "ps": 0, "start": 24, "end": 30}]
    got = _same(inst, data)
    assert {"2d", "2e", "2f", "4e", "migration"} <= {eq for eq, _, _ in got}


def test_memory_grows_with_runs_not_slots(monkeypatch):
    """Chunks that train long contiguous stretches: with slots taken 4,096 at a time the check adds
    under two bytes per (chunk, slot) pair (the reference built several int64 rows per pair)."""
    from edgeopt.preemptive import schedule as mod

    monkeypatch.setattr(mod, "_BATCH_SLOTS", 1 << 12)
    D, B = 200, 1334  # P = ceil(1.5 * B) = 2001 slots per chunk
    inst = make_instance(horizon=D * 2001 + 10, **{"jobs.0.chunks": D, "jobs.0.minibatches_per_chunk": B})
    need = inst.chunk_slots(0, False, 1.0)
    end = D * need
    chunks = [{"chunk": d, "server": d % 2, "worker": 0, "slots": list(range(d * need + 1, (d + 1) * need + 1))}
              for d in range(D)]
    sched = Schedule.model_validate({"jobs": [
        {"job": 0, "chunks": chunks, "ps": [{"server": 0, "ps": 0, "start": 1, "end": end + 1}]},
        {"job": 1, "chunks": [{"chunk": 0, "server": 1, "worker": 0, "slots": [end + 1]}],
         "ps": [{"server": 1, "ps": 0, "start": end + 1, "end": end + 2}]}]})
    pairs = sum(len(c.slots) for js in sched.jobs for c in js.chunks)
    validate(inst, sched)  # first-call allocations (lazy imports) are not the check's
    tracemalloc.start()
    try:
        got = validate(inst, sched)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == [] and pairs > 400_000
    assert peak < 2 * pairs, peak  # measured: 0.22 MB; the reference: 64 MB


def test_a_huge_ps_run_is_reported_without_allocating_it():
    """A PS run over 2**40 slots (the reference built a row per slot: 8 TB) is 2k and 2e, in microseconds."""
    inst = make_instance()
    data = good_schedule()
    data["jobs"][1]["ps"][0].update(start=3, end=2**40)
    got = [(v.equation, v.message) for v in validate(inst, Schedule.model_validate(data))]
    assert got == [("2e", f"PS assigned at slot 4 where no chunk trains ({2**40 - 4} slots)"),
                   ("2k", f"PS run [3, {2**40}) outside [0, 10)")]


def test_slots_far_outside_int64_room_cannot_be_checked():
    """Slots beyond +-2**61 would overflow run ends and lengths: the validator refuses them, and the
    result check reports the schedule as one that cannot be checked (never a wrong verdict)."""
    from edgeopt.preemptive import FAMILY

    inst = make_instance()
    data = good_schedule()
    data["jobs"][1]["chunks"][0]["slots"] = [2**62]
    with pytest.raises(OverflowError, match="outside"):
        validate(inst, Schedule.model_validate(data))
    res = api.run("srtf", inst).to_dict()
    res["schedule"] = data
    got = FAMILY.check_result(inst, Result.from_dict(res))
    assert any("cannot be checked: OverflowError" in v.message for v in got)
