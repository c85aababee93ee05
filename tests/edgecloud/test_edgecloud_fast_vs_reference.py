"""edgecloud A_online's fast path (a `WindowCache` updated after each accepted job, searched by the compiled
kernel of `edgeopt.edgecloud.kernels`) against the reference (`online.REFERENCE`: prices and tables rebuilt
from the ledger for every job, every triple evaluated with numpy): bitwise the same arrays, the same
options and costs, the same schedule and objective on random instances, including prices low enough
(small F) that options with positive costs and workers spread over many servers win."""

from __future__ import annotations

import numpy as np
import pytest

from edgeopt.core import exponential_price
from edgeopt.edgecloud import FAMILY, generate, kernels
from edgeopt.edgecloud import online as ec_online
from edgeopt.edgecloud.online import Prices, WindowCache, _price, _range_min_table, best_option, place
from edgeopt.edgecloud.state import make_ledger, reserve_run


def _reference_arrays(ledger, r, theta, lo, hi):
    """What the reference path computes for resource ``r`` over ``[lo, hi)``, in the cache's layout."""
    rows = np.flatnonzero(ledger.capacity[:, r] > 0)
    cap = ledger.capacity[rows, r, None]
    used = ledger.usage[rows, r, lo:hi]
    price = exponential_price(used, cap, theta)
    prefix = np.zeros((len(rows), hi - lo + 1))
    np.cumsum(price, axis=1, out=prefix[:, 1:])
    free = cap - used
    return rows, price.T, prefix.T, free.T, _range_min_table(free), (np.diff(free, axis=1) > 0).sum(axis=0)


def _check_cache(cache, ledger, prices, n_worker_types):
    for r, side in cache._sides.items():
        theta = prices.theta1 if r < n_worker_types else prices.theta2
        rows, price, prefix, free, table, up = _reference_arrays(ledger, r, theta, cache.lo, cache.hi)
        assert np.array_equal(side.rows, rows)
        assert np.array_equal(side.price, price), r
        assert np.array_equal(side.prefix, prefix), r
        assert np.array_equal(side.free, free), r
        assert np.array_equal(side.up, up), r
        L = cache.hi - cache.lo
        for k in range(table.shape[0]):  # the valid part of every level
            n = L - (1 << k) + 1
            if n > 0:
                assert np.array_equal(side.table[k, :n], table[k, :, :n].T), (r, k)


@pytest.mark.parametrize("seed,f", [(0, 1.0), (1, 1.0), (2, 1.0), (3, 1e-6), (4, 1e-6), (5, 1e-3)])
def test_cache_and_search_equal_the_reference_while_jobs_are_reserved(seed, f):
    inst = generate("paper", seed=seed, jobs=40, servers=12, horizon=400)
    ledger, prices = make_ledger(inst), Prices.for_instance(inst, f, f)
    lo, hi = 3, 300
    cache = WindowCache(inst, ledger, prices, lo, hi)
    accepted = positive = 0
    for job in inst.jobs:
        ref = best_option(inst, job, ledger, prices, lo, hi)
        assert best_option(inst, job, ledger, prices, lo, hi, cache=cache) == ref
        for limit in (1.0, 1e-3):
            want = ref if ref is not None and ref.cost < limit else None
            assert best_option(inst, job, ledger, prices, lo, hi, cache=cache, limit=limit) == want
            assert best_option(inst, job, ledger, prices, lo, hi, limit=limit) == want
        for colocation in (False, True):
            for start_only in (False, True):
                kw = {"colocation": colocation, "window_start_only": start_only}
                assert (best_option(inst, job, ledger, prices, lo, hi, cache=cache, **kw)
                        == best_option(inst, job, ledger, prices, lo, hi, **kw))
        _check_cache(cache, ledger, prices, inst.n_worker_types)
        if ref is None:
            continue
        positive += ref.cost > 0
        run = place(inst, job, ledger, prices, ref).run(job.id)
        reserve_run(ledger, inst, job, run)
        cache.update([*run.workers, run.ps_server], run.start, run.end,
                     (job.worker_type, inst.n_worker_types + job.ps_type))
        accepted += 1
    assert accepted >= 5  # the updates were exercised
    if f < 1:
        assert positive >= 1  # so were options that cost something


def test_range_min_table_levels_are_the_minima_they_claim():
    a = np.random.default_rng(0).integers(0, 9, (3, 37)).astype(float)
    t = _range_min_table(a)
    for k in range(t.shape[0]):
        for i in range(37 - (1 << k) + 1):
            assert np.array_equal(t[k, :, i], a[:, i:i + (1 << k)].min(axis=1))


def test_compiled_table_and_its_updates_are_the_minima_they_claim():
    rng = np.random.default_rng(1)
    free = rng.integers(0, 9, (37, 4)).astype(np.int8)
    table = np.zeros((6, 37, 4), dtype=np.int8)
    kernels.build_table(free, table)
    price, prefix, up = np.zeros((37, 4)), np.zeros((38, 4)), (np.diff(free, axis=0) > 0).sum(axis=1)
    for _ in range(20):
        s = int(rng.integers(0, 36))
        e = int(rng.integers(s + 1, 38))
        pos = np.unique(rng.integers(0, 4, 2))
        new_free = rng.integers(0, 9, (len(pos), e - s)).astype(np.int8)
        new_price = rng.random((len(pos), e - s))
        kernels.update_side(pos, s, e, new_price, new_free, price, prefix, free, table, up)
        assert np.array_equal(free[s:e][:, pos], new_free.T)
        assert np.array_equal(prefix[1:], np.cumsum(price, axis=0))
        assert np.array_equal(up, (np.diff(free, axis=0) > 0).sum(axis=1))
        for k in range(6):
            for i in range(37 - (1 << k) + 1):
                assert np.array_equal(table[k, i], free[i:i + (1 << k)].min(axis=0))


@pytest.mark.parametrize("n", [*range(1, 20), 31, 63, 64, 65, 127, 128, 129, 200, 255, 256, 257, 300, 1031])
def test_pairwise_sum_is_numpys_order(n):
    rng = np.random.default_rng(n)
    a = rng.random((5, n)) * 10.0 ** rng.integers(-8, 8, (5, n))
    for row, want in zip(a, a.sum(axis=1), strict=True):
        assert kernels.pairwise_sum(row.copy(), n) == want


def test_price_on_busy_entries_only_is_bitwise_the_dense_price():
    rng = np.random.default_rng(2)
    used = rng.integers(0, 9, (30, 500)).astype(float) * (rng.random((30, 500)) < 0.3)
    cap = rng.integers(1, 9, (30, 1)).astype(float)
    for theta in (1.0 + 1e-9, 2.0, 2.4e7):
        assert np.array_equal(_price(np.minimum(used, cap), cap, theta), exponential_price(np.minimum(used, cap), cap, theta))


@pytest.mark.parametrize("preset,seed,kw,f", [
    ("small", 0, {}, 1.0),
    ("small", 3, {"jobs": 8}, 1.0),
    ("paper", 1, {"jobs": 80, "servers": 15}, 1.0),
    ("paper", 2, {"jobs": 80, "servers": 15}, 1e-6),
    ("paper_compact", 2, {"jobs": 60, "servers": 10}, 1.0),
    ("paper_compact", 4, {"jobs": 60, "servers": 10}, 1e-4),
])
def test_online_fast_and_reference_take_the_same_decisions(monkeypatch, preset, seed, kw, f):
    inst = generate(preset, seed=seed, **kw)
    fast = ec_online.online(inst, f1=f, f2=f)
    monkeypatch.setattr(ec_online, "REFERENCE", True)
    ref = ec_online.online(inst, f1=f, f2=f)
    assert not FAMILY.check_result(inst, fast)
    assert fast.schedule == ref.schedule
    assert fast.objective == ref.objective


@pytest.mark.parametrize("seed", range(4))
def test_search_equals_the_reference_when_workers_spread_over_many_priced_servers(seed):
    """Every server partly busy and prices low: the greedy fill takes workers from several priced servers,
    whose costs the kernel must sum in numpy's pairwise order."""
    inst = generate("paper", seed=seed, jobs=30, servers=40, horizon=300)
    ledger = make_ledger(inst)
    rng = np.random.default_rng(seed)
    cap = ledger.capacity[:, :, None]
    ledger.usage[:] = np.floor(rng.random(ledger.usage.shape) * cap * (rng.random(ledger.usage.shape) < 0.7))
    lo, hi = 5, 250
    spread = 0
    for f in (1e-12, 1e-10):
        prices = Prices.for_instance(inst, f, f)
        cache = WindowCache(inst, ledger, prices, lo, hi)
        for job in inst.jobs:
            ref = best_option(inst, job, ledger, prices, lo, hi, colocation=False)
            assert best_option(inst, job, ledger, prices, lo, hi, cache=cache, colocation=False) == ref
            assert best_option(inst, job, ledger, prices, lo, hi, cache=cache) == best_option(
                inst, job, ledger, prices, lo, hi)
            if ref is not None:
                spread += len(place(inst, job, ledger, prices, ref).workers) >= 3
    assert spread >= 5  # placements over three or more priced servers were compared
