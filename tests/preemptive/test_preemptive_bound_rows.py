"""The per-job rows of ``lp4_jct`` (`formulations.preemptive.lp4_large`): each holds for every valid schedule,
and together they bound one job alone exactly.

* ``_released_chunk_slots``: in slot t a job trains at most min(D_j, workers released to it by t) chunks on a
  pooled worker group;
* ``_earliest_ends``: a job ends no earlier than e_edge unless it is wholly colocated on the cloud, and no
  earlier than e_cloud when it is;
* the Lemma 1 row with the job's own chunk length (P_cloud when wholly on the cloud, P_edge otherwise).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from edgeopt import api
from edgeopt.core import Status
from formulations.preemptive.data import from_instance
from formulations.preemptive.lp4_large import _earliest_ends, _released_chunk_slots
from tests.reliability_helpers import PROOF_CLOCK, prove, valid_schedules


@pytest.mark.parametrize("seed", range(20))
def test_released_chunk_slots_is_the_slot_by_slot_sum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    first = rng.integers(0, 30, size=int(rng.integers(1, 8))).tolist()
    chunks = int(rng.integers(1, 10))
    edges = np.unique(np.concatenate([[0, 60], rng.integers(0, 60, size=5)]))
    lo, hi = edges[:-1], edges[1:]
    got = _released_chunk_slots(first, chunks, lo, hi)
    for a, b, g in zip(lo, hi, got, strict=True):
        want = sum(min(chunks, sum(1 for x in first if x <= t)) for t in range(a, b))
        assert g == want


@functools.cache
def _small_case(seed: int) -> tuple[object, tuple[tuple[str, dict], ...]]:
    """A small instance (5 jobs) and every algorithm's validated schedule plus the proven optimum's: shared
    by the two row tests below, which check different rows on the same schedules (one proof per seed)."""
    inst = api.generate("preemptive", "small", seed=seed, jobs=5)
    schedules = valid_schedules("preemptive", inst)
    opt = prove(api.solve, inst, method="cpsat")
    assert opt.status == Status.OPTIMAL and not api.validate(inst, opt)
    return inst, (*schedules, ("cpsat", opt.schedule))


@pytest.mark.parametrize("seed", range(6))
def test_no_valid_schedule_ends_a_job_before_its_earliest_end(seed: int) -> None:
    """Every job of every algorithm's schedule and of the proven optimum ends no earlier than e_cloud when it
    is wholly colocated on the cloud and no earlier than e_edge otherwise."""
    inst, schedules = _small_case(seed)
    data = from_instance(inst)
    cloud = inst.cloud
    checked = 0
    for name, schedule in schedules:
        for js in schedule["jobs"]:
            j = int(js["job"])
            colocated = cloud is not None and all(c["server"] == cloud for c in js["chunks"]) and all(
                p["server"] == cloud for p in js["ps"])
            end = max(max(c["slots"]) + 1 for c in js["chunks"] if c["slots"])
            e_edge, e_cloud = _earliest_ends(data, j)
            assert end - int(data.arrival[j]) >= (e_cloud if colocated else e_edge), (name, j)
            checked += 1
    assert checked


def _mixed_ends(inst, schedules) -> int:
    """Assert the mixed-mode row on every job of ``schedules`` that has a chunk on the cloud and is not wholly
    colocated there; return how many such jobs there were."""
    data = from_instance(inst)
    mixed = 0
    for _name, schedule in schedules:
        for js in schedule["jobs"]:
            on_cloud = [c for c in js["chunks"] if c["server"] == inst.cloud]
            colocated = len(on_cloud) == len(js["chunks"]) and all(p["server"] == inst.cloud for p in js["ps"])
            if not on_cloud or colocated:
                continue
            j = int(js["job"])
            end = max(max(c["slots"]) + 1 for c in js["chunks"] if c["slots"])
            assert end - int(data.arrival[j]) >= int(data.cloud_start(j)) + int(data.p_edge[j]) - int(data.arrival[j])
            mixed += 1
    return mixed


def test_a_job_with_a_chunk_on_the_cloud_ends_after_the_cloud_release_plus_p_edge() -> None:
    """The mixed-mode row of ``lp4_jct``: a job not wholly colocated on the cloud with some chunk there ends no
    earlier than its cloud release + P_edge (e_mixed), in every algorithm's schedule and the proven optimum of
    6 small instances (some of which split a job between edge and cloud)."""
    assert sum(_mixed_ends(*_small_case(seed)) for seed in range(6))


@pytest.mark.parametrize("seed", range(2))
def test_a_job_split_with_the_far_cloud_ends_after_the_cloud_release_plus_p_edge(seed: int) -> None:
    """The same row in every algorithm's schedule of a 40-job `far_cloud` instance, where they split jobs
    between edge and cloud (2 seeds: about 4 s of runs each)."""
    far = api.generate("preemptive", "paper", seed=seed, regime="far_cloud", jobs=40)
    assert _mixed_ends(far, valid_schedules("preemptive", far))


@pytest.mark.parametrize("seed", range(15))
def test_one_job_alone_is_bounded_exactly(seed: int) -> None:
    """Seeds 2, 5, 10, 11 and 13 are ones where the first ``lp4_jct`` (a pooled group training from its first
    release, the shorter chunk length in both per-job rows) was one slot below the proven optimum."""
    inst = api.generate("preemptive", "small", seed=seed, jobs=1)
    opt = prove(api.solve, inst, method="cpsat")
    assert opt.status == Status.OPTIMAL and not api.validate(inst, opt)
    res = api.bound(inst, method="lp4_jct", time_limit=PROOF_CLOCK)
    assert res.status == Status.BOUND
    assert api.check_bound(inst, res) == pytest.approx(res.bound)
    assert res.bound == opt.objective


@pytest.mark.parametrize(("seed", "jobs"), [(s, n) for s in range(5) for n in (3, 6)])
def test_the_bound_is_at_most_a_proven_optimum(seed: int, jobs: int) -> None:
    inst = api.generate("preemptive", "small", seed=seed, jobs=jobs)
    opt = prove(api.solve, inst, method="cpsat")
    assert opt.status == Status.OPTIMAL and not api.validate(inst, opt)
    res = api.bound(inst, method="lp4_jct", time_limit=PROOF_CLOCK)
    assert api.check_bound(inst, res) == pytest.approx(res.bound)
    assert res.bound <= opt.objective + 1e-9
