"""A MIP start for the okita MILP (``milp.py``): a schedule as the model's variable values (the inverse of
`extract_milp`).

Per job i and slot t of the schedule: y[i, r, t] its workers at site r, s[i, r, t] = 1 at its PS
site, u[i, t] = 1 while it has workers, g[i, r, r', t] the chunks moved from r to r' (trained at
r'), and z[i, t_i] = 1 at its completion slot t_i (the last slot with workers). The products
w = y s are continuous and left to HiGHS, which completes them with the discrete values fixed.
"""

from __future__ import annotations

from typing import Any


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
