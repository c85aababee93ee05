"""OASiS in two versions: ``oasis`` (Bao et al.'s online primal-dual pricing, admission by payoff) and
``oasis_latency`` (ours, the former ``oasis``). The admission rule is tested on an instance whose
payoffs are computed by hand from the price function."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from edgeopt import api
from edgeopt.core import Status
from edgeopt.okita import FAMILY, generate
from edgeopt.okita.oasis import OasisPrimalDual, price_bounds, utilities
from edgeopt.okita.placement import JobArrays

REFERENCE = Path(__file__).parent / "data" / "oasis_latency_reference.json"


def test_oasis_latency_keeps_the_decisions_of_the_former_oasis():
    for case in json.loads(REFERENCE.read_text())["cases"]:
        if "instance" in case:
            inst = FAMILY.parse_instance(case["instance"])
        else:
            inst = generate(case["preset"], seed=case["seed"], **case["kwargs"])
        res = api.run("oasis_latency", inst, seed=case["seed"])
        digest = hashlib.sha256(json.dumps(res.schedule, sort_keys=True).encode()).hexdigest()
        assert res.status.value == case["status"] and res.objective == case["objective"], case
        assert digest == case["schedule_sha256"], case


def two_jobs_in_the_last_slot(tau1: float) -> dict:
    """One site with 8 units of one resource, T = 3; jobs 0 and 1 both arrive in the last slot, so each has
    exactly one schedule: all its workers (1 unit each) and its PS (1 unit) in slot 2. Job 0 needs 5
    worker-slots (6 units), job 1 one (2 units). Linear costs f_i(x) = tau_i x."""
    def job(i, chunks, tau):
        return {"id": i, "arrival": 2, "epochs": 1, "data_chunks": [chunks], "chunk_size_mb": 1.0,
                "param_size_mb": 1.0, "worker_chunks_per_slot": 1.0, "worker_demand": [1.0], "ps_demand": [1.0],
                "latency_cost": {"kind": "linear", "tau": tau, "b": 0.0}}
    return {"horizon": 3, "resources": ["cpu"], "sites": [{"capacity": [8.0]}], "bandwidth_cost_per_mb": [[0.0]],
            "jobs": [job(0, 5, 100.0), job(1, 1, tau1)]}


@pytest.mark.parametrize("tau1", [10.0, 1000.0])
def test_admission_by_payoff_decides_whether_a_job_runs(tau1):
    """By hand: u_i(1) = f_i(2) - f_i(1) = tau_i, U = max_i tau_i / 1, L = min_i tau_i / (4 W_i (1 + 1)).
    Job 0 reserves 6 of 8 units of slot 2, so job 1 pays 2 units at p = L (U / L) ** (6 / 8):
    tau1 = 10: U = 100, L = 1.25, p = 33.4, payoff 10 - 66.9 < 0, rejected;
    tau1 = 1000: U = 1000, L = 2.5, p = 223.6, payoff 1000 - 447 > 0, admitted.
    ``oasis_latency`` has no admission rule and schedules job 1 both times."""
    inst = FAMILY.parse_instance(two_jobs_in_the_last_slot(tau1))
    U = max(100.0, tau1)
    L = min(100.0 / (4 * 5 * 2), tau1 / (4 * 1 * 2))
    p = L * (U / L) ** (6 / 8)
    payoff1 = tau1 - 2 * p
    res = api.run("oasis", inst)
    assert not FAMILY.check_result(inst, res)
    assert res.extra["price_L"] == pytest.approx(L) and res.extra["price_U"] == pytest.approx([U])
    if payoff1 > 0:
        assert res.status == Status.FEASIBLE and res.extra["not_admitted"] == []
    else:
        assert res.status == Status.PARTIAL and res.extra["rejected"] == [1] and res.extra["not_admitted"] == [1]
        assert len(res.schedule["jobs"]) == 1 and res.schedule["jobs"][0]["job"] == 0
    sch = OasisPrimalDual(inst)
    sch.run()
    assert sch.payoff[0] == pytest.approx(200.0 - 100.0 - 6 * L)  # V0 = f0(2), f0(1), 6 units at L
    assert sch.payoff[1] == pytest.approx(payoff1)
    lat = api.run("oasis_latency", inst)
    assert lat.status == Status.FEASIBLE and not FAMILY.check_result(inst, lat)


def test_price_bounds_and_prices_follow_the_formulas():
    inst = generate("small", seed=5, jobs=4)
    jobs = [JobArrays.of(j) for j in inst.jobs]
    T = inst.horizon
    U, L = price_bounds(jobs, T)
    for ja in jobs:
        u = utilities(ja, T)
        assert np.all(np.diff(u) <= 1e-12) and np.all(u >= 0)  # non-increasing utilities, >= 0
    lows = []
    for ja in jobs:
        u = utilities(ja, T)
        if (u > 0).any():
            lows.append(u[u > 0].min() / (4 * ja.worker_slots(int(ja.D.sum())) * (ja.m + ja.n).sum()))
    assert L == pytest.approx(min(lows))
    for k in range(len(inst.resources)):
        ups = [utilities(ja, T)[0] / min(v for v in (ja.m[k], ja.n[k]) if v > 0) for ja in jobs
               if (ja.m[k] > 0 or ja.n[k] > 0) and utilities(ja, T)[0] > 0]
        assert U[k] == pytest.approx(max(ups + [L]))
    sch = OasisPrimalDual(inst)
    sch.run()
    for t in range(T):
        g = sch.reserved[t]
        expect = L * (U[None, :] / L) ** np.where(sch.C > 0, g / np.where(sch.C > 0, sch.C, 1), 1.0)
        np.testing.assert_allclose(sch.unit_prices(t), expect)


def test_placement_is_by_price_only():
    """With the same prices everywhere, a worker costs the same on every site: oasis ignores the exchange
    cost pi q^{r, ps}, oasis_latency does not."""
    inst = generate("testbed", seed=0)
    ja = JobArrays.of(inst.jobs[0])
    pd = OasisPrimalDual(inst)
    fill, _ = pd.slot_fill(ja, ja.arrival, 4)
    assert np.allclose(fill.unit, fill.unit[0, 0])
    from edgeopt.okita.baselines import OasisScheduler

    ol = OasisScheduler(inst)
    fill2, _ = ol.slot_fill(ja, ja.arrival, 4)
    assert not np.allclose(fill2.unit, fill2.unit[0, 0])
