"""The exact models of program (2)/(15): statuses, infeasibility, model structure, Ring-AllReduce.

(The agreement of both models on 30 seeded ``small`` instances is in
``test_hetero_formulations_agree_a.py`` / ``_b.py``; the batch problem of Sec. 5 in
``test_hetero_formulations_batch.py``.)
"""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from edgeopt import api
from edgeopt.core import Status
from edgeopt.hetero import generate
from edgeopt.hetero.instance import Instance, Job, NodeType, Server
from formulations.hetero import METHODS, build_milp
from formulations.hetero.checks import agreement
from formulations.hetero.data import prepare
from tests.reliability_helpers import limit_cpsat_by_work, prove


def _tiny(capacity: list[float], horizon: int, n_jobs: int = 2) -> Instance:
    """One server; every job needs 2 slots with one worker (1 GPU, 2 CPU) and one PS (1 CPU)."""
    jobs = [Job(id=k, arrival=0, weight=1.0 + k, epochs=1, chunks=1, minibatches_per_chunk=2,
                minibatch_time_slots=[1.0], ps_update_time_slots=[0.0], gradient_size_mb=1.0)
            for k in range(n_jobs)]
    return Instance(horizon=horizon, resources=["gpu", "cpu"], slot_seconds=10.0,
                    servers=[Server(capacity=capacity)],
                    worker_types=[NodeType(demand=[1, 2], bandwidth_mbps=100)],
                    ps_types=[NodeType(demand=[0, 1], bandwidth_mbps=1000)], jobs=jobs)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_tiny_instance_optimum_by_hand(method):
    """Two 2-slot jobs (weights 1, 2) on a server that runs one at a time: the heavier first,
    objective 2 * 2 + 1 * 4 = 8 (hand proof: any order puts one job at completion >= 4)."""
    inst = _tiny([1, 3], horizon=4)
    res = prove(METHODS[method], inst)
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(8.0)
    assert res.bound == pytest.approx(8.0)
    assert not api.family("hetero").check_result(inst, res)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_capacity_infeasible_instance_is_reported_infeasible(method):
    """Same two jobs, horizon 3: each fits alone but not both (they need 4 slots in sequence)."""
    res = prove(METHODS[method], _tiny([1, 3], horizon=3))
    assert res.status == Status.INFEASIBLE
    assert res.objective is None and res.schedule is None


@pytest.mark.parametrize("method", sorted(METHODS))
def test_job_that_fits_nowhere_is_reported_infeasible(method):
    """A server with 1 CPU cannot host a worker (2 CPU): the solver proves (2a) impossible."""
    res = prove(METHODS[method], _tiny([4, 1], horizon=10, n_jobs=1))
    assert res.status == Status.INFEASIBLE
    assert res.extra["unschedulable_jobs"] == [0]


def test_cpsat_stopped_by_its_limit_returns_incumbent_and_bound(monkeypatch):
    """14 jobs, 3 servers, 30 slots, CP-SAT stopped by a work limit before its proof: status time_limit,
    a valid incumbent and a bound below it, whatever the machine's load."""
    limit_cpsat_by_work(monkeypatch)
    inst = generate("small", seed=7, jobs=14, servers=3, horizon=30)
    res = METHODS["cpsat"](inst, time_limit=600)
    assert res.status == Status.TIME_LIMIT
    assert res.objective is not None and res.bound is not None
    assert not api.family("hetero").check_result(inst, res)
    assert res.bound <= res.objective + 1e-6


@pytest.mark.parametrize("method", sorted(METHODS))
def test_time_limit_returns_incumbent_and_bound(method):
    """The same instance at a 3 s (wall-clock) limit: status time_limit; any incumbent is a valid schedule
    and any bound is below it. Whether an incumbent is found in 3 s depends on the machine's load, so
    it is not asserted here (see the work-limited test above)."""
    inst = generate("small", seed=7, jobs=14, servers=3, horizon=30)
    res = METHODS[method](inst, time_limit=3)
    assert res.status == Status.TIME_LIMIT
    if res.objective is not None:
        assert not api.family("hetero").check_result(inst, res)
        if res.bound is not None:
            assert res.bound <= res.objective + 1e-6


def test_milp_constraints_carry_equation_numbers():
    m = build_milp(prepare(generate("small", seed=0)))
    names = {c.local_name for c in m.component_objects(pyo.Constraint)}
    for eq in ("c2a_one_start", "c2b_worker_type", "c2c_ps_type", "c2d_spread", "c2e_one_ps", "c2f_workers",
               "c2h_capacity", "c2i_ps_bandwidth"):
        assert eq in names
        assert getattr(m, eq).doc
    ra = build_milp(prepare(generate("small_ra", seed=0)))
    ra_names = {c.local_name for c in ra.component_objects(pyo.Constraint)}
    assert "c2i_ps_bandwidth" not in ra_names and "c2e_one_ps" not in ra_names


@pytest.mark.parametrize("seed", range(6))
def test_ring_allreduce_models_agree(seed):
    """Program (15) on `small_ra`: both models prove the same optimum, schedules valid, every
    registered algorithm >= the optimum."""
    out = prove(agreement, generate("small_ra", seed=seed))
    assert not out.problems, out.problems


def test_lp_relaxation_is_below_the_optimum():
    from formulations.hetero.golden import lp_relaxation

    inst = generate("small", seed=4)
    opt = prove(METHODS["cpsat"], inst)
    assert opt.status == Status.OPTIMAL
    assert lp_relaxation(inst) <= opt.objective + 1e-6
