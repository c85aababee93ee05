"""preemptive: an instance from a window of a job trace (what ``edgeopt generate preemptive --trace`` builds).

The family-neutral steps (window, arrivals, work, horizon checks) are in `edgeopt.traces.instances` and
`edgeopt.core.tracemap`; this module is the preemptive mapping itself, described in docs/families/preemptive.md,
section "From a trace". `edgeopt.preemptive.spec` hands it to the core as ``FamilySpec.from_trace``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from edgeopt.core import InputError
from edgeopt.core import bounds as B
from edgeopt.core.family import model_limits, parse_model
from edgeopt.core.tracemap import arrival_slots, check_fits, factor_work, machine_rows, work_slots
from edgeopt.preemptive import instance as pe
from edgeopt.preemptive.instance import Instance

#: The longest horizon a preemptive instance may have (what ``edgeopt generate --horizon`` allows).
HORIZON_LIMIT = int(model_limits(Instance, horizon="horizon")["horizon"])


def from_trace(jobs: pd.DataFrame, start_s: float, seed: int, servers: int | None,
                machines: pd.DataFrame | None) -> Any:

    rng = np.random.default_rng([seed, 3])
    slot = 3600.0
    n = len(jobs)
    # the paper preset's draws without its instance, whose safe horizon (of the drawn work) passes the
    # horizon limit beyond a few thousand jobs; the work and arrivals are replaced below
    sv0, js0 = pe.paper_draws(np.random.default_rng(seed), n, servers or 100, False)
    base = pe.Instance.model_construct(name="paper", horizon=1, slot_seconds=3600.0, servers=sv0,
                                       jobs=[pe.Job(**j) for j in js0]).model_dump(mode="json")
    rows = machine_rows(machines, servers, rng)
    types = sorted({w for s in base["servers"] for w in s["workers"]})
    if rows is not None:
        edge = []
        for r, m in enumerate(rows.itertuples()):
            nw = int(m.gpus)
            ps = int(m.cpus) if not math.isnan(m.cpus) else int(nw * rng.integers(2, 5))
            edge.append({"name": f"edge{r}", "is_cloud": False,
                         "workers": [int(x) for x in rng.choice(types, size=nw)], "ps": min(ps, B.MAX_COUNT),
                         "storage_mb": None})
        base["servers"] = edge + [base["servers"][-1]]
        for j in base["jobs"]:
            j["upload_delay_slots"] = [int(x) for x in rng.integers(1, 5, size=len(edge))] + \
                [j["upload_delay_slots"][-1]]
    arrivals = arrival_slots(jobs, start_s, slot)
    cap = HORIZON_LIMIT
    check_fits("preemptive", jobs, arrivals, jobs["duration_s"].to_numpy(dtype=float), slot, cap)
    work = work_slots(jobs, slot)
    gpus = jobs["gpus"].to_numpy()
    for k, j in enumerate(base["jobs"]):
        E, D, Bc, t = factor_work(work[k], j["worker_time_slots"] + j["ps_time_slots"], j["chunks"],
                                  j["minibatches_per_chunk"])
        j.update(arrival=int(arrivals[k]), epochs=E, chunks=D, minibatches_per_chunk=Bc,
                 worker_time_slots=max(t - j["ps_time_slots"], 1e-9),
                 requested_workers=int(max(1, min(gpus[k], D))))
    data = {k: v for k, v in base.items()}
    sv = [pe.Server(**s) for s in data["servers"]]
    data["horizon"] = pe._safe_horizon(sv, data["jobs"], data["slot_seconds"])
    if data["horizon"] > cap:
        # the safe horizon grows with every job: the longest prefix of the window that fits, by bisection
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if pe._safe_horizon(sv, data["jobs"][:mid], data["slot_seconds"]) <= cap:
                lo = mid
            else:
                hi = mid - 1
        what = (f"pass --jobs {lo} or fewer, or a shorter --window" if lo else
                f"trace job {jobs['job_id'].iloc[0]!r} alone does not fit: pass a --window (or --cluster) without it")
        raise InputError("jobs", f"the {n:,} jobs need a horizon of {data['horizon']:,} slots of {slot:g} s (the "
                                 f"last arrival + all their work one chunk after another, so that every algorithm "
                                 f"finishes), beyond the longest preemptive allows ({cap:,}): {what}")
    data["name"] = "trace"
    return parse_model(Instance, data, root="instance")
