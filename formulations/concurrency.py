"""Valid rows on how many items of each kind can run together on one capacitated machine: the facets of the
integer hull of a knapsack with few item kinds.

A time-indexed model states capacity per resource: sum_k n_k a_k[r] <= C[r], where n_k counts the items of kind
k running in a slot. Its LP relaxation takes fractions of items: two tasks that each need the whole GPU of a
cluster can both run at one half next to a one-GPU task. The integer counts that fit,
P = {n in Z^K, n >= 0 : sum_k n_k a_k <= C}, have a convex hull whose facets cut those fractions off (for
kinds needing 1 and 4 of 4 GPUs and 2 of 6 CPUs, ``n_1 + 3 n_4 <= 3``: at most three small items, or one big).
Every integer schedule satisfies every such row in every slot, so adding them to a relaxation keeps it a
relaxation.

`hull_rows` enumerates P (refused above a few thousand points or kinds) and lets qhull find the facets; each
facet's coefficients are rounded to small integers and its right-hand side is then recomputed *exactly* as
the maximum of the row over P (integer arithmetic), so a row is valid whatever the floating point of qhull
did: at worst it is a little weaker than the facet. Rows that only restate one resource's own row (up to a
positive factor) are dropped.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

#: Most item kinds (the hull's dimension) and feasible count vectors enumerated; above either, no rows.
MAX_KINDS = 6
MAX_POINTS = 5000
#: Largest denominator accepted when a facet's coefficients are turned into integers.
MAX_DENOMINATOR = 12


def feasible_counts(demands: Sequence[Sequence[int]], capacity: Sequence[int], *,
                    max_points: int = MAX_POINTS) -> np.ndarray | None:
    """``[P, K]`` every integer count vector n >= 0 with sum_k n_k demands[k] <= capacity; None when there are
    more than ``max_points`` (or an item needs nothing of every resource: then counts are unbounded)."""
    A = np.asarray(demands, dtype=np.int64).reshape(len(demands), -1)
    cap = np.asarray(capacity, dtype=np.int64)
    if (A.sum(axis=1) <= 0).any():
        return None
    most = [int(min(cap[r] // A[k, r] for r in range(A.shape[1]) if A[k, r] > 0)) for k in range(A.shape[0])]
    if math.prod(m + 1 for m in most) > 50 * max_points:
        return None
    pts = []
    for n in itertools.product(*(range(m + 1) for m in most)):
        if (np.asarray(n, dtype=np.int64) @ A <= cap).all():
            pts.append(n)
            if len(pts) > max_points:
                return None
    return np.asarray(pts, dtype=np.int64).reshape(len(pts), A.shape[0])


def _integer_row(a: np.ndarray) -> tuple[int, ...] | None:
    """``a`` (>= 0 after clipping float noise) scaled to small integers, or None."""
    a = np.where(np.abs(a) < 1e-9, 0.0, a)
    if (a < 0).any() or not (a > 0).any():
        return None
    a = a / a[a > 0].min()
    fr = [Fraction(float(x)).limit_denominator(MAX_DENOMINATOR) for x in a]
    den = math.lcm(*(f.denominator for f in fr))
    ints = [int(f * den) for f in fr]
    g = math.gcd(*ints)
    return tuple(v // g for v in ints)


def hull_rows(demands: Sequence[Sequence[int]], capacity: Sequence[int], *, max_kinds: int = MAX_KINDS,
              max_points: int = MAX_POINTS) -> list[tuple[tuple[int, ...], int]]:
    """Valid rows ``sum_k coef[k] n_k <= rhs`` on the counts n of items of each kind running together
    (module docstring), sorted by coefficients; deterministic for given data.

    ``demands[k]``: what one item of kind k needs of each resource; ``capacity``: the machine's. Returns []
    when there are more than ``max_kinds`` kinds, too many feasible count vectors, or the hull is flat.
    """
    K = len(demands)
    if K == 0 or K > max_kinds:
        return []
    pts = feasible_counts(demands, capacity, max_points=max_points)
    if pts is None or len(pts) <= K:
        return []
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(pts.astype(float))
    except (QhullError, ValueError):  # a flat set of points (e.g. an item that never fits): no facets to add
        return []
    A = np.asarray(demands, dtype=np.int64).reshape(K, -1)
    own = set()
    for r in range(A.shape[1]):  # each resource's own row, scaled down, so that it is not added again
        row = _integer_row(A[:, r].astype(float))
        if row is not None:
            own.add((row, int(max(np.asarray(row) @ p for p in pts))))
    out: dict[tuple[int, ...], int] = {}
    for eq in hull.equations:
        coef = _integer_row(eq[:-1])
        if coef is None:
            continue
        rhs = int((pts @ np.asarray(coef, dtype=np.int64)).max())  # exact: valid by construction
        if (coef, rhs) in own or rhs <= 0:
            continue
        if coef not in out or rhs < out[coef]:
            out[coef] = rhs
    return sorted(out.items())
