"""hetero: reduced-cost fixing of the MILP of program (2) (``formulations/hetero/fixing.py``) is safe.

* the lower bound it gives each start never exceeds the optimum along an optimal schedule;
* fixing against any incumbent above the optimum (strict) or at it (ties kept) leaves every start of the optimal
  schedule in the model;
* on random instances the fixed MILP proves the unfixed MILP's optimum, and its schedule validates;
* an optimum proven by the bound alone carries the bound's certificate, which re-checks, and an edited one is
  refused.

Small instances (5 jobs of the ``small`` preset, below `FIX_MIN_VARS`, so fixing is forced with
``fix_min_vars=0``); every exact solve runs under a deterministic work limit (`prove`), under which the
incumbent's large-neighbourhood search, which the clock stops, does not run: nothing here depends on the load.
"""

from __future__ import annotations

import dataclasses

import pytest

from edgeopt import api
from edgeopt.core import Deadline, Result, Status
from edgeopt.core.limits import work_limit
from edgeopt.solving import certify
from formulations.hetero.data import prepare
from formulations.hetero.fixing import config_lower_bounds, fix_configs, prepare_fixing
from formulations.hetero.milp_solve import solve_milp
from formulations.hetero.start import placements_of
from tests.reliability_helpers import PROOF_CLOCK, PROOF_WORK, cli, edited_certificate, prove

SEEDS = range(6)


def _instance(seed: int, jobs: int = 5):
    return api.generate("hetero", "small", seed=seed, jobs=jobs)


def _optimum(inst) -> Result:
    res = prove(solve_milp, inst, fix=False)
    assert res.status == Status.OPTIMAL
    assert not api.validate(inst, res)
    return res


def _fixed(inst, incumbent_objective: float | None = None, *, strict: bool = True):
    """The fixed data and the fixing (the incumbent's value replaced when given), and the unfixed data."""
    base = prepare(inst)
    with work_limit(PROOF_WORK):
        data, fixing, _ = prepare_fixing(inst, base, hint=None, deadline=Deadline(PROOF_CLOCK), strict=strict)
    assert fixing is not None
    if incumbent_objective is not None:
        inc = dataclasses.replace(fixing.incumbent, objective=float(incumbent_objective))
        data, fixing = fix_configs(inst, base, inc, fixing.prices, strict=strict)
    return data, fixing, base


def _starts_of(inst, data, result) -> list[tuple[int, int, int]]:
    """(job index, configuration index, start slot) of every job of ``result``'s schedule in ``data``."""
    placed = placements_of(data, api.family_of(inst).parse_schedule(result.schedule))
    assert len(placed) == len(inst.jobs)
    return [(j, k, int(js.start)) for j, (k, js) in placed.items()]


@pytest.mark.parametrize("seed", SEEDS)
def test_start_lower_bounds_never_pass_the_optimum(seed: int) -> None:
    inst = _instance(seed)
    opt = _optimum(inst)
    _, fixing, base = _fixed(inst)
    assert fixing.prices.bound <= opt.objective
    lower = config_lower_bounds(inst, base, fixing.prices)
    for j, k, t in _starts_of(inst, base, opt):
        assert lower[(j, k)][t] <= opt.objective + 1e-7, (j, k, t)


@pytest.mark.parametrize("seed", SEEDS)
def test_fixing_never_removes_a_start_of_an_optimal_schedule(seed: int) -> None:
    inst = _instance(seed)
    opt = _optimum(inst)
    for incumbent, strict in ((opt.objective + 1, True), (opt.objective + 4, True), (opt.objective, False)):
        data, fixing, _ = _fixed(inst, incumbent, strict=strict)
        assert fixing.cutoff >= opt.objective
        by_index = {jd.index: jd for jd in data.jobs}
        for j, k, t in _starts_of(inst, data, opt):
            assert t in by_index[j].config_starts(k, data.length), (incumbent, strict, j, k, t)
        assert not fixing.jobs_without_column


def test_strict_fixing_at_the_optimum_removes_starts() -> None:
    inst = _instance(0)
    opt = _optimum(inst)
    _, fixing, _ = _fixed(inst, opt.objective, strict=True)
    assert fixing.cutoff == opt.objective - 1
    assert 0 < fixing.fixed <= fixing.columns


@pytest.mark.parametrize("seed", SEEDS)
def test_fixed_milp_proves_the_unfixed_optimum(seed: int) -> None:
    inst = _instance(seed)
    plain = _optimum(inst)
    fixed = prove(solve_milp, inst, fix=True, fix_min_vars=0)
    assert fixed.status == Status.OPTIMAL
    assert fixed.objective == plain.objective == fixed.bound
    assert not api.validate(inst, fixed)
    rec = fixed.extra["fixing"]
    assert 0 < rec["fixed"] <= rec["variables"]
    assert rec["incumbent"] >= fixed.objective >= rec["bound"]
    assert "lns_s" not in fixed.extra["timings"]  # under a work limit the clock-stopped search is left out


def test_small_models_are_solved_unfixed_by_default() -> None:
    res = prove(solve_milp, _instance(0))
    assert res.status == Status.OPTIMAL and "fixing" not in res.extra


def test_without_a_certified_bound_the_model_is_solved_unfixed(monkeypatch) -> None:
    import formulations.hetero.fixing as het_fixing

    monkeypatch.setattr(het_fixing, "certified_prices", lambda *a, **k: None)
    inst = _instance(1)
    res = prove(solve_milp, inst, fix=True, fix_min_vars=0)
    assert res.status == Status.OPTIMAL and "fixing" not in res.extra
    assert res.objective == _optimum(inst).objective


@pytest.fixture(scope="module")
def bound_proof():
    """Seed 4, 5 jobs: the certified bound ``ti_lp`` meets the list schedule, so no model is built."""
    inst = _instance(4)
    res = prove(api.solve, inst, method="milp", fix=True, fix_min_vars=0)
    assert res.status == Status.OPTIMAL
    assert res.extra["certificate"]["method"] == "ti_lp"
    assert res.extra["certificate"]["bound"] == res.objective == res.bound
    assert "model_s" not in res.extra["timings"]
    assert res.objective == _optimum(inst).objective
    return inst, res


def test_a_bound_proof_re_checks(bound_proof) -> None:
    inst, res = bound_proof
    assert not api.validate(inst, res)
    assert certify.certify(inst, res, time_limit=PROOF_CLOCK).verdict == certify.CERTIFIED


def test_an_edited_certificate_is_refused(bound_proof, tmp_path) -> None:
    inst, res = bound_proof
    mult = res.extra["certificate"]["multipliers"]
    zero = edited_certificate(res, multipliers={**mult, "index": [], "value": []})
    higher = edited_certificate(res, bound=res.objective + 1)
    for bad in (zero, higher):
        assert any(v.equation == "certificate" for v in api.validate(inst, bad))
        assert certify.certify(inst, bad, time_limit=PROOF_CLOCK).verdict == certify.FALSE
    ipath, rpath = tmp_path / "inst.json", tmp_path / "res.json"
    api.save(inst, ipath)
    api.save(zero, rpath)
    assert cli("validate", ipath, rpath, "--certify", "--time-limit", "600") == 1
