"""The fast paths of hetero's A_online against the reference implementation (`mincost.REFERENCE`): an
incrementally updated `PricedWindow` holds bitwise what a rebuilt one holds, and A_online takes the same
decisions (same schedule, same objective) on random instances either way."""

from __future__ import annotations

import numpy as np
import pytest

from edgeopt import api
from edgeopt.hetero import FAMILY, generate, mincost
from edgeopt.hetero.mincost import PricedWindow, job_configs, search
from edgeopt.hetero.online import prices


def _window_state(w: PricedWindow, queries: list[tuple[int, int, int]]) -> dict[str, np.ndarray]:
    """Every array of ``w`` and its answers to the cached queries (m, d, nmax)."""
    out = {name: getattr(w, name) for name in ("pe", "pe_min", "pz", "pz_min", "pz_minall", "_cw_slot", "_pe_slot")}
    for name in ("table", "tot_table", "max_table", "ps_max_table"):
        for k, lvl in enumerate(getattr(w, name)):
            out[f"{name}{k}"] = lvl
    for m, d, nmax in queries:
        out[f"prefix{m},{nmax}"] = w.cheapest_prefix(m, nmax)[:, :nmax + 1]
        out[f"wc{m},{d},{nmax}"] = w.window_cheapest(m, d, nmax)[:nmax + 1]
        for p in range(len(w.z)):
            out[f"ps{p},{d}"] = w.ps_cost_min(p, d)
        out[f"psall{d}"] = w.ps_cost_min_all(d)
    return {k: np.array(v, copy=True) for k, v in out.items()}


@pytest.mark.parametrize("seed", range(6))
def test_updated_window_is_bitwise_a_rebuilt_one(seed):
    rng = np.random.default_rng(seed)
    inst = generate("paper", seed=seed, jobs=5, servers=12, horizon=40)
    H, R, T = len(inst.servers), len(inst.resources), inst.horizon
    cap = inst.capacity
    usage = rng.uniform(0, 0.5, (H, R, T)) * cap[:, :, None]
    lam = 1e4
    lo, hi = int(rng.integers(0, 10)), int(rng.integers(25, T + 1))
    M = len(inst.worker_types)
    queries = [(int(rng.integers(M)), int(rng.integers(1, hi - lo)), int(rng.integers(1, 8))) for _ in range(4)]
    w = PricedWindow(inst, prices(usage, cap, lam), cap[:, :, None] - usage, lo, hi)
    _window_state(w, queries)  # fill the caches so that the update has to patch them
    for _ in range(5):
        rows = np.sort(rng.choice(H, size=int(rng.integers(1, 4)), replace=False))
        s = int(rng.integers(0, T - 1))
        e = int(rng.integers(s + 1, T + 1))
        usage[rows, :, s:e] += rng.uniform(0, 0.1, (len(rows), R, e - s)) * cap[rows, :, None]
        w.update(prices(usage, cap, lam), cap[:, :, None] - usage, s, e, rows)
        fresh = PricedWindow(inst, prices(usage, cap, lam), cap[:, :, None] - usage, lo, hi)
        got, want = _window_state(w, queries), _window_state(fresh, queries)
        for k in want:
            assert np.array_equal(got[k], want[k]), k
        # and the search reads the same cheapest placement off both
        job = inst.jobs[int(rng.integers(len(inst.jobs)))]
        args = (inst, job, prices(usage, cap, lam), cap[:, :, None] - usage, (lo, hi))
        assert search(*args, configs=job_configs(inst, job), ctx=w) == search(*args, configs=job_configs(inst, job))


@pytest.mark.parametrize("preset,seed,kw", [
    ("paper", 0, {"jobs": 40, "servers": 15, "horizon": 80}),
    ("paper", 1, {"jobs": 60, "servers": 10, "horizon": 60}),
    ("small", 2, {}),
    ("small_ra", 3, {}),
    ("paper", 4, {"jobs": 80, "servers": 20, "horizon": 120}),
])
def test_online_fast_and_reference_take_the_same_decisions(monkeypatch, preset, seed, kw):
    inst = generate(preset, seed=seed, **kw)
    fast = api.run("online", inst)
    monkeypatch.setattr(mincost, "REFERENCE", True)
    ref = api.run("online", inst)
    assert not FAMILY.check_result(inst, fast)
    assert fast.schedule == ref.schedule
    assert fast.objective == ref.objective


def test_online_every_slot_fast_and_reference_take_the_same_decisions(monkeypatch):
    inst = generate("paper", seed=5, jobs=30, servers=10, horizon=60)
    fast = api.run("online_every_slot", inst)
    monkeypatch.setattr(mincost, "REFERENCE", True)
    ref = api.run("online_every_slot", inst)
    assert not FAMILY.check_result(inst, fast)
    assert fast.schedule == ref.schedule
    assert fast.objective == ref.objective
