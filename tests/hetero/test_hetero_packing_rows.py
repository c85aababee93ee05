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


def _shortest_durations_reference(instance) -> list[float]:
    """Each job's shortest duration by trying every N from its chunks down (the search before the closed form)."""
    import math

    from formulations.hetero.data import _may_fit, duration_slots, most_copies

    ring = instance.architecture == "ring_allreduce"
    wcap = most_copies(instance.capacity, instance.worker_demand)
    pcap = np.zeros((len(instance.capacity), 0), np.int64) if ring else most_copies(instance.capacity,
                                                                                     instance.ps_demand)
    out = []
    for j, job in enumerate(instance.jobs):
        best = math.inf
        for m in range(len(instance.worker_demand)):
            for p in [-1] if ring else range(len(instance.ps_types)):
                for q in (True, False):
                    n = next((n for n in range(int(job.chunks), 0, -1) if _may_fit(q, n, m, p, wcap, pcap, ring)), 0)
                    if n:
                        best = min(best, duration_slots(instance, j, m, p, q, n))
        out.append(best)
    return out


@pytest.mark.parametrize(("preset", "options"), [("small", {}), ("small_ra", {}), ("small_congested", {}),
                                                 ("paper", {"jobs": 60}), ("paper_ra", {"jobs": 60}),
                                                 ("paper", {"jobs": 30, "servers": 3})])
@pytest.mark.parametrize("seed", [0, 1])
def test_shortest_durations_in_closed_form_equal_the_search_over_every_n(preset, options, seed):
    """The largest N that may fit, in closed form (`most_fitting_workers`), gives every job the same shortest
    duration as trying each N from the job's chunks down; the trivial bound rests on it."""
    from formulations.hetero.bound import shortest_durations

    inst = api.generate("hetero", preset, seed=seed, **options)
    assert shortest_durations(inst) == _shortest_durations_reference(inst)


def test_most_fitting_workers_matches_may_fit_for_every_n():
    """`_may_fit` holds exactly on least <= N <= top, colocated and distributed, with PSs and Ring-AllReduce."""
    from formulations.hetero.data import _may_fit, most_fitting_workers

    rng = np.random.default_rng(0)
    for _ in range(300):
        H, M, P = int(rng.integers(1, 4)), 2, 2
        wcap = rng.integers(0, 4, (H, M)) * rng.integers(0, 2, (H, M))
        for ring in (False, True):
            pcap = np.zeros((H, 0), np.int64) if ring else rng.integers(0, 2, (H, P))
            for m in range(M):
                for p in [-1] if ring else range(P):
                    for q in (True, False):
                        top, least = most_fitting_workers(q, m, p, wcap, pcap, ring)
                        fits = [n for n in range(1, 12) if _may_fit(q, n, m, p, wcap, pcap, ring)]
                        assert fits == list(range(least, top + 1)), (wcap, pcap, ring, m, p, q)
