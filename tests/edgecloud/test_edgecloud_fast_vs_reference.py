"""edgecloud A_online's fast path (a `WindowCache` updated after each accepted job) against the reference
(`online.REFERENCE`: prices and tables rebuilt for every job): bitwise the same arrays, the same options,
the same schedule and objective on random instances."""

from __future__ import annotations

import numpy as np
import pytest

from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud import online as ec_online
from edgeopt.edgecloud.online import Prices, WindowCache, _range_min_table, best_option, place
from edgeopt.edgecloud.state import make_ledger, reserve_run


@pytest.mark.parametrize("seed", range(5))
def test_cache_stays_bitwise_equal_to_a_rebuild_while_jobs_are_reserved(seed):
    inst = generate("paper", seed=seed, jobs=40, servers=12, horizon=400)
    ledger, prices = make_ledger(inst), Prices.for_instance(inst)
    lo, hi = 3, 300
    cache = WindowCache(inst, ledger, prices, lo, hi)
    accepted = 0
    for job in inst.jobs:
        fast = best_option(inst, job, ledger, prices, lo, hi, cache=cache)
        assert fast == best_option(inst, job, ledger, prices, lo, hi)
        for r, side in cache._sides.items():
            theta = prices.theta1 if r < inst.n_worker_types else prices.theta2
            fresh = ec_online._Side(ledger, r, theta, lo, hi)
            for name in ("price", "free", "prefix", "table", "up"):
                assert np.array_equal(getattr(side, name), getattr(fresh, name)), (r, name)
        if fast is None:
            continue
        run = place(inst, job, ledger, prices, fast).run(job.id)
        reserve_run(ledger, inst, job, run)
        cache.update([*run.workers, run.ps_server], run.start, run.end,
                     (job.worker_type, inst.n_worker_types + job.ps_type))
        accepted += 1
    assert accepted >= 5  # the updates were exercised


def test_range_min_table_levels_are_the_minima_they_claim():
    a = np.random.default_rng(0).integers(0, 9, (3, 37)).astype(float)
    t = _range_min_table(a)
    for k in range(t.shape[0]):
        for i in range(37 - (1 << k) + 1):
            assert np.array_equal(t[k, :, i], a[:, i:i + (1 << k)].min(axis=1))


@pytest.mark.parametrize("preset,seed,kw", [
    ("small", 0, {}),
    ("small", 3, {"jobs": 8}),
    ("paper", 1, {"jobs": 80, "servers": 15}),
    ("paper_compact", 2, {"jobs": 60, "servers": 10}),
])
def test_online_fast_and_reference_take_the_same_decisions(monkeypatch, preset, seed, kw):
    inst = generate(preset, seed=seed, **kw)
    fast = ec_online.online(inst)
    monkeypatch.setattr(ec_online, "REFERENCE", True)
    ref = ec_online.online(inst)
    assert not FAMILY.check_result(inst, fast)
    assert fast.schedule == ref.schedule
    assert fast.objective == ref.objective
