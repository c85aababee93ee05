"""Exponential price functions of the primal-dual online algorithms.

Both the hetero paper (Zhou et al., eq. 11) and the edgecloud paper (She et
al., eqs. 7-8, read from the garbled print) price a resource by how full it is:

    price(used) = base ** (used / capacity) - 1

which is 0 on an idle resource and ``base - 1`` on a full one. ``base`` is
``lambda = 2*T*H*R*F + 1`` (hetero) or ``theta = 2*T*S*U*F + 1`` (edgecloud),
large enough that a full resource is never worth taking. ``base = 1`` prices every resource at 0: the
offline list schedulers search with it for the earliest completion (every option then costs the same).
"""

from __future__ import annotations

import numpy as np


def exponential_price(used: np.ndarray, capacity: np.ndarray, base: float) -> np.ndarray:
    """``base ** (used / capacity) - 1`` element-wise; zero-capacity resources price at +inf when used (at 0
    when ``base`` is 1, the zero price)."""
    used = np.asarray(used, dtype=float)
    cap = np.asarray(capacity, dtype=float)
    if not base >= 1:
        raise ValueError(f"price base must be >= 1, got {base}")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        frac = np.where(cap > 0, used / np.where(cap > 0, cap, 1.0), np.where(used > 0, np.inf, 0.0))
        return np.power(base, frac) - 1.0


def price_base(horizon: int, n_servers: int, n_kinds: int, f_ratio: float) -> float:
    """``2 * T * S * K * F + 1``: the base lambda / theta of the papers.

    Args:
        horizon: T, the number of slots.
        n_servers: H (hetero) or S (edgecloud).
        n_kinds: R resources (hetero) or U / V worker / PS types (edgecloud).
        f_ratio: F, an upper bound of a job's weight (utility) per unit of
            resource it consumes in any feasible schedule.
    """
    if f_ratio <= 0:
        raise ValueError(f"F must be > 0, got {f_ratio}")
    return 2.0 * horizon * n_servers * n_kinds * f_ratio + 1.0
