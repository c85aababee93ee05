"""``config_jct`` (`formulations.preemptive.configbound`): single-job plans priced on the pooled type rows.

* every valid schedule maps to one plan per job within the relaxation's caps, whose cost is at most the job's
  JCT, and the plans together fit the capacity rows (so the program is a relaxation);
* at any prices the Lagrangian value is at most every complete schedule's total JCT (weak duality through the
  pricing itself);
* the bound is at most proven optima, at least ``lp4_jct``'s relaxation value where both converge, exact for
  one job alone, above ``lp4_jct`` where jobs get fewer workers than chunks, and its certificate re-checks.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from edgeopt import api
from edgeopt.core import Status
from edgeopt.core.colgen import lagrangian
from edgeopt.core.lowerbound import check_certificate, compute_bound
from formulations.preemptive import LOWER_BOUNDS
from formulations.preemptive.configbound import JobPlans, relaxation
from tests.reliability_helpers import PROOF_CLOCK, prove, valid_schedules


@functools.cache
def _far_cloud_case(seed: int, jobs: int) -> tuple[object, tuple[tuple[str, dict], ...]]:
    """A `far_cloud` instance (jobs split between edge and cloud, fewer workers than chunks) and every
    algorithm's validated schedule."""
    inst = api.generate("preemptive", "paper", seed=seed, regime="far_cloud", jobs=jobs)
    return inst, tuple(valid_schedules("preemptive", inst))


def _total_jct(inst, schedule: dict) -> int:
    return sum(max(max(c["slots"]) + 1 for c in js["chunks"] if c["slots"]) - inst.jobs[int(js["job"])].arrival
               for js in schedule["jobs"])


def _plans_of(rel: JobPlans, inst, schedule: dict) -> tuple[dict[int, tuple[str, float]], np.ndarray]:
    """Each scheduled job's plan (its mode and JCT) checked against the relaxation's per-job conditions, and the
    plans' use of the capacity rows."""
    use = np.zeros_like(rel.capacity)
    starts = rel.bucket_starts
    plans = {}
    for js in schedule["jobs"]:
        j = int(js["job"])
        r = rel.arrival[j]
        end = max(max(c["slots"]) + 1 for c in js["chunks"] if c["slots"])
        on_cloud = [c for c in js["chunks"] if c["server"] == inst.cloud]
        if on_cloud:  # mixed or colocated: the cloud plan, no edge capacity
            assert rel.cloud_cost[j] <= end - r
            plans[j] = ("cloud", end - r)
            continue
        slots = np.array([t for c in js["chunks"] for t in c["slots"]], dtype=np.int64)
        buckets = np.searchsorted(starts, slots, side="right") - 1
        units = np.bincount(buckets, minlength=rel.horizon).astype(float)
        used = np.flatnonzero(units)
        where = {int(k): i for i, k in enumerate(rel.open_buckets[j])}
        assert all(int(k) in where for k in used)  # only buckets open to the job
        idx = np.array([where[int(k)] for k in used])
        assert np.all(units[used] <= rel.caps[j][idx])  # within the released chunk-slots
        assert units.sum() == rel.need[j]  # every chunk trains P_edge slots
        assert end >= rel.earliest_end[j] and end >= rel.open_from[j][idx].max() + 1
        use[rel.row[j]] += units
        plans[j] = ("edge", end - r)
    return plans, use


@pytest.mark.parametrize(("seed", "jobs"), [(0, 20), (1, 40)])
def test_every_valid_schedule_maps_to_plans_within_the_relaxation(seed: int, jobs: int) -> None:
    inst, schedules = _far_cloud_case(seed, jobs)
    rel = relaxation(inst)
    modes = set()
    for name, schedule in schedules:
        plans, use = _plans_of(rel, inst, schedule)
        assert np.all(use <= rel.capacity + 1e-9), name
        modes.update(m for m, _ in plans.values())
    assert modes == {"edge", "cloud"}  # both kinds of plan were checked


@pytest.mark.parametrize("seed", range(3))
def test_the_lagrangian_at_any_prices_is_below_every_complete_schedule(seed: int) -> None:
    inst, schedules = _far_cloud_case(0, 20)
    rel = relaxation(inst)
    rng = np.random.default_rng(seed)
    complete = [_total_jct(inst, s) for _, s in schedules if not s.get("rejected")]
    assert complete
    for scale in (0.0, 0.01, 0.1, 1.0):
        pi = scale * rng.random((rel.n_rows, rel.horizon)) * (rng.random((rel.n_rows, rel.horizon)) < 0.5)
        assert lagrangian(rel, pi).value <= min(complete) + 1e-9


@pytest.mark.parametrize(("seed", "jobs"), [(s, n) for s in range(5) for n in (3, 6)])
def test_the_bound_is_at_most_a_proven_optimum_and_at_least_the_lp(seed: int, jobs: int) -> None:
    inst = api.generate("preemptive", "small", seed=seed, jobs=jobs)
    opt = prove(api.solve, inst, method="cpsat")
    assert opt.status == Status.OPTIMAL and not api.validate(inst, opt)
    res = api.bound(inst, method="config_jct", time_limit=PROOF_CLOCK)
    assert res.status == Status.BOUND and res.extra["solver"]["converged"]
    assert api.check_bound(inst, res) == pytest.approx(res.bound)
    assert res.bound <= opt.objective + 1e-9
    lp = api.bound(inst, method="lp4_jct", time_limit=PROOF_CLOCK)
    value = res.extra["certificate"]["relaxation_value"]
    assert value >= lp.extra["certificate"]["relaxation_value"] - 1e-3 * max(1.0, abs(value))


@pytest.mark.parametrize("seed", range(15))
def test_one_job_alone_is_bounded_exactly(seed: int) -> None:
    inst = api.generate("preemptive", "small", seed=seed, jobs=1)
    opt = prove(api.solve, inst, method="cpsat")
    assert opt.status == Status.OPTIMAL
    res = api.bound(inst, method="config_jct", time_limit=PROOF_CLOCK)
    assert res.bound == opt.objective


def test_jobs_with_fewer_workers_than_chunks_pay_their_last_slot() -> None:
    """At 20 `far_cloud` jobs (seed 0) the plans bound 1,991 where the LP's mean chunk-slot gives 1,952."""
    inst, schedules = _far_cloud_case(0, 20)
    method = LOWER_BOUNDS["config_jct"]
    res = compute_bound("preemptive", method, inst, time_limit=PROOF_CLOCK)
    lp = api.bound(inst, method="lp4_jct", time_limit=PROOF_CLOCK)
    assert check_certificate(method, inst, res) == pytest.approx(res.bound)
    assert res.bound > lp.bound
    assert all(res.bound <= _total_jct(inst, s) for _, s in schedules if not s.get("rejected"))


def _without_cloud(inst):
    keep = [i for i, s in enumerate(inst.servers) if not s.is_cloud]
    jobs = [{**j.model_dump(), "upload_delay_slots": [j.upload_delay_slots[i] for i in keep]} for j in inst.jobs]
    return type(inst).model_validate({**inst.model_dump(), "servers": [inst.servers[i].model_dump() for i in keep],
                                      "jobs": jobs})


@pytest.mark.parametrize("seed", range(4))
def test_without_a_cloud_the_bound_is_at_most_a_proven_optimum(seed: int) -> None:
    """Edge plans only (no cloud plan; the buckets of a horizon without a cloud cutoff)."""
    inst = _without_cloud(api.generate("preemptive", "small", seed=seed, jobs=4))
    assert inst.cloud is None
    opt = prove(api.solve, inst, method="milp")
    assert opt.status == Status.OPTIMAL and not api.validate(inst, opt)
    res = api.bound(inst, method="config_jct", time_limit=PROOF_CLOCK)
    assert api.check_bound(inst, res) == pytest.approx(res.bound)
    assert res.bound <= opt.objective + 1e-9
