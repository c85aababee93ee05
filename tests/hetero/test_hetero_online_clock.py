"""A_online's clock (round i decides at tau_i - 1 on the 0-based clock), its window readings, A_maxweight's
job order, and the `online_every_slot` variant (ours)."""

from __future__ import annotations

import math

import pytest

from edgeopt import api
from edgeopt.core import Status
from edgeopt.hetero import FAMILY, generate
from edgeopt.hetero.instance import Instance, Job, NodeType, Server
from edgeopt.hetero.online import OnlineScheduler, decision_slots


def _cluster(jobs: list[Job], horizon: int = 20) -> Instance:
    return Instance(horizon=horizon, slot_seconds=10.0, resources=["gpu", "cpu", "bw_mbps"],
                    servers=[Server(capacity=[4, 100, 100000])],
                    worker_types=[NodeType(demand=[1, 1, 100], bandwidth_mbps=100)],
                    ps_types=[NodeType(demand=[0, 1, 1000], bandwidth_mbps=1000)], jobs=jobs)


def _job(k: int, arrival: int, weight: float = 1.0, chunks: int = 1, epochs: int = 1) -> Job:
    # one worker trains 1 mini-batch per slot; work = epochs * chunks * 1 mini-batch
    return Job(id=k, arrival=arrival, weight=weight, epochs=epochs, chunks=chunks, minibatches_per_chunk=1,
               minibatch_time_slots=[1.0], ps_update_time_slots=[0.0], gradient_size_mb=1.0)


def test_rounds_decide_at_tau_minus_one():
    assert [d.slot for d in decision_slots(20)] == [0, 1, 3, 7, 15]
    assert [d.tau for d in decision_slots(20)] == [1, 2, 4, 8, 16]
    assert [d.slot for d in decision_slots(20, stretch=2.0)] == [1, 3, 7, 15]


@pytest.mark.parametrize("name, kw", [("online", {}), ("online", {"window": "alpha_tau"}),
                                      ("online", {"order": "density"}), ("online_every_slot", {})])
def test_lone_one_slot_job_at_slot_0_starts_at_slot_0(name, kw):
    inst = _cluster([_job(0, 0)])
    res = api.run(name, inst, **kw)
    assert res.status == Status.FEASIBLE and not FAMILY.check_result(inst, res)
    js = res.schedule["jobs"][0]
    assert (js["start"], js["duration"]) == (0, 1)
    assert res.objective == 1.0


def test_alpha_tau_starts_round_schedules_at_alpha_tau_minus_one():
    # two jobs at slot 0 with weights 1 and 50: round 1's alpha (Sec. 5.3) exceeds 1, so the literal rule
    # moves its window to ceil(alpha * 1) - 1; alpha is recomputed here from the logged lambda
    inst = _cluster([_job(0, 0, weight=1.0), _job(1, 0, weight=50.0)], horizon=400)
    res = api.run("online", inst, window="alpha_tau")
    r1 = res.extra["rounds"][0]
    gamma = 2 * math.log(r1["lambda"])
    alpha = math.floor(math.log(51.0) / (math.log(gamma) - math.log(gamma - 1))) + 1
    assert alpha > 1 and r1["window_start"] == alpha - 1
    assert not FAMILY.check_result(inst, res)
    assert all(js["start"] >= alpha - 1 for js in res.schedule["jobs"])
    # the default reading starts at the decision slot
    tau = api.run("online", inst)
    assert tau.extra["rounds"][0]["window_start"] == 0 and min(js["start"] for js in tau.schedule["jobs"]) == 0


def test_alpha_tau_rejects_jobs_it_cannot_start_before_the_horizon():
    # small preset, T = 20: alpha is in the tens, so the literal windows of rounds 2+ start past T
    inst = generate("small", seed=0)
    res = api.run("online", inst, window="alpha_tau")
    assert not FAMILY.check_result(inst, res)
    starts = {r["slot"]: r["window_start"] for r in res.extra["rounds"]}
    assert any(s >= inst.horizon for s in starts.values())
    assert res.status == Status.PARTIAL and res.extra["rejected_count"] >= 1


def test_order_parameter():
    jobs = [_job(0, 0, weight=1.0), _job(1, 0, weight=5.0), _job(2, 0, weight=5.0, chunks=1, epochs=4)]
    inst = _cluster(jobs)
    for order, expect in (("arrival", [0, 1, 2]), ("density", [1, 2, 0])):
        pol = OnlineScheduler(inst, order=order)
        pol.on_arrival(0, inst.jobs)
        # density = w_j / shortest duration: job 1 5/1, job 2 5/4 (D_j = 1 worker, 4 slots), job 0 1/1
        assert [j.id for j in pol.ordered(inst.jobs)] == expect
    with pytest.raises(Exception, match="order"):
        api.run("online", inst, order="weight")


def test_every_slot_variant_never_waits_for_a_round():
    # a job arriving at slot 2 (between the decision slots 1 and 3) starts at 2 in the variant, at 3 in online
    inst = _cluster([_job(0, 2)])
    assert api.run("online_every_slot", inst).schedule["jobs"][0]["start"] == 2
    assert api.run("online", inst).schedule["jobs"][0]["start"] == 3
