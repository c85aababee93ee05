"""The validator of (2a)-(2k) / (4a)-(4h), the JCT objective (2) and the fractional flow time (4)/(3).

A hand-built instance and schedule (values computed by hand in the comments);
each test breaks one constraint and checks that exactly that equation is named.
"""

from __future__ import annotations

import copy

import pytest

from edgeopt.preemptive import FAMILY, fractional_flow_time, generate, objective, validate
from edgeopt.preemptive.schedule import Schedule, count_preemptions, job_preemptions


def make_instance(**changes) -> object:
    """edge0: workers of types [0, 1], 1 PS; edge1: one type-0 worker, 1 PS; cloud.

    Job 0: r=0, D=2, E=1, B=2, m=0.5, G=0, q=5 MB, b=80 Mbps, slot 1 s:
      tau = 0.5 + 2*8*5/80 = 1.5 -> P = ceil(3.0) = 3 (edge); colocated tau = 0.5 -> P = 1.
      Delta = [0, 1, 2].
    Job 1: r=1, D=1, E=1, B=1, m=1, q=0: P = 1 either way. Delta = [0, 0, 3].
    """
    data = {
        "family": "preemptive", "horizon": 10, "slot_seconds": 1.0,
        "servers": [
            {"name": "edge0", "workers": [0, 1], "ps": 1},
            {"name": "edge1", "workers": [0], "ps": 1},
            {"name": "cloud", "is_cloud": True},
        ],
        "jobs": [
            {"id": 0, "arrival": 0, "worker_type": 0, "epochs": 1, "chunks": 2, "minibatches_per_chunk": 2,
             "worker_time_slots": 0.5, "ps_time_slots": 0.0, "gradient_size_mb": 5.0, "bandwidth_mbps": 80.0,
             "upload_delay_slots": [0, 1, 2]},
            {"id": 1, "arrival": 1, "worker_type": 0, "epochs": 1, "chunks": 1, "minibatches_per_chunk": 1,
             "worker_time_slots": 1.0, "ps_time_slots": 0.0, "gradient_size_mb": 0.0, "bandwidth_mbps": 100.0,
             "upload_delay_slots": [0, 0, 3]},
        ],
    }
    for path, value in changes.items():
        target = data
        keys = path.split(".")
        for k in keys[:-1]:
            target = target[int(k)] if k.isdigit() else target[k]
        target[keys[-1]] = value
    return FAMILY.parse_instance(data)


def good_schedule() -> dict:
    return {
        "jobs": [
            {"job": 0, "chunks": [
                {"chunk": 0, "server": 0, "worker": 0, "slots": [0, 1, 2]},
                {"chunk": 1, "server": 1, "worker": 0, "slots": [1, 2, 3]}],
             "ps": [{"server": 0, "ps": 0, "start": 0, "end": 4}]},
            {"job": 1, "chunks": [{"chunk": 0, "server": 0, "worker": 0, "slots": [3]}],
             "ps": [{"server": 1, "ps": 0, "start": 3, "end": 4}]},
        ]
    }


def check(inst, data) -> list[str]:
    return sorted({v.equation for v in validate(inst, Schedule.model_validate(data))})


def test_good_schedule_is_valid_and_objectives_are_hand_computed():
    inst = make_instance()
    sched = Schedule.model_validate(good_schedule())
    assert validate(inst, sched) == []
    # JCT: job 0 completes at 4 (r=0), job 1 at 4 (r=1): 4 + 3
    assert objective(inst, sched) == 7.0
    # f: job 0 chunk 0: (1+2+3)/(2*3) = 1; chunk 1: (2+3+4)/6 = 1.5; job 1: (3+1-1)/1 = 3
    assert fractional_flow_time(inst, sched) == pytest.approx(5.5)
    assert fractional_flow_time(inst, sched) <= objective(inst, sched)
    assert count_preemptions(inst, sched) == 0


def test_colocated_rate_needs_every_chunk_and_ps_on_the_cloud():
    inst = make_instance()
    data = good_schedule()
    # job 0 wholly on the cloud: P = 1 (colocated), from r + Delta = 2
    data["jobs"][0] = {"job": 0, "chunks": [
        {"chunk": 0, "server": 2, "worker": 0, "slots": [2]},
        {"chunk": 1, "server": 2, "worker": 1, "slots": [2]}],
        "ps": [{"server": 2, "ps": 0, "start": 2, "end": 3}]}
    data["jobs"][1]["chunks"][0]["slots"] = [1]
    data["jobs"][1]["ps"] = [{"server": 1, "ps": 0, "start": 1, "end": 2}]
    assert check(inst, data) == []
    # a PS on an edge server makes zeta_j = 0 (2h): one slot per chunk is no longer enough
    data["jobs"][0]["ps"] = [{"server": 0, "ps": 0, "start": 2, "end": 3}]
    assert check(inst, data) == ["2b"]


CASES = {
    # chunk 0 trains 2 slots on (0, 0), then its third on (1, 0): a move between workers
    "migration": lambda d: (d["jobs"][0]["chunks"][0].update(slots=[0, 1]),
                            d["jobs"][0]["chunks"].append({"chunk": 0, "server": 1, "worker": 0, "slots": [4]}),
                            d["jobs"][0]["ps"][0].update(end=5), d["jobs"][1]["ps"][0].update(server=1)),
    "2a": lambda d: d["jobs"][0]["chunks"][0].update(worker=1),
    "2b": lambda d: d["jobs"][0]["chunks"][0].update(slots=[0, 1]),
    "4e": lambda d: d["jobs"][0]["chunks"][0].update(slots=[0, 1, 1, 2]),
    "2d": lambda d: (d["jobs"][1]["chunks"][0].update(slots=[2]), d["jobs"][1]["ps"][0].update(start=2, end=3)),
    "2f": lambda d: d["jobs"][1]["ps"][0].update(server=0),
    "2k": lambda d: (d["jobs"][1]["chunks"][0].update(slots=[10]), d["jobs"][1]["ps"][0].update(start=10, end=11)),
    # job 0's chunk 1 on the cloud (from r + 2 = 2) with a gap: slots 2, 3, 5
    "cloud-no-preemption": lambda d: (
        d["jobs"][0]["chunks"].__setitem__(1, {"chunk": 1, "server": 2, "worker": 0, "slots": [2, 3, 5]}),
        d["jobs"][0].__setitem__("ps", [{"server": 0, "ps": 0, "start": 0, "end": 4},
                                        {"server": 0, "ps": 0, "start": 5, "end": 6}])),
}


@pytest.mark.parametrize("equation", sorted(CASES))
def test_each_violation_is_named(equation):
    inst = make_instance()
    data = copy.deepcopy(good_schedule())
    CASES[equation](data)
    assert check(inst, data) == [equation]


def test_upload_delay_2i_for_chunks_and_ps():
    inst = make_instance()
    data = good_schedule()
    data["jobs"][0]["chunks"][1]["slots"] = [0, 1, 2]  # server 1 only from r + 1 = 1
    data["jobs"][0]["ps"][0]["end"] = 3
    assert check(inst, data) == ["2i"]
    data = good_schedule()
    data["jobs"][0]["ps"] = [{"server": 2, "ps": 0, "start": 0, "end": 4}]  # cloud only from 2
    assert check(inst, data) == ["2i"]


def test_ps_2e_missing_extra_and_double():
    inst = make_instance()
    data = good_schedule()
    data["jobs"][1]["ps"] = []
    assert check(inst, data) == ["2e"]
    data = good_schedule()
    data["jobs"][1]["ps"][0]["end"] = 5  # PS at slot 4 where job 1 does not train
    assert check(inst, data) == ["2e"]
    data = good_schedule()
    data["jobs"][0]["ps"].append({"server": 1, "ps": 0, "start": 2, "end": 3})  # two PSs at slot 2
    assert "2e" in check(inst, data)


def test_shape_errors():
    inst = make_instance()
    data = good_schedule()
    del data["jobs"][1]
    msgs = [str(v) for v in validate(inst, Schedule.model_validate(data))]
    assert msgs == ["(schedule) job 1: job neither scheduled nor rejected"]
    data = good_schedule()
    data["rejected"] = [1]
    assert check(inst, data) == ["schedule"]
    data = good_schedule()
    data["jobs"][0]["chunks"][0]["worker"] = 5
    assert check(inst, data) == ["schedule"]
    data = good_schedule()
    data["jobs"][1]["ps"][0]["ps"] = 3
    assert check(inst, data) == ["schedule"]
    data = good_schedule()
    data["jobs"].append({"job": 9, "chunks": []})
    assert check(inst, data) == ["schedule"]
    data = good_schedule()
    data["jobs"][0]["chunks"][0]["chunk"] = 4
    assert set(check(inst, data)) == {"schedule"}


def test_rejected_jobs_are_exempt_and_leave_the_objective():
    inst = make_instance()
    data = good_schedule()
    del data["jobs"][1]
    data["rejected"] = [1]
    sched = Schedule.model_validate(data)
    assert validate(inst, sched) == []
    assert objective(inst, sched) == 4.0


def test_extra_training_slots_are_2b():
    """A chunk trains exactly P_j slots: a 4th slot for a 3-slot chunk is reported."""
    inst = make_instance()
    data = good_schedule()
    data["jobs"][0]["chunks"][0]["slots"] = [0, 1, 2, 4]
    data["jobs"][0]["ps"][0]["end"] = 5
    data["jobs"][1]["chunks"][0]["slots"] = [3]
    data["jobs"][1]["ps"][0]["server"] = 1
    assert check(inst, data) == ["2b"]
    assert "more than" in str(validate(inst, Schedule.model_validate(data))[0])


def test_missing_chunk_is_2b():
    inst = make_instance()
    data = good_schedule()
    del data["jobs"][0]["chunks"][1]
    data["jobs"][0]["ps"][0]["end"] = 3
    assert check(inst, data) == ["2b"]


def test_storage_7b_only_when_given():
    inst = make_instance(**{"servers.0.storage_mb": 100.0, "jobs.0.chunk_size_mb": 60.0,
                            "jobs.1.chunk_size_mb": 60.0})
    # job 0 chunk 0 stored on server 0 during [0, 3), job 1 chunk 0 during [1, 4): 120 MB > 100
    assert check(inst, good_schedule()) == ["7b"]
    inst = make_instance(**{"servers.0.storage_mb": 120.0, "jobs.0.chunk_size_mb": 60.0,
                            "jobs.1.chunk_size_mb": 60.0})
    assert check(inst, good_schedule()) == []


def test_speed_is_checked_at_the_schedule_speed():
    inst = make_instance()
    data = good_schedule()
    data["jobs"][0]["chunks"][0]["slots"] = [0, 1]
    assert check(inst, data) == ["2b"]
    data["speed"] = 1.5  # 3.0 / 1.5 = 2 slots per chunk of job 0: chunk 1 now trains one too many
    assert check(inst, data) == ["2b"]
    data["jobs"][0]["chunks"][1]["slots"] = [1, 2]
    data["jobs"][1]["chunks"][0]["slots"] = [2]
    data["jobs"][1]["chunks"][0]["worker"] = 0
    data["jobs"][0]["chunks"][0]["slots"] = [0, 1]
    data["jobs"][0]["ps"][0]["end"] = 3
    data["jobs"][1]["ps"][0].update(start=2, end=3)
    # (0,0) is used by job 0 at 0-1 and job 1 at 2; (1,0) by job 0 chunk 1 at 1-2
    assert check(inst, data) == []


def test_preemption_counts():
    inst = make_instance(horizon=12)
    data = good_schedule()
    data["jobs"][0]["chunks"][0]["slots"] = [0, 4, 5]
    data["jobs"][0]["ps"] = [{"server": 0, "ps": 0, "start": 0, "end": 6}]
    sched = Schedule.model_validate(data)
    assert validate(inst, sched) == []
    assert count_preemptions(inst, sched) == 1
    assert job_preemptions(inst, sched) == 0  # chunk 1 keeps job 0 running in slots 1-3


def test_lemma1_inequality_f_le_jct_holds_for_hand_schedules():
    """Sanity of the two objectives: f(y) <= JCT on every valid schedule built above."""
    inst = make_instance()
    sched = Schedule.model_validate(good_schedule())
    assert fractional_flow_time(inst, sched) <= objective(inst, sched)


def test_generated_small_instances_have_a_valid_all_cloud_schedule():
    """The validator accepts the trivial all-cloud schedule (colocated rate, PS on the cloud)."""
    for seed in range(10):
        inst = generate("small", seed=seed)
        c = inst.cloud
        jobs, label = [], 0
        for j, job in enumerate(inst.jobs):
            p, r = inst.chunk_slots(j, True), inst.release(j, c)
            chunks = []
            for d in range(job.chunks):
                chunks.append({"chunk": d, "server": c, "worker": label, "slots": list(range(r, r + p))})
                label += 1
            jobs.append({"job": j, "chunks": chunks, "ps": [{"server": c, "ps": j, "start": r, "end": r + p}]})
        sched = Schedule.model_validate({"jobs": jobs})
        assert validate(inst, sched) == []
