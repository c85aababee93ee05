import itertools
import math

import numpy as np
import pytest

from edgeopt.core import exponential_price, geometric_rounds, price_base, round_of, tau


def test_exponential_price_endpoints_and_monotone():
    cap = np.array([4.0, 4.0, 4.0])
    used = np.array([0.0, 2.0, 4.0])
    p = exponential_price(used, cap, base=101.0)
    assert p[0] == 0.0
    assert p[1] == pytest.approx(math.sqrt(101.0) - 1)
    assert p[2] == pytest.approx(100.0)
    assert np.all(np.diff(p) > 0)


def test_zero_capacity_prices():
    p = exponential_price(np.array([0.0, 1.0]), np.array([0.0, 0.0]), base=3.0)
    assert p[0] == 0.0 and np.isinf(p[1])


def test_price_base():
    assert price_base(10, 3, 2, 0.5) == 2 * 10 * 3 * 2 * 0.5 + 1
    with pytest.raises(ValueError):
        price_base(10, 3, 2, 0.0)
    with pytest.raises(ValueError):
        exponential_price(np.zeros(1), np.ones(1), base=0.5)
    with pytest.raises(ValueError):
        exponential_price(np.zeros(1), np.ones(1), base=float("nan"))
    # base 1 is the zero price (the offline list schedulers' earliest-completion search)
    assert np.array_equal(exponential_price(np.array([0.0, 2.0, 4.0]), np.array([4.0, 4.0, 4.0]), base=1.0),
                          np.zeros(3))


def test_geometric_rounds_cover_the_horizon_without_gaps():
    assert [tau(i) for i in range(1, 6)] == [1, 2, 4, 8, 16]
    for alpha in (1.0, 1.5, 3.0):
        rounds = geometric_rounds(100, alpha)
        assert rounds[0].start == math.ceil(alpha)
        for a, b in itertools.pairwise(rounds):
            assert a.end == b.start  # consecutive windows touch
            assert b.tau == 2 * a.tau
        assert rounds[-1].end == 100
        for r in rounds:
            assert round_of(r.start, alpha) == r.index
            assert round_of(r.end - 1, alpha) == r.index
    with pytest.raises(ValueError):
        geometric_rounds(10, 0.5)
