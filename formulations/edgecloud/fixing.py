"""Reduced-cost fixing for both edgecloud exact models (`formulations.fixing` explains the rule).

The exact models choose, per job, a run (mode (w, xi), start h) (``x[j, k, h]`` in the MILP, the mode literal
and the start in CP-SAT). The certified bound ``ti_lp`` (``bound.py``) maps a schedule that runs job j in
mode (w, xi) from slot h to the column (version, h) of the relaxation, with the *edge* version of (w, xi)
when the run uses no cloud server and the *any* version otherwise; a version that `undominated` dropped is
replaced by any kept mode that dominates it (no longer, no more demand on any row, no later earliest start),
which keeps the mapped choice feasible in the relaxation and no more costly. So every schedule using run
(w, xi, h) costs at least

    L(pi) + min over the versions v of (w, xi) that may start at h (h >= v's earliest start) of
            max over the kept modes k' dominating v of rc_j(k', h)

(minus the reduced costs' float error). Runs whose value passes the cutoff are removed: the MILP has no
variable for them, and CP-SAT's start of a job in that mode excludes those slots. A run that no version may
start at is kept (the models decide it; fixing never relies on more than the relaxation's columns).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from edgeopt.core import Deadline
from formulations.edgecloud.data import Mode, ModelData
from formulations.edgecloud.versions import versions
from formulations.fixing import (
    Fixing,
    Incumbent,
    Prices,
    certified_prices,
    cutoff,
    incumbent_and_prices,
    keep_mask,
)

#: The registered algorithms whose schedules are the incumbent (the best of them and of a ``hint``):
#: ``offline_fill`` is within 1-5 % of the optimum on the ``small`` ladder of benchmarks/exact_scale.py.
INCUMBENT_ALGORITHMS = ("offline_fill",)
#: Models with fewer runs than this are solved without fixing: the incumbent and the bound cost more than they
#: save there (8 jobs, 1,014 runs: the MILP took 0.4 s of CPU unfixed, 3.4 s fixed, most of it importing
#: ``offline_fill``'s numba kernels and SciPy; 24 jobs, 6,579 runs: 6.9 s unfixed, 1.8 s fixed).
FIX_MIN_RUNS = 5000


def runs(data: ModelData) -> int:
    """How many (job, mode, start) runs the unfixed model has."""
    return sum(len(jd.starts(md, data.horizon)) for jd in data.jobs for md in jd.modes)


def run_lower_bounds(instance: Any, prices: Prices) -> dict[tuple[int, Mode], np.ndarray]:
    """``{(job index, mode): [T]}``: a lower bound on the objective of every schedule that runs the job in that
    mode from each slot (``-inf``: not bounded, the run is kept; module docstring)."""
    rel, costs = prices.relaxation, prices.costs
    T = rel.horizon
    out: dict[tuple[int, Mode], np.ndarray] = {}
    for j, job in enumerate(instance.jobs):
        jm, rc = rel.jobs[j], costs.rc[j]
        per_mode: dict[tuple[int, bool], tuple[int, np.ndarray]] = {}
        for w, coloc, _edge_only, d, e, row in versions(instance, job):
            dom = (jm.duration <= d) & (jm.earliest <= e) & (jm.run <= row[None, :]).all(axis=1)
            value = rc[dom].max(axis=0) if dom.any() else np.full(T, -np.inf)
            value = value.copy()
            value[:e] = np.inf  # this version cannot start before its earliest slot: another one applies
            prev = per_mode.get((w, coloc))
            per_mode[(w, coloc)] = (d, value if prev is None else np.minimum(prev[1], value))
        for (w, coloc), (d, value) in per_mode.items():
            lower = np.where(np.isinf(value) & (value > 0), -np.inf, prices.lagrangian + value - costs.error[j])
            out[(j, Mode(w, coloc, d))] = lower
    return out


def fix_runs(instance: Any, data: ModelData, incumbent: Incumbent, prices: Prices, *, strict: bool = True,
             ) -> tuple[ModelData, Fixing]:
    """``data`` with every run that no schedule better than the incumbent uses removed (`JobData.allowed`),
    and the record of what was removed. ``strict=False``: keep the runs of schedules as good as the incumbent
    too (the incumbent stays in the model, as a hint)."""
    t0 = time.perf_counter()
    cut = cutoff(incumbent.objective, prices.step) if strict else incumbent.objective
    lower = run_lower_bounds(instance, prices)
    T = data.horizon
    fixing = Fixing(incumbent, prices, cut, strict=strict)
    jobs = []
    for jd in data.jobs:
        allowed = {}
        left = 0
        for md in jd.modes:
            span = jd.starts(md, T)
            bound = lower.get((jd.index, md))
            keep = np.ones(T, dtype=bool) if bound is None else keep_mask(bound, cut)
            allowed[md] = keep
            n_keep = int(keep[list(span)].sum()) if len(span) else 0
            fixing.columns += len(span)
            fixing.fixed += len(span) - n_keep
            left += n_keep
        if not left:
            fixing.jobs_without_column.append(jd.index)
        jobs.append(dataclasses.replace(jd, allowed=allowed))
    fixing.fixing_s = time.perf_counter() - t0
    return dataclasses.replace(data, jobs=tuple(jobs)), fixing


def refix(instance: Any, base: ModelData, fixing: Fixing, incumbent: Incumbent, *, strict: bool | None = None,
          ) -> tuple[ModelData, Fixing]:
    """Fixing again from the unfixed ``base`` with a better incumbent (same prices: only the cutoff moves);
    ``strict`` as in `fix_runs` (None: as before)."""
    strict = fixing.strict if strict is None else strict
    data, out = fix_runs(instance, base, incumbent, fixing.prices, strict=strict)
    out.history = [*fixing.history, (fixing.incumbent.objective, fixing.incumbent.source)]
    out.fixing_s += fixing.fixing_s
    return data, out


def prepare_fixing(instance: Any, data: ModelData, *, hint: Any, deadline: Deadline, strict: bool = True,
                   ) -> tuple[ModelData, Fixing | None, dict[str, float]]:
    """Incumbent (the best of ``hint`` and `INCUMBENT_ALGORITHMS`), certified prices and the fixed data
    (`fix_runs`, ``strict`` as there).

    Returns ``data`` unchanged and no `Fixing` when there is no incumbent or no bound (the model is then solved
    without fixing: still exact). The timings are ``incumbent_s``, ``bound_s`` and ``fixing_s``.
    """
    from edgeopt.edgecloud import FAMILY

    incumbent, prices, timings = incumbent_and_prices(FAMILY, instance, hint=hint, algorithms=INCUMBENT_ALGORITHMS,
                                                      deadline=deadline, prices_of=certified_prices)
    if incumbent is None or prices is None:
        return data, None, timings
    fixed, fixing = fix_runs(instance, data, incumbent, prices, strict=strict)
    timings["fixing_s"] = fixing.fixing_s
    return fixed, fixing, timings
