"""`edgeopt.core.packing`: the most a set of vector types packs into one server, and the packing rows built
from it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from edgeopt.core.packing import max_packed, most_crowded, packing_rows


def brute_force(cap: np.ndarray, demand: np.ndarray, value: np.ndarray) -> float:
    """Every integer vector of copies, each count up to what fits alone."""
    most = [int(np.min(np.floor(cap[d > 0] / d[d > 0]))) for d in demand]
    best = 0.0
    for x in itertools.product(*(range(m + 1) for m in most)):
        x = np.array(x, dtype=float)
        if np.all(x @ demand <= cap + 1e-9):
            best = max(best, float(x @ value))
    return best


@pytest.mark.parametrize("seed", range(60))
def test_max_packed_is_the_best_packing(seed: int) -> None:
    rng = np.random.default_rng(seed)
    K, R = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    demand = rng.integers(0, 7, size=(K, R)).astype(float)
    demand[demand.sum(axis=1) == 0, 0] = 1.0
    cap = rng.integers(3, 25, size=R).astype(float)
    value = rng.integers(0, 6, size=K).astype(float)
    got, exact = max_packed(cap, demand, value)
    assert exact
    assert got == pytest.approx(brute_force(cap, demand, value))


def test_a_search_cut_short_returns_an_upper_bound() -> None:
    cut_short = 0
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        demand = rng.integers(1, 9, size=(4, 3)).astype(float)
        cap = rng.integers(20, 60, size=3).astype(float)
        value = rng.integers(1, 6, size=4).astype(float)
        want = brute_force(cap, demand, value)
        got, exact = max_packed(cap, demand, value, node_limit=2)
        assert got == pytest.approx(want) if exact else got >= want - 1e-9
        cut_short += 0 if exact else 1
    assert cut_short >= 10  # the limit did cut most searches short


def test_identical_vectors_and_worthless_ones_change_nothing() -> None:
    demand = np.array([[4.0, 11.0], [4.0, 11.0], [1.0, 1.0], [2.0, 2.0]])
    assert max_packed([70.0, 272.0], demand[:2], [4.0, 4.0]) == (68.0, True)
    assert max_packed([70.0, 272.0], demand, [4.0, 4.0, 0.0, 0.0]) == (68.0, True)


def test_a_vector_of_value_that_uses_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="unbounded"):
        max_packed([5.0], [[0.0]], [1.0])


def test_packing_rows_cut_only_where_a_server_cannot_be_filled() -> None:
    """Two servers of 8 GPUs; a 4-GPU worker needs 11 CPUs. The CPU-rich server holds two (8 GPUs), the
    CPU-poor one (12 CPUs) only one (4 GPUs): the row of that type on the GPUs is 12, not 16. With a 1-GPU,
    1-CPU type beside it the GPUs fill up, so the set of both types gets no row."""
    capacity = np.array([[8.0, 30.0], [8.0, 12.0]])
    demand = np.array([[4.0, 11.0], [1.0, 1.0]])
    weights, limits, names = packing_rows(capacity, demand, [0])
    assert names == ["packing[0:0]"]
    assert limits.tolist() == [12.0]
    assert weights.tolist() == [[4.0, 0.0]]


def test_most_crowded_resource() -> None:
    areas = np.array([[10.0, 5.0], [20.0, 5.0]])  # GPU-slots, CPU-slots of each job's least mode
    assert most_crowded(areas, [2.0, 10.0], horizon=10) == 0  # 30 of 20 against 10 of 100
    assert most_crowded(areas, [200.0, 1.0], horizon=10) == 1
