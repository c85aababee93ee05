"""okita's configuration-LP bound (``config_lp``, ``formulations/okita/configlp.py``): at most the proven
optimum on small instances, at least ``worker_lp``, re-checked without a solver, and a forged or edited
certificate is refused."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from edgeopt.core.errors import ModelError
from edgeopt.core.limits import BuildTimeLimit, Deadline, work_limit
from edgeopt.core.lowerbound import check_certificate, compute_bound
from edgeopt.core.result import Status
from edgeopt.okita.instance import generate
from formulations.okita import LOWER_BOUNDS
from formulations.okita.configlp import CONFIG_LP, ConfigRelaxation
from formulations.okita.milp import solve_milp
from tests.reliability_helpers import PROOF_CLOCK, PROOF_WORK

CASES = [("small", {"jobs": 2}, 0), ("small", {"jobs": 3}, 1), ("small", {"jobs": 4, "horizon": 10}, 2),
         ("paper", {"jobs": 3, "servers": 3, "horizon": 8}, 3), ("paper", {"jobs": 4, "servers": 3, "horizon": 8}, 6)]


@pytest.fixture(scope="module")
def solved() -> dict:
    """Each case: the instance, both bounds and the MILP's proven optimum (work-limited: reproducible)."""
    out = {}
    for preset, options, seed in CASES:
        inst = generate(preset, seed=seed, **options)
        with work_limit(PROOF_WORK):
            opt = solve_milp(inst, time_limit=PROOF_CLOCK)
        out[preset, seed] = (inst, compute_bound("okita", LOWER_BOUNDS["worker_lp"], inst, time_limit=PROOF_CLOCK),
                             compute_bound("okita", CONFIG_LP, inst, time_limit=PROOF_CLOCK), opt)  # iteration-bounded
    return out


@pytest.mark.parametrize(("preset", "options", "seed"), CASES)
def test_config_lp_is_between_worker_lp_and_the_proven_optimum(solved: dict, preset: str, options: dict,
                                                               seed: int) -> None:
    inst, worker, config, opt = solved[preset, seed]
    assert opt.status == Status.OPTIMAL
    assert config.status == Status.BOUND
    assert worker.bound - 1e-6 * abs(worker.bound) <= config.bound <= opt.objective + 1e-6
    assert check_certificate(CONFIG_LP, inst, config) == pytest.approx(config.bound)


def test_config_lp_is_stronger_than_worker_lp_somewhere(solved: dict) -> None:
    assert any(config.bound > worker.bound * 1.01 for _, worker, config, _ in solved.values())


def test_an_edited_certificate_is_refused(solved: dict) -> None:
    inst, _, config, _ = solved["paper", 3]
    cert = config.extra["certificate"]
    # the stated bound raised
    forged = copy.deepcopy(config)
    forged.bound = config.bound * 1.05
    with pytest.raises(ModelError):
        check_certificate(CONFIG_LP, inst, forged)
    # a multiplier (a price or a job's mu) edited: a different value, refused
    for k in range(min(3, len(cert["multipliers"]["value"]))):
        edited = copy.deepcopy(config)
        edited.extra["certificate"]["multipliers"]["value"][k] *= 3.0
        edited.extra["certificate"]["multipliers"]["value"][k] += 5.0
        with pytest.raises(ModelError):
            check_certificate(CONFIG_LP, inst, edited)
    # another relaxation's fingerprint, or another method's certificate
    edited = copy.deepcopy(config)
    edited.extra["certificate"]["fingerprint"] = "0" * 64
    with pytest.raises(ModelError):
        check_certificate(CONFIG_LP, inst, edited)
    with pytest.raises(ModelError):
        check_certificate(LOWER_BOUNDS["worker_lp"], inst, config)


def test_a_forged_certificate_with_huge_multipliers_certifies_no_more(solved: dict) -> None:
    """Any multipliers give a valid bound: made-up ones are refused unless they state their own (smaller) value."""
    inst, _, config, _ = solved["small", 1]
    rel = ConfigRelaxation(inst)
    forged = copy.deepcopy(config)
    pi = np.full((rel.n_rows, rel.horizon), 50.0)
    flat = pi.ravel()
    forged.extra["certificate"]["multipliers"] = {"shape": list(pi.shape), "index": list(range(flat.size)),
                                                  "value": flat.tolist()}
    with pytest.raises(ModelError):
        check_certificate(CONFIG_LP, inst, forged)


class Expired(Deadline):
    """A deadline already passed (no clock involved)."""

    def __init__(self) -> None:
        super().__init__(1.0)

    def remaining(self, *, floor: float = 0.05) -> float:
        return floor

    def expired(self) -> bool:
        return True

    def check(self, what: str = "model building") -> None:
        raise BuildTimeLimit(f"time limit reached during {what}")


def test_an_expired_deadline_certifies_nothing() -> None:
    """Every loop of the column generation checks the deadline: one already passed stops it before any
    value is certified (compute_bound then reports the time limit)."""
    rel = ConfigRelaxation(generate("small", seed=0, jobs=2))
    with pytest.raises(BuildTimeLimit):
        rel.column_generation(deadline=Expired())


def test_config_lp_is_below_the_certified_optima_of_the_shipped_instances() -> None:
    import json
    from pathlib import Path

    from edgeopt.okita.instance import parse_instance

    folder = Path(__file__).resolve().parents[2] / "instances" / "okita"
    records = sorted(folder.glob("*.optimum.json"))
    assert records
    for record in records:
        inst = parse_instance(json.loads((folder / record.name.replace(".optimum.json", ".json")).read_text()))
        optimum = json.loads(record.read_text())["objective"]
        res = compute_bound("okita", CONFIG_LP, inst, time_limit=PROOF_CLOCK)
        assert res.bound <= optimum + 1e-6 * max(1.0, abs(optimum)), record.name
        assert check_certificate(CONFIG_LP, inst, res) == pytest.approx(res.bound)


def test_plans_completing_past_a_jobs_cut_are_no_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every job cut after its first slot, the algorithms' entries (columns of the master) complete past
    the cut: the multipliers' targets skip them (they once crashed the pricing), and the bound is still
    certified, re-checked and at most the proven optimum."""
    from formulations.okita import configlp

    monkeypatch.setattr(configlp, "CUT_FACTOR", 0.0)
    monkeypatch.setattr(configlp, "CUT_MIN", 1)
    inst = generate("small", seed=0, jobs=4, horizon=8)  # its MILP proves in a fraction of a second
    rel = ConfigRelaxation(inst)
    past = [i for i, plan in rel._heuristic_plans(Deadline(PROOF_CLOCK))
            if plan.completion - rel.jobs[i].arrival >= rel.jobs[i].slots]
    assert past  # the case this test is about
    with work_limit(PROOF_WORK):
        opt = solve_milp(inst, time_limit=PROOF_CLOCK)
    res = compute_bound("okita", CONFIG_LP, inst, time_limit=PROOF_CLOCK)
    assert res.status == Status.BOUND
    assert res.bound <= opt.objective + 1e-6
    assert check_certificate(CONFIG_LP, inst, res) == pytest.approx(res.bound)


def test_converged_is_claimed_only_where_the_bound_meets_the_master_lp(solved: dict) -> None:
    """The pricing is heuristic: when it finds no improving column while the master LP is still above the
    certified L, the result must not say ``converged`` (the `paper` generator at 6 jobs on 3 sites, T = 150,
    stopped so with master LP 568.0 above L 553.6 before 2026-12-07)."""
    inst = generate("paper", seed=0, jobs=6, servers=3)
    results = [config for _, _, config, _ in solved.values()]
    results.append(compute_bound("okita", CONFIG_LP, inst, time_limit=PROOF_CLOCK))
    for res in results:
        solver = res.extra["solver"]
        gap = solver["master_lp"] - res.extra["certificate"]["relaxation_value"]
        if solver["converged"]:
            assert gap <= 1e-4 * abs(solver["master_lp"]) + 1e-9, solver
        else:
            assert solver["stop"] != "gap below tolerance", solver


def _start_point(rel: ConfigRelaxation) -> tuple[float, np.ndarray, list]:
    """Zero prices with each job's first multipliers (few steps: far from the dual's optimum), and each job's
    plans alone as the known plans."""
    from edgeopt.core.colgen import lagrangian
    from formulations.okita import singlejob as sj

    prices = np.zeros((rel.S, rel.K, rel.T))
    mu = np.stack([sj.start_multipliers(job) for job in rel.jobs])
    known = [[p for p in sj.candidate_plans(job, np.zeros((job.slots, rel.S)), np.zeros((job.slots, rel.S)))
              if p.completion - job.arrival < job.slots] for job in rel.jobs]
    pi = rel.pack(prices, mu)
    return lagrangian(rel, pi).value, pi, known


def test_the_deep_ascent_certifies_more_and_never_less(solved: dict) -> None:
    """`ConfigRelaxation.deepen`: the multipliers it returns re-evaluate to the value it reports, which is never
    below the value it started from and never above the proven optimum; it gains on some case."""
    from edgeopt.core.colgen import lagrangian

    gained = False
    for inst, _, _, opt in solved.values():
        rel = ConfigRelaxation(inst)
        value, pi, known = _start_point(rel)
        new, pi2 = rel.deepen(value, pi, known, Deadline(PROOF_CLOCK), steps=60)
        assert new >= value
        assert lagrangian(rel, pi2).value == pytest.approx(new, rel=1e-12)
        assert new <= opt.objective + 1e-6
        gained |= new > value + 1e-6 * max(1.0, abs(value))
    assert gained


def test_the_deep_ascent_keeps_its_start_when_no_time_is_left(solved: dict) -> None:
    inst, _, _, _ = solved["paper", 3]
    rel = ConfigRelaxation(inst)
    value, pi, known = _start_point(rel)
    new, pi2 = rel.deepen(value, pi, known, Expired())
    assert new == value and pi2 is pi
