"""okita: an instance from a window of a job trace (what ``edgeopt generate okita --trace`` builds).

The family-neutral steps (window, arrivals, work, horizon checks) are in `edgeopt.traces.instances` and
`edgeopt.core.tracemap`; this module is the okita mapping itself, described in docs/families/okita.md,
section "From a trace". `edgeopt.okita.spec` hands it to the core as ``FamilySpec.from_trace``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from edgeopt.core.family import model_limits, parse_model
from edgeopt.core.tracemap import arrival_slots, check_fits, list_horizon, machine_rows, work_slots
from edgeopt.okita import instance as ok
from edgeopt.okita.instance import Instance

#: The longest horizon a okita instance may have (what ``edgeopt generate --horizon`` allows).
HORIZON_LIMIT = int(model_limits(Instance, horizon="horizon")["horizon"])


def from_trace(jobs: pd.DataFrame, start_s: float, seed: int, servers: int | None,
           machines: pd.DataFrame | None) -> Any:

    rng = np.random.default_rng([seed, 4])
    # the paper's linear latency cost (Sec. V-B), not its default exponential one: f = tau * exp(0.25 x)
    # passes 10**10 at a latency of 100 slots, which real jobs of hours to days reach, so the exponential
    # cost would rank schedules by their single latest job
    base = ok.generate("paper_linear", seed=seed, jobs=len(jobs), servers=servers or 50).model_dump(mode="json")
    slot = float(base["slot_seconds"])
    rows = machine_rows(machines, servers, rng)
    if rows is not None:
        kinds = list(ok.EC2.values())
        sites = []
        for m in rows.itertuples():
            kind = kinds[int(rng.integers(len(kinds)))]
            sites.append({"name": str(m.machine_id), "capacity": [
                float(m.gpus), float(m.cpus) if not math.isnan(m.cpus) else float(kind[1]),
                float(m.mem_gb) if not math.isnan(m.mem_gb) else float(kind[2]), float(kind[3])]})
        R = len(sites)
        base["sites"] = sites
        q = np.round(rng.uniform(0.02, 0.08, size=(R, R)), 3)
        q = np.triu(q, 1)
        base["bandwidth_cost_per_mb"] = [[float(v) for v in row] for row in q + q.T]
    R = len(base["sites"])
    arrivals = arrival_slots(jobs, start_s, slot)
    cap = HORIZON_LIMIT
    check_fits("okita", jobs, arrivals, jobs["duration_s"].to_numpy(dtype=float), slot, cap)
    work = work_slots(jobs, slot)
    gpus = jobs["gpus"].to_numpy()
    for k, j in enumerate(base["jobs"]):
        per_worker = j["worker_chunks_per_slot"] / j["epochs"]  # chunks one worker trains per slot (2b)
        total = int(min(max(1, round(work[k] * per_worker)), 10**7))
        share = np.asarray(j["data_chunks"], dtype=float)[:R] if len(j["data_chunks"]) >= R else rng.uniform(10, 20, R)
        chunks = np.floor(total * share / share.sum()).astype(np.int64)
        chunks[int(np.argmax(share))] += total - int(chunks.sum())
        j.update(arrival=int(arrivals[k]), data_chunks=[int(x) for x in chunks],
                 worker_demand=[1.0] + list(j["worker_demand"][1:]))
    base["horizon"] = int(min(cap, list_horizon(arrivals, work, gpus, sum(s["capacity"][0] for s in base["sites"]))))
    return parse_model(Instance, base, root="instance")
