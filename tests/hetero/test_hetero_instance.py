"""hetero instances: loading errors name the field, generators are deterministic and sized as documented."""

from __future__ import annotations

import json

import pytest

from edgeopt.core import InputError
from edgeopt.core.jsonio import dumps
from edgeopt.hetero import FAMILY, generate
from edgeopt.hetero.instance import comm_slots, ideal_config, min_duration, rate, work_done


def _data(preset: str = "small", seed: int = 0) -> dict:
    return json.loads(dumps(generate(preset, seed=seed).model_dump(mode="json")))


def _error(data: dict) -> InputError:
    with pytest.raises(InputError) as exc:
        FAMILY.parse_instance(data)
    return exc.value


@pytest.mark.parametrize("preset", ["small", "paper", "small_ra", "paper_ra"])
def test_generators_are_deterministic_and_round_trip(preset):
    a = generate(preset, seed=5, jobs=12 if preset.startswith("paper") else None)
    b = generate(preset, seed=5, jobs=12 if preset.startswith("paper") else None)
    c = generate(preset, seed=6, jobs=12 if preset.startswith("paper") else None)
    assert dumps(a.model_dump(mode="json")) == dumps(b.model_dump(mode="json"))
    assert dumps(a.model_dump(mode="json")) != dumps(c.model_dump(mode="json"))
    back = FAMILY.parse_instance(json.loads(dumps(a.model_dump(mode="json"))))
    assert back == a


def test_small_preset_sizes():
    for s in range(20):
        inst = generate("small", seed=s)
        assert len(inst.jobs) == 5 and len(inst.servers) == 2 and inst.horizon == 20
        assert len(inst.worker_types) == 2 and len(inst.ps_types) == 2
        assert all(j.arrival <= 3 and 2 <= j.chunks <= 3 for j in inst.jobs)


def test_paper_preset_ranges():
    inst = generate("paper", seed=1, jobs=60)
    assert inst.horizon == 150 and len(inst.servers) == 150
    assert len(inst.worker_types) == 8 and len(inst.ps_types) == 10
    for j in inst.jobs:
        assert 200 <= j.weight <= 5000 and 50 <= j.epochs <= 100 and 5 <= j.chunks <= 50
        assert 10 <= j.minibatches_per_chunk <= 50 and 30 <= j.gradient_size_mb <= 575
        assert all(0.001 <= v <= 0.05 for v in j.minibatch_time_slots)
        # U in [10, 100] ms, expressed in one-hour slots
        assert all(10 / 3.6e6 - 1e-12 <= u <= 100 / 3.6e6 + 1e-12 for u in j.ps_update_time_slots)
    for w in inst.worker_types:
        assert 1 <= w.demand[0] <= 4 and 1 <= w.demand[1] <= 16 and 100 <= w.bandwidth_mbps <= 5000
    for p in inst.ps_types:
        assert p.demand[0] == 0 and 1 <= p.demand[1] <= 16 and 5000 <= p.bandwidth_mbps <= 20000
    ra = generate("paper_ra", seed=1, jobs=10)
    assert ra.architecture == "ring_allreduce" and ra.ps_types == []


def test_paper_capacity_is_a_fraction_of_ideal_demand():
    inst = generate("paper", seed=2, jobs=200)
    ideal = 0
    for j in inst.jobs:
        m, p, n, s = ideal_config(inst, j)
        ideal += n * inst.worker_demand[m][0] + s * inst.ps_demand[p][0]
    frac = inst.capacity[:, 0].sum() / ideal
    assert 0.2 <= frac <= 0.5 + 150 * 17 / ideal  # ceil per server and the one-worker floor add a little


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["servers"][1].update(capacity=[1, 2]), "servers.1.capacity"),
        (lambda d: d["servers"][0].update(capacity=[-1, 2, 3]), "servers.0.capacity"),
        (lambda d: d["jobs"][2].update(minibatch_time_slots=[0.5]), "jobs.2.minibatch_time_slots"),
        (lambda d: d["jobs"][2].update(ps_update_time_slots=[0.1, 0.1, 0.1]), "jobs.2.ps_update_time_slots"),
        (lambda d: d["jobs"][3].update(epochs=0), "jobs.3.epochs"),
        (lambda d: d["jobs"][3].update(weight=-2), "jobs.3.weight"),
        (lambda d: d["jobs"][1].update(id=7), "jobs.1.id"),
        (lambda d: d["jobs"][0].pop("chunks"), "jobs.0.chunks"),
        (lambda d: d["worker_types"][0].update(bandwidth_mbps=0), "worker_types.0.bandwidth_mbps"),
        (lambda d: d["worker_types"][1].update(bandwidth_mbps=123.0), "worker_types.1.demand"),
        (lambda d: d["ps_types"][0].update(demand=[0, 0, 0]), "ps_types.0.demand"),
        (lambda d: d.update(ps_types=[]), "ps_types"),
        (lambda d: d.update(horizon=0), "horizon"),
        (lambda d: d.update(architecture="allreduce"), "architecture"),
        (lambda d: d.update(colour="red"), "colour"),
        (lambda d: d.update(family="edgecloud"), "family"),
    ],
)
def test_loading_errors_name_the_field(mutate, field):
    data = _data()
    mutate(data)
    err = _error(data)
    assert field in str(err), str(err)
    assert "\n" not in str(err)


def test_rates_follow_eq1_and_eq14():
    inst = generate("small", seed=3)
    j = inst.jobs[0]
    c = comm_slots(inst, j, 1)
    assert c == pytest.approx(8 * j.gradient_size_mb / (inst.worker_types[1].bandwidth_mbps * inst.slot_seconds))
    r_col = rate(inst, j, 1, 0, True, 2)
    r_dist = rate(inst, j, 1, 0, False, 2)
    assert r_col == pytest.approx(1 / (j.minibatch_time_slots[1] + j.ps_update_time_slots[0]))
    assert r_dist == pytest.approx(1 / (j.minibatch_time_slots[1] + j.ps_update_time_slots[0] + 2 * c))
    d = min_duration(inst, j, 1, 0, False, 2)
    assert work_done(inst, j, 1, 0, False, 2, d) >= j.work * (1 - 1e-9)
    assert work_done(inst, j, 1, 0, False, 2, d - 1) < j.work or d == 1
    ra = generate("small_ra", seed=3)
    j = ra.jobs[0]
    assert rate(ra, j, 0, None, True, 1) == pytest.approx(1 / j.minibatch_time_slots[0])  # Phi = 1: no reduce
    frac = 2 / 3
    c = comm_slots(ra, j, 0)
    assert rate(ra, j, 0, None, False, 3) == pytest.approx(
        1 / (j.minibatch_time_slots[0] + j.allreduce_time_slots * frac + 2 * c * frac))


@pytest.mark.parametrize("preset, kw", [("paper", {"jobs": 20}), ("paper", {"jobs": 30, "servers": 20, "horizon": 100}),
                                        ("paper_ra", {"jobs": 20}), ("paper", {"jobs": 12, "servers": 4, "horizon": 100})])
def test_paper_ideal_configuration_of_every_job_fits_the_idle_cluster_and_finishes_by_T(preset, kw):
    """The floors of the paper generator: each job fits the idle cluster with its ideal configuration
    (colocated or distributed) and finishes by T with it, also when the jobs are few."""
    from edgeopt.hetero.mincost import fits_idle, job_configs

    for seed in range(3):
        inst = generate(preset, seed=seed, **kw)
        for j in inst.jobs:
            m, p, n, _ = ideal_config(inst, j)
            cf = job_configs(inst, j, worker_types=[m], ps_types=None if p is None else [p], n_workers=n)
            assert fits_idle(inst, j, cf), (seed, j.id)
            assert j.arrival + min_duration(inst, j, m, p, False, n) <= inst.horizon
        if preset == "paper" and kw == {"jobs": 20}:
            # GPUs (which PSs do not use) keep the paper's fraction of the ideal GPU demand here
            gpu = sum(ideal_config(inst, j)[2] * inst.worker_demand[ideal_config(inst, j)[0]][0] for j in inst.jobs)
            assert 0.2 <= inst.capacity[:, 0].sum() / gpu <= 0.5 + 0.05


def test_ideal_fit_check_of_the_generator_agrees_with_fits_idle():
    import numpy as np

    from edgeopt.hetero.instance import _ideal_fits_idle
    from edgeopt.hetero.mincost import fits_idle, job_configs

    rng = np.random.default_rng(3)
    for preset in ("paper", "paper_ra"):
        base = generate(preset, seed=1, jobs=15, servers=5, horizon=100)
        agree = {True: 0, False: 0}
        for _ in range(25):
            cap = np.floor(base.capacity * rng.uniform(0.05, 1.5, size=base.capacity.shape))
            inst = base.model_copy(update={"servers": [s.model_copy(update={"capacity": [float(x) for x in row]})
                                                       for s, row in zip(base.servers, cap, strict=True)]})
            for j in inst.jobs:
                c = ideal_config(inst, j)
                m, p, n, _ = c
                cf = job_configs(inst, j, worker_types=[m], ps_types=None if p is None else [p], n_workers=n)
                ours = _ideal_fits_idle(inst.capacity, inst.worker_demand, inst.ps_demand, inst.worker_types,
                                        inst.ps_types, inst.architecture, c)
                assert ours == fits_idle(inst, j, cf)
                agree[ours] += 1
        assert agree[True] and agree[False]
