"""Instance model and generators of the preemptive family (Wang et al., Sec. III and V-A)."""

from __future__ import annotations

import math

import pytest

from edgeopt.core import InputError
from edgeopt.core.jsonio import dumps
from edgeopt.preemptive import FAMILY, generate
from edgeopt.preemptive.instance import TABLE_II, Instance


def _data(seed: int = 0) -> dict:
    return generate("small", seed=seed).model_dump(mode="json")


@pytest.mark.parametrize("preset", ["small", "testbed", "paper", "paper_edge"])
def test_generators_are_deterministic(preset):
    a = generate(preset, seed=5)
    b = generate(preset, seed=5)
    c = generate(preset, seed=6)
    assert dumps(a.model_dump(mode="json")) == dumps(b.model_dump(mode="json"))
    assert dumps(a.model_dump(mode="json")) != dumps(c.model_dump(mode="json"))


def test_testbed_and_paper_shapes_follow_sec_v_a():
    tb = generate("testbed", seed=0)
    assert len(tb.jobs) == 30
    assert sum(not s.is_cloud for s in tb.servers) == 8 and tb.cloud == len(tb.servers) - 1
    models = {m[0]: m for m in TABLE_II}
    for job in tb.jobs:
        assert job.model in models
        assert (job.chunks, job.minibatches_per_chunk) == models[job.model][2:4]
        assert 20 <= job.epochs <= 60
        assert all(1 <= d <= 4 for d in job.upload_delay_slots[:-1])
        assert 10 <= job.upload_delay_slots[-1] <= 15
    pp = generate("paper", seed=0)
    assert len(pp.jobs) == 300 and len(pp.servers) == 101 and pp.servers[-1].is_cloud
    types = {w for s in pp.servers for w in s.workers}
    assert 8 <= len(types) <= 10
    for job in pp.jobs:
        assert 100 <= job.bandwidth_mbps <= 5 * 1024
        assert 0.001 <= job.worker_time_slots <= 0.05  # hours, slot = 1 h
        assert 10 / 3.6e6 - 1e-12 <= job.ps_time_slots <= 100 / 3.6e6 + 1e-12  # 10-100 ms in hours


def test_overrides_and_storage_option():
    inst = generate("paper", seed=1, jobs=20, servers=7)
    assert len(inst.jobs) == 20 and len(inst.servers) == 8
    st = generate("small", seed=1, storage=True)
    assert all(s.storage_mb is not None for s in st.servers if not s.is_cloud)
    assert all(j.chunk_size_mb is not None for j in st.jobs)
    short = generate("small", seed=2, horizon=2)
    assert short.horizon == 2 and all(j.arrival < 2 for j in short.jobs)
    assert [j.id for j in short.jobs] == list(range(len(short.jobs)))


def test_small_has_an_edge_worker_for_every_job_and_a_safe_horizon():
    for seed in range(20):
        inst = generate("small", seed=seed)
        assert 2 <= len(inst.jobs) <= 3
        for j in range(len(inst.jobs)):
            assert inst.eligible_workers(j)
        work = sum(job.chunks * inst.chunk_slots(j) for j, job in enumerate(inst.jobs))
        assert inst.horizon <= 25 and work <= inst.horizon


def test_chunk_slots_follows_eq_1_by_hand():
    data = _data()
    job = data["jobs"][0]
    job.update(epochs=2, minibatches_per_chunk=3, worker_time_slots=0.5, ps_time_slots=0.25,
               gradient_size_mb=10.0, bandwidth_mbps=160.0)
    data["slot_seconds"] = 1.0
    inst = FAMILY.parse_instance(data)
    # not colocated: tau = 0.5 + 0.25 + 2 * 8 * 10 / 160 = 1.75 slots; E B tau = 10.5 -> 11 slots
    assert inst.minibatch_slots(0, False) == pytest.approx(1.75)
    assert inst.chunk_slots(0, False) == 11
    # colocated (whole job on the cloud): tau = 0.75, E B tau = 4.5 -> 5 slots
    assert inst.chunk_slots(0, True) == 5
    # speed 1.5: 10.5 / 1.5 = 7 exactly (no spurious round-up), 4.5 / 1.5 = 3
    assert inst.chunk_slots(0, False, 1.5) == 7
    assert inst.chunk_slots(0, True, 1.5) == 3
    assert math.isclose(inst.minibatch_slots(0, True), 0.75)


def test_eligibility_from_types():
    inst = generate("testbed", seed=0)
    j = next(k for k, job in enumerate(inst.jobs) if job.worker_type == 0)
    assert inst.eligible_workers(j) == [(s, 0) for s in range(8)]
    assert inst.eligible(j, 0, 0) and not inst.eligible(j, 0, 1)
    assert inst.eligible(j, inst.cloud, 12345)  # unlimited cloud workers of every type
    assert inst.release(j, 3) == inst.jobs[j].arrival + inst.jobs[j].upload_delay_slots[3]


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["jobs"][0].update(epochs=0), "instance.jobs.0.epochs"),
        (lambda d: d["jobs"][1].update(bandwidth_mbps=-1.0), "instance.jobs.1.bandwidth_mbps"),
        (lambda d: d["jobs"][0].update(upload_delay_slots=[0]), "instance"),
        (lambda d: d["jobs"][0].update(id=7), "instance"),
        (lambda d: d["jobs"][0].update(unknown=1), "instance.jobs.0.unknown"),
        (lambda d: d["servers"][0].update(workers=[-1]), "instance.servers.0"),
        (lambda d: d["servers"][-1].update(workers=[0]), "instance.servers.2"),
        (lambda d: d["servers"][0].update(ps=-2), "instance.servers.0.ps"),
        (lambda d: d.update(horizon=0), "instance.horizon"),
        (lambda d: d.update(family="hetero"), "instance.family"),
        (lambda d: d["jobs"][0].update(requested_workers=99), "instance.jobs.0"),
    ],
)
def test_bad_input_names_the_field(mutate, field):
    data = _data(1)
    mutate(data)
    with pytest.raises(InputError) as exc:
        FAMILY.parse_instance(data)
    assert exc.value.field.startswith(field), exc.value.field
    assert "\n" not in str(exc.value)


def test_instance_level_messages_say_what_is_wrong():
    data = _data(1)
    data["jobs"][0]["upload_delay_slots"] = [0]
    with pytest.raises(InputError, match="upload_delay_slots"):
        FAMILY.parse_instance(data)
    data = _data(1)
    data["servers"].append(dict(data["servers"][-1]))
    for job in data["jobs"]:
        job["upload_delay_slots"].append(3)
    with pytest.raises(InputError, match="at most one cloud"):
        FAMILY.parse_instance(data)
    data = _data(1)
    data["jobs"][0]["arrival"] = data["horizon"]
    with pytest.raises(InputError, match="horizon"):
        FAMILY.parse_instance(data)


def test_unknown_preset_and_bad_sizes_are_input_errors():
    with pytest.raises(InputError, match="preset"):
        generate("huge")
    with pytest.raises(InputError) as exc:
        generate("small", jobs=0)
    assert exc.value.field == "jobs"


def test_json_round_trip_is_lossless():
    inst = generate("testbed", seed=3)
    back = Instance.model_validate_json(inst.model_dump_json())
    assert back == inst


def test_gradient_size_follows_the_papers_range():
    """Sec. V-A: q_j in [30, 575] MB, drawn uniformly (the paper gives only the range)."""
    for preset in ("testbed", "paper"):
        q = [j.gradient_size_mb for seed in range(3) for j in generate(preset, seed=seed).jobs]
        assert 30.0 <= min(q) and max(q) <= 575.0
        assert max(q) - min(q) > 300.0  # spread over the range, not clustered at a model's size


def test_regimes_change_only_chunk_times_or_the_cloud_delay():
    """``short_chunks``: m_j in [0.001, 0.005] h; ``far_cloud``: cloud delay in [60, 120];
    ``paper_edge`` = ``paper`` in the ``short_chunks`` regime; ``small`` has no regime."""
    base = generate("paper", seed=3, jobs=40, servers=10)
    short = generate("paper", seed=3, jobs=40, servers=10, regime="short_chunks")
    far = generate("paper", seed=3, jobs=40, servers=10, regime="far_cloud")
    alias = generate("paper_edge", seed=3, jobs=40, servers=10)
    assert all(0.001 <= j.worker_time_slots <= 0.005 for j in short.jobs)
    assert all(60 <= j.upload_delay_slots[-1] <= 120 for j in far.jobs)
    assert all(10 <= j.upload_delay_slots[-1] <= 15 for j in base.jobs + short.jobs)
    assert [j.worker_time_slots for j in far.jobs] == [j.worker_time_slots for j in base.jobs]
    assert alias.jobs == short.jobs and alias.servers == short.servers
    assert base.chunk_slots_array().mean() > 4 * short.chunk_slots_array().mean()
    with pytest.raises(InputError, match="regime"):
        generate("paper", seed=0, regime="nowhere")
    with pytest.raises(InputError, match="regime"):
        generate("small", seed=0, regime="far_cloud")
