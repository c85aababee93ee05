"""The congested presets: arrivals spread over the horizon, capacity at the paper's lower fraction."""

from __future__ import annotations

import numpy as np

from edgeopt.hetero import generate
from edgeopt.hetero.instance import ideal_config, min_duration
from edgeopt.hetero.mincost import fits_idle, job_configs


def test_small_congested_keeps_the_jobs_spreads_arrivals_and_shrinks_capacity():
    spread = []
    for seed in range(10):
        base, cong = generate("small", seed=seed), generate("small_congested", seed=seed)
        # same jobs apart from the arrival; same server count
        assert [j.model_copy(update={"arrival": 0}) for j in base.jobs] == \
            [j.model_copy(update={"arrival": 0}) for j in cong.jobs]
        assert len(cong.servers) == len(base.servers)
        for j in cong.jobs:
            m, p, n, _ = ideal_config(cong, j)
            # arrivals leave room for the ideal run, and the ideal configuration fits the idle cluster
            assert j.arrival + min_duration(cong, j, m, p, n < 2 and p is None, n) <= cong.horizon
            assert fits_idle(cong, j, job_configs(cong, j))
        spread.append(max(j.arrival for j in cong.jobs))
    assert max(spread) > 3  # beyond the default preset's [0, 3]


def test_paper_congested_uses_the_lower_capacity_fraction():
    base = generate("paper", seed=1, jobs=60, servers=30)
    cong = generate("paper_congested", seed=1, jobs=60, servers=30)
    assert cong.capacity.sum() < base.capacity.sum()
    arr = np.array([j.arrival for j in cong.jobs])
    assert arr.max() > base.horizon // 4  # spread beyond the default [0, T/4)
