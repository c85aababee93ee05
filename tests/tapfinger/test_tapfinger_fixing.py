"""tapfinger: the concurrency rows of the bound ``ti_lp_hull``, reduced-cost fixing of the MILP (``fix=True``),
and the certified bound as the proof of an optimum (its certificate re-checked by ``validate``).

Small instances (4-8 tasks of the ``small`` preset), exact solves under deterministic work limits (`prove`),
the LNS of the incumbent off (``lns_share=0``), so nothing here depends on the clock.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgeopt import api
from edgeopt.core import Deadline, Status
from edgeopt.solving import certify
from formulations.concurrency import feasible_counts, hull_rows
from formulations.fixing import Incumbent
from formulations.tapfinger import LOWER_BOUNDS
from formulations.tapfinger.fixing import certified_prices, fix_keys
from formulations.tapfinger.milp import all_keys, solve_milp
from tests.reliability_helpers import PROOF_CLOCK, cli, edited_certificate, prove

CASES = [(6, 0), (6, 4), (8, 1), (8, 5)]


def test_hull_rows_hold_for_every_fitting_count_and_cut_fractions():
    kinds, cap = [(2, 1), (2, 2), (2, 3), (2, 4)], (6, 4)
    rows = hull_rows(kinds, cap)
    assert rows == [((0, 1, 2, 2), 2), ((1, 1, 2, 3), 3)]
    pts = feasible_counts(kinds, cap)
    for coef, rhs in rows:
        assert (pts @ np.array(coef) <= rhs).all()
    # one 1-GPU task with half of a 4-GPU task and a third of a 3-GPU one fits (5) but not the rows
    frac = np.array([1.0, 0.0, 1 / 3, 0.5])
    assert (frac @ np.array(kinds) <= np.array(cap) + 1e-9).all()
    assert any(frac @ np.array(coef) > rhs + 1e-9 for coef, rhs in rows)
    # random kinds and capacities: every row is met by every count vector that fits
    rng = np.random.default_rng(0)
    for _ in range(20):
        ks = [tuple(int(v) for v in rng.integers(1, 4, size=2)) for _ in range(int(rng.integers(1, 5)))]
        c = tuple(int(v) for v in rng.integers(3, 9, size=2))
        p = feasible_counts(ks, c)
        for coef, rhs in hull_rows(ks, c):
            assert (p @ np.array(coef) <= rhs).all()


@pytest.mark.parametrize("jobs,seed", CASES)
def test_hull_bound_is_between_ti_lp_and_the_optimum_and_its_certificate_checks(jobs, seed):
    inst = api.generate("tapfinger", "small", seed=seed, jobs=jobs)
    opt = prove(api.solve, inst, method="milp")
    assert opt.status == Status.OPTIMAL
    plain = api.bound(inst, method="ti_lp", time_limit=PROOF_CLOCK)
    hull = api.bound(inst, method="ti_lp_hull", time_limit=PROOF_CLOCK)
    assert plain.bound <= hull.bound <= opt.objective + 1e-9
    assert api.check_bound(inst, hull) == pytest.approx(hull.bound)
    assert not api.validate(inst, hull)


@pytest.mark.parametrize("jobs,seed", CASES)
def test_fixing_never_cuts_off_an_optimal_schedule(jobs, seed):
    """With an incumbent at the optimum (ties kept) or one above it (strictly better kept), every variable of
    a proven optimal schedule survives; with the incumbent at the optimum and only strictly better schedules
    kept, the optimal schedule's own variables may go, but never the optimum's value is missed (`conclude`)."""
    inst = api.generate("tapfinger", "small", seed=seed, jobs=jobs)
    opt = prove(api.solve, inst, method="milp")
    prices = certified_prices(inst, Deadline(PROOF_CLOCK), share=1.0, cap_s=PROOF_CLOCK)
    keys = all_keys(inst)
    used = {(p["task"], p["cluster"], (p["allocation"]["cpu"], p["allocation"]["gpu"]), p["start"])
            for p in opt.schedule["placements"]}
    index = [i for i, (o, s) in enumerate(keys) if (o.task, o.cluster, o.alloc, s) in used]
    assert len(index) == jobs
    for value, strict in ((opt.objective, False), (opt.objective + 1, True), (opt.objective + 7, True)):
        keep, fixing = fix_keys(inst, keys, Incumbent(None, value, "test", 0.0), prices, strict=strict)
        assert keep[index].all(), (value, strict)
        assert not fixing.jobs_without_column


@pytest.mark.parametrize("jobs,seed", CASES)
def test_fixed_milp_agrees_with_milp_and_cpsat(jobs, seed):
    inst = api.generate("tapfinger", "small", seed=seed, jobs=jobs)
    milp = prove(api.solve, inst, method="milp")
    cpsat = prove(api.solve, inst, method="cpsat")
    fixed = prove(api.solve, inst, method="milp", fix=True, fix_min_vars=0, lns_share=0.0)
    assert milp.status == cpsat.status == fixed.status == Status.OPTIMAL
    assert milp.objective == cpsat.objective == fixed.objective
    assert fixed.extra["fixing"]["variables"] == len(all_keys(inst))
    assert not api.validate(inst, fixed)


def test_small_models_are_solved_unfixed():
    inst = api.generate("tapfinger", "small", seed=0, jobs=6)
    res = prove(solve_milp, inst, fix=True)  # below FIX_MIN_VARS
    assert res.status == Status.OPTIMAL and "fixing" not in res.extra


@pytest.fixture(scope="module")
def bound_proof():
    """An optimum proven by the bound alone: 4 tasks (seed 2), where ``ti_lp_hull`` meets the list schedule."""
    inst = api.generate("tapfinger", "small", seed=2, jobs=4)
    res = prove(api.solve, inst, method="milp", fix=True, fix_min_vars=0, lns_share=0.0)
    assert res.status == Status.OPTIMAL
    assert res.extra["certificate"]["method"] == "ti_lp_hull"
    assert res.extra["certificate"]["bound"] == res.objective == res.bound
    assert "model_s" not in res.extra["timings"]  # no model was built: the bound is the proof
    return inst, res


def test_a_bound_proof_re_checks(bound_proof):
    inst, res = bound_proof
    assert not api.validate(inst, res)
    out = certify.certify(inst, res, time_limit=PROOF_CLOCK)
    assert out.verdict == certify.CERTIFIED
    assert "certificate" in out.claims[0].evidence


def test_an_edited_certificate_is_refused(bound_proof, tmp_path):
    inst, res = bound_proof
    mult = res.extra["certificate"]["multipliers"]
    zero = edited_certificate(res, multipliers={**mult, "index": [], "value": []})  # the prices edited away
    higher = edited_certificate(res, bound=res.objective + 1)  # the stated bound edited
    other = edited_certificate(res, method="ti_lp")  # checked as another relaxation
    for bad in (zero, higher, other):
        assert any(v.equation == "certificate" for v in api.validate(inst, bad))
        assert certify.certify(inst, bad, time_limit=PROOF_CLOCK).verdict == certify.FALSE
    ipath, rpath = tmp_path / "inst.json", tmp_path / "res.json"
    api.save(inst, ipath)
    api.save(zero, rpath)
    assert cli("validate", ipath, rpath, "--certify", "--time-limit", "600") == 1


def test_fixing_record_rederives_from_its_prices():
    """The share fixed is what the recorded prices and incumbent give again (no solver involved)."""
    inst = api.generate("tapfinger", "small", seed=1, jobs=8)
    res = prove(api.solve, inst, method="milp", fix=True, fix_min_vars=0, lns_share=0.0)
    rec = res.extra["fixing"]
    prices = certified_prices(inst, Deadline(PROOF_CLOCK), share=1.0, cap_s=PROOF_CLOCK)
    _, fixing = fix_keys(inst, all_keys(inst), Incumbent(None, rec["incumbent"], "x", 0.0), prices)
    assert fixing.fixed == rec["fixed"] and rec["bound_method"] == LOWER_BOUNDS["ti_lp_hull"].name


def test_without_a_certified_bound_the_model_is_solved_unfixed(monkeypatch):
    """No prices (the bound failed or timed out): nothing is fixed, the full model is solved, still exact."""
    import formulations.tapfinger.fixing as tf_fixing

    monkeypatch.setattr(tf_fixing, "certified_prices", lambda *a, **k: None)
    inst = api.generate("tapfinger", "small", seed=0, jobs=6)
    res = prove(api.solve, inst, method="milp", fix=True, fix_min_vars=0, lns_share=0.0)
    assert res.status == Status.OPTIMAL and "fixing" not in res.extra
    assert res.extra["reason_unfixed"] == "no certified bound"
    assert res.objective == prove(api.solve, inst, method="milp").objective
