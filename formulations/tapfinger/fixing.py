"""Reduced-cost fixing for the tapfinger MILP, the certified bound as the proof when it meets the incumbent
(`formulations.fixing` explains the rule).

The MILP's variable ``x[j, n, a, s]`` (task j on cluster n with Pareto allocation a from timestep s) *is* the
column (mode k, start s) of the certified relaxation (``lpbound.py``): both list, per task, the reachable
clusters in order and their Pareto allocations in order, keeping those that fit the horizon from the arrival
(`data.options`, `lpbound.relaxation`). So every schedule using that variable costs at least
L(pi) + rc_j(k, s) (minus the reduced costs' float error), and a variable whose value passes the cutoff is
left out of the model. The relaxation is ``ti_lp_hull`` (the concurrency rows: a bound 3-6 % higher than
``ti_lp`` on the ``small`` ladder, so more is fixed).

The incumbent is the best of the hint, `INCUMBENT_ALGORITHMS` and, with ``lns_share`` > 0, a short
large-neighbourhood search from it (CP-SAT windows, `edgeopt.core.lns`): on the ``small`` ladder the list
schedulers are 10-40 % above the optimum and the search brings them within a few per cent, which is what
makes the cutoff bite. When the certified bound reaches the incumbent no model is built at all: the
incumbent is optimal and the bound's certificate is the proof (`proof_certificate`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from edgeopt.core import Deadline
from formulations.fixing import (
    Fixing,
    Incumbent,
    Prices,
    cutoff,
    improve_incumbent,
    incumbent_and_prices,
    keep_mask,
)
from formulations.tapfinger.data import Option

#: The list schedulers whose best schedule starts the incumbent (the other registered ones are worse or partial
#: on the ``small`` ladder: benchmarks/exact_scale.py). ``offline_fill`` is the best of them on the ladder's rungs
#: 12-40 (at 24 tasks 275 against 302; the LNS from it then reaches the optimum 236, from 302 only 259, and
#: fixing removes 1,766 variables instead of 164).
INCUMBENT_ALGORITHMS = ("offline_fill", "greedy_ordered", "greedy", "optimus_np_ordered", "optimus_np")
#: The certified bound the prices come from.
BOUND_METHOD = "ti_lp_hull"
#: Models with fewer variables are solved unfixed (fixing costs more than it saves there).
FIX_MIN_VARS = 3000
#: Share of the time limit the LNS may spend on the incumbent (at most `LNS_CAP_S` seconds).
LNS_SHARE = 0.3
LNS_CAP_S = 20.0


def certified_prices(instance: Any, deadline: Deadline | None, *, share: float = 0.25, cap_s: float = 20.0,
                     method: str = BOUND_METHOD) -> Prices | None:
    """The prices of ``method``'s certified bound and the reduced costs at them
    (`formulations.fixing.certified_prices` with that method)."""
    from formulations.fixing import certified_prices as shared

    return shared(instance, deadline, share=share, cap_s=cap_s, method=method)


def lower_bounds(instance: Any, keys: list[tuple[Option, int]], prices: Prices) -> np.ndarray:
    """Per MILP variable (``keys[i] = (option, start)``) a lower bound on every schedule that uses it."""
    rel, costs = prices.relaxation, prices.costs
    mode: dict[tuple[int, int, tuple[int, ...]], int] = {}
    for task in instance.tasks:
        k = 0
        for n in task.reachable_clusters:
            for alloc, d in instance.pareto_allocations(task.id, n):
                if task.arrival + d > rel.horizon:
                    continue
                mode[(task.id, n, tuple(int(a) for a in alloc))] = k
                k += 1
    out = np.empty(len(keys))
    for i, (o, s) in enumerate(keys):
        k = mode.get((o.task, o.cluster, tuple(int(a) for a in o.alloc)))
        if k is None or int(rel.jobs[o.task].duration[k]) != o.duration:
            out[i] = -np.inf  # not a column of the relaxation (never happens by construction): kept
            continue
        out[i] = prices.lagrangian + costs.rc[o.task][k, s] - costs.error[o.task]
    return out


def fix_keys(instance: Any, keys: list[tuple[Option, int]], incumbent: Incumbent, prices: Prices, *,
             strict: bool = True) -> tuple[np.ndarray, Fixing]:
    """Which variables survive (a mask over ``keys``) and the record of the fixing; ``strict=False`` keeps the
    variables of schedules as good as the incumbent too."""
    t0 = time.perf_counter()
    cut = cutoff(incumbent.objective, prices.step) if strict else incumbent.objective
    keep = keep_mask(lower_bounds(instance, keys, prices), cut)
    fixing = Fixing(incumbent, prices, cut, strict=strict, columns=len(keys), fixed=int((~keep).sum()))
    have = np.zeros(len(instance.tasks), dtype=bool)
    for (o, _), k in zip(keys, keep, strict=True):
        if k:
            have[o.task] = True
    fixing.jobs_without_column = [int(j) for j in np.flatnonzero(~have)]
    fixing.fixing_s = time.perf_counter() - t0
    return keep, fixing


def prepare(instance: Any, *, hint: Any, deadline: Deadline, lns_share: float = LNS_SHARE,
            lns_cap_s: float = LNS_CAP_S) -> tuple[Incumbent | None, Prices | None, dict[str, float]]:
    """The incumbent (hint, list schedulers, then the LNS for ``min(lns_share * remaining, lns_cap_s)``
    seconds, left out under a deterministic work limit: `formulations.fixing.improve_incumbent`) and the certified
    prices; the timings ``incumbent_s`` (the LNS included, also alone as ``lns_s``) and
    ``bound_s``, each also in CPU seconds of the process (``*_cpu_s``)."""
    from edgeopt.tapfinger import FAMILY

    incumbent, prices, timings = incumbent_and_prices(FAMILY, instance, hint=hint, algorithms=INCUMBENT_ALGORITHMS,
                                                      deadline=deadline, prices_of=certified_prices)
    if incumbent is None or prices is None:
        return incumbent, prices, timings
    from formulations.tapfinger.lns import neighbourhood

    seconds = min(lns_share * deadline.remaining(floor=0.0), lns_cap_s)
    incumbent = improve_incumbent(FAMILY, instance, incumbent, prices.bound, neighbourhood(), seconds, timings,
                                  sub_limit=2.0, max_passes=2)
    return incumbent, prices, timings


def proof_certificate(fixing: Fixing) -> dict[str, Any]:
    """The certificate of an optimum proven by the bound alone: the bound's own certificate (its method and
    multipliers), which `edgeopt.core.lowerbound.check_optimal_certificate` re-checks without a solver."""
    return dict(fixing.prices.certificate)
