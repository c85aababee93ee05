"""The two exact models of MINLP (2) (milp: Pyomo + HiGHS, cpsat: OR-Tools) agree, and nothing beats them.

On 30 seeded ``small`` instances both prove optimality with the same
objective (1e-6 relative; proofs by deterministic work, `tests.reliability_helpers.prove`,
so a loaded machine gives the same answers), both schedules pass the family's validator, and
every registered algorithm's complete, non-preemptive schedule costs at least
the optimum. Both also match a brute-force enumeration on tiny instances, a
hand-proved optimum, report infeasibility and time limits as such.
"""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from edgeopt.core import ModelError, Status, registered
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud.instance import Instance, Job, Server
from formulations.edgecloud import METHODS, build_cpsat, build_milp
from tests.reliability_helpers import limit_cpsat_by_work, prove

SEEDS = range(30)


def _check(instance, result) -> None:
    """Every result goes through the validator (and its stated objective is the schedule's)."""
    assert FAMILY.check_result(instance, result) == []


@pytest.mark.parametrize("seed", SEEDS)
def test_models_agree_and_bound_every_algorithm(seed: int) -> None:
    inst = generate("small", seed=seed)
    milp = prove(METHODS["milp"], inst)
    cpsat = prove(METHODS["cpsat"], inst)
    for res in (milp, cpsat):
        assert res.status == Status.OPTIMAL, (res.algorithm, res.status, res.extra)
        _check(inst, res)
        assert res.bound == pytest.approx(res.objective, rel=1e-6)
    assert milp.objective == pytest.approx(cpsat.objective, rel=1e-6)
    opt = min(milp.objective, cpsat.objective)
    algorithms = registered("edgecloud")
    assert "online" in algorithms
    complete = 0
    for name, spec in algorithms.items():
        res = spec(inst, seed=0)
        _check(inst, res)
        # Comparable with the optimum of (2): every job scheduled, and no preemption (a preemptive
        # schedule, the `preemptive` baseline's, is outside MINLP (2) and may legitimately beat it).
        if res.status == Status.FEASIBLE and not res.schedule.get("preemptive"):
            complete += 1
            assert res.objective >= opt - 1e-6, (name, res.objective, opt)
    assert complete >= 1


def test_models_agree_on_larger_instances() -> None:
    """More jobs and servers than `small`: still agreement (a different regime of the models)."""
    for seed, jobs, servers in ((1, 8, 2), (2, 6, 4)):
        inst = generate("small", seed=seed, jobs=jobs, servers=servers)
        a = prove(METHODS["milp"], inst)
        b = prove(METHODS["cpsat"], inst)
        assert a.status == b.status == Status.OPTIMAL
        assert a.objective == pytest.approx(b.objective, rel=1e-6)
        _check(inst, a)
        _check(inst, b)


def _hand_instance(horizon: int, n_jobs: int, delay: int = 0) -> Instance:
    """One server with 1 worker and 1 PS; each job needs 4 slots (1 worker, colocated)."""
    job = {"worker_type": 0, "ps_type": 0, "epochs": 1, "chunks": 1, "minibatches_per_chunk": 4,
           "worker_time_slots": 1.0, "ps_time_slots": 0.0, "gradient_size_mb": 0.0, "bandwidth_mbps": 100.0,
           "upload_delay_slots": [delay]}
    return Instance(horizon=horizon, slot_seconds=60.0,
                    servers=[Server(workers=[1], ps=[1])],
                    jobs=[Job(id=j, arrival=0, **job) for j in range(n_jobs)])


def test_hand_instance_optimum() -> None:
    """Two 4-slot jobs on one worker: they run back to back, JCTs 4 and 8 (hand proof): optimum 12."""
    inst = _hand_instance(horizon=10, n_jobs=2)
    for solve in METHODS.values():
        res = prove(solve, inst)
        assert res.status == Status.OPTIMAL
        assert res.objective == 12.0
        _check(inst, res)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_infeasible_is_reported(method: str) -> None:
    # Capacity: two 4-slot jobs on one worker need 8 slots; the horizon has 7. Each fits alone,
    # so only the model itself can prove it.
    res = prove(METHODS[method], _hand_instance(horizon=7, n_jobs=2))
    assert res.status == Status.INFEASIBLE and res.schedule is None and res.objective is None
    # Release (2i): the data reach the only server at slot 5; a 4-slot run cannot end by 8.
    res = prove(METHODS[method], _hand_instance(horizon=8, n_jobs=1, delay=5))
    assert res.status == Status.INFEASIBLE and res.extra["jobs"] == [0]


@pytest.mark.parametrize("method", sorted(METHODS))
def test_time_limit_returns_incumbent_and_bound(method: str) -> None:
    """At a 2 s wall-clock limit: status time_limit, any incumbent valid and above any bound. Whether an
    incumbent is found in 2 s depends on the machine's load: the work-limited test below asserts one."""
    inst = generate("small", seed=0, jobs=30, servers=2)
    res = METHODS[method](inst, time_limit=2.0)
    assert res.status == Status.TIME_LIMIT
    if res.objective is not None:
        if res.bound is not None:
            assert res.bound <= res.objective
        _check(inst, res)


def test_cpsat_stopped_by_its_limit_returns_incumbent_and_bound(monkeypatch) -> None:
    """CP-SAT stopped by a work limit (deterministic time), not the clock: an incumbent and a bound,
    whatever the machine's load."""
    limit_cpsat_by_work(monkeypatch)
    inst = generate("small", seed=0, jobs=30, servers=2)
    res = METHODS["cpsat"](inst, time_limit=600)
    assert res.status == Status.TIME_LIMIT
    assert res.objective is not None and res.bound is not None
    assert res.bound <= res.objective
    _check(inst, res)


def test_models_carry_equation_numbers() -> None:
    inst = generate("small", seed=3)
    m = build_milp(inst)
    names = {c.name for c in m.component_objects(pyo.Constraint)}
    for eq in ("2a", "2b", "2c", "2d", "2f", "2g", "2h", "2i"):
        assert any(n.startswith(f"c{eq}_") for n in names), eq
    assert "W_su" in m.c2g_worker_capacity.doc
    cm = build_cpsat(inst)
    assert cm.model.proto.variables[0].name.startswith("job0_mode")


def test_extracted_schedule_is_rechecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model whose schedule breaks a constraint is an error, never a result (finish re-validates)."""
    import formulations.edgecloud.cpsat as cp

    real = cp.extract_cpsat

    def broken(cm, solver):
        runs = real(cm, solver)
        # Start every run at slot 0, before its data reach any server (delays are >= 1): breaks (2i).
        return [type(r)(r.job, 0, r.end, r.workers, r.ps_server, r.colocated) for r in runs]

    monkeypatch.setattr(cp, "extract_cpsat", broken)
    with pytest.raises(ModelError):
        prove(cp.solve_cpsat, generate("small", seed=1))


@pytest.mark.parametrize("method", sorted(METHODS))
def test_no_jobs_is_optimal_zero(method: str) -> None:
    inst = generate("small", seed=0, jobs=1).model_copy(update={"jobs": []})
    res = prove(METHODS[method], inst)
    assert res.status == Status.OPTIMAL and res.objective == 0.0
    _check(inst, res)


def _brute_force_optimum(inst: Instance) -> float:
    """Optimum of (2) by enumerating every run of every job (no code shared with the models).

    A run is (start, workers per server, PS server) with end = start + d_j(w, xi) and xi read off
    the placement; holding longer is never better. Depth-first over jobs, pruned by the best
    total found and each remaining job's least JCT; capacities checked slot by slot.
    """
    import itertools

    import numpy as np

    from edgeopt.edgecloud.instance import duration_slots

    S, T = len(inst.servers), inst.horizon
    W, P = inst.W(), inst.P()
    runs = []
    for j, job in enumerate(inst.jobs):
        rel = inst.release(j)
        mine = []
        for y in itertools.product(*[range(min(job.chunks, W[s, job.worker_type]) + 1) for s in range(S)]):
            w = sum(y)
            if not 1 <= w <= job.chunks:
                continue
            for p in range(S):
                if P[p, job.ps_type] < 1:
                    continue
                used = [s for s in range(S) if y[s]] + [p]
                coloc = all(s == p for s in range(S) if y[s])
                d = duration_slots(inst, job, w, coloc)
                for h in range(max(rel[s] for s in used), T - d + 1):
                    mine.append((h + d - job.arrival, h, h + d, y, p))
        runs.append(sorted(mine))
    least = [r[0][0] for r in runs]
    best = [np.inf]
    fw = np.repeat(W[:, :, None], T, 2).copy()
    fp = np.repeat(P[:, :, None], T, 2).copy()

    def dfs(j: int, total: float) -> None:
        if j == len(runs):
            best[0] = min(best[0], total)
            return
        job = inst.jobs[j]
        for jct, h, e, y, p in runs[j]:
            if total + jct + sum(least[j + 1:]) >= best[0]:
                break
            ya = np.array(y)[:, None]
            if (fw[:, job.worker_type, h:e] < ya).any() or (fp[p, job.ps_type, h:e] < 1).any():
                continue
            fw[:, job.worker_type, h:e] -= ya
            fp[p, job.ps_type, h:e] -= 1
            dfs(j + 1, total + jct)
            fw[:, job.worker_type, h:e] += ya
            fp[p, job.ps_type, h:e] += 1

    dfs(0, 0.0)
    return best[0]


@pytest.mark.parametrize(("seed", "jobs", "servers"), [(s, 4, 2) for s in range(5)] + [(s, 6, 1) for s in range(5)])
def test_models_match_brute_force(seed: int, jobs: int, servers: int) -> None:
    """Both models share the mode enumeration (data.py); an enumeration written from the
    constraints alone checks that it loses no schedule."""
    inst = generate("small", seed=seed, jobs=jobs, servers=servers)
    brute = _brute_force_optimum(inst)
    for solve in METHODS.values():
        res = prove(solve, inst)
        assert res.status == Status.OPTIMAL
        assert res.objective == pytest.approx(brute, rel=1e-9)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_unknown_option_is_an_input_error(method: str) -> None:
    from edgeopt.core import InputError

    with pytest.raises(InputError, match="options"):
        METHODS[method](generate("small", seed=0), time_limit=5, bogus=1)
