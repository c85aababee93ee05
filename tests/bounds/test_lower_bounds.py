"""Certified lower bounds of every family: below every optimum and every algorithm, above the trivial
bound, and recomputed from their certificate without a solver (a tampered certificate fails)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from edgeopt import api
from edgeopt.core import ModelError, Result, Status
from tests.reliability_helpers import FAMILIES, PROOF_CLOCK, cli, prove

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
GOLDEN = sorted((p.parent.name, p.name.removesuffix(".optimum.json"))
                for p in INSTANCES.glob("*/*.optimum.json"))


def _trivial(res: Result) -> float | None:
    return res.extra["certificate"]["trivial"]


def _check(inst, res: Result) -> None:
    assert res.status == Status.BOUND, res.extra
    assert res.schedule is None and res.objective is None
    assert not api.validate(inst, res)
    assert api.check_bound(inst, res) == pytest.approx(res.bound, rel=1e-6)
    if _trivial(res) is not None:
        assert res.bound >= _trivial(res) - 1e-9


def test_every_family_has_a_bound() -> None:
    for name in FAMILIES:
        assert api.bound_methods(name), name


@pytest.mark.parametrize(("family", "name"), GOLDEN, ids=[f"{f}/{n}" for f, n in GOLDEN])
def test_bound_is_at_most_the_certified_optimum(family: str, name: str) -> None:
    inst = api.load(INSTANCES / family / f"{name}.json")
    record = json.loads((INSTANCES / family / f"{name}.optimum.json").read_text())
    res = api.bound(inst, time_limit=PROOF_CLOCK)
    _check(inst, res)
    assert res.bound <= record["objective"] + 1e-6 * max(1.0, abs(record["objective"]))


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bound_is_at_most_every_complete_algorithm(family: str, seed: int) -> None:
    inst = api.generate(family, "small", seed=seed)
    res = api.bound(inst, time_limit=PROOF_CLOCK)
    _check(inst, res)
    compared = 0
    for name, algo in api.algorithms(family).items():
        if algo.relaxed:
            continue
        run = api.run(name, inst, seed=0)
        assert not api.validate(inst, run), name
        if run.comparable:
            compared += 1
            assert res.bound <= run.objective + 1e-6 * max(1.0, abs(run.objective)), name
    assert compared > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_tampered_certificates_fail(family: str) -> None:
    inst = api.generate(family, "small", seed=1)
    res = api.bound(inst, time_limit=PROOF_CLOCK)
    # a higher stated bound
    up = copy.deepcopy(res)
    up.bound = res.bound * 1.01 + 1.0
    with pytest.raises(ModelError, match="recomputed"):
        api.check_bound(inst, up)
    # changed multipliers: the recomputed number no longer matches the stated one
    cert = res.extra["certificate"]
    mult = cert["multipliers"]
    if mult["value"]:
        bad = copy.deepcopy(res)
        bad.extra["certificate"]["multipliers"]["value"] = [v * 3.0 + 7.0 for v in mult["value"]]
        with pytest.raises(ModelError):
            api.check_bound(inst, bad)
    # another relaxation (fingerprint) or another instance
    fp = copy.deepcopy(res)
    fp.extra["certificate"]["fingerprint"] = "0" * 64
    with pytest.raises(ModelError, match="differs"):
        api.check_bound(inst, fp)
    other = api.generate(family, "small", seed=2)
    with pytest.raises(ModelError, match="another instance"):
        api.check_bound(other, res)
    # no certificate at all
    bare = copy.deepcopy(res)
    bare.extra.pop("certificate")
    with pytest.raises(ModelError, match="missing"):
        api.check_bound(inst, bare)


def test_bound_result_round_trips_through_json_and_the_cli(tmp_path: Path) -> None:
    inst = api.generate("hetero", "small", seed=1)
    path = tmp_path / "inst.json"
    api.save(inst, path)
    out = tmp_path / "bound.json"
    assert cli("bound", path, "--time-limit", int(PROOF_CLOCK), "-o", out) == 0
    res = Result.load(str(out))
    assert res.status == Status.BOUND
    assert api.check_bound(inst, res) == pytest.approx(res.bound, rel=1e-6)
    assert cli("validate", path, out) == 0
    assert cli("bound", path, "--method", "nope") == 2


def test_unknown_method_and_bad_time_limit_are_input_errors() -> None:
    inst = api.generate("okita", "small", seed=1)
    with pytest.raises(Exception, match="unknown okita bound method"):
        api.bound(inst, method="nope")
    with pytest.raises(Exception, match="time_limit"):
        api.bound(inst, time_limit=-1)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_tiny_time_limit_gives_a_time_limit_result_or_a_checked_bound(family: str) -> None:
    inst = api.generate(family, "small", seed=0)
    res = api.bound(inst, time_limit=1e-4)
    assert res.status in (Status.TIME_LIMIT, Status.BOUND)
    if res.status == Status.BOUND:
        _check(inst, res)
    else:
        assert res.bound is None and res.extra["reason"]


def test_a_relaxation_above_the_size_budget_is_refused_before_it_is_built() -> None:
    inst = api.generate("preemptive", "small", seed=0)
    with pytest.raises(Exception, match="budget"):
        api.bound(inst, max_model_size=1)


EXACT = {"okita": ("small", "milp"), "hetero": ("small_congested", "cpsat"), "edgecloud": ("small", "cpsat"),
         "preemptive": ("small", "cpsat"), "tapfinger": ("small", "cpsat")}


@pytest.mark.parametrize("family", sorted(EXACT))
@pytest.mark.parametrize("seed", [3, 5])
def test_bound_is_at_most_a_fresh_proven_optimum(family: str, seed: int) -> None:
    preset, method = EXACT[family]
    inst = api.generate(family, preset, seed=seed)
    res = api.bound(inst, time_limit=PROOF_CLOCK)
    _check(inst, res)
    opt = prove(api.solve, inst, method=method)  # by work: proved on any machine (each within 2.3 CPU s)
    assert opt.status == Status.OPTIMAL
    assert res.bound <= opt.objective + 1e-6 * max(1.0, abs(opt.objective))


def test_a_job_with_no_mode_at_all_is_reported_not_raised() -> None:
    """hetero, 10 small servers and T = 40: some jobs have no configuration that ends by T, so no
    complete schedule exists; the bound says so (status infeasible, the jobs named) instead of failing
    while pruning an empty mode list."""
    inst = api.generate("hetero", "paper_congested", seed=0, jobs=20, servers=10, horizon=40)
    res = api.bound(inst, time_limit=PROOF_CLOCK)
    assert res.status == Status.INFEASIBLE and res.bound is None
    assert "fit no start" in res.extra["reason"]


def test_hetero_bound_ignores_a_ps_type_that_fits_no_server():
    """A PS type too large for every server, with a zero demand (no GPU, as every generated PS type): inf * 0
    used to be NaN and drop every non-colocated mode, so the bound reported the instance infeasible. Such a
    type changes no schedule: the bound stays a bound, below every complete schedule's objective."""
    inst = api.generate("hetero", "small", seed=0, jobs=6)
    data = inst.model_dump(mode="json")
    data["ps_types"].append({"name": "ps-huge", "demand": [0.0, 100.0, 400.0], "bandwidth_mbps": 400.0})
    for job in data["jobs"]:
        job["ps_update_time_slots"].append(job["ps_update_time_slots"][0])
    wider = type(inst).model_validate(data)
    res = api.bound(wider, time_limit=PROOF_CLOCK)
    assert res.status == Status.BOUND and res.bound is not None
    assert res.bound == pytest.approx(api.bound(inst, time_limit=PROOF_CLOCK).bound)
    for name in ("fifo", "drf"):
        run = api.run(name, wider)
        if run.status.complete:
            assert not api.validate(wider, run)
            assert res.bound <= run.objective + 1e-6
