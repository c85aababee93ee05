"""Baselines of Sec. V-A: each does what its name says, and every schedule passes the validator."""

from __future__ import annotations

import pytest

from edgeopt.core import Status, geometric_rounds, registered
from edgeopt.preemptive import FAMILY, generate
from edgeopt.preemptive.baselines import (
    batchsche,
    batchsche_lambda,
    online_edge,
    srtf,
    srtf_elastic,
    tiresias_l,
    tiresias_l_elastic,
)
from edgeopt.preemptive.online import online
from edgeopt.preemptive.schedule import Schedule

BASELINES = ["online_edge", "srtf", "tiresias_l", "srtf_elastic", "tiresias_l_elastic", "batchsche"]


def _inst(jobs: list[dict], servers: list[dict] | None = None, horizon: int = 80, cloud_delay: int = 60):
    """Jobs (arrival r, chunks D, edge slots P, gang k); E = B = 1, no communication; the cloud far away."""
    servers = servers or [{"workers": [0], "ps": 2}, {"is_cloud": True}]
    js = []
    for n, j in enumerate(jobs):
        js.append({"id": n, "arrival": j["r"], "worker_type": j.get("type", 0), "epochs": 1, "chunks": j["D"],
                   "minibatches_per_chunk": 1, "worker_time_slots": float(j["P"]), "ps_time_slots": 0.0,
                   "gradient_size_mb": 0.0, "bandwidth_mbps": 8.0, "requested_workers": j.get("k", 1),
                   "upload_delay_slots": [0] * (len(servers) - 1) + [cloud_delay]})
    return FAMILY.parse_instance({"family": "preemptive", "horizon": horizon, "slot_seconds": 1.0,
                                  "servers": servers, "jobs": js})


def tight_storage_testbed():
    """The testbed (seed 0) with storage drawn and every edge server's U_s cut to 2 x the largest chunk, so that
    (7b) binds."""
    data = generate("testbed", seed=0, storage=True).model_dump(mode="json")
    cap = 2 * max(j["chunk_size_mb"] for j in data["jobs"])
    for sv in data["servers"]:
        if not sv["is_cloud"]:
            sv["storage_mb"] = cap
    return FAMILY.parse_instance(data)


def _slots(res) -> dict[tuple[int, int], list[int]]:
    s = Schedule.model_validate(res.schedule)
    return {(js.job, c.chunk): c.slots for js in s.jobs for c in js.chunks}


def _assert_valid(inst, res):
    assert res.status == Status.FEASIBLE, res.extra.get("rejected")
    violations = FAMILY.check_result(inst, res)
    assert not violations, [str(v) for v in violations[:5]]


def test_registered_as_baselines():
    algos = registered("preemptive")
    for name in BASELINES:
        assert algos[name].kind == "baseline"


@pytest.mark.parametrize("name", BASELINES)
def test_valid_on_small_and_testbed(name):
    algo = registered("preemptive")[name]
    for seed in range(30):
        inst = generate("small", seed=seed)
        _assert_valid(inst, algo(inst, seed=seed))
    for seed in range(2):
        inst = generate("testbed", seed=seed)
        res = algo(inst, seed=seed)
        _assert_valid(inst, res)
        assert res.extra["preemptions"] >= 0


@pytest.mark.parametrize("name", BASELINES)
def test_storage_capacity_of_sec_vi_is_respected(name):
    """With U_s and u_j drawn (storage=True) every schedule satisfies (7b), on instances where the
    storage actually binds (tight U_s on the testbed: 2 x the largest chunk)."""
    algo = registered("preemptive")[name]
    for seed in range(10):
        inst = generate("small", seed=seed, storage=True)
        res = algo(inst, seed=seed)
        if name == "online_edge" and res.status == Status.PARTIAL:
            # without the cloud a job that finds every edge storage full is rejected, never overfilled
            assert not FAMILY.check_result(inst, res)
        else:
            _assert_valid(inst, res)
    inst = tight_storage_testbed()
    res = algo(inst)
    assert not FAMILY.check_result(inst, res)
    if name != "online_edge":
        assert res.status == Status.FEASIBLE


@pytest.mark.slow
@pytest.mark.parametrize("name", BASELINES)
def test_valid_on_the_paper_preset(name):
    inst = generate("paper", seed=0)
    _assert_valid(inst, registered("preemptive")[name](inst))


def test_online_edge_never_uses_the_cloud_and_online_does():
    inst = generate("testbed", seed=0)
    res = online_edge(inst)
    _assert_valid(inst, res)
    assert res.extra["cloud_chunks"] == 0
    assert online(inst).extra["cloud_chunks"] > 0
    lonely = _inst([{"r": 0, "D": 1, "P": 2, "type": 1}], cloud_delay=1)
    assert online_edge(lonely).extra["rejected"] == [0]
    assert online(lonely).status == Status.FEASIBLE


def test_srtf_preempts_for_the_shorter_remaining_time_and_tiresias_does_not():
    """A (r=0, 6 slots) runs alone; B (r=2, 2 slots) arrives on the same worker.
    SRTF: B's remaining 2 < A's 4, so A is suspended in slots 2-3.
    Tiresias-L: both are in the first queue (attained 2 < 4 * median P = 16): FIFO, A keeps running."""
    inst = _inst([{"r": 0, "D": 1, "P": 6}, {"r": 2, "D": 1, "P": 2}])
    s = _slots(srtf(inst))
    assert s[(0, 0)] == [0, 1, 4, 5, 6, 7] and s[(1, 0)] == [2, 3]
    t = _slots(tiresias_l(inst))
    assert t[(0, 0)] == [0, 1, 2, 3, 4, 5] and t[(1, 0)] == [6, 7]


def test_tiresias_demotes_by_attained_service_where_srtf_would_not():
    """Thresholds (5, 50): A (r=0, 20 slots) reaches 5 attained worker-slots at slot 5 and drops to
    queue 1; B (r=8, 30 slots, longer than A's remaining 12) is in queue 0 and preempts A.
    SRTF keeps A (12 remaining < 30)."""
    inst = _inst([{"r": 0, "D": 1, "P": 20}, {"r": 8, "D": 1, "P": 30}])
    t = _slots(tiresias_l(inst, thresholds=(5, 50)))
    assert t[(1, 0)][0] == 8 and t[(0, 0)][:9] == list(range(8)) + [t[(0, 0)][8]] and t[(0, 0)][8] > 8
    s = _slots(srtf(inst))
    assert s[(0, 0)] == list(range(20)) and s[(1, 0)][0] == 20


@pytest.mark.parametrize("algo", [srtf, tiresias_l])
def test_gang_is_all_or_nothing(algo):
    """A (r=0, 2 chunks of 4 slots, gang of 2) holds both workers; B (r=1, 1 slot) takes one worker at
    slot 1 under SRTF; A then pauses on BOTH workers although one is idle (job-level preemption).
    Under Tiresias-L B waits (FIFO in queue 0) and A never pauses. Either way A's chunks train together."""
    servers = [{"workers": [0, 0], "ps": 3}, {"is_cloud": True}]
    inst = _inst([{"r": 0, "D": 2, "P": 4, "k": 2}, {"r": 1, "D": 1, "P": 1}], servers=servers)
    res = algo(inst)
    _assert_valid(inst, res)
    s = _slots(res)
    assert s[(0, 0)] == s[(0, 1)]
    if algo is srtf:
        assert s[(1, 0)] == [1] and 1 not in s[(0, 0)] and res.extra["preemptions"] == 2
    else:
        assert s[(0, 0)] == [0, 1, 2, 3] and s[(1, 0)] == [4]


def test_batchsche_is_batched_and_non_preemptive():
    for seed in range(3):
        inst = generate("testbed", seed=seed)
        res = batchsche(inst)
        _assert_valid(inst, res)
        starts = [r.start for r in geometric_rounds(inst.horizon)]
        assert res.extra["preemptions"] == 0
        for (j, _d), slots in _slots(res).items():
            assert slots == list(range(slots[0], slots[-1] + 1))  # contiguous: no preemption
            first_round = min(s for s in starts if s >= inst.jobs[j].arrival)
            assert slots[0] >= first_round  # booked at the round start after its arrival


def test_batchsche_prefers_the_cheap_cloud_when_the_edge_is_busy():
    """Two jobs in one batch and one edge worker: the first (smaller) takes the idle edge worker
    (price 0 = the cloud's, same completion, the edge wins the tie), the second finds it booked
    (price lambda^1 - 1 > 0 = the cloud's) and goes to the cloud. The old constants
    (cloud price 1, base e^2) give the same split here."""
    inst = _inst([{"r": 0, "D": 1, "P": 2}, {"r": 0, "D": 1, "P": 3}], cloud_delay=1)
    for params in ({}, {"cloud_price": 1.0, "base": 7.389}):
        res = batchsche(inst, **params)
        _assert_valid(inst, res)
        s = Schedule.model_validate(res.schedule)
        servers = {js.job: js.chunks[0].server for js in s.jobs}
        assert servers == {0: 0, 1: 1}, params


def test_batchsche_lambda_is_the_reference_formula():
    """lambda = 2 T H R F + 1 with R = 1 and F = max_j max_s W_s / (D_j P_j), on a hand-sized case:
    T = 80, H = 2 edge servers (1 and 3 workers), jobs (D=2, P=4) and (D=1, P=2): F = 3/2,
    lambda = 2 * 80 * 2 * 1 * 1.5 + 1 = 481."""
    servers = [{"workers": [0], "ps": 2}, {"workers": [0, 0, 0], "ps": 4}, {"is_cloud": True}]
    inst = _inst([{"r": 0, "D": 2, "P": 4}, {"r": 0, "D": 1, "P": 2}], servers=servers)
    assert batchsche_lambda(inst) == pytest.approx(481.0)
    assert batchsche(inst).extra["price_base"] == pytest.approx(481.0)
    from edgeopt.core import InputError

    with pytest.raises(InputError, match="cloud_price"):
        batchsche(inst, cloud_price=-1.0)
    with pytest.raises(InputError, match="base"):
        batchsche(inst, base=1.0)


@pytest.mark.parametrize("algo", [srtf_elastic, tiresias_l_elastic])
def test_gang_of_one_worker_per_chunk(algo):
    """The elastic variants (formerly ``gang="chunks"``): k = D_j workers (fewer only when the edge
    has fewer eligible ones), and a gang's chunks then all train in the same slots."""
    for seed in range(10):
        inst = generate("small", seed=seed)
        res = algo(inst, seed=seed)
        _assert_valid(inst, res)
        s = Schedule.model_validate(res.schedule)
        for js in s.jobs:
            job = inst.jobs[js.job]
            on_cloud = js.chunks[0].server == inst.cloud
            k = job.chunks if on_cloud else min(job.chunks, len(inst.eligible_workers(js.job)))
            assert len({(c.server, c.worker) for c in js.chunks}) == k
            if k == job.chunks:
                assert len({tuple(c.slots) for c in js.chunks}) == 1


@pytest.mark.parametrize("algo", [srtf, tiresias_l])
def test_paper_reading_keeps_the_requested_gang_even_on_the_cloud(algo):
    """The paper's non-elastic reading: a job uses exactly min(requested_workers, eligible) workers,
    also on the unlimited cloud, so a cloud job of D chunks and gang k takes ceil(D/k) P_colo slots."""
    for seed in range(10):
        inst = generate("small", seed=seed)
        res = algo(inst, seed=seed)
        _assert_valid(inst, res)
        assert res.extra["gang"] == "requested"
        for js in Schedule.model_validate(res.schedule).jobs:
            job = inst.jobs[js.job]
            on_cloud = js.chunks[0].server == inst.cloud
            k = job.requested_workers if on_cloud else min(job.requested_workers,
                                                           len(inst.eligible_workers(js.job)))
            assert len({(c.server, c.worker) for c in js.chunks}) == k
            if on_cloud:
                end = max(max(c.slots) for c in js.chunks) + 1
                start = inst.release(js.job, inst.cloud)
                assert end - start == -(-job.chunks // k) * inst.chunk_slots(js.job, True)


@pytest.mark.parametrize("name", ["online", "srtf", "srtf_elastic", "tiresias_l", "tiresias_l_elastic"])
def test_every_preemptive_algorithm_preempts_when_it_must(name):
    """One edge worker, the cloud out of reach: A (r=0, one chunk of 10 slots) runs first; B (r=3,
    one chunk of 1 slot) arrives. A_online's HAPRF (B's gamma 1/1 > A's 1/10), SRTF (1 < 7 left)
    and Tiresias-L (A's 3 attained worker-slots >= threshold 2 puts it in queue 1, B in queue 0) all
    run B at slot 3 and so preempt A there: exactly one preemption, A resumes at slot 4."""
    inst = _inst([{"r": 0, "D": 1, "P": 10}, {"r": 3, "D": 1, "P": 1}], horizon=40, cloud_delay=39)
    params = {"thresholds": "2"} if name.startswith("tiresias") else {}
    res = registered("preemptive")[name](inst, seed=0, **params)
    _assert_valid(inst, res)
    s = _slots(res)
    assert s[(1, 0)] == [3]
    assert s[(0, 0)] == [0, 1, 2, *range(4, 11)]
    assert res.extra["preemptions"] == 1
