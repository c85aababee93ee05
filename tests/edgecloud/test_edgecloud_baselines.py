"""The baselines of Sec. VI: valid everywhere, and each does what its name says."""

from __future__ import annotations

import pytest

from edgeopt.core import Status, lookup
from edgeopt.edgecloud import FAMILY, Instance, generate
from edgeopt.edgecloud.instance import duration_slots
from edgeopt.edgecloud.schedule import Schedule

BASELINES = ["fifo", "drf", "batchsche", "preemptive"]
ALL = ["online", *BASELINES]


def _run(name, inst, **kw):
    res = lookup("edgecloud", name)(inst, **kw)
    assert FAMILY.check_result(inst, res) == [], name
    return res, Schedule.model_validate(res.schedule)


@pytest.mark.parametrize("name", BASELINES)
def test_valid_and_complete_on_small(name):
    for seed in range(25):
        inst = generate("small", seed=seed)
        res, _ = _run(name, inst)
        assert res.status == Status.FEASIBLE, (seed, res.extra)
        assert lookup("edgecloud", name).kind == "baseline"


@pytest.mark.parametrize("name", BASELINES)
def test_valid_on_paper_preset(name):
    inst = generate("paper", seed=1, jobs=60, servers=60)
    res, sched = _run(name, inst)
    assert res.status == Status.FEASIBLE, res.extra.get("rejected")
    assert len(sched.jobs) + len(sched.rejected) == 60


# ---- FIFO --------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_fifo_keeps_arrival_order_and_one_server(seed):
    inst = generate("small", seed=seed, jobs=8) if seed % 2 else generate("paper", seed=seed, jobs=40, servers=30)
    _, sched = _run("fifo", inst)
    runs = sorted(sched.jobs, key=lambda r: (inst.jobs[r.job].arrival, r.job))
    starts = [r.start for r in runs]
    assert starts == sorted(starts)  # no job starts before an earlier-arrived one
    assert all(r.colocated and list(r.workers) == [r.ps_server] for r in runs)


def _two_job_instance(ps: int = 4) -> Instance:
    job = {"arrival": 0, "worker_type": 0, "ps_type": 0, "epochs": 1, "chunks": 4, "minibatches_per_chunk": 2,
               "worker_time_slots": 0.9, "ps_time_slots": 0.1, "gradient_size_mb": 60.0, "bandwidth_mbps": 480.0,
               "upload_delay_slots": [0]}
    return Instance(horizon=40, slot_seconds=60.0, servers=[{"workers": [4], "ps": [ps]}],
                    jobs=[dict(id=0, **job), dict(id=1, **job)])


def test_drf_shares_fairly_where_fifo_serves_in_order():
    """Two identical jobs, 4 workers: DRF gives each 2 (max-min fair) and starts both; FIFO gives the
    first job the earliest completion (all 4 workers) and the second waits for it."""
    inst = _two_job_instance()
    _, drf = _run("drf", inst)
    assert [sum(r.workers.values()) for r in drf.jobs] == [2, 2]
    assert [r.start for r in drf.jobs] == [0, 0]
    _, fifo = _run("fifo", inst)
    assert sum(fifo.jobs[0].workers.values()) == 4 and fifo.jobs[0].start == 0
    assert fifo.jobs[1].start == fifo.jobs[0].end


def test_drf_counts_the_ps_in_the_dominant_share():
    """With a single PS slot the second job cannot start until the first ends: DRF
    never gives a job workers without its PS (2b)."""
    inst = _two_job_instance(ps=1)
    _, drf = _run("drf", inst)
    assert drf.jobs[0].start == 0 and sum(drf.jobs[0].workers.values()) == 4
    assert drf.jobs[1].start == drf.jobs[0].end


# ---- BatchSche ---------------------------------------------------------------------------
def _one_slot_server_instance() -> Instance:
    """One server with one worker and one PS; two identical jobs of 2 slots arrive at slot 2."""
    job = {"arrival": 2, "worker_type": 0, "ps_type": 0, "epochs": 1, "chunks": 1, "minibatches_per_chunk": 2,
           "worker_time_slots": 0.9, "ps_time_slots": 0.1, "gradient_size_mb": 60.0, "bandwidth_mbps": 480.0,
           "upload_delay_slots": [0]}
    return Instance(horizon=40, slot_seconds=60.0, servers=[{"workers": [1], "ps": [1]}],
                    jobs=[dict(id=0, **job), dict(id=1, **job)])


def test_batchsche_a_dual_places_the_rest_in_later_windows_of_the_same_round():
    """Round tau = 2 decides at slot 2. A_dual's first window [2, 4) holds one job; its second
    iteration places the other in [4, 6) at once (decided at slot 2). She et al.'s A_online has one
    window per round and decides the second job only at the next round, slot 4."""
    from edgeopt.core import run_online
    from edgeopt.edgecloud.batchsche import BatchScheScheduler
    from edgeopt.edgecloud.online import OnlineScheduler, Prices

    inst = _one_slot_server_instance()
    _, sched = _run("batchsche", inst)
    assert [(r.start, r.end) for r in sched.jobs] == [(2, 4), (4, 6)]
    pol = BatchScheScheduler(inst)
    run_online(pol, inst.jobs, inst.horizon)
    assert [d.slot for d in pol.decisions] == [2, 2]
    assert pol.log[0]["iterations"] == 2 and pol.log[0]["alpha"] >= 2
    ref = OnlineScheduler(inst, Prices.for_instance(inst))
    run_online(ref, inst.jobs, inst.horizon)
    assert [d.slot for d in ref.decisions] == [2, 4]


@pytest.mark.parametrize("seed", range(6))
def test_batchsche_runs_inside_its_rounds_and_uses_colocation(seed):
    """Every run lies inside one of A_dual's windows of the round that decided it; the min-cost
    placement includes the colocated case (A_mincost2, eq. (1)'s faster rate)."""
    from edgeopt.core import run_online
    from edgeopt.edgecloud.batchsche import BatchScheScheduler

    inst = generate("small", seed=seed, jobs=6)
    pol = BatchScheScheduler(inst)
    run_online(pol, inst.jobs, inst.horizon)
    assert pol.runs
    for d in pol.decisions:
        r, tau = d.payload, d.slot  # decisions are taken at tau_i = 2**(i-1)
        assert tau & (tau - 1) == 0
        k = (r.start - tau) // tau  # index of the window [tau + k tau, tau + (k+1) tau)
        assert r.start >= tau and r.end <= min(inst.horizon, tau + (k + 1) * tau)
        assert r.end - r.start == duration_slots(inst, inst.jobs[r.job], sum(r.workers.values()), r.colocated)


def test_batchsche_min_cost_placement_includes_the_colocated_case():
    """Unlike the toolkit's first `batchsche` (COST_D only), A_mincost2's colocated placements occur."""
    runs = [r for seed in range(6) for r in _run("batchsche", generate("small", seed=seed, jobs=6))[1].jobs]
    assert any(r.colocated for r in runs) and any(not r.colocated for r in runs)


# ---- Preemptive --------------------------------------------------------------------------
def _las_instance() -> Instance:
    """One server, 2 workers. A: 2 steps at 10 slots/step (10 slots on 2 workers), arrives 0.
    B: 2 steps at 2 slots/step (2 slots on 2 workers), arrives 3."""
    base = {"worker_type": 0, "ps_type": 0, "epochs": 1, "chunks": 2, "minibatches_per_chunk": 1,
                "gradient_size_mb": 1.0, "bandwidth_mbps": 100.0, "upload_delay_slots": [0]}
    return Instance(horizon=30, slot_seconds=60.0, servers=[{"workers": [2], "ps": [2]}], jobs=[
        dict(id=0, arrival=0, worker_time_slots=9.9, ps_time_slots=0.1, **base),
        dict(id=1, arrival=3, worker_time_slots=1.9, ps_time_slots=0.1, **base),
    ])


def test_preemptive_lets_the_least_served_job_preempt():
    """With a first LAS threshold of 4 worker-slots, A (6 attained at slot 3) is in queue 1 and B
    (0 attained) in queue 0: B preempts A at once."""
    inst = _las_instance()
    res, sched = _run("preemptive", inst, threshold=4)
    a, b = sched.jobs
    assert sched.preemptive and sched.preemption_overhead_slots == 0
    assert (b.start, b.end) == (3, 5)  # B (0 attained service) preempts A (6 worker-slots) at once
    assert [(s.start, s.end) for s in a.segments] == [(0, 3), (5, 12)]  # 0.6 steps, then 1.4 steps
    assert res.objective == 12 + (5 - 3)
    # the same instance without preemption: B waits for A (FIFO), much later
    _, fifo = _run("fifo", inst)
    assert fifo.jobs[1].end > b.end


def test_discretised_queues_do_not_preempt_within_a_queue():
    """Default first threshold 8 worker-slots: at slot 3 A (6 attained) and B (0) share queue 0, which
    is first-come-first-served, so B waits; at slot 4 A has 8 and drops to queue 1, and B preempts it.
    (Continuous LAS would preempt at slot 3, as in the threshold-4 test above.)"""
    inst = _las_instance()
    _, sched = _run("preemptive", inst)
    a, b = sched.jobs
    assert (b.start, b.end) == (4, 6)
    assert [(s.start, s.end) for s in a.segments] == [(0, 4), (6, 12)]


def test_queue_index_follows_the_thresholds():
    from edgeopt.edgecloud.baselines import PreemptiveScheduler

    p = PreemptiveScheduler(_las_instance(), 0, threshold=8, factor=10)
    for service, k in ((0, 0), (7.9, 0), (8, 1), (79, 1), (80, 2), (800, 3)):
        p.attained[0] = service
        assert p.queue(0) == k


def test_preemption_overhead_delays_resumed_jobs():
    inst = _las_instance()
    res0, _ = _run("preemptive", inst, threshold=4)
    res2, sched = _run("preemptive", inst, overhead_slots=2, threshold=4)
    a = sched.jobs[0]
    assert sched.preemption_overhead_slots == 2
    assert [(s.start, s.end) for s in a.segments] == [(0, 3), (5, 14)]  # 2 slots reload, then 7 of training
    assert res2.objective == res0.objective + 2
    # the validator charges the overhead: cutting the resumed segment short is a (2e) violation
    short = sched.model_copy(deep=True)
    short.jobs[0].segments[-1].end = 13
    short.jobs[0].end = 13
    assert "2e" in {v.equation for v in FAMILY.validate(inst, short)}


def test_preemptive_overhead_must_be_non_negative():
    from edgeopt.core import InputError

    for bad in ({"overhead_slots": -1}, {"threshold": 0}, {"factor": 1.0}):
        with pytest.raises(InputError):
            lookup("edgecloud", "preemptive")(_las_instance(), **bad)


# ---- jobs that can never fit -------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_never_fitting_jobs_are_reported(name):
    """Job 1 wants worker type 1, which no server has; job 2 needs more slots than the horizon."""
    base = {"arrival": 0, "ps_type": 0, "epochs": 1, "chunks": 2, "minibatches_per_chunk": 2, "worker_time_slots": 0.5,
                "ps_time_slots": 0.0, "gradient_size_mb": 1.0, "bandwidth_mbps": 1000.0, "upload_delay_slots": [1, 1]}
    inst = Instance(horizon=16, slot_seconds=60.0,
                    servers=[{"workers": [2, 0], "ps": [1]}, {"workers": [2, 0], "ps": [1], "is_cloud": True}],
                    jobs=[dict(id=0, worker_type=0, **base), dict(id=1, worker_type=1, **base),
                          dict(id=2, worker_type=0, **{**base, "epochs": 100})])
    res, sched = _run(name, inst)
    assert res.status == Status.PARTIAL
    assert res.extra["rejected"] == [1, 2] == sched.rejected
    assert [r.job for r in sched.jobs] == [0]
