"""The hetero validator: valid hand-built schedules pass, each broken constraint is named by its equation."""

from __future__ import annotations

import pytest

from edgeopt.hetero import generate, objective, validate
from edgeopt.hetero.instance import Instance, Job, NodeType, Server, min_duration
from edgeopt.hetero.schedule import JobSchedule, Schedule


def _instance(arch: str = "ps") -> Instance:
    """Two servers (4 GPU, 8 CPU, 2000 Mbps), two worker / PS types, three jobs, T = 20."""
    wt = [NodeType(demand=[1, 2, 200], bandwidth_mbps=200), NodeType(demand=[2, 4, 400], bandwidth_mbps=400)]
    pt = [NodeType(demand=[0, 1, 400], bandwidth_mbps=400), NodeType(demand=[0, 2, 1000], bandwidth_mbps=1000)]
    jobs = [
        Job(id=k, arrival=k, weight=1.0 + k, epochs=1, chunks=3, minibatches_per_chunk=4,
            minibatch_time_slots=[0.5, 0.3], ps_update_time_slots=[0.1, 0.05] if arch == "ps" else [],
            allreduce_time_slots=0.1, gradient_size_mb=50.0)
        for k in range(3)
    ]
    return Instance(horizon=20, architecture=arch, slot_seconds=10.0, resources=["gpu", "cpu", "bw_mbps"],
                    servers=[Server(capacity=[4, 8, 2000]), Server(capacity=[4, 8, 2000])],
                    worker_types=wt, ps_types=pt if arch == "ps" else [], jobs=jobs)


def _colocated(inst: Instance, j: int, start: int, server: int = 0, n: int = 2) -> JobSchedule:
    ps = 0 if inst.architecture == "ps" else None
    d = min_duration(inst, inst.jobs[j], 0, ps, True, n)
    return JobSchedule(job=j, start=start, duration=d, worker_type=0, ps_type=ps, colocated=True,
                       workers={server: n}, ps={server: 1} if ps is not None else {})


def _valid(inst: Instance) -> Schedule:
    a = _colocated(inst, 0, 0, server=0)
    b = _colocated(inst, 1, 1, server=1)
    c = _colocated(inst, 2, max(a.end, 2), server=0)
    return Schedule(jobs=[a, b, c])


def _labels(inst: Instance, sched: Schedule) -> set[str]:
    return {v.equation for v in validate(inst, sched)}


@pytest.mark.parametrize("arch", ["ps", "ring_allreduce"])
def test_hand_built_schedule_is_valid(arch):
    inst = _instance(arch)
    sched = _valid(inst)
    assert validate(inst, sched) == []
    assert objective(inst, sched) == sum(inst.jobs[js.job].weight * (js.start + js.duration) for js in sched.jobs)


def _broken(inst: Instance, j: int, **update) -> Schedule:
    sched = _valid(inst)
    jobs = [js.model_copy(update=update) if js.job == j else js for js in sched.jobs]
    return Schedule(jobs=jobs)


def test_missing_and_duplicate_jobs_violate_2a():
    inst = _instance()
    sched = _valid(inst)
    assert "2a" in _labels(inst, Schedule(jobs=sched.jobs[:2]))
    assert "2a" in _labels(inst, Schedule(jobs=sched.jobs + sched.jobs[:1]))
    assert "2a" in _labels(inst, Schedule(jobs=sched.jobs, rejected=[0]))
    # rejecting instead of scheduling is valid for the validator (the status reports it)
    assert validate(inst, Schedule(jobs=sched.jobs[:2], rejected=[2])) == []


def test_unknown_types_violate_2b_2c():
    inst = _instance()
    assert "2b" in _labels(inst, _broken(inst, 0, worker_type=5))
    assert "2c" in _labels(inst, _broken(inst, 0, ps_type=7))
    assert "2b" in _labels(inst, _broken(inst, 0, workers={}))


def test_colocation_flag_must_match_placement_2d():
    inst = _instance()
    # all on server 0 but flagged distributed
    assert "2d" in _labels(inst, _broken(inst, 0, colocated=False))
    # flagged colocated but the PS sits on the other server
    assert "2d" in _labels(inst, _broken(inst, 0, ps={1: 1}))
    ra = _instance("ring_allreduce")
    assert "15a" in _labels(ra, _broken(ra, 0, workers={0: 1, 1: 1}))


def test_no_ps_violates_2e():
    inst = _instance()
    assert "2e" in _labels(inst, _broken(inst, 0, ps={}))


def test_too_short_duration_violates_2f():
    inst = _instance()
    sched = _valid(inst)
    d = sched.jobs[0].duration
    assert "2f" in _labels(inst, _broken(inst, 0, duration=d - 1))
    # a distributed placement is slower (eq. 1): the colocated duration is too short for it
    d_dist = min_duration(inst, inst.jobs[0], 0, 0, False, 2)
    assert d_dist > d
    assert "2f" in _labels(inst, _broken(inst, 0, colocated=False, workers={0: 1, 1: 1}, ps={0: 1}))


def test_more_workers_than_chunks_violates_2g():
    inst = _instance()
    assert "2g" in _labels(inst, _broken(inst, 0, workers={0: 4}, duration=20))


def test_over_capacity_violates_2h():
    inst = _instance()
    sched = _valid(inst)
    # job 2 on server 1 at the same time as job 1: 4 workers + 2 PS need 8 GPU... (2 GPU each w-small: 1) -> use 3+3
    a = sched.jobs[0].model_copy(update={"workers": {0: 3}, "duration": 19})
    c = sched.jobs[2].model_copy(update={"workers": {0: 3}, "start": 2, "duration": 18})
    labels = _labels(inst, Schedule(jobs=[a, sched.jobs[1], c]))
    assert "2h" in labels


def test_ps_bandwidth_violates_2i():
    inst = _instance()
    d = min_duration(inst, inst.jobs[0], 0, 0, False, 3)
    # 3 workers of 200 Mbps on server 1, one 400 Mbps PS on server 0
    js = JobSchedule(job=0, start=0, duration=d, worker_type=0, ps_type=0, colocated=False,
                     workers={1: 3}, ps={0: 1})
    sched = _valid(inst)
    labels = _labels(inst, Schedule(jobs=[js, *sched.jobs[1:]]))
    assert "2i" in labels
    ok = js.model_copy(update={"ps": {0: 2}})
    assert "2i" not in _labels(inst, Schedule(jobs=[ok, *sched.jobs[1:]]))


def test_start_before_arrival_violates_2j_and_late_completion_is_caught():
    inst = _instance()
    assert "2j" in _labels(inst, _broken(inst, 1, start=0))
    assert "completion<=T" in _labels(inst, _broken(inst, 1, start=19))


def test_ring_allreduce_has_no_ps_and_capacity_is_15b():
    ra = _instance("ring_allreduce")
    assert "15" in _labels(ra, _broken(ra, 0, ps_type=0))
    sched = _valid(ra)
    a = sched.jobs[0].model_copy(update={"workers": {0: 3}, "duration": 19})
    c = sched.jobs[2].model_copy(update={"workers": {0: 3}, "start": 2, "duration": 18})
    assert "15b" in _labels(ra, Schedule(jobs=[a, sched.jobs[1], c]))


def test_generated_small_instances_load():
    for s in range(5):
        inst = generate("small", seed=s)
        assert 4 <= len(inst.jobs) <= 8 and 2 <= len(inst.servers) <= 4 and 12 <= inst.horizon <= 30


def test_unknown_servers_and_negative_counts_violate_2k_2l():
    inst = _instance()
    assert "2k" in _labels(inst, _broken(inst, 0, workers={5: 2}))
    assert "2l" in _labels(inst, _broken(inst, 0, ps={9: 1}))
    assert "2k" in _labels(inst, _broken(inst, 0, workers={0: 3, 1: -1}))
