"""hetero: an instance from a window of a job trace (what ``edgeopt generate hetero --trace`` builds).

The family-neutral steps (window, arrivals, work, horizon checks) are in `edgeopt.traces.instances` and
`edgeopt.core.tracemap`; this module is the hetero mapping itself, described in docs/families/hetero.md,
section "From a trace". `edgeopt.hetero.spec` hands it to the core as ``FamilySpec.from_trace``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from edgeopt.core import bounds as B
from edgeopt.core.family import model_limits, parse_model
from edgeopt.core.tracemap import (
    arrival_slots,
    check_fits,
    factor_work,
    list_horizon,
    machine_rows,
    work_slots,
)
from edgeopt.hetero import instance as he
from edgeopt.hetero.instance import Instance

#: The longest horizon a hetero instance may have (what ``edgeopt generate --horizon`` allows).
HORIZON_LIMIT = int(model_limits(Instance, horizon="horizon")["horizon"])


def from_trace(jobs: pd.DataFrame, start_s: float, seed: int, servers: int | None,
            machines: pd.DataFrame | None) -> Any:

    rng = np.random.default_rng([seed, 2])
    slot = 3600.0
    n = len(jobs)
    base = he.generate("paper", seed=seed, jobs=n, servers=servers or 150, horizon=150).model_dump(mode="json")
    rows = machine_rows(machines, servers, rng)
    if rows is not None:
        caps = []
        for _, m in rows.iterrows():
            kind = he.EC2[list(he.EC2)[int(rng.integers(len(he.EC2)))]]
            cpus = float(m["cpus"]) if not math.isnan(m["cpus"]) else float(kind[1])
            mem = float(m["mem_gb"]) if not math.isnan(m["mem_gb"]) else float(kind[2])
            caps.append([float(m["gpus"]), cpus, mem, float(kind[3])])
        base["servers"] = [{"name": f"{r.machine_id}", "capacity": c} for r, c in zip(rows.itertuples(), caps,
                                                                                      strict=True)]
    else:  # the paper's EC2 P3/P2/G3 shapes, unscaled (real machines, not the paper's capacity fraction)
        kinds = list(he.EC2)
        base["servers"] = [{"name": f"h{h}-{k}", "capacity": [float(x) for x in he.EC2[k]]}
                           for h, k in enumerate(kinds[int(i)] for i in rng.integers(0, len(kinds),
                                                                                    size=servers or 150))]
    wt_gpus = np.array([t["demand"][0] for t in base["worker_types"]], dtype=float)
    arrivals = arrival_slots(jobs, start_s, slot)
    check_fits("hetero", jobs, arrivals, jobs["duration_s"].to_numpy(dtype=float), slot, HORIZON_LIMIT)
    work = work_slots(jobs, slot)
    gpus = jobs["gpus"].to_numpy()
    for k, j in enumerate(base["jobs"]):
        v = np.asarray(j["minibatch_time_slots"], dtype=float)
        ref = float(np.median(v * wt_gpus))  # GPU-slots per mini-batch of a typical worker type
        E, D, K, t = factor_work(work[k], ref, int(gpus[k]), j["minibatches_per_chunk"],
                                 min_chunks=int(min(gpus[k], B.MAX_COUNT)))
        scale = t / ref
        j.update(arrival=int(arrivals[k]), epochs=E, chunks=D, minibatches_per_chunk=K,
                 minibatch_time_slots=[float(min(max(x * scale, 1e-9), B.MAX_SLOTS_PER_STEP)) for x in v])
    total_gpus = sum(s["capacity"][0] for s in base["servers"])
    base["horizon"] = list_horizon(arrivals, work, gpus, total_gpus)
    return parse_model(Instance, base, root="instance")
