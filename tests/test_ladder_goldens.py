"""Golden optima at the sizes the exact methods now reach (``instances/<family>/ladder/``, written by
``instances/make_ladder_goldens.py``): rungs of the ``small`` ladders of `benchmarks/exact_scale.py`, each proven
optimal by two exact methods that agreed (minutes of CPU, so not re-solved here).

What is checked without a solver search: the file is the generator's instance; the stored optimal schedule passes
the validator with the stored objective; every certified lower bound of the family is at most the optimum and its
certificate re-checks; every registered algorithm's schedule is valid and never below the optimum (so a ratio to
the optimum is >= 1, the theorem checks' premise); preemptive: Lemma 1's LP (4) is below the optimum.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt import api
from edgeopt.core import Result, Status
from edgeopt.core.family import instance_sha256
from edgeopt.core.jsonio import read_json
from edgeopt.core.lowerbound import check_certificate, compute_bound
from formulations import table
from tests.reliability_helpers import PROOF_CLOCK

DIR = Path(__file__).resolve().parents[1] / "instances"
NAMES = sorted(f"{p.parent.parent.name}/{p.name[: -len('.optimum.json')]}" for p in DIR.glob("*/ladder/*.optimum.json"))
TOL = 1e-6


def _path(name: str) -> Path:
    family, stem = name.split("/")
    return DIR / family / "ladder" / f"{stem}.optimum.json"


def _load(name: str):
    cert = read_json(_path(name))
    return api.load(_path(name).parent / cert["instance"]), cert


def test_the_ladder_goldens_reach_past_the_old_sizes():
    """At least one golden per family whose earlier largest proven size was below it (issue 35's table)."""
    sizes = {}
    for name in NAMES:
        cert = read_json(_path(name))
        sizes[cert["family"]] = max(sizes.get(cert["family"], 0), cert["generated_by"]["jobs"])
    assert sizes.get("preemptive", 0) > 20 and sizes.get("tapfinger", 0) > 12, sizes
    assert sizes.get("edgecloud", 0) > 64 and sizes.get("okita", 0) > 8 and sizes.get("hetero", 0) > 6, sizes


@pytest.mark.parametrize("name", NAMES)
def test_golden_is_the_generators_instance_and_two_proofs_agree(name):
    inst, cert = _load(name)
    gen = dict(cert["generated_by"])
    again = api.generate(cert["family"], gen.pop("preset"), seed=gen.pop("seed"), **gen)
    assert instance_sha256(again) == instance_sha256(inst)
    proofs = cert["certified_by"]
    assert len(proofs) >= 2
    for label, p in proofs.items():
        assert p["status"] == Status.OPTIMAL.value, label
        assert p["objective"] == pytest.approx(cert["objective"], rel=TOL, abs=TOL), label
        assert p["bound"] >= cert["objective"] * (1 - TOL) - TOL, label


@pytest.mark.parametrize("name", NAMES)
def test_stored_optimal_schedule_is_valid_with_its_objective(name):
    inst, cert = _load(name)
    first = next(iter(cert["certified_by"].values()))["method"]
    res = Result(family=cert["family"], algorithm=first, status=Status.OPTIMAL, objective=cert["objective"],
                 bound=cert["objective"], runtime_s=0.0, schedule=cert["schedule"], instance_sha256=instance_sha256(inst))
    assert not api.validate(inst, res)
    edited = Result.from_dict({**res.to_dict(), "objective": cert["objective"] - 1, "bound": cert["objective"] - 1})
    assert api.validate(inst, edited)  # the validator recomputes the objective: a lowered one is refused


@pytest.mark.parametrize("name", NAMES)
def test_bounds_are_below_and_algorithms_above_the_optimum(name):
    inst, cert = _load(name)
    family, opt = cert["family"], cert["objective"]
    for method_name, method in table(family, "LOWER_BOUNDS").items():
        res = compute_bound(family, method, inst, time_limit=PROOF_CLOCK)
        assert res.bound is not None and res.bound <= opt + TOL * max(1.0, abs(opt)), (method_name, res.bound, opt)
        assert check_certificate(method, inst, res) == pytest.approx(res.bound, rel=1e-9, abs=1e-9), method_name
    ran = 0
    for algo_name, algo in api.algorithms(family).items():
        if algo.relaxed or algo_name in api.unavailable_algorithms(family):
            continue
        res = api.run(algo_name, inst)
        assert not api.validate(inst, res), algo_name
        if res.status == Status.FEASIBLE:
            ran += 1
            assert res.objective >= opt - TOL * max(1.0, abs(opt)), (algo_name, res.objective, opt)
    assert ran >= 2


def test_preemptive_lemma1_lp4_is_below_the_optimum():
    from formulations.preemptive.lp4_large import solve_lp4_large

    names = [n for n in NAMES if n.startswith("preemptive/")]
    assert names
    for name in names:
        inst, cert = _load(name)
        lp4 = solve_lp4_large(inst, time_limit=PROOF_CLOCK)
        assert lp4.status == Status.OPTIMAL and lp4.bound <= cert["objective"] + TOL
