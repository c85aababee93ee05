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


@pytest.mark.parametrize("seed", range(4))
def test_window_updated_once_over_several_changes_is_a_rebuilt_one(seed):
    """`offline._Held.sync` brings the window up to date with one update over the servers and slots of several
    changes, some taking capacity and some freeing it: the box covers cells that did not change."""
    rng = np.random.default_rng(100 + seed)
    inst = generate("paper", seed=seed, jobs=5, servers=12, horizon=40)
    H, R, T = len(inst.servers), len(inst.resources), inst.horizon
    cap = inst.capacity
    usage = rng.uniform(0, 0.5, (H, R, T)) * cap[:, :, None]
    price = np.zeros((H, R, T))
    M = len(inst.worker_types)
    queries = [(int(rng.integers(M)), int(rng.integers(1, T)), int(rng.integers(1, 8))) for _ in range(4)]
    w = PricedWindow(inst, price, cap[:, :, None] - usage, 0, T)
    _window_state(w, queries)
    boxes = []
    for _ in range(int(rng.integers(2, 6))):
        rows = np.sort(rng.choice(H, size=int(rng.integers(1, 4)), replace=False))
        s = int(rng.integers(0, T - 1))
        e = int(rng.integers(s + 1, T + 1))
        sign = 1 if rng.random() < 0.5 else -1
        usage[rows, :, s:e] = np.clip(usage[rows, :, s:e] + sign * rng.uniform(0, 0.2) * cap[rows, :, None],
                                      0, cap[rows, :, None])
        boxes.append((rows, s, e))
    rows = np.unique(np.concatenate([b[0] for b in boxes]))
    w.update(price, cap[:, :, None] - usage, min(b[1] for b in boxes), max(b[2] for b in boxes), rows)
    got, want = _window_state(w, queries), _window_state(PricedWindow(inst, price, cap[:, :, None] - usage, 0, T),
                                                           queries)
    for k in want:
        assert np.array_equal(got[k], want[k]), k


@pytest.mark.parametrize("seed,servers,horizon", [(0, 12, 100), (1, 8, 150), (4, 8, 150)])
def test_recreate_with_batched_window_updates_takes_the_same_decisions(monkeypatch, seed, servers, horizon):
    """Ruin and recreate and `offline_fill` with the window updated once before each search (`_Held.sync`) and
    with every change applied at once (the reference) return the same schedules."""
    from edgeopt.core import Deadline
    from edgeopt.hetero import offline

    inst = generate("paper", seed=seed, jobs=24, servers=servers, horizon=horizon)  # 3 moves kept in each

    def run() -> tuple:
        start = api.run("offline_fill", inst)
        sched, log = offline.recreate(inst, FAMILY.parse_schedule(start.schedule), Deadline(10**6), seed=seed,
                                      max_iterations=40)
        return start.schedule, None if sched is None else sched.model_dump(), log.accepted

    fast = run()
    eager = offline._Held.change

    def change_now(self, pl, sign):
        eager(self, pl, sign)
        self.sync()

    monkeypatch.setattr(offline._Held, "change", change_now)
    assert run() == fast
    assert fast[2] > 0  # the ruins did move jobs, so the comparison covers the batched updates
