"""A MIP start for the preemptive MILP (``milp.py``): a schedule as the model's variable values (the
inverse of `extract_milp`).

Per job j: n[j, k] its chunks on edge worker k (k the global worker index of (server, worker)) and
Y[j, k, t] = 1 in their slots; nc[j] its cloud chunks and u[j] = 1 when it has any; zeta[j] its
colocation flag (the family's `colocated`); z[j, s, t] = 1 while its PS sits on edge server s;
C[j] its completion (one past its last training slot). A value without a variable in the model
(a slot the model's time window cut) is left out; HiGHS then completes or drops the start.
"""

from __future__ import annotations

from typing import Any


def start_milp(model: Any, data: Any, instance: Any, schedule: Any) -> Any:
    """Values of `build_milp`'s variables that encode ``schedule`` (nonzeros; a Pyomo ``ComponentMap``)."""
    from pyomo.common.collections import ComponentMap

    from edgeopt.preemptive.schedule import colocated

    worker_of = {(int(s), int(w)): k for k, (s, w) in enumerate(zip(data.worker_server, data.worker_slot, strict=True))}
    out = ComponentMap()
    for js in schedule.jobs:
        j = int(js.job)
        n: dict[int, int] = {}
        cloud = 0
        last = int(data.arrival[j])
        for ch in js.chunks:
            if ch.slots:
                last = max(last, max(ch.slots) + 1)
            if data.cloud is not None and int(ch.server) == data.cloud:
                cloud += 1
                continue
            k = worker_of.get((int(ch.server), int(ch.worker)))
            if k is None:
                continue
            n[k] = n.get(k, 0) + 1
            for t in ch.slots:
                if (j, k, int(t)) in model.Y:
                    out[model.Y[j, k, int(t)]] = 1.0
        for k, count in n.items():
            if (j, k) in model.n:
                out[model.n[j, k]] = float(count)
        if j in model.nc:
            out[model.nc[j]] = float(cloud)
            out[model.u[j]] = float(cloud > 0)
            out[model.zeta[j]] = float(cloud > 0 and colocated(instance, js))
        for pr in js.ps:
            for t in range(int(pr.start), int(pr.end)):
                if (j, int(pr.server), t) in model.z:
                    out[model.z[j, int(pr.server), t]] = 1.0
        out[model.C[j]] = float(last)
    return out
