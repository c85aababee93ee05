"""The compiled search kernel of hetero (`edgeopt.hetero.kernels`) against the pure-numpy reference
(`mincost.REFERENCE = True`): on random instances and random ledgers both return the same placement (same
configuration, start, servers and bitwise the same cost), with and without a cutoff, a fixed start or a
restriction to one kind of placement; the per-column cheapest-N routine is bitwise the numpy one, ties
included. Instances are small: the kernel is compiled once per process (cached on disk), the tests then
run in milliseconds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgeopt.hetero import FAMILY, generate, kernels, mincost
from edgeopt.hetero.mincost import PricedWindow, _cheapest_n, job_configs, search
from edgeopt.hetero.online import prices


def _random_ledger(inst, rng, fill: float):
    """Usage [H, R, T]: each server busy in random slots at a random share of its capacity."""
    H, R, T = len(inst.servers), len(inst.resources), inst.horizon
    busy = rng.uniform(size=(H, 1, T)) < fill
    share = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=(H, R, T))  # ties in prices and capacities
    return np.where(busy, share, 0.0) * inst.capacity[:, :, None]


def _both(monkeypatch, *args, **kw):
    fast = search(*args, **kw)
    monkeypatch.setattr(mincost, "REFERENCE", True)
    ref = search(*args, **kw)
    monkeypatch.setattr(mincost, "REFERENCE", False)
    return fast, ref


@pytest.mark.parametrize("preset,seed", [("paper", 0), ("paper", 1), ("paper", 2), ("small_ra", 3), ("small", 4),
                                         ("paper", 5)])
def test_kernel_and_reference_find_the_same_placement(monkeypatch, preset, seed):
    rng = np.random.default_rng(seed)
    kw = {"jobs": 12, "servers": 16, "horizon": 80} if preset == "paper" else {}
    inst = generate(preset, seed=seed, **kw)
    T = inst.horizon
    lam = float(rng.choice([2.0, 50.0, 1e4]))
    found = 0
    for trial in range(6):
        usage = _random_ledger(inst, rng, fill=float(rng.uniform(0.1, 0.8)))
        delta, free = prices(usage, inst.capacity, lam), inst.capacity[:, :, None] - usage
        lo = int(rng.integers(0, T // 4))
        hi = int(rng.integers((lo + T) // 2, T + 1))
        for job in rng.choice(inst.jobs, size=3, replace=False):
            cf = job_configs(inst, job)
            args = (inst, job, delta, free, (lo, hi))
            fast, ref = _both(monkeypatch, *args, configs=cf)
            assert fast == ref
            found += fast is not None
            if ref is not None:  # a cutoff at, just above and below the best cost
                for cut in (ref.cost, math.nextafter(ref.cost, math.inf), 0.5 * ref.cost):
                    fast, ref2 = _both(monkeypatch, *args, configs=cf, cutoff=cut)
                    assert fast == ref2
                st = int(rng.integers(lo, hi))
                fast, ref2 = _both(monkeypatch, *args, configs=cf, start=st)
                assert fast == ref2
            fast, ref = _both(monkeypatch, *args, configs=cf, colocated=bool(trial % 2))
            assert fast == ref
    assert found  # the instances do exercise placements, not only rejections


def _on_shared_window(monkeypatch, inst, job, usage, lam, w):
    """The kernel's search on the shared window ``w``, after checking it equals the reference's on a window
    built afresh from ``usage``."""
    cap = inst.capacity
    delta, free = prices(usage, cap, lam), cap[:, :, None] - usage
    fast = search(inst, job, delta, free, (0, inst.horizon), configs=job_configs(inst, job), ctx=w)
    monkeypatch.setattr(mincost, "REFERENCE", True)
    ref = search(inst, job, delta, free, (0, inst.horizon), configs=job_configs(inst, job))
    monkeypatch.setattr(mincost, "REFERENCE", False)
    assert fast == ref
    return fast


def test_kernel_search_on_a_shared_window_matches_a_fresh_reference(monkeypatch):
    """The kernel reads a window kept current by `PricedWindow.update` (as A_maxweight does)."""
    rng = np.random.default_rng(7)
    inst = generate("paper", seed=7, jobs=10, servers=12, horizon=48)
    cap, lam = inst.capacity, 1e3
    usage = _random_ledger(inst, rng, fill=0.3)
    w = PricedWindow(inst, prices(usage, cap, lam), cap[:, :, None] - usage, 0, inst.horizon)
    for job in inst.jobs:
        fast = _on_shared_window(monkeypatch, inst, job, usage, lam, w)
        if fast is not None:
            rows = np.array(sorted(set(fast.workers) | set(fast.ps)))
            usage[:, :, fast.start:fast.end] += fast.demand(inst)[:, :, None]
            w.update(prices(usage, cap, lam), cap[:, :, None] - usage, fast.start, fast.end, rows)


def test_kernel_cache_after_updates_that_take_and_free_capacity(monkeypatch):
    """The kernel's cached second-stage columns, read again after updates, give the fresh reference's
    placement: stale columns only prune while every update since they were computed took capacity and
    raised prices (A_maxweight); an update that frees capacity (as `offline_fill`'s sweeps do) moves
    ``_kmono``, after which no older column is trusted as a bound."""
    rng = np.random.default_rng(5)
    inst = generate("paper", seed=5, jobs=8, servers=16, horizon=80)
    cap, lam = inst.capacity, 1e3
    usage = _random_ledger(inst, rng, fill=0.05)
    w = PricedWindow(inst, prices(usage, cap, lam), cap[:, :, None] - usage, 0, inst.horizon)
    placed, moved, found = [], 0, 0
    for _ in range(3):
        for job in inst.jobs:
            fast = _on_shared_window(monkeypatch, inst, job, usage, lam, w)
            if fast is None:
                continue
            found += 1
            free_up = bool(placed) and rng.uniform() < 0.5
            pl = placed.pop(int(rng.integers(len(placed)))) if free_up else fast
            sign = -1.0 if free_up else 1.0
            rows = np.array(sorted(set(pl.workers) | set(pl.ps)))
            usage[:, :, pl.start:pl.end] += sign * pl.demand(inst)[:, :, None]
            if not free_up:
                placed.append(pl)
            before = w._kmono
            w.update(prices(usage, cap, lam), cap[:, :, None] - usage, pl.start, pl.end, rows)
            assert (w._kmono > before) == free_up  # only a freeing update distrusts older columns
            moved += free_up
    assert found > 10 and moved  # searches found placements, and some updates did free capacity


@pytest.mark.parametrize("seed", range(4))
def test_cheapest_n_kernel_is_bitwise_the_numpy_routine(seed):
    rng = np.random.default_rng(seed)
    H, X = int(rng.integers(1, 30)), 25
    unit = rng.choice([0.0, 0.1, 0.3, 1.7, 2.0 / 3.0], size=(H, X))  # many ties
    cap = rng.choice([0.0, 1.0, 2.0, 3.0, 7.0], size=(H, X))
    for nmax in (1, 3, H, 2 * H + 1):
        want = _cheapest_n(unit, cap, nmax)
        got = kernels.cheapest_n(unit, cap, nmax)
        assert np.array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("preset,seed,kw", [("paper", 8, {"jobs": 50, "servers": 12, "horizon": 60}),
                                            ("small_ra", 9, {})])
def test_online_with_the_kernel_is_valid_and_matches_the_reference(monkeypatch, preset, seed, kw):
    from edgeopt import api

    inst = generate(preset, seed=seed, **kw)
    fast = api.run("online", inst)
    assert not FAMILY.check_result(inst, fast)
    monkeypatch.setattr(mincost, "REFERENCE", True)
    ref = api.run("online", inst)
    assert not FAMILY.check_result(inst, ref)
    assert fast.schedule == ref.schedule
    assert fast.objective == ref.objective


def test_kernel_prefix_sums_are_the_numpy_ones_after_updates():
    """The kernel's cheapest-N prefix sums, refreshed lazily after `PricedWindow.update`, are bitwise those of
    the numpy `cheapest_prefix` of a window built afresh (row N does not depend on the row count)."""
    rng = np.random.default_rng(11)
    inst = generate("paper", seed=11, jobs=6, servers=12, horizon=40)
    H, R, T = len(inst.servers), len(inst.resources), inst.horizon
    cap, lam, M = inst.capacity, 1e4, len(inst.worker_types)
    usage = _random_ledger(inst, rng, fill=0.4)
    w = PricedWindow(inst, prices(usage, cap, lam), cap[:, :, None] - usage, 3, T)
    nmax = max(j.chunks for j in inst.jobs)
    w.kernel_state(range(M), nmax)
    for _ in range(4):
        rows = np.sort(rng.choice(H, size=2, replace=False))
        s = int(rng.integers(0, T - 1))
        e = int(rng.integers(s + 1, T + 1))
        usage[rows, :, s:e] += rng.uniform(0, 0.2, (2, R, e - s)) * cap[rows, :, None]
        w.update(prices(usage, cap, lam), cap[:, :, None] - usage, s, e, rows)
        fresh = PricedWindow(inst, prices(usage, cap, lam), cap[:, :, None] - usage, 3, T)
        got = w.kernel_state(range(M), nmax)[0]
        for m in range(M):
            assert np.array_equal(got[m][:, :nmax + 1], fresh.cheapest_prefix(m, nmax)[:, :nmax + 1])
