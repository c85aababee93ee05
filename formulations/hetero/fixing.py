"""Reduced-cost fixing for the hetero MILP of program (2)/(15) (`formulations.fixing` explains the rule).

The MILP starts job j at slot t in configuration k = (m, p, q, N) (``x[j, k, t]``, or ``xc[j, k, h, t]`` on a
host h when colocated). The certified bound ``ti_lp`` (``bound.py``) maps such a schedule to the column
(v, t) of its relaxed mode v = (m, q, N): no longer than d_k (the relaxed duration takes the fastest PS type)
and no more demand on any pooled or packing row, whatever the PS type and the host. `undominated` may have
dropped v from the relaxation; then any kept mode v' that dominates it (no longer, no more demand; every mode
of a job has the same earliest start) takes its place, which keeps the mapped choice feasible and no more
costly. So every schedule starting j in configuration k at t costs at least

    L(pi) + max over the kept modes v' dominating v of rc_j(v', t)

(minus the reduced costs' float error). A start whose value passes the cutoff gets no variable; the models
decide the rest (a configuration whose relaxed mode is missing, which the construction never gives, is kept
whole). Fixing applies to program (2)/(15) over the whole horizon only (the batch windows of (7) are not
relaxed by ``ti_lp``).

The incumbent is the best of a hint, `INCUMBENT_ALGORITHMS` and a short large-neighbourhood search from it
(`formulations.fixing.lns_incumbent`, the MILP windows of ``lns.py``): ``offline_fill`` alone is 6 % above
the optimum on the 16-job rung of benchmarks/exact_scale.py, where the certified bound is 2 % below it.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from edgeopt.core import Deadline
from formulations.fixing import (
    Fixing,
    Incumbent,
    Prices,
    certified_prices,
    cutoff,
    incumbent_and_prices,
    keep_mask,
)
from formulations.hetero.data import ModelData, colocated_hosts

#: The registered algorithms whose best schedule starts the incumbent (``offline_fill`` is the best of them on
#: every rung of the ``small`` ladder from 8 jobs; the others are cheap and sometimes better on the small rungs).
INCUMBENT_ALGORITHMS = ("offline_fill", "tiresias_np", "online_every_slot")
#: Models with fewer start variables than this are solved unfixed: the incumbent's search costs more than the
#: fixing saves there (the ``small`` ladder's 8 jobs, 3,346 starts: 14.4 s of CPU fixed, 8.5 s unfixed; 10 jobs,
#: 5,319 starts: 3.6 s fixed, 5.2 s unfixed; benchmarks/results/exact_scale_hetero_fixing.json).
FIX_MIN_VARS = 5000
#: Share of the time left that the LNS may spend on the incumbent (at most `LNS_CAP_S` seconds).
LNS_SHARE = 0.2
LNS_CAP_S = 12.0
#: The exact model of the search's windows, and how many sweeps without a gain end it. On the 16-job rung of the
#: ``small`` ladder (seed 1) the MILP windows take ``offline_fill``'s 379 to 359 within 6 s, the CP-SAT windows
#: stay at 377 after 20 s; the optimum is 358.
LNS_WINDOWS = "milp"
LNS_PASSES = 1


def start_variables(data: ModelData) -> int:
    """How many start variables (``x`` and ``xc``, one per host) the unfixed MILP has."""
    total = 0
    for jd in data.jobs:
        for cf in jd.configs:
            n = len(jd.starts(cf.duration, data.length))
            if cf.colocated:
                n *= colocated_hosts(data, cf).size
            total += n
    return total


def config_lower_bounds(instance: Any, data: ModelData, prices: Prices) -> dict[tuple[int, int], np.ndarray]:
    """``{(job index, configuration index): [length]}``: a lower bound on the objective of every schedule that
    starts the job in that configuration at each slot (``-inf``: not bounded, kept; module docstring)."""
    from formulations.hetero.bound import relaxed_modes

    rel, costs = prices.relaxation, prices.costs
    every, _, _ = relaxed_modes(instance)
    out: dict[tuple[int, int], np.ndarray] = {}
    for jd in data.jobs:
        j = jd.index
        Dv, Rv, kind = every[j]
        jm, rc = rel.jobs[j], np.where(np.isfinite(costs.rc[j]), costs.rc[j], -np.inf)  # no column: no bound
        where = {(int(m), int(n), bool(q)): v for v, (m, n, q) in enumerate(kind)}
        cache: dict[int, np.ndarray] = {}
        for k, cf in enumerate(jd.configs):
            v = where.get((cf.worker_type, cf.workers, cf.colocated))
            if v is None or int(Dv[v]) > cf.duration:
                out[(j, k)] = np.full(data.length, -np.inf)
                continue
            if v not in cache:
                dom = (jm.duration <= Dv[v]) & (jm.run <= Rv[v][None, :]).all(axis=1)
                value = rc[dom].max(axis=0) if dom.any() else np.full(rel.horizon, -np.inf)
                cache[v] = prices.lagrangian + value - costs.error[j]
            out[(j, k)] = cache[v][: data.length]
    return out


def fix_configs(instance: Any, data: ModelData, incumbent: Incumbent, prices: Prices, *, strict: bool = True,
                ) -> tuple[ModelData, Fixing]:
    """``data`` with every start that no schedule better than the incumbent uses removed (`JobData.allowed`),
    and the record of what was removed; ``strict=False`` keeps the starts of schedules as good as the incumbent.
    A colocated start counts once per host in the record (one MILP variable each)."""
    t0 = time.perf_counter()
    cut = cutoff(incumbent.objective, prices.step) if strict else incumbent.objective
    lower = config_lower_bounds(instance, data, prices)
    fixing = Fixing(incumbent, prices, cut, strict=strict)
    jobs = []
    for jd in data.jobs:
        allowed: dict[int, np.ndarray] = {}
        left = 0
        for k, cf in enumerate(jd.configs):
            span = np.arange(jd.earliest, data.length - cf.duration + 1)
            keep = keep_mask(lower[(jd.index, k)], cut)
            allowed[k] = keep
            hosts = 1
            if cf.colocated:
                hosts = colocated_hosts(data, cf).size
            n_keep = int(keep[span].sum()) if span.size else 0
            fixing.columns += hosts * span.size
            fixing.fixed += hosts * (span.size - n_keep)
            left += n_keep * hosts
        if not left:
            fixing.jobs_without_column.append(jd.index)
        jobs.append(dataclasses.replace(jd, allowed=allowed))
    fixing.fixing_s = time.perf_counter() - t0
    return dataclasses.replace(data, jobs=tuple(jobs)), fixing


def prepare_fixing(instance: Any, data: ModelData, *, hint: Any, deadline: Deadline, lns_share: float = LNS_SHARE,
                   lns_cap_s: float = LNS_CAP_S, strict: bool = True,
                   ) -> tuple[ModelData, Fixing | None, dict[str, float]]:
    """Incumbent (the best of ``hint`` and `INCUMBENT_ALGORITHMS`, then the LNS for
    ``min(lns_share * remaining, lns_cap_s)`` seconds), certified prices and the fixed data (`fix_configs`).

    Returns ``data`` unchanged and no `Fixing` when there is no incumbent or no bound (the model is then solved
    without fixing: still exact). The timings are ``incumbent_s`` (the LNS included, also alone as ``lns_s``),
    ``bound_s`` and ``fixing_s``. Under a work limit (`edgeopt.core.limits.work_limit`) the LNS, which the clock
    stops, does not run, so that the fixed model is the same at any load.
    """
    from edgeopt.hetero import FAMILY
    from formulations.fixing import improve_incumbent
    from formulations.hetero.lns import neighbourhood

    if data.t0 != 0 or data.length != int(instance.horizon):
        return data, None, {}  # the relaxation covers program (2)/(15) over the whole horizon only
    incumbent, prices, timings = incumbent_and_prices(FAMILY, instance, hint=hint, algorithms=INCUMBENT_ALGORITHMS,
                                                      deadline=deadline, prices_of=certified_prices)
    if incumbent is None or prices is None:
        return data, None, timings
    seconds = min(lns_share * deadline.remaining(floor=0.0), lns_cap_s)
    incumbent = improve_incumbent(FAMILY, instance, incumbent, prices.bound, neighbourhood(LNS_WINDOWS), seconds, timings,
                                  lower=prices.bound, max_passes=LNS_PASSES)
    fixed, fixing = fix_configs(instance, data, incumbent, prices, strict=strict)
    timings["fixing_s"] = fixing.fixing_s
    return fixed, fixing, timings
