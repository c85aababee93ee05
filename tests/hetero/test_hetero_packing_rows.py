"""The packing rows of hetero's ``ti_lp`` (`formulations.hetero.bound`, `edgeopt.core.packing`): per slot, the
workers of a set of types use at most what those types alone can hold server by server. They hold in every
algorithm's schedule, and they cut: their limits are below the pooled capacity."""

from __future__ import annotations

import numpy as np
import pytest

from edgeopt import api
from formulations.hetero.bound import relaxation
from tests.reliability_helpers import valid_schedules


@pytest.mark.parametrize("seed", range(3))
def test_every_schedule_meets_the_packing_rows(seed: int) -> None:
    inst = api.generate("hetero", "paper", seed=seed, jobs=30, servers=12)
    rel = relaxation(inst)
    R = len(inst.resources)
    names = list(rel.row_names[R:])
    limits = rel.capacity[R:, 0]
    assert names
    pooled = {r: float(inst.capacity[:, r].sum()) for r in range(R)}
    assert all(limits[i] < pooled[int(n.split("[")[1].split(":")[0])] for i, n in enumerate(names))
    e = inst.worker_demand
    checked = 0
    for name, schedule in valid_schedules("hetero", inst):
        for i, row in enumerate(names):
            r, types = row[len("packing["):-1].split(":")
            types = {int(m) for m in types.split(",")}
            use = np.zeros(inst.horizon)
            for js in schedule["jobs"]:
                if js["worker_type"] in types:
                    n = sum(js["workers"].values())
                    use[js["start"]:js["start"] + js["duration"]] += n * e[js["worker_type"], int(r)]
            assert use.max() <= limits[i] + 1e-6, (name, row)
            checked += 1
    assert checked


def test_the_paper_scale_bound_is_not_refused_at_the_default_budget() -> None:
    """The size estimate counts the packing rows a column may touch (up to (R - 1) M) over each job's shortest
    run, not over the whole horizon: counted over the horizon, the 1,000-job Fig. 2 instance (T = 300) was
    refused at the default budget of 2,000,000 nonzeros."""
    from edgeopt.solving.bounds import bound_refusal

    assert bound_refusal(api.generate("hetero", "paper_fig2", seed=0)) is None
