"""Preemptive Tiresias and AntMan (Sec. 7), the relaxed schedule form and its validator."""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import Status
from edgeopt.hetero import FAMILY
from edgeopt.hetero.instance import Instance, Job, NodeType, Server
from edgeopt.hetero.schedule import Schedule, validate


def _cluster(jobs: list[Job], gpus: int = 4, horizon: int = 40) -> Instance:
    """One server with ``gpus`` GPUs; one worker type (1 GPU), one PS type (no GPU); slot = 10 s.
    Colocated, a worker trains exactly 1 mini-batch per slot (v = 1, U = 0)."""
    return Instance(horizon=horizon, slot_seconds=10.0, resources=["gpu", "cpu", "bw_mbps"],
                    servers=[Server(capacity=[gpus, 100, 100000])],
                    worker_types=[NodeType(demand=[1, 1, 100], bandwidth_mbps=100)],
                    ps_types=[NodeType(demand=[0, 1, 1000], bandwidth_mbps=1000)], jobs=jobs)


def _job(k: int, arrival: int, chunks: int, epochs: int = 1) -> Job:
    return Job(id=k, arrival=arrival, weight=1.0, epochs=epochs, chunks=chunks, minibatches_per_chunk=4,
               minibatch_time_slots=[1.0], ps_update_time_slots=[0.0], gradient_size_mb=1.0)


def _tiresias_case() -> Instance:
    # job 0: 4 workers x 20 slots (80 mini-batches) from slot 0; job 1: 4 workers x 4 slots, arrives at 2.
    # At slot 2 job 1's remaining work x GPUs (16 x 4) is below job 0's (72 x 4): job 0 must be suspended.
    return _cluster([_job(0, 0, 4, epochs=5), _job(1, 2, 4, epochs=1)])


def _antman_case() -> Instance:
    # job 0 (guarantee) holds 3 of 4 GPUs for 24 slots; job 1 wants 4 GPUs, waits 3 slots, then runs
    # opportunistically on the free GPU; job 2 (1 GPU, guarantee) arrives at 5 and takes it back.
    return _cluster([_job(0, 0, 3, epochs=6), _job(1, 0, 4, epochs=1), _job(2, 5, 1, epochs=1)])


#: every relaxed (preemptive) hetero baseline, with an instance that needs a preemption
NEEDS_PREEMPTION = {"tiresias": _tiresias_case, "antman": _antman_case}


def _segments(res, job: int) -> list[tuple[int, int]]:
    js = next(x for x in res.schedule["jobs"] if x["job"] == job)
    segs = js["segments"] or [{"start": js["start"], "duration": js["duration"]}]
    return [(s["start"], s["start"] + s["duration"]) for s in segs]


def test_every_relaxed_baseline_has_a_preemption_case():
    relaxed = {n for n, a in api.algorithms("hetero").items() if a.relaxed}
    assert relaxed == set(NEEDS_PREEMPTION)


@pytest.mark.parametrize("name", sorted(NEEDS_PREEMPTION))
def test_preemptive_baseline_actually_preempts(name):
    inst = NEEDS_PREEMPTION[name]()
    res = api.run(name, inst)
    assert res.status == Status.FEASIBLE
    assert not FAMILY.check_result(inst, res)
    assert res.schedule["preemptive"] is True
    assert res.extra["preemptions"] >= 1 and res.extra["preempted_jobs"] >= 1
    assert any(js["segments"] and len(js["segments"]) >= 2 for js in res.schedule["jobs"])
    # the non-preemptive variant never suspends anything on the same instance
    np_res = api.run(f"{name}_np", inst)
    assert not FAMILY.check_result(inst, np_res)
    assert all(js.get("segments") is None for js in np_res.schedule["jobs"])


def test_tiresias_suspends_the_larger_job_and_charges_the_resumption():
    inst = _tiresias_case()
    # 60 s = 6 slots of 10 s: job 0 trains 8 mini-batches in [0, 2), resumes at 6 and needs 6 + 72 / 4 slots
    res = api.run("tiresias", inst, overhead_s=60.0)
    assert _segments(res, 1) == [(2, 6)]
    assert _segments(res, 0) == [(0, 2), (6, 30)]
    assert res.objective == 30 + 6
    free = api.run("tiresias", inst, overhead_s=0.0)
    assert _segments(free, 0) == [(0, 2), (6, 24)]
    # without preemption job 1 waits for job 0
    np_res = api.run("tiresias_np", inst)
    assert _segments(np_res, 1) == [(20, 24)] and np_res.objective == 20 + 24


def test_antman_preempts_the_opportunistic_job_for_a_guarantee_job():
    inst = _antman_case()
    res = api.run("antman", inst, overhead_s=0.0, patience=3)
    assert res.extra["kinds"] == {"0": "guarantee", "1": "opportunistic", "2": "guarantee"}
    assert _segments(res, 2) == [(5, 9)]
    # job 1: 1 worker from slot 3, suspended at 5 (2 mini-batches done), resumed at 9 for the other 14
    assert _segments(res, 1) == [(3, 5), (9, 23)]
    assert _segments(res, 0) == [(0, 24)]


def test_preemptive_validator_rules():
    inst = _tiresias_case()
    res = api.run("tiresias", inst, overhead_s=60.0)
    sched = Schedule.model_validate(res.schedule)
    assert validate(inst, sched) == []
    # the overhead is part of the rules: charging more than the schedule allowed for breaks (2f)
    more = sched.model_copy(update={"preemption_overhead_slots": 7.0})
    assert [v.equation for v in validate(inst, more)] == ["2f"]
    # segments are not allowed in a non-preemptive schedule (program (2): one window per job)
    flat = sched.model_copy(update={"preemptive": False})
    assert "2j" in {v.equation for v in validate(inst, flat)}
    # overlapping segments of one job
    js0 = next(js for js in sched.jobs if js.job == 0)
    segs = [js0.segments[0], js0.segments[1].model_copy(update={"start": 1, "duration": 29})]
    bad0 = js0.model_copy(update={"segments": segs})
    bad = sched.model_copy(update={"jobs": [bad0 if js.job == 0 else js for js in sched.jobs]})
    eqs = {v.equation for v in validate(inst, bad)}
    assert "2j" in eqs and "2h" in eqs  # job 0's second segment now overlaps job 1 on the 4 GPUs too


def test_non_preemptive_schedules_validate_as_before():
    inst = _tiresias_case()
    res = api.run("tiresias_np", inst)
    sched = Schedule.model_validate(res.schedule)
    assert sched.preemptive is False and validate(inst, sched) == []
    # a late start that collides with the other job is a capacity violation, as before
    moved = sched.model_copy(update={"jobs": [js.model_copy(update={"start": 5}) if js.job == 1 else js
                                              for js in sched.jobs]})
    assert {v.equation for v in validate(inst, moved)} == {"2h"}


def _never_fits_case() -> Instance:
    # job 0's ideal worker type needs 8 GPUs on a 4-GPU server: it never runs and is rejected at T. Jobs 1
    # and 2 arrive long after: every slot in between is idle.
    inst = _cluster([_job(0, 0, 2), _job(1, 300, 2), _job(2, 900, 4, epochs=2)], horizon=3000)
    big = NodeType(demand=[8, 1, 100], bandwidth_mbps=100)
    jobs = [j.model_copy(update={"minibatch_time_slots": [1.0, 0.1 if j.id == 0 else 10.0]}) for j in inst.jobs]
    return inst.model_copy(update={"worker_types": [*inst.worker_types, big], "jobs": jobs})


@pytest.mark.parametrize("name", ["tiresias", "antman"])
def test_idle_slots_are_skipped_with_the_same_schedule(monkeypatch, name):
    """Skipping the slots in which nothing can change (`_PreemptiveScheduler.next_wakeup`) gives the schedule
    of stepping every slot (the reference), on a case with a job that never fits and long idle stretches and
    on generated instances, and simulates far fewer slots where the cluster idles."""
    from edgeopt.hetero import generate, preemptive

    plans = []
    for cls in (preemptive.TiresiasPreemptive, preemptive.AntmanPreemptive):
        def counted(self, t, _orig=cls.plan):
            plans.append(t)
            return _orig(self, t)
        monkeypatch.setattr(cls, "plan", counted)
    cases = [_never_fits_case(), *(generate(p, seed=s) for p, s in (("small", 1), ("small_ra", 2), ("small", 3)))]
    for inst in cases:
        got = []
        for skip in (True, False):
            monkeypatch.setattr(preemptive._PreemptiveScheduler, "SKIP_IDLE", skip)
            plans.clear()
            res = api.run(name, inst)
            assert not FAMILY.check_result(inst, res)
            got.append((res.schedule, res.objective, res.rejected, len(plans)))
        assert got[0][:3] == got[1][:3]
        assert got[0][3] <= got[1][3]
    monkeypatch.setattr(preemptive._PreemptiveScheduler, "SKIP_IDLE", True)
    plans.clear()
    res = api.run(name, _never_fits_case())
    assert res.rejected == [0] and len(plans) < 300  # the reference plans about 3,000 slots here
