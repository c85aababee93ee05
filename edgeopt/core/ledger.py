"""Capacity ledger: resource usage per server, resource and slot, as numpy arrays.

Every family keeps its servers' capacities and what has been reserved on them
in one `CapacityLedger`. The hot operations are vectorised over servers and
start slots, so that an online algorithm can price all placements of a job at
once instead of looping over servers and slots in Python.

Shapes: ``capacity`` is ``[S, R]`` (constant over time) and ``usage`` is
``[S, R, T]``. A reservation of ``demand`` on server ``s`` over the half-open
window ``[start, end)`` adds ``demand`` to ``usage[s, :, start:end]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

# Tolerance for "fits": demand and capacities are floats (GB, Mbps).
EPS = 1e-9


class CapacityLedger:
    """Usage and capacity of ``S`` servers x ``R`` resources over ``T`` slots.

    Args:
        capacity: array ``[S, R]`` of per-slot capacities (C_h^r in the papers).
        horizon: number of slots ``T``.
        resources: optional names of the ``R`` resources (for messages).
    """

    def __init__(self, capacity: np.ndarray, horizon: int, resources: Sequence[str] | None = None) -> None:
        cap = np.asarray(capacity, dtype=float)
        if cap.ndim != 2:
            raise ValueError(f"capacity must be [S, R], got shape {cap.shape}")
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        self.capacity = cap
        self.horizon = int(horizon)
        self.resources = list(resources) if resources is not None else [f"r{i}" for i in range(cap.shape[1])]
        self.usage = np.zeros((cap.shape[0], cap.shape[1], self.horizon), dtype=float)

    @property
    def n_servers(self) -> int:
        return self.capacity.shape[0]

    @property
    def n_resources(self) -> int:
        return self.capacity.shape[1]

    def copy(self) -> CapacityLedger:
        other = CapacityLedger(self.capacity.copy(), self.horizon, self.resources)
        other.usage = self.usage.copy()
        return other

    # ---- reading -----------------------------------------------------------------
    def free(self) -> np.ndarray:
        """Free capacity ``[S, R, T]``."""
        return self.capacity[:, :, None] - self.usage

    def window_peak(self, length: int) -> np.ndarray:
        """Peak usage over every window of ``length`` slots: ``[S, R, T - length + 1]``.

        ``window_peak(L)[s, r, t] = max(usage[s, r, t:t+L])``: what a job that
        holds resources over ``[t, t+L)`` has to fit under.
        """
        if not 1 <= length <= self.horizon:
            raise ValueError(f"window length must be in [1, {self.horizon}], got {length}")
        return sliding_window_view(self.usage, length, axis=2).max(axis=3)

    def window_free(self, length: int) -> np.ndarray:
        """Free capacity that stays free over every window: ``[S, R, T - length + 1]``."""
        return self.capacity[:, :, None] - self.window_peak(length)

    def fits_over_window(self, demand: np.ndarray, start: int, end: int) -> np.ndarray:
        """Which servers can take ``demand`` over the slots ``[start, end)``.

        Args:
            demand: ``[R]`` (same on every server) or ``[S, R]``.
        Returns:
            bool array ``[S]``.
        """
        self._check_window(start, end)
        d = np.asarray(demand, dtype=float)
        peak = self.usage[:, :, start:end].max(axis=2)
        return np.all(peak + d <= self.capacity + EPS, axis=-1)

    def max_copies(self, unit_demand: np.ndarray, start: int, end: int) -> np.ndarray:
        """How many copies of ``unit_demand`` ``[R]`` fit on each server over ``[start, end)``: ``[S]`` ints."""
        self._check_window(start, end)
        d = np.asarray(unit_demand, dtype=float)
        free = self.capacity - self.usage[:, :, start:end].max(axis=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_res = np.where(d > 0, np.floor((free + EPS) / np.where(d > 0, d, 1.0)), np.inf)
        copies = per_res.min(axis=1)
        copies = np.where(np.isinf(copies), np.iinfo(np.int64).max // 4, copies)
        return np.maximum(copies, 0).astype(np.int64)

    # ---- writing -----------------------------------------------------------------
    def reserve(self, server: int, demand: np.ndarray, start: int, end: int, *, check: bool = True) -> None:
        """Add ``demand`` ``[R]`` on ``server`` over ``[start, end)``.

        Raises ValueError (and changes nothing) if ``check`` and it does not fit.
        """
        self._check_window(start, end)
        d = np.asarray(demand, dtype=float)
        if check:
            peak = self.usage[server, :, start:end].max(axis=1)
            if np.any(peak + d > self.capacity[server] + EPS):
                bad = int(np.argmax(peak + d - self.capacity[server]))
                raise ValueError(
                    f"reservation exceeds capacity of server {server}, resource {self.resources[bad]}"
                )
        self.usage[server, :, start:end] += d[:, None]

    def reserve_many(self, counts: np.ndarray, unit_demand: np.ndarray, start: int, end: int) -> None:
        """Reserve ``counts[s]`` copies of ``unit_demand`` ``[R]`` on every server ``s`` at once."""
        self._check_window(start, end)
        add = np.asarray(counts, dtype=float)[:, None] * np.asarray(unit_demand, dtype=float)[None, :]
        peak = self.usage[:, :, start:end].max(axis=2)
        if np.any(peak + add > self.capacity + EPS):
            raise ValueError("reservation exceeds capacity")
        self.usage[:, :, start:end] += add[:, :, None]

    def release(self, server: int, demand: np.ndarray, start: int, end: int) -> None:
        """Undo a `reserve` (used by preemptive policies)."""
        self._check_window(start, end)
        self.usage[server, :, start:end] -= np.asarray(demand, dtype=float)[:, None]

    def _check_window(self, start: int, end: int) -> None:
        if not 0 <= start < end <= self.horizon:
            raise ValueError(f"window [{start}, {end}) outside [0, {self.horizon})")
