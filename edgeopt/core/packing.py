"""Packing rows: valid inequalities that give a pooled relaxation back some of the servers' fragmentation.

A relaxation that pools the servers per resource lets any mix of demand vectors fill every unit of a
resource. On real servers that is not so: a 4-GPU, 11-CPU worker cannot use all the GPUs of a server with
fewer than 11 CPUs per 4 GPUs. For a set S of demand vectors (worker types) and a resource r, let

    beta_h(S, r) = max { sum_{m in S} x_m e[m, r] : sum_{m in S} x_m e[m] <= C_h, x integer >= 0 }

be the most of r that vectors of S alone can hold on server h. In every slot of every schedule the vectors
of S on server h fit there together with everything else, so

    sum_{m in S} (number of type-m vectors running) e[m, r] <= sum_h beta_h(S, r)            (packing row)

holds: a valid row for the pooled relaxation, tighter than the pooled capacity sum_h C_h[r] whenever some
server cannot be filled with S alone. beta_h is an integer knapsack with several capacity constraints
(Martello and Toth, "Knapsack Problems: Algorithms and Computer Implementations", Wiley 1990).

`packing_rows` builds a small family of such rows: for each resource r and each other resource r', the
vectors that use r sorted by how much r' they need per unit of r (most first), and the nested prefixes of
that order (the vectors that crowd r' first are those that cannot fill r where r' is scarce). Only rows
strictly below the pooled capacity are kept, and a row is dropped when a row over a larger set of the same
resource has a limit no higher (it implies it). `max_packed` computes beta_h exactly by a depth-first
branch and bound (vectors dominated by another dropped first; bounds rounded down to the gcd of integer
values); past its node limit it returns a valid upper bound instead (the root's), so a row is always
valid, only weaker. Everything is deterministic (no solver, no clock): a certificate check that
rebuilds the relaxation gets the same rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

#: Nodes of one `max_packed` search before it settles for its root bound (a valid, weaker value).
NODE_LIMIT = 2_000


def _upper(cap: Sequence[float], demand: Sequence[Sequence[float]], value: Sequence[float]) -> float:
    """An upper bound on the value that fits ``cap``: per resource, its capacity times the best value per
    unit of it among ``demand``'s vectors (each resource alone is a relaxation)."""
    best = math.inf
    for r, c in enumerate(cap):
        ratio = 0.0
        for d, v in zip(demand, value, strict=True):
            if d[r] <= 0:
                break
            ratio = max(ratio, v / d[r])
        else:
            best = min(best, c * ratio)
    return best if value else 0.0


def max_packed(cap: Any, demand: Any, value: Any, *, tol: float = 1e-9, node_limit: int = NODE_LIMIT
               ) -> tuple[float, bool]:
    """(most ``value`` of integer copies of ``demand``'s rows that fit ``cap``, exact?).

    ``cap`` [R], ``demand`` [K, R] >= 0, ``value`` [K] >= 0. A vector fits when every resource's use is at
    most ``cap * (1 + tol) + tol`` (the validators' slack, so the result is never below what they accept).
    A vector of positive value that uses nothing is refused (the value would be unbounded). When the
    search passes ``node_limit`` nodes, the returned value is the root's upper bound and ``exact`` is False.
    Pure Python on scalars: the vectors are few (one per worker type) and numpy's per-call cost would
    dominate.
    """
    capv = np.asarray(cap, dtype=float).reshape(-1)
    R = capv.size
    dem = np.asarray(demand, dtype=float).reshape(-1, R)
    val = np.asarray(value, dtype=float).reshape(-1)
    keep = val > 0
    dem, val = dem[keep], val[keep]
    if np.any(dem.max(axis=1, initial=0.0) <= 0):
        raise ValueError("a vector of positive value demands nothing: the packing is unbounded")
    # a vector that demands at least as much as another and is worth no more is never needed: the other can
    # take each of its copies (of equal vectors the first stays)
    K = val.size
    dominated = {k for k in range(K) for i in range(K) if i != k and val[i] >= val[k] and np.all(dem[i] <= dem[k])
                 and (val[i] > val[k] or np.any(dem[i] < dem[k]) or i < k)}
    order = [k for k in np.argsort(-val, kind="stable").tolist() if k not in dominated]  # best value first
    vs = [float(val[k]) for k in order]
    ds = [tuple(float(x) for x in dem[k]) for k in order]
    top = [float(c) * (1.0 + tol) + tol for c in capv]
    if not vs:
        return 0.0, True
    K = len(vs)
    step = _common_step(vs)
    best = 0.0
    nodes = 0

    def dfs(i: int, left: list[float], got: float) -> bool:
        nonlocal best, nodes
        nodes += 1
        if nodes > node_limit:
            return False
        best = max(best, got)
        if i == K or got + _floor(_upper(left, ds[i:], vs[i:]), step) <= best + 1e-12:
            return True
        d = ds[i]
        most = min(math.floor(left[r] / d[r]) for r in range(R) if d[r] > 0)
        if i == K - 1:  # the last vector: as many copies as fit
            best = max(best, got + most * vs[i])
            return True
        for n in range(most, -1, -1):
            if not dfs(i + 1, [left[r] - n * d[r] for r in range(R)], got + n * vs[i]):
                return False
        return True

    if dfs(0, top, 0.0):
        return best, True
    return _floor(_upper(top, ds, vs), step), False


def _common_step(values: Sequence[float]) -> float | None:
    """The gcd of ``values`` when all are integers (every packed total is a multiple of it), else None."""
    if not all(float(v).is_integer() for v in values):
        return None
    return float(math.gcd(*(int(v) for v in values)))


def _floor(bound: float, step: float | None) -> float:
    """``bound`` rounded down to a multiple of ``step`` (a packed total is one), when there is a step."""
    if step is None or not math.isfinite(bound):
        return bound
    return step * math.floor(bound / step + 1e-9)


def packing_rows(capacity: Any, demand: Any, resources: Sequence[int] | None = None
                 ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Packing rows (module docstring) for servers ``capacity`` [H, R] and vector types ``demand`` [M, R],
    on the resources ``resources`` (default: every one).

    Returns (``weights`` [S, M]: the row's use per copy of each type, ``limits`` [S]: its right-hand side,
    ``names``): a row reads sum_m weights[s, m] * (copies of type m running) <= limits[s]. Only rows whose
    limit is below the pooled capacity of their resource are returned, each set once."""
    C = np.asarray(capacity, dtype=float)
    e = np.asarray(demand, dtype=float)
    R = C.shape[1]
    M = e.shape[0]
    uniq, inv = np.unique(C, axis=0, return_inverse=True)
    count = np.bincount(np.asarray(inv).reshape(-1), minlength=len(uniq))
    limit: dict[tuple[int, tuple[int, ...]], float] = {}  # every (resource, set) once, whichever order reaches it
    found: dict[tuple[int, tuple[int, ...]], float] = {}
    for r in (range(R) if resources is None else resources):
        users = [m for m in range(M) if e[m, r] > 0]
        pooled = float(C[:, r].sum())
        for r2 in range(R):
            if r2 == r or not users:
                continue
            ranked = sorted(users, key=lambda m: (-e[m, r2] / e[m, r], m))
            for k in range(1, len(ranked) + 1):
                key = (r, tuple(sorted(ranked[:k])))
                if key in limit:
                    continue
                idx = list(key[1])
                limit[key] = sum(int(c) * max_packed(cap, e[idx], e[idx, r])[0]
                                 for cap, c in zip(uniq, count, strict=True))
                if limit[key] < pooled * (1 - 1e-9) - 1e-9:
                    found[key] = limit[key]
    # a row is implied by one over a larger set of the same resource with a limit no higher
    kept = [(r, S) for (r, S), lim in found.items() if not any(
        r2 == r and S2 != S and set(S) <= set(S2) and lim2 <= lim for (r2, S2), lim2 in found.items())]
    weights, limits, names = [], [], []
    for r, S in kept:
        w = np.zeros(M)
        w[list(S)] = e[list(S), r]
        weights.append(w)
        limits.append(found[(r, S)])
        names.append(f"packing[{r}:{','.join(map(str, S))}]")
    return (np.array(weights).reshape(-1, M), np.array(limits, dtype=float), names)


def most_crowded(areas: Any, capacity: Any, horizon: int) -> int:
    """The resource the jobs' work crowds most: the largest sum over jobs of their least area (slots x
    demand, the minimum over the job's modes, ``areas`` [J, R]) per unit of pooled capacity over the horizon
    (``capacity`` [R]); ties to the lower index.

    Why one resource: every packing row adds its demand to every slot of every column of its vector types,
    so rows cost column-generation time. On hetero's ``paper`` preset (seed 0) the rows of the GPUs alone gave
    35,381,751 in 13 s of CPU, those of all four resources 35,382,085 in 68 s; the GPUs are the most crowded
    resource there (0.25 of the pooled GPU-slots against 0.10-0.11 for CPU and memory)."""
    use = np.asarray(areas, dtype=float).reshape(-1, np.asarray(capacity).size).sum(axis=0)
    cap = np.asarray(capacity, dtype=float) * max(int(horizon), 1)
    share = np.where(cap > 0, use / np.where(cap > 0, cap, 1.0), 0.0)
    return int(np.argmax(share))


__all__ = ["NODE_LIMIT", "max_packed", "most_crowded", "packing_rows"]
