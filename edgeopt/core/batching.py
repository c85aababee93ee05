"""Geometric batching: the rounds of the papers' online algorithms.

Round ``i`` (from 1) has length ``tau_i = 2 ** (i - 1)``. The hetero paper's
A_online gathers the jobs that arrived by ``alpha * tau_i`` and runs their
schedule in ``[alpha * tau_i, alpha * tau_{i+1}]``; the edgecloud paper does
the same with ``alpha = 1``.
"""

from __future__ import annotations

import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class Round:
    """One geometric round.

    Attributes:
        index: i >= 1.
        tau: tau_i = 2 ** (i - 1).
        start: first slot of the round's window, ``ceil(alpha * tau_i)``.
        end: first slot after the window, ``ceil(alpha * tau_{i+1})``.
    """

    index: int
    tau: int
    start: int
    end: int


def tau(i: int) -> int:
    """tau_i = 2 ** (i - 1) for i >= 1."""
    if i < 1:
        raise ValueError(f"round index must be >= 1, got {i}")
    return 2 ** (i - 1)


def geometric_rounds(horizon: int, alpha: float = 1.0) -> list[Round]:
    """Every round whose window starts before ``horizon``.

    Windows are clipped at ``horizon``. ``alpha >= 1`` stretches every window
    (the hetero paper's alpha); it is 1 in the edgecloud paper.
    """
    if alpha < 1:
        raise ValueError(f"alpha must be >= 1, got {alpha}")
    rounds: list[Round] = []
    i = 1
    while True:
        start = math.ceil(alpha * tau(i))
        if start >= horizon:
            return rounds
        end = min(horizon, math.ceil(alpha * tau(i + 1)))
        rounds.append(Round(index=i, tau=tau(i), start=start, end=end))
        i += 1


def round_of(slot: int, alpha: float = 1.0) -> int:
    """Index i of the round whose window ``[alpha tau_i, alpha tau_{i+1})`` holds ``slot`` (0 before round 1)."""
    i = 0
    while math.ceil(alpha * tau(i + 1)) <= slot:
        i += 1
    return i
