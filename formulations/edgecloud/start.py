"""Warm starts for the edgecloud models: a schedule as the models' variable values (the inverse of extract).

A run maps to the mode (w, xi) with w its total workers and xi its colocation flag, started at
the same slot. The models fix a mode's duration to the least one (``data.py``); a schedule that
holds its allocation longer is shortened, which keeps it feasible and does not raise its cost.
A run whose mode is not in the model (it cannot happen for a validated schedule of the same
instance) is left out, so the start is partial and HiGHS / CP-SAT complete or drop it.
"""

from __future__ import annotations

from typing import Any

from formulations.edgecloud.data import ModelData


def runs_of(data: ModelData, instance: Any, schedule: Any) -> dict[int, tuple[int, Any]]:
    """``{job index: (mode k, JobRun)}`` for the jobs of ``data`` that ``schedule`` runs."""
    pos = {int(job.id): j for j, job in enumerate(instance.jobs)}
    by_index = {pos[int(run.job)]: run for run in schedule.jobs if int(run.job) in pos}
    out = {}
    for jd in data.jobs:
        run = by_index.get(jd.index)
        if run is None or run.segments:
            continue
        w = sum(run.workers.values())
        k = next((k for k, md in enumerate(jd.modes) if md.workers == w and md.colocated == bool(run.colocated)), None)
        if k is not None:
            out[jd.index] = (k, run)
    return out


def start_milp(model: Any, instance: Any, schedule: Any) -> Any:
    """Values of `build_milp`'s variables that encode ``schedule`` (nonzeros only; a Pyomo ``ComponentMap``)."""
    from pyomo.common.collections import ComponentMap

    out = ComponentMap()
    for j, (k, run) in runs_of(model._data, instance, schedule).items():
        h = int(run.start)
        if (j, k, h) not in model.x:
            continue
        out[model.x[j, k, h]] = 1.0
        for s, n in run.workers.items():
            if (j, int(s)) in model.y:
                out[model.y[j, int(s)]] = float(n)
            if (j, k, h, int(s)) in model.q:
                out[model.q[j, k, h, int(s)]] = float(n)
        if (j, int(run.ps_server)) in model.z:
            out[model.z[j, int(run.ps_server)]] = 1.0
        if (j, k, h, int(run.ps_server)) in model.r:
            out[model.r[j, k, h, int(run.ps_server)]] = 1.0
    return out


def hint_cpsat(cm: Any, instance: Any, schedule: Any) -> int:
    """CP-SAT hints (mode, start, workers, PS) of `build_cpsat`'s model for ``schedule``; the number of jobs hinted."""
    model = cm.model
    given = 0
    for j, (k, run) in runs_of(cm.data, instance, schedule).items():
        jd = next(jd for jd in cm.data.jobs if jd.index == j)
        for kk in range(len(jd.modes)):
            model.add_hint(cm.mode[j, kk], kk == k)
        model.add_hint(cm.start[j], int(run.start))
        for (jj, s), y in cm.y.items():
            if jj == j:
                model.add_hint(y, int(run.workers.get(s, 0)))
        for (jj, s), z in cm.z.items():
            if jj == j:
                model.add_hint(z, s == int(run.ps_server))
        given += 1
    return given
