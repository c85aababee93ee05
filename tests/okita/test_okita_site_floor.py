"""The PS-site (L-median) floor of okita's ``worker_lp`` bound: below the exact L-median value, and below
every job's real bandwidth cost in the schedules the algorithms produce."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from edgeopt import api
from edgeopt.okita.schedule import Schedule, job_parts
from formulations.okita.lpbound import WorkerRelaxation, ps_site_floor, site_costs


def _exact_median(chunks: np.ndarray, h: np.ndarray, L: int) -> float:
    S = h.shape[1]
    return min(float((chunks * h[:, list(P)].min(axis=1)).sum())
               for P in itertools.combinations(range(S), min(L, S)))


@pytest.mark.parametrize("seed", range(6))
def test_floor_is_at_most_the_exact_l_median_and_non_increasing(seed: int) -> None:
    rng = np.random.default_rng(seed)
    S = 7
    q = np.triu(rng.uniform(0.02, 0.08, (S, S)), 1)
    q = q + q.T
    chunks = rng.integers(0, 6, S).astype(float)
    h = site_costs(q, float(rng.integers(20, 60)), float(rng.uniform(2, 40)))
    lengths = np.arange(1, S + 2)
    floor = ps_site_floor(chunks, h, lengths)
    assert np.all(np.diff(floor) <= 0) and np.all(floor >= 0)
    for L, b in zip(lengths, floor, strict=True):
        assert b <= _exact_median(chunks, h, int(L)) + 1e-9
    # it is not vacuous: with one PS site it is positive whenever two origins hold chunks
    if (chunks > 0).sum() >= 2:
        assert floor[0] > 0


@pytest.mark.parametrize(("preset", "options"), [("small", {"jobs": 4, "servers": 4, "horizon": 10}),
                                                 ("paper", {"jobs": 6, "servers": 6, "horizon": 20})])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_job_pays_at_least_latency_plus_its_site_floor(preset: str, options: dict, seed: int) -> None:
    """For every job of every validated schedule: latency + transfer + exchange >= f(L) + B(L), L its length."""
    inst = api.generate("okita", preset, seed=seed, **options)
    rel = WorkerRelaxation(inst)
    checked = 0
    for name, algo in api.algorithms("okita").items():
        if algo.relaxed:
            continue
        res = api.run(name, inst, seed=0)
        assert not api.validate(inst, res), name
        for js in Schedule.model_validate(res.schedule).jobs:
            if js.completion is None:
                continue
            parts = job_parts(inst, js)
            k = js.completion - inst.jobs[js.job].arrival
            floor = rel.latency[js.job][k] + rel.site_floor[js.job][k]
            assert parts["latency"] + parts["transfer"] + parts["exchange"] >= floor - 1e-9 * max(1.0, floor), name
            checked += 1
    assert checked > 0


@pytest.mark.parametrize("seed", range(8))
def test_compiled_floor_is_bitwise_the_numpy_reference(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`formulations.okita.kernels` repeats the reference's operations in its order: the same floor to the
    last bit, so bounds and certificates do not depend on which path ran."""
    from formulations.okita import lpbound

    rng = np.random.default_rng(100 + seed)
    S = int(rng.integers(2, 40))
    chunks = rng.integers(0, 5, S).astype(float)
    h = rng.exponential(1.0, (S, S))
    np.fill_diagonal(h, 0.0)
    lengths = np.arange(1, int(rng.integers(2, 30)))
    monkeypatch.setattr(lpbound, "REFERENCE", True)
    reference = ps_site_floor(chunks, h, lengths)
    monkeypatch.setattr(lpbound, "REFERENCE", False)
    assert np.array_equal(ps_site_floor(chunks, h, lengths), reference)


def test_compiled_floor_gives_the_same_relaxation_on_the_paper_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    from formulations.okita import lpbound

    inst = api.generate("okita", "paper", seed=3, jobs=6)
    monkeypatch.setattr(lpbound, "REFERENCE", True)
    reference = WorkerRelaxation(inst)
    monkeypatch.setattr(lpbound, "REFERENCE", False)
    fast = WorkerRelaxation(inst)
    assert any(f.any() for f in reference.site_floor)  # the floor is in play
    assert all(np.array_equal(a, b) for a, b in zip(fast.site_floor, reference.site_floor, strict=True))
    assert fast.fingerprint() == reference.fingerprint()
