"""Family-free machinery of the batch primal-dual online algorithms (geometric rounds, priced ledger, max-weight).

The framework is that of Zhang, Zhou, Wu, Jiao, Li, "Online scheduling of
heterogeneous distributed machine learning jobs", Proc. ACM MobiHoc 2020 (the
conference version of R. Zhou, J. Pang, Q. Zhang, C. Wu, L. Jiao, Y. Zhong,
Z. Li, "Online scheduling algorithm for heterogeneous distributed machine
learning jobs", IEEE), and, with one window per round, of She, Wang, Zhou, Tian, "Online
scheduling of machine learning jobs in edge-cloud networks":

* A_online: rounds i = 1, 2, ... decide at a slot tied to tau_i = 2 ** (i-1)
  (`edgeopt.core.batching`) on the jobs that have arrived and are still unscheduled.
* A_dual: up to ``alpha`` iterations of A_maxweight on the jobs still
  unscheduled; iteration iota places jobs in the window
  ``[start + (iota - 1) tau_i, start + iota tau_i)`` (`dual_windows`), and
  ``alpha = floor((ln w(J_i) - ln w_min) / (ln gamma - ln(gamma - 1))) + 1``
  with ``gamma = 2 ln lambda`` (`dual_alpha`, the simulation rule).
* A_maxweight: the jobs are taken in a given order; each is priced by a
  min-cost oracle under the current resource prices; it is accepted iff its
  utility ``u_j = w_j - cost > 0``, and its reservation raises the prices
  (`max_weight_batch`).
* Prices: ``delta = (lambda ** (beta / C) - 1) / C`` per natural unit of a
  resource of capacity C with ``beta`` in use (`unit_prices`), i.e. the
  exponential price of eq. (11) with each resource measured in units of its
  capacity; ``lambda = 2 T H R F + 1`` (`edgeopt.core.price_base`).
  `PricedLedger` reads these prices off a `CapacityLedger`.

Nothing here knows a family's jobs or placements: the family supplies the
weight of a job, the min-cost oracle (which reads the prices from its
`PricedLedger`) and the commit that reserves a placement.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

import numpy as np

from edgeopt.core.ledger import CapacityLedger

J = TypeVar("J")
P = TypeVar("P")


# ---- prices ---------------------------------------------------------------------------------
def unit_prices(usage: np.ndarray, capacity: np.ndarray, lam: float) -> np.ndarray:
    """``(lam ** (usage / capacity) - 1) / capacity`` element-wise (0 where capacity is 0).

    ``capacity`` broadcasts against ``usage`` (e.g. ``[S, 1]`` against ``[S, T]``).
    A zero-capacity resource is priced 0: nothing that needs it fits there anyway.
    """
    if lam <= 1:
        raise ValueError(f"lambda must be > 1, got {lam}")
    used = np.asarray(usage, dtype=float)
    cap = np.asarray(capacity, dtype=float)
    safe = np.where(cap > 0, cap, 1.0)
    return np.where(cap > 0, np.expm1(used / safe * math.log(lam)) / safe, 0.0)


class PricedLedger:
    """A `CapacityLedger` whose resources are priced by `unit_prices` with base ``lam``.

    The prices are a function of the ledger's usage, so they rise as soon as a
    reservation is written into the ledger (A_maxweight's price update).
    """

    def __init__(self, ledger: CapacityLedger, lam: float) -> None:
        if lam <= 1:
            raise ValueError(f"lambda must be > 1, got {lam}")
        self.ledger = ledger
        self.lam = float(lam)

    def prices(self, resource: int, lo: int, hi: int, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """``[servers, hi - lo]`` price of one natural unit of ``resource`` per server and slot."""
        cap = self.ledger.capacity[rows, resource, None]
        return unit_prices(self.ledger.usage[rows, resource, lo:hi], cap, self.lam)

    def free(self, resource: int, lo: int, hi: int, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """``[servers, hi - lo]`` free capacity of ``resource`` per server and slot."""
        return self.ledger.capacity[rows, resource, None] - self.ledger.usage[rows, resource, lo:hi]

    def dual_value(self, lo: int, hi: int) -> float:
        """``sum_t sum_s sum_r delta * C`` over ``[lo, hi)``: the price part of the dual objective."""
        cap = self.ledger.capacity[:, :, None]
        return float((unit_prices(self.ledger.usage[:, :, lo:hi], cap, self.lam) * cap).sum())


# ---- A_dual: iterations and alpha --------------------------------------------------------------
def dual_alpha(total_weight: float, w_min: float, lam: float) -> int:
    """``floor((ln w(J_i) - ln w_min) / (ln gamma - ln(gamma - 1))) + 1`` with ``gamma = 2 ln lam``.

    The number of A_maxweight iterations A_dual runs in a round (the rule the
    hetero paper uses in its simulations). When ``gamma <= 1`` the
    denominator is undefined; then 1 is returned (callers cap alpha anyway).
    """
    if total_weight <= 0 or w_min <= 0:
        raise ValueError("weights must be > 0")
    gamma = 2.0 * math.log(lam)
    if gamma <= 1.0 + 1e-12:
        return 1
    return math.floor((math.log(total_weight) - math.log(w_min)) / (math.log(gamma) - math.log(gamma - 1))) + 1


def dual_windows(start: int, tau: int, alpha: int, horizon: int) -> list[tuple[int, int]]:
    """Windows of A_dual's iterations: ``[start + (k-1) tau, start + k tau)`` for k = 1..alpha, clipped at T.

    Windows that would start at or after ``horizon`` are dropped.
    """
    if tau < 1 or alpha < 1:
        raise ValueError(f"tau and alpha must be >= 1, got {tau}, {alpha}")
    out = []
    for k in range(1, alpha + 1):
        lo = start + (k - 1) * tau
        if lo >= horizon:
            break
        out.append((lo, min(horizon, start + k * tau)))
    return out


# ---- A_maxweight and A_dual ---------------------------------------------------------------------
@dataclasses.dataclass
class MaxWeightOutcome(Generic[P]):
    """What one A_maxweight pass decided.

    Attributes:
        accepted: job key -> the placement it got (x_jl = 1), in acceptance order.
        utility: every job key -> ``u_j = max(0, w_j - cost_j)`` at the time it was priced.
        cost: every job key -> its minimum cost at that time (inf when nothing fitted).
    """

    accepted: dict[Hashable, P]
    utility: dict[Hashable, float]
    cost: dict[Hashable, float]


def max_weight_batch(
    jobs: Sequence[J],
    *,
    weight: Callable[[J], float],
    min_cost: Callable[[J], tuple[float, P] | None],
    commit: Callable[[J, P], None],
    key: Callable[[J], Hashable] = lambda j: j,
) -> MaxWeightOutcome[P]:
    """A_maxweight: price every job in the given order; take it iff ``w_j - cost > 0``.

    Args:
        jobs: the batch, in the order to consider (the order is the caller's choice).
        weight: w_j.
        min_cost: the cheapest placement of a job under the current prices,
            ``(cost, placement)``, or None when it fits nowhere in the window.
        commit: reserves an accepted placement (which raises the prices the
            next jobs see).
        key: the job's key in the outcome.
    """
    out: MaxWeightOutcome[P] = MaxWeightOutcome({}, {}, {})
    for j in jobs:
        found = min_cost(j)
        cost = math.inf if found is None else float(found[0])
        w = float(weight(j))
        out.cost[key(j)] = cost
        out.utility[key(j)] = max(0.0, w - cost)
        if found is not None and w - cost > 0:
            commit(j, found[1])
            out.accepted[key(j)] = found[1]
    return out


def dual_schedule(
    jobs: Sequence[J],
    windows: Sequence[tuple[int, int]],
    *,
    weight: Callable[[J], float],
    min_cost: Callable[[J, tuple[int, int]], tuple[float, P] | None],
    commit: Callable[[J, P], None],
    key: Callable[[J], Hashable] = lambda j: j,
) -> tuple[dict[Hashable, P], int]:
    """A_dual: A_maxweight over ``windows`` in turn, each time on the jobs not accepted yet.

    Stops early when every job is accepted. Returns ``({key: placement}, iterations run)``.
    """
    done: dict[Hashable, P] = {}
    iterations = 0
    for window in windows:
        rest = [j for j in jobs if key(j) not in done]
        if not rest:
            break
        iterations += 1
        out = max_weight_batch(rest, weight=weight, min_cost=lambda j, w=window: min_cost(j, w),
                               commit=commit, key=key)
        done.update(out.accepted)
    return done, iterations
