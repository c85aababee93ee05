"""The edgecloud validator: a valid hand-built schedule passes; each broken constraint is named."""

from __future__ import annotations

import pytest

from edgeopt.edgecloud import FAMILY, Instance, Schedule, objective, validate
from edgeopt.edgecloud.instance import duration_slots
from edgeopt.edgecloud.schedule import JobRun, Segment


def _instance() -> Instance:
    """Two edge servers + cloud; U = V = 1.  Job 0: 12 steps, colocated 0.5 slot/step -> 6 worker-slots,
    distributed 0.5 + 2*8*75/100/60 = 0.7 slot/step -> 8.4 worker-slots."""
    job = {"worker_type": 0, "ps_type": 0, "epochs": 2, "chunks": 3, "minibatches_per_chunk": 2,
               "worker_time_slots": 0.4, "ps_time_slots": 0.1, "gradient_size_mb": 75.0, "bandwidth_mbps": 100.0}
    return Instance(
        horizon=20,
        slot_seconds=60.0,
        servers=[{"workers": [2], "ps": [1]}, {"workers": [2], "ps": [1]}, {"is_cloud": True, "workers": [3], "ps": [2]}],
        jobs=[
            dict(id=0, arrival=0, upload_delay_slots=[1, 2, 5], **job),
            dict(id=1, arrival=2, upload_delay_slots=[1, 1, 4], **job),
        ],
    )


def _valid() -> Schedule:
    # job 0: 2 workers on server 0 with its PS -> colocated, 6/2 = 3 slots, start >= 0+1
    # job 1: 1 worker on s0 + 2 on s1, PS on s1 -> distributed, ceil(8.4/3) = 3 slots, start >= 3
    return Schedule(jobs=[
        JobRun(job=0, start=1, end=4, workers={0: 2}, ps_server=0, colocated=True),
        JobRun(job=1, start=4, end=7, workers={0: 1, 1: 2}, ps_server=1, colocated=False),
    ])


def _labels(inst, sched):
    return sorted({v.equation for v in validate(inst, sched)})


def test_hand_schedule_is_valid_and_objective_is_total_jct():
    inst, sched = _instance(), _valid()
    assert duration_slots(inst, inst.jobs[0], 2, True) == 3
    assert duration_slots(inst, inst.jobs[1], 3, False) == 3
    assert validate(inst, sched) == []
    assert objective(inst, sched) == (4 - 0) + (7 - 2)


def _broken(**changes):
    """The valid schedule with job 1's run changed."""
    s = _valid()
    run = s.jobs[1].model_copy(update=changes)
    return Schedule(jobs=[s.jobs[0], run])


NAMED = [
    (_broken(workers={0: 2, 1: 2}, end=7), "2a"),  # 4 workers > D_j = 3
    (_broken(workers={0: 0, 1: 2}), "2a"),  # a zero count listed
    (_broken(ps_server=7), "2b"),  # PS on a server that does not exist
    (_broken(end=6), "2e"),  # 2 slots < 3 needed
    (_broken(workers={1: 2}, colocated=False, end=8), "2f"),  # all on the PS server but colocated=False
    (_broken(colocated=True), "2f"),  # spread but claims colocated
    (_broken(start=3, end=6), "2g"),  # overlaps job 0's 2 workers on server 0 (W = 2)
    (_broken(workers={2: 3}, ps_server=2, colocated=True, start=3, end=5), "2i"),  # cloud before 2+4
    (_broken(workers={0: 1, 2: 2}, ps_server=1, start=4, end=7), "2i"),  # cloud worker before 6
    (_broken(start=18, end=21), "2l"),  # ends after T = 20
    (_broken(workers={0: 1, 5: 2}), "2l"),  # worker server 5 does not exist
]


@pytest.mark.parametrize("sched, label", NAMED)
def test_each_violation_is_named(sched, label):
    inst = _instance()
    assert label in _labels(inst, sched), [str(v) for v in validate(inst, sched)]


def test_ps_capacity_2h():
    inst = _instance()
    # job 1 puts its PS on server 0 while job 0's PS is there (P = 1); workers elsewhere
    sched = _broken(workers={1: 2}, ps_server=0, start=3, end=8)  # 8.4/2 -> 5 slots
    assert _labels(inst, sched) == ["2h"]


def test_worker_of_a_type_the_server_lacks_is_2g():
    inst = Instance.model_validate({**_instance().model_dump(), "servers": [
        {"workers": [0], "ps": [1]}, {"workers": [2], "ps": [1]}, {"is_cloud": True, "workers": [3], "ps": [2]}]})
    sched = Schedule(jobs=[JobRun(job=0, start=1, end=4, workers={0: 2}, ps_server=0, colocated=True)],
                     rejected=[1])
    assert _labels(inst, sched) == ["2g"]


def test_coverage():
    inst = _instance()
    s = _valid()
    assert _labels(inst, Schedule(jobs=[s.jobs[0]])) == ["coverage"]  # job 1 missing
    assert _labels(inst, Schedule(jobs=s.jobs, rejected=[1])) == ["coverage"]  # both
    assert _labels(inst, Schedule(jobs=[s.jobs[0], s.jobs[0], s.jobs[1]])) == ["coverage"]  # twice
    assert _labels(inst, Schedule(jobs=s.jobs, rejected=[9])) == ["coverage"]  # unknown id
    assert validate(inst, Schedule(jobs=[s.jobs[0]], rejected=[1])) == []  # rejection is explicit: fine
    assert objective(inst, Schedule(jobs=[s.jobs[0]], rejected=[1])) == 4


def test_segments_need_a_preemptive_schedule_2c():
    inst = _instance()
    segs = [Segment(start=4, end=5, workers={0: 1, 1: 2}, ps_server=1, colocated=False),
            Segment(start=6, end=8, workers={0: 1, 1: 2}, ps_server=1, colocated=False)]
    run = _valid().jobs[1].model_copy(update={"end": 8, "segments": segs})
    assert "2c" in _labels(inst, Schedule(jobs=[_valid().jobs[0], run]))


# ---- preemptive schedules: their own rules --------------------------------------------------
def _preemptive(overhead: int, segs: list[Segment], start=None, end=None) -> Schedule:
    first = segs[0]
    run = JobRun(job=1, start=first.start if start is None else start, end=segs[-1].end if end is None else end,
                 workers=first.workers, ps_server=first.ps_server, colocated=first.colocated, segments=segs)
    return Schedule(jobs=[_valid().jobs[0], run], preemptive=True, preemption_overhead_slots=overhead)


def _seg(a, b, **kw):
    base = {"workers": {0: 1, 1: 2}, "ps_server": 1, "colocated": False}
    base.update(kw)
    return Segment(start=a, end=b, **base)


def test_preemptive_schedule_valid_with_and_without_overhead():
    inst = _instance()
    # 3 distributed workers: 3/0.7 = 4.29 steps per slot; 12 steps need 2.8 slot-equivalents
    ok = _preemptive(0, [_seg(4, 5), _seg(6, 8)])  # 1 + 2 = 3 slots of work
    assert validate(inst, ok) == []
    # with 1 slot overhead the second segment trains 1 slot only: 2 slots < 2.8 -> (2e)
    assert _labels(inst, _preemptive(1, [_seg(4, 5), _seg(6, 8)])) == ["2e"]
    assert validate(inst, _preemptive(1, [_seg(4, 5), _seg(6, 9)])) == []
    # a colocated segment trains faster: 2 workers on s1 with PS, 0.5 slot/step -> 4 steps/slot
    mixed = _preemptive(0, [_seg(4, 5), _seg(6, 8, workers={1: 2}, colocated=True)])
    assert validate(inst, mixed) == []  # 4.29 + 8 >= 12


def test_preemptive_segment_rules():
    inst = _instance()
    assert "2c" in _labels(inst, _preemptive(0, [_seg(4, 7), _seg(6, 8)]))  # overlapping
    assert "2j" in _labels(inst, _preemptive(0, [_seg(4, 5), _seg(6, 8)], start=3))
    assert "2k" in _labels(inst, _preemptive(0, [_seg(4, 5), _seg(6, 8)], end=9))
    assert "2i" in _labels(inst, _preemptive(0, [_seg(4, 5), _seg(5, 8, workers={2: 3}, ps_server=2,
                                                                  colocated=True)]))  # cloud from 6
    assert "2g" in _labels(inst, _preemptive(0, [_seg(3, 4), _seg(6, 8)]))  # slot 3 shares s0 with job 0
    assert "2f" in _labels(inst, _preemptive(0, [_seg(4, 5), _seg(6, 8, colocated=True)]))


def test_check_result_catches_a_wrong_objective():
    inst = _instance()
    res = FAMILY.algorithm_result(inst, "hand", _valid(), 0.0)
    assert FAMILY.check_result(inst, res) == []
    res.objective = 5.0
    assert [v.equation for v in FAMILY.check_result(inst, res)] == ["objective"]
