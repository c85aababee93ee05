import math

import numpy as np
import pytest

from edgeopt.core import CapacityLedger
from edgeopt.core.maxweight import (
    PricedLedger,
    dual_alpha,
    dual_schedule,
    dual_windows,
    max_weight_batch,
    unit_prices,
)


def test_unit_prices_endpoints_and_zero_capacity():
    cap = np.array([4.0, 4.0, 0.0])
    p = unit_prices(np.array([0.0, 4.0, 0.0]), cap, lam=101.0)
    assert p[0] == 0.0
    assert p[1] == pytest.approx(100.0 / 4.0)  # full: (lambda - 1) / C per unit
    assert p[2] == 0.0
    half = unit_prices(np.array([2.0]), np.array([4.0]), lam=101.0)
    assert half[0] == pytest.approx((math.sqrt(101.0) - 1) / 4.0)
    with pytest.raises(ValueError):
        unit_prices(np.zeros(1), np.ones(1), lam=1.0)


def test_priced_ledger_prices_rise_with_a_reservation():
    led = CapacityLedger(np.array([[2.0, 1.0], [4.0, 1.0]]), horizon=5)
    pl = PricedLedger(led, lam=9.0)
    assert np.all(pl.prices(0, 0, 5) == 0)
    led.reserve(0, np.array([1.0, 0.0]), 1, 3)
    p = pl.prices(0, 0, 5)
    assert p[0].tolist() == pytest.approx([0, 2.0 / 2, 2.0 / 2, 0, 0])  # 9 ** 0.5 - 1 = 2, per unit / 2
    assert np.all(p[1] == 0)
    assert pl.free(0, 0, 5)[0].tolist() == [2, 1, 1, 2, 2]
    # dual value: sum delta * C = 2 slots * 2 = 4
    assert pl.dual_value(0, 5) == pytest.approx(4.0)


def test_dual_alpha_matches_the_rule():
    lam = math.exp(1.5)  # gamma = 3, ln 3 - ln 2 = 0.405...
    assert dual_alpha(8.0, 1.0, lam) == math.floor(math.log(8) / math.log(1.5)) + 1 == 6
    assert dual_alpha(1.0, 1.0, lam) == 1  # a single job: one iteration
    assert dual_alpha(5.0, 1.0, 1.5) == 1  # gamma <= 1


def test_dual_windows_clip_and_stop_at_the_horizon():
    assert dual_windows(4, 4, 3, 100) == [(4, 8), (8, 12), (12, 16)]
    assert dual_windows(4, 4, 10, 14) == [(4, 8), (8, 12), (12, 14)]
    with pytest.raises(ValueError):
        dual_windows(0, 0, 1, 5)


def _toy(led: CapacityLedger, pl: PricedLedger):
    """Jobs need the one resource of server 0 for one slot; a job's cost is the price at its slot."""

    def min_cost(job, window):
        lo, hi = window
        price = pl.prices(0, lo, hi)[0]
        free = pl.free(0, lo, hi)[0]
        ok = np.flatnonzero(free >= 1)
        if len(ok) == 0:
            return None
        t = int(ok[np.argmin(price[ok])])
        return float(price[t]), lo + t

    def commit(job, slot):
        led.reserve(0, np.array([1.0]), slot, slot + 1)

    return min_cost, commit


def test_max_weight_accepts_while_utility_is_positive():
    led = CapacityLedger(np.array([[2.0]]), horizon=4)
    pl = PricedLedger(led, lam=9.0)  # half full: price (3 - 1) / 2 = 1
    min_cost, commit = _toy(led, pl)
    out = max_weight_batch(["a", "b", "c"], weight=lambda j: 1.0, min_cost=lambda j: min_cost(j, (0, 1)),
                           commit=commit)
    # a: price 0 -> taken; b: price 1 = w -> u = 0, refused; c: same
    assert list(out.accepted) == ["a"]
    assert out.cost == {"a": 0.0, "b": pytest.approx(1.0), "c": pytest.approx(1.0)}
    assert out.utility["b"] == 0.0 and out.utility["a"] == 1.0
    heavy = max_weight_batch(["d"], weight=lambda j: 2.0, min_cost=lambda j: min_cost(j, (0, 1)), commit=commit)
    assert list(heavy.accepted) == ["d"]  # weight 2 > price 1
    assert led.usage[0, 0, 0] == 2


def test_dual_schedule_uses_later_windows_for_the_rest():
    led = CapacityLedger(np.array([[1.0]]), horizon=4)
    pl = PricedLedger(led, lam=9.0)
    min_cost, commit = _toy(led, pl)
    done, its = dual_schedule(["a", "b", "c"], dual_windows(0, 1, 5, 4), weight=lambda j: 1.0,
                              min_cost=min_cost, commit=commit)
    assert done == {"a": 0, "b": 1, "c": 2}
    assert its == 3  # stops once every job is placed
