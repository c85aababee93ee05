"""edgecloud instances: generators (ranges, determinism), schema errors naming the field, duration rule."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from edgeopt.core import InputError
from edgeopt.core.jsonio import dumps
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud.instance import (
    comm_slots,
    duration_slots,
    durations,
    minibatch_slots,
    paper_instance,
    rate,
    work_done,
)


def _data(inst):
    return json.loads(json.dumps(inst.model_dump(mode="json")))


@pytest.mark.parametrize("preset", ["small", "paper"])
def test_generator_is_deterministic_and_seed_dependent(preset):
    kw = {"jobs": 30, "servers": 20} if preset == "paper" else {}
    a = generate(preset, seed=5, **kw)
    b = generate(preset, seed=5, **kw)
    c = generate(preset, seed=6, **kw)
    assert dumps(a.model_dump(mode="json")) == dumps(b.model_dump(mode="json"))
    assert dumps(a.model_dump(mode="json")) != dumps(c.model_dump(mode="json"))


def test_json_round_trip_is_lossless():
    inst = generate("paper", seed=1, jobs=20, servers=10)
    back = FAMILY.parse_instance(_data(inst))
    assert back == inst


def test_small_preset_shape():
    inst = generate("small", seed=0)
    assert len(inst.jobs) == 4 and len(inst.servers) == 3 and inst.horizon == 24
    assert [s.is_cloud for s in inst.servers] == [False, False, True]
    for j in inst.jobs:
        d = durations(inst, j)
        assert 1 <= d.min() and d.max() <= 12


def test_paper_preset_ranges():
    inst = generate("paper", seed=3, jobs=300)
    S = len(inst.servers)
    assert S == 201 and inst.servers[-1].is_cloud and not any(s.is_cloud for s in inst.servers[:-1])
    assert 8 <= inst.n_worker_types <= 10 and 8 <= inst.n_ps_types <= 10
    assert inst.slot_seconds == 3600.0 and inst.horizon == 6144
    W, P = inst.W(), inst.P()
    # each edge server: 4 or 8 workers and 4 or 8 PSs, each of a random type (several types per server)
    assert set(W[:-1].sum(axis=1)) <= {4, 8} and set(P[:-1].sum(axis=1)) <= {4, 8}
    assert ((W[:-1] > 0).sum(axis=1) > 1).mean() > 0.9
    for j in inst.jobs:
        assert 50 <= j.epochs <= 100 and 20 <= j.chunks <= 50 and 10 <= j.minibatches_per_chunk <= 50
        assert 0.001 <= j.worker_time_slots <= 0.05
        assert 10 / 3.6e6 - 1e-12 <= j.ps_time_slots <= 100 / 3.6e6 + 1e-12
        assert 30 <= j.gradient_size_mb <= 575 and 100 <= j.bandwidth_mbps <= 5120
        assert all(1 <= x <= 4 for x in j.upload_delay_slots[:-1]) and 10 <= j.upload_delay_slots[-1] <= 40
    # the paper's a_j in [1, T/1.5] = [1, 4096], spread over it
    arrivals = [j.arrival for j in inst.jobs]
    assert min(arrivals) >= 1 and max(arrivals) <= 4096 and max(arrivals) > 3000


def test_paper_compact_preset_and_the_per_server_reading():
    inst = generate("paper_compact", seed=3, jobs=100)
    assert inst.horizon == 4096 and all(1 <= j.arrival <= 128 for j in inst.jobs)
    one = paper_instance(3, jobs=20, servers=50, horizon=4096, last_arrival=128, server_types="per_server")
    W, P = one.W(), one.P()
    assert ((W[:-1] > 0).sum(axis=1) == 1).all() and set(W[:-1].max(axis=1)) <= {4, 8}
    assert ((P[:-1] > 0).sum(axis=1) == 1).all() and set(P[:-1].max(axis=1)) <= {4, 8}
    with pytest.raises(InputError) as e:
        paper_instance(0, server_types="bogus")  # type: ignore[arg-type]
    assert e.value.field == "server_types"


def test_generate_counts_and_bad_preset():
    inst = generate("paper", seed=0, jobs=7, servers=12, horizon=512)
    assert len(inst.jobs) == 7 and len(inst.servers) == 13 and inst.horizon == 512
    with pytest.raises(InputError) as e:
        generate("huge", seed=0)
    assert e.value.field == "preset"


@pytest.mark.parametrize(
    "path, value, field_in_error",
    [
        (("jobs", 0, "epochs"), 0, "instance.jobs.0.epochs"),
        (("jobs", 1, "bandwidth_mbps"), -5.0, "instance.jobs.1.bandwidth_mbps"),
        (("jobs", 0, "worker_time_slots"), 0.0, "instance.jobs.0.worker_time_slots"),
        (("servers", 0, "workers"), [-1, 2], "instance.servers.0.workers"),
        (("horizon",), 0, "instance.horizon"),
        (("family",), "hetero", "instance.family"),
    ],
)
def test_field_errors_name_the_field(path, value, field_in_error):
    data = _data(generate("small", seed=0))
    node = data
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    with pytest.raises(InputError) as e:
        FAMILY.parse_instance(data)
    assert e.value.field == field_in_error


@pytest.mark.parametrize(
    "mutate, needle",
    [
        (lambda d: d["jobs"][2].__setitem__("upload_delay_slots", [1, 1]), "jobs.2.upload_delay_slots"),
        (lambda d: d["jobs"][1].__setitem__("worker_type", 2), "jobs.1.worker_type"),
        (lambda d: d["jobs"][1].__setitem__("ps_type", 9), "jobs.1.ps_type"),
        (lambda d: d["jobs"][3].__setitem__("id", 7), "jobs.3.id"),
        (lambda d: d["servers"][1].__setitem__("ps", [1, 1, 1]), "servers.1.ps"),
        (lambda d: d["jobs"][0].__setitem__("upload_delay_slots", [1, -2, 3]), "upload_delay_slots"),
    ],
)
def test_shape_errors_name_the_field(mutate, needle):
    data = _data(generate("small", seed=0))
    mutate(data)
    with pytest.raises(InputError) as e:
        FAMILY.parse_instance(data)
    assert needle in str(e.value)


def test_unknown_field_is_rejected():
    data = _data(generate("small", seed=0))
    data["jobs"][0]["weight"] = 2
    with pytest.raises(InputError) as e:
        FAMILY.parse_instance(data)
    assert e.value.field == "instance.jobs.0.weight"


def test_duration_rule_by_hand():
    """E=2, D=3, M=2 -> 12 steps; n=0.25, H=0.05 slots; k=60 MB at B=480 Mbit/s, 60 s slots:
    comm = 2*8*60/480 s = 2 s = 1/30 slot. Colocated: 12*0.3 = 3.6 worker-slots -> w=1: 4, w=2: 2, w=3: 2.
    Distributed: 12*(0.3+1/30) = 4.0 worker-slots -> w=1: 4, w=2: 2, w=3: 2 (4/3 -> 2)."""
    inst = generate("small", seed=0)
    job = inst.jobs[0].model_copy(update={"epochs": 2, "chunks": 3, "minibatches_per_chunk": 2, "worker_time_slots": 0.25,
                                              "ps_time_slots": 0.05, "gradient_size_mb": 60.0, "bandwidth_mbps": 480.0})
    assert math.isclose(comm_slots(inst, job), 1 / 30)
    assert math.isclose(minibatch_slots(inst, job, True), 0.3)
    assert math.isclose(rate(inst, job, False), 1 / (0.3 + 1 / 30))
    assert durations(inst, job).tolist() == [[4, 2, 2], [4, 2, 2]]
    # exactly 4.0 worker-slots must not be rounded up to 5 by floating point
    assert duration_slots(inst, job, 1, False) == 4
    assert work_done(inst, job, 1, False, 4) >= job.steps - 1e-9
    with pytest.raises(ValueError):
        duration_slots(inst, job, 4, True)
    with pytest.raises(ValueError):
        duration_slots(inst, job, 0, True)


@pytest.mark.parametrize("seed", range(5))
def test_durations_monotone_and_sufficient(seed):
    inst = generate("paper", seed=seed, jobs=40, servers=10)
    for job in inst.jobs:
        d = durations(inst, job)
        assert (d[1] <= d[0]).all()  # colocation is never slower (eq. 1)
        assert (np.diff(d, axis=1) <= 0).all()  # more workers never slower
        for xi in (0, 1):
            for w in (1, job.chunks):
                k = int(d[xi, w - 1])
                assert work_done(inst, job, w, bool(xi), k) >= job.steps * (1 - 1e-12)  # (2e) holds
                if k > 1:
                    assert work_done(inst, job, w, bool(xi), k - 1) < job.steps  # and is the shortest
