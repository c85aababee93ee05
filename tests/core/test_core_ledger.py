import numpy as np
import pytest

from edgeopt.core import CapacityLedger


def _brute_window_peak(usage, length):
    S, R, T = usage.shape
    out = np.zeros((S, R, T - length + 1))
    for t in range(T - length + 1):
        out[:, :, t] = usage[:, :, t : t + length].max(axis=2)
    return out


def test_reserve_fits_and_release():
    led = CapacityLedger(np.array([[4.0, 10.0], [2.0, 5.0]]), horizon=6, resources=["gpu", "mem"])
    assert led.fits_over_window(np.array([3.0, 5.0]), 0, 6).tolist() == [True, False]
    led.reserve(0, np.array([3.0, 5.0]), 1, 4)
    assert led.fits_over_window(np.array([1.0, 5.0]), 0, 6).tolist() == [True, True]
    assert led.fits_over_window(np.array([2.0, 5.0]), 0, 6).tolist() == [False, True]
    assert led.fits_over_window(np.array([2.0, 1.0]), 0, 2).tolist() == [False, True]
    assert led.fits_over_window(np.array([2.0, 1.0]), 4, 6).tolist() == [True, True]
    with pytest.raises(ValueError, match="server 0, resource gpu"):
        led.reserve(0, np.array([2.0, 0.0]), 3, 5)
    assert led.usage[0, 0, 4] == 0.0  # the failed reservation changed nothing
    led.release(0, np.array([3.0, 5.0]), 1, 4)
    assert not led.usage.any()


def test_window_free_matches_brute_force():
    rng = np.random.default_rng(0)
    led = CapacityLedger(np.full((3, 2), 10.0), horizon=12)
    for _ in range(15):
        s, a = rng.integers(3), rng.integers(11)
        led.usage[s, :, a : a + rng.integers(1, 4)] += rng.random(2)[:, None]
    for length in (1, 3, 12):
        assert np.allclose(led.window_peak(length), _brute_window_peak(led.usage, length))
        assert np.allclose(led.window_free(length), 10.0 - _brute_window_peak(led.usage, length))


def test_max_copies_and_reserve_many():
    led = CapacityLedger(np.array([[8.0, 32.0], [4.0, 8.0], [0.0, 64.0]]), horizon=5)
    unit = np.array([2.0, 6.0])
    assert led.max_copies(unit, 0, 5).tolist() == [4, 1, 0]
    led.reserve_many(np.array([3, 1, 0]), unit, 0, 2)
    assert led.max_copies(unit, 0, 5).tolist() == [1, 0, 0]
    assert led.max_copies(unit, 2, 5).tolist() == [4, 1, 0]
    with pytest.raises(ValueError):
        led.reserve_many(np.array([2, 0, 0]), unit, 1, 3)
    # zero demand on a resource does not limit the count
    assert led.max_copies(np.array([0.0, 8.0]), 2, 5).tolist()[2] == 8


def test_bad_windows_and_shapes():
    led = CapacityLedger(np.ones((1, 1)), horizon=3)
    for start, end in [(-1, 2), (2, 2), (0, 4)]:
        with pytest.raises(ValueError):
            led.fits_over_window(np.ones(1), start, end)
    with pytest.raises(ValueError):
        CapacityLedger(np.ones(3), horizon=3)
    with pytest.raises(ValueError):
        led.window_peak(4)
