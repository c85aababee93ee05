"""Exact models of MINLP (2) (``milp``: Pyomo + HiGHS, ``cpsat``: OR-Tools CP-SAT) and the bounds of (4).

Checked here: the two independent models agree (1e-6 relative) on 30 seeded
``small`` instances and on hand-made instances where the PS constraints
(2e)/(2f) bind and where the colocated cloud rate (zeta_j = 1) pays; every
schedule they return passes the family's validator; no registered algorithm
beats the optimum; infeasible instances are reported as infeasible; models
carry the paper's equation numbers.
"""

from __future__ import annotations

import pytest

from edgeopt.core import InputError, Status, registered
from edgeopt.preemptive import FAMILY, generate
from edgeopt.preemptive.instance import Instance
from formulations.preemptive import BOUNDS, METHODS, build_cpsat, build_ilp4, build_milp
from formulations.preemptive.data import from_instance
from tests.reliability_helpers import prove

SEEDS = range(30)
REL = 1e-6


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL * max(1.0, abs(a), abs(b))


def tiny(jobs: list[dict], servers: list[dict], horizon: int) -> Instance:
    """A hand-made instance; slot_seconds = 1 so that times are slots. Job defaults: one chunk
    of P = 2 slots (edge and cloud colocated alike), worker type 0."""
    base = {"epochs": 1, "chunks": 1, "minibatches_per_chunk": 1, "worker_time_slots": 2.0, "ps_time_slots": 0.0,
                "gradient_size_mb": 0.0, "bandwidth_mbps": 100.0, "worker_type": 0, "arrival": 0}
    js = [{**base, **j, "id": k} for k, j in enumerate(jobs)]
    return Instance(horizon=horizon, slot_seconds=1.0, servers=servers, jobs=js)


@pytest.fixture(scope="module")
def solved():
    """Both exact models on the 30 seeded small instances (solved once per module; proofs by work)."""
    out = []
    for seed in SEEDS:
        inst = generate("small", seed=seed)
        out.append((seed, inst, prove(METHODS["milp"], inst), prove(METHODS["cpsat"], inst)))
    return out


def test_milp_and_cpsat_agree_and_validate_on_30_small_instances(solved):
    for seed, inst, a, b in solved:
        assert a.status == Status.OPTIMAL and b.status == Status.OPTIMAL, (seed, a.status, b.status)
        assert _close(a.objective, b.objective), (seed, a.objective, b.objective)
        for res in (a, b):
            assert not FAMILY.check_result(inst, res), (seed, res.algorithm)
            assert res.bound is not None and res.bound <= res.objective + 1e-6


def test_every_registered_algorithm_is_not_below_the_optimum(solved):
    algos = registered("preemptive")
    if not algos:
        pytest.skip("no preemptive algorithm registered yet")
    worst = {}
    for seed, inst, a, _ in solved:
        for name, algo in algos.items():
            res = algo(inst, seed=0)
            assert not FAMILY.check_result(inst, res), (seed, name)
            if res.status != Status.FEASIBLE:
                continue
            assert res.objective >= a.objective - 1e-6, (seed, name, res.objective, a.objective)
            worst[name] = max(worst.get(name, 1.0), res.objective / a.objective)
    print("worst ratio to the optimum of (2) on 30 small instances:", {k: round(v, 4) for k, v in worst.items()})


def _both(inst: Instance, **kw):
    a = prove(METHODS["milp"], inst, **kw)  # by work, not by the clock: the same on a loaded machine
    b = prove(METHODS["cpsat"], inst, **kw)
    return a, b


def test_ps_capacity_binds():
    """One edge server, two workers but a single PS, the cloud's PSs out of reach for 10 slots:
    two jobs cannot train at once, so one waits (JCT 2 + 4 = 6); with two PSs both run (2 + 2)."""
    servers = [{"workers": [0, 0], "ps": 1}, {"is_cloud": True}]
    jobs = [{"upload_delay_slots": [0, 10]}, {"upload_delay_slots": [0, 10]}]
    one_ps = tiny(jobs, servers, horizon=8)
    a, b = _both(one_ps)
    assert a.status == b.status == Status.OPTIMAL
    assert a.objective == pytest.approx(6.0) and b.objective == pytest.approx(6.0)
    two_ps = tiny(jobs, [{"workers": [0, 0], "ps": 2}, {"is_cloud": True}], horizon=8)
    a2, b2 = _both(two_ps)
    assert a2.objective == pytest.approx(4.0) and b2.objective == pytest.approx(4.0)
    # the PS may sit on another server than the chunk: a second server with one PS and no worker
    shared = tiny([{"upload_delay_slots": [0, 0, 10]}, {"upload_delay_slots": [0, 0, 10]}],
                  [{"workers": [0, 0], "ps": 1}, {"workers": [], "ps": 1}, {"is_cloud": True}], horizon=8)
    a3, b3 = _both(shared)
    assert a3.objective == pytest.approx(4.0) and b3.objective == pytest.approx(4.0)


def test_colocated_cloud_rate_is_used_when_every_chunk_is_on_the_cloud():
    """Communication makes a mini-batch 1 slot longer unless the job is colocated (eq. (1)):
    P = 3 on the edge, P^c = 2 on the cloud. Edge delay 3, cloud delay 3, two chunks, one edge
    worker: edge+edge = 3+6 = 9 and edge+cloud = 3+3 = 6, cloud+cloud colocated = 3+2 = 5."""
    servers = [{"workers": [0], "ps": 1}, {"is_cloud": True}]
    job = {"chunks": 2, "gradient_size_mb": 100.0 / 16, "bandwidth_mbps": 100.0, "upload_delay_slots": [3, 3]}
    inst = tiny([job], servers, horizon=12)
    assert inst.chunk_slots(0, False) == 3 and inst.chunk_slots(0, True) == 2
    a, b = _both(inst)
    assert a.objective == pytest.approx(5.0) and b.objective == pytest.approx(5.0)
    sched = FAMILY.parse_schedule(a.schedule)
    assert all(c.server == 1 for c in sched.jobs[0].chunks)


def test_infeasible_instances_are_reported_infeasible():
    """No edge PS and no cloud: a job can never hold a PS, (2e) cannot be met."""
    inst = tiny([{"upload_delay_slots": [0]}], [{"workers": [0], "ps": 0}], horizon=6)
    for res in _both(inst):
        assert res.status == Status.INFEASIBLE and res.schedule is None and res.objective is None
    short = tiny([{"upload_delay_slots": [1, 5]}], [{"workers": [0], "ps": 1}, {"is_cloud": True}], horizon=2)
    for res in _both(short):
        assert res.status == Status.INFEASIBLE


def test_storage_instances_are_refused_with_a_named_field():
    """The exact models do not encode Sec. VI's storage (7b): they refuse rather than answer wrongly."""
    inst = generate("small", seed=0, storage=True)
    for method in ("milp", "cpsat"):
        with pytest.raises(InputError, match="storage_mb"):
            METHODS[method](inst)


def test_upper_bound_windows_keep_the_optimum(solved):
    """``upper_bound`` (any feasible objective, here A_online's) shrinks each job's window by
    data.with_upper_bound; the optimum must not move. Checked on 10 small and 3 larger instances."""
    algos = registered("preemptive")
    if "online" not in algos:
        pytest.skip("online not registered")
    cases = [(inst, a.objective) for _seed, inst, a, _b in solved[:10]]
    for seed in range(3):
        inst = generate("small", seed=seed, jobs=8, servers=3)
        cases.append((inst, prove(METHODS["milp"], inst).objective))
    for inst, opt in cases:
        ub = algos["online"](inst).objective
        for method in ("milp", "cpsat"):
            res = prove(METHODS[method], inst, upper_bound=ub)
            assert res.status == Status.OPTIMAL and _close(res.objective, opt), (method, res.objective, opt)
            assert not FAMILY.check_result(inst, res)


def test_constraints_carry_equation_numbers_and_quote_them():
    inst = generate("small", seed=3)
    data = from_instance(inst)
    import pyomo.environ as pyo

    for model in (build_milp(data), build_ilp4(data), build_ilp4(data, relax=True)):
        names = [c.local_name for c in model.component_objects(pyo.Constraint)]
        assert names and all(n.startswith(("c2", "c4")) for n in names), names
        assert all(c.doc and "(" in c.doc for c in model.component_objects(pyo.Constraint))
    h = build_cpsat(data)
    assert h.model.Proto().variables  # named literals (see build_cpsat)
    assert any(v.name.startswith("chunk_") for v in h.model.Proto().variables)


def test_time_limit_incumbents_are_valid_and_honest():
    """At a time limit a model returns its incumbent (validated by finish: no superfluous slots, zeta
    forced by placement (2g)) and its bound; the objective is the schedule's own. The MILP's C_j may sit
    above a non-optimal incumbent's completion: its schedule's smaller objective is reported and the
    solver's figure kept in extra["solver_incumbent"]."""
    inst = generate("small", seed=1, jobs=20, servers=4)
    res = METHODS["milp"](inst, time_limit=1.0)
    assert res.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    if res.schedule is not None:
        assert not FAMILY.check_result(inst, res)
        assert res.bound is not None and res.bound <= res.objective + 1e-6
        if res.status == Status.TIME_LIMIT:
            assert res.objective <= res.extra["solver_incumbent"] + 1e-6
    res = METHODS["cpsat"](generate("small", seed=1, jobs=12, servers=3), time_limit=2.0)
    assert res.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    if res.schedule is not None:
        assert not FAMILY.check_result(generate("small", seed=1, jobs=12, servers=3), res)


def test_bounds_are_below_the_optimum(solved):
    for seed, inst, a, _ in solved[:10]:
        lp = BOUNDS["lp4"](inst)
        ilp = prove(BOUNDS["ilp4"], inst)  # a MILP: proved by work, not by its default 60 s
        assert lp.status == ilp.status == Status.OPTIMAL
        assert lp.bound <= ilp.bound + 1e-7 <= a.objective + 2e-7, (seed, lp.bound, ilp.bound, a.objective)
