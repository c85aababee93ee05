"""edgecloud: an instance from a window of a job trace (what ``edgeopt generate edgecloud --trace`` builds).

The family-neutral steps (window, arrivals, work, horizon checks) are in `edgeopt.traces.instances` and
`edgeopt.core.tracemap`; this module is the edgecloud mapping itself, described in docs/families/edgecloud.md,
section "From a trace". `edgeopt.edgecloud.spec` hands it to the core as ``FamilySpec.from_trace``.
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
from edgeopt.edgecloud import instance as ec
from edgeopt.edgecloud.instance import Instance

#: The longest horizon a edgecloud instance may have (what ``edgeopt generate --horizon`` allows).
HORIZON_LIMIT = int(model_limits(Instance, horizon="horizon")["horizon"])


def from_trace(jobs: pd.DataFrame, start_s: float, seed: int, servers: int | None,
               machines: pd.DataFrame | None) -> Any:

    rng = np.random.default_rng([seed, 1])
    slot = 3600.0
    n = len(jobs)
    base = ec.paper_instance(seed, jobs=n, servers=servers or 200, horizon=2).model_dump(mode="json")
    U, V = len(base["servers"][0]["workers"]), len(base["servers"][0]["ps"])
    rows = machine_rows(machines, servers, rng)
    if rows is not None:
        edge = []
        for _, m in rows.iterrows():
            c = int(m["cpus"]) if not math.isnan(m["cpus"]) else int(rng.choice([4, 8]))
            edge.append({"is_cloud": False,
                         "workers": [int(x) for x in np.bincount(rng.integers(0, U, size=int(m["gpus"])), minlength=U)],
                         "ps": [int(x) for x in np.bincount(rng.integers(0, V, size=min(c, B.MAX_COUNT)), minlength=V)]})
        base["servers"] = edge + [base["servers"][-1]]
        for j in base["jobs"]:
            j["upload_delay_slots"] = [int(x) for x in rng.integers(1, 5, size=len(edge))] + \
                [j["upload_delay_slots"][-1]]
    arrivals = arrival_slots(jobs, start_s, slot)
    check_fits("edgecloud", jobs, arrivals, jobs["duration_s"].to_numpy(dtype=float), slot,
               HORIZON_LIMIT)
    work = work_slots(jobs, slot)
    gpus = jobs["gpus"].to_numpy()
    for k, j in enumerate(base["jobs"]):
        E, D, M, t = factor_work(work[k], j["worker_time_slots"] + j["ps_time_slots"], j["chunks"],
                                 j["minibatches_per_chunk"], min_chunks=int(min(gpus[k], B.MAX_COUNT)))
        j.update(arrival=int(arrivals[k]), epochs=E, chunks=D, minibatches_per_chunk=M,
                 worker_time_slots=max(t - j["ps_time_slots"], 1e-9))
    edge_gpus = sum(sum(s["workers"]) for s in base["servers"][:-1])
    # like the paper preset (T = 1.5 * 4096, last arrival 4096): the last arrival's geometric round
    # 2**k >= a_j must end by T, else the online algorithm has no window for it
    rounds = int(1.5 * 2 ** math.ceil(math.log2(int(arrivals.max()) + 1))) if len(arrivals) else 1
    base["horizon"] = int(min(B.MAX_HORIZON, max(rounds, list_horizon(arrivals, work, gpus, edge_gpus, extra=40))))
    return parse_model(Instance, base, root="instance")
