"""Warm starts for the hetero models: a schedule as the models' variable values (the inverse of extract).

A scheduled job maps to the configuration k = (m, p, q, N) with the same worker type, PS type,
colocation flag and worker count, started at the same slot. The models fix a job's duration to
the least one of its configuration (``data.py``): a schedule that holds its servers longer is
shortened, which keeps it feasible (it uses a subset of its slots) and does not raise its cost.
A colocated job keeps one PS on its host (the models' dominance rule), a distributed one at most
``data.ps_bound`` PSs per server (enough for (2i) by that bound). A job whose placement has no
configuration in the model (it cannot happen for a validated schedule of the same instance and
window) is left out, so the start is partial and HiGHS / CP-SAT complete or drop it.
"""

from __future__ import annotations

from typing import Any

from formulations.hetero.data import JobData, ModelData, ps_bound


def _config_of(jd: JobData, js: Any) -> int | None:
    n = sum(js.workers.values())
    p = -1 if js.ps_type is None else int(js.ps_type)
    for k, cf in enumerate(jd.configs):
        if (cf.worker_type == js.worker_type and cf.ps_type == p and cf.colocated == bool(js.colocated)
                and cf.workers == n):
            return k
    return None


def placements_of(data: ModelData, schedule: Any) -> dict[int, tuple[int, Any]]:
    """``{job index: (configuration k, JobSchedule)}`` for the scheduled jobs of ``data``'s window."""
    by_id = {int(js.job): js for js in schedule.jobs}
    out = {}
    for jd in data.jobs:
        js = by_id.get(jd.job_id)
        if js is None:
            continue
        k = _config_of(jd, js)
        t = int(js.start) - data.t0
        if k is not None and t >= jd.earliest and t + jd.configs[k].duration <= data.length:
            out[jd.index] = (k, js)
    return out


def start_milp(model: Any, schedule: Any) -> Any:
    """Values of `build_milp`'s variables that encode ``schedule`` (nonzeros only; a Pyomo ``ComponentMap``)."""
    from pyomo.common.collections import ComponentMap

    data: ModelData = model.data
    out = ComponentMap()
    jd_of = {jd.index: jd for jd in data.jobs}
    for j, (k, js) in placements_of(data, schedule).items():
        cf = jd_of[j].configs[k]
        t = int(js.start) - data.t0
        if cf.colocated:
            (h,) = js.workers.keys()
            if (j, k, h, t) in model.xc:
                out[model.xc[j, k, h, t]] = 1.0
            continue
        if (j, k, t) not in model.x:
            continue
        out[model.x[j, k, t]] = 1.0
        for h, n in js.workers.items():
            if (j, h, cf.worker_type) in model.y:
                out[model.y[j, h, cf.worker_type]] = float(n)
        for h, n in js.ps.items():
            if (j, h, cf.ps_type) in model.s:
                out[model.s[j, h, cf.ps_type]] = float(min(n, ps_bound(data, jd_of[j], h, cf.ps_type)))
                out[model.hasps[j, h]] = 1.0
        # run[j, t] and the occupancies o are continuous: HiGHS completes them with x, y, s fixed
    return out


def hint_cpsat(cm: Any, schedule: Any, *, pin: set[int] | frozenset[int] = frozenset()) -> int:
    """CP-SAT hints (configuration, start, placement) of `build_cpsat`'s model for ``schedule``; the number given.

    The jobs in ``pin`` (indices) get their configuration and placement fixed (constraints, not hints):
    only their start stays free (a neighbourhood of the LNS that moves jobs in time only).
    """
    data: ModelData = cm.data
    model = cm.model
    given = 0
    for j, (k, js) in placements_of(data, schedule).items():
        if (j, k) not in cm.config:
            continue
        jd = next(jd for jd in data.jobs if jd.index == j)
        cf = jd.configs[k]
        for kk in range(len(jd.configs)):
            model.add_hint(cm.config[j, kk], kk == k)
            if j in pin:
                model.add(cm.config[j, kk] == int(kk == k))
        model.add_hint(cm.start[j], int(js.start) - data.t0)
        model.add_hint(cm.duration[j], cf.duration)
        for h in range(data.n_servers):
            for m in range(data.n_worker_types):
                if (j, h, m) in cm.y:
                    value = int(js.workers.get(h, 0)) if m == cf.worker_type else 0
                    model.add_hint(cm.y[j, h, m], value)
                    if j in pin:
                        model.add(cm.y[j, h, m] == value)
            for p in range(data.n_ps_types):
                if (j, h, p) in cm.s:
                    n = int(js.ps.get(h, 0))
                    value = min(n, int(data.ps_cap[h, p])) if p == cf.ps_type else 0
                    model.add_hint(cm.s[j, h, p], value)
                    if j in pin:
                        model.add(cm.s[j, h, p] == value)
        given += 1
    return given
