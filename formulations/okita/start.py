"""A MIP start for the okita MILP (``milp.py``) and CP-SAT hints for ``cpsat.py``: a schedule as the model's
variable values (the inverses of `extract_milp` and `extract_cpsat`).

Per job i and slot t of the schedule: y[i, r, t] its workers at site r, s[i, r, t] = 1 at its PS
site, u[i, t] = 1 while it has workers, g[i, r, r', t] the chunks moved from r to r' (trained at
r'), and z[i, t_i] = 1 at its completion slot t_i (the last slot with workers). The products
w = y s are continuous and left to HiGHS, which completes them with the discrete values fixed.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def start_milp(model: Any, schedule: Any) -> Any:
    """Values of `build_milp`'s discrete variables that encode ``schedule`` (nonzeros; a ``ComponentMap``)."""
    from pyomo.common.collections import ComponentMap

    out = ComponentMap()
    for js in schedule.jobs:
        i = int(js.job)
        for e in js.slots:
            t = int(e.slot)
            for r, n in e.workers.items():
                if (i, int(r), t) in model.y:
                    out[model.y[i, int(r), t]] = float(n)
            if e.n_workers > 0:
                if (i, t) in model.u:
                    out[model.u[i, t]] = 1.0
                if e.ps_site is not None and (i, int(e.ps_site), t) in model.s:
                    out[model.s[i, int(e.ps_site), t]] = 1.0
            for a, b, n in e.transfers:
                if (i, int(a), int(b), t) in model.g:
                    out[model.g[i, int(a), int(b), t]] = float(n)
        done = js.completion
        if done is not None and (i, done) in model.z:
            out[model.z[i, done]] = 1.0
    return out


def hint_cpsat(model: Any, V: dict[str, Any], instance: Any, schedule: Any) -> int:
    """Hint every variable of `build_cpsat`'s model (``V``) with ``schedule``'s values; returns the jobs hinted.

    The hint is complete (y, s, act, the transfers g, or their totals G and the trained counts h, exch, c,
    lat and the completion offset of every modelled slot), so CP-SAT reads it as a full solution and needs
    no search to repair it: in a neighbourhood the incumbent is the window's first solution. A modelled job the schedule leaves out, or whose entries fall outside
    its modelled slots, is not hinted (CP-SAT searches for it).
    """
    by_job = {int(js.job): js for js in schedule.jobs}
    hinted = 0
    for i, slots in V["slots"].items():
        js = by_job.get(i)
        if js is None or js.completion is None or not all(e.slot in slots for e in js.slots):
            continue
        _hint_job(model, V, instance, i, {e.slot: e for e in js.slots}, js.completion)
        hinted += 1
    return hinted


def _hint_job(model: Any, V: dict[str, Any], instance: Any, i: int, at: dict[int, Any], done: int) -> None:
    """Hints of job i's variables from its entries ``at`` (slot -> entry) and completion slot ``done``."""
    from formulations.okita.units import scaled_cost

    R, q, job = len(instance.sites), instance.q, instance.jobs[i]
    totals = (i, 0, 0) in V["G"]  # the model of `build_cpsat(per_slot_transfers=False)`
    G = np.zeros((R, R), dtype=np.int64)
    for t in V["slots"][i]:
        e = at.get(t)
        y = np.zeros(R, dtype=np.int64)
        g = np.zeros((R, R), dtype=np.int64)
        ps = None
        if e is not None:
            for r, n in e.workers.items():
                y[int(r)] += int(n)
            for a, b, n in e.transfers:
                g[int(a), int(b)] += int(n)
            ps = e.ps_site if e.n_workers > 0 else None
        model.add_hint(V["act"][i, t], bool(y.any()))
        for r in range(R):
            model.add_hint(V["y"][i, r, t], int(y[r]))
            model.add_hint(V["s"][i, r, t], ps is not None and int(ps) == r)
            if totals:
                model.add_hint(V["h"][i, r, t], int(g[:, r].sum()))
            else:
                for r2 in range(R):
                    model.add_hint(V["g"][i, r, r2, t], int(g[r, r2]))
        G += g
        # (1): the exchange with the PS site, in the model's rounded units
        exch = 0 if ps is None else sum(scaled_cost(float(q[r, int(ps)]) * job.param_size_mb) * int(y[r])
                                        for r in range(R))
        model.add_hint(V["exch"][i, t], int(exch))
    if totals:
        for r in range(R):
            for r2 in range(R):
                model.add_hint(V["G"][i, r, r2], int(G[r, r2]))
    a = job.arrival
    model.add_hint(V["c"][i], int(done))
    table = [scaled_cost(float(v)) for v in instance.latency_table(i)[a:V["slots"][i][-1] + 1]]
    model.add_hint(V["lat"][i], int(table[done - a]))
    model.add_hint(V["offset"][i], int(done - a))
