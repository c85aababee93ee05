"""Per-job windows of the preemptive exact models (`formulations.preemptive.windows`; the leave-one-out dual bound
they rest on is checked in tests/core/test_core_dual_bounds_without.py).

Checked here: per job, the LP's floor is below the proven optimum of the instance without that job;
windows cut from an upper bound equal to the optimum itself keep it (milp, on random instances, against the
model without windows); the incumbent comes back when the search finds nothing better, and the windows'
contradiction with an incumbent is an error, never a wrong answer. Every schedule goes through the validator.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from edgeopt.core import Deadline, ModelError, Status
from edgeopt.preemptive import FAMILY, generate
from formulations.common import SolverOutcome
from formulations.preemptive import configbound
from formulations.preemptive.data import from_instance
from formulations.preemptive.milp import solve_milp
from formulations.preemptive.windows import Windows, job_windows, keep_incumbent, others_floors
from tests.reliability_helpers import PROOF_CLOCK, prove


def _drop(inst, j):
    jobs = [job.model_copy(update={"id": i}) for i, job in enumerate(x for k, x in enumerate(inst.jobs) if k != j)]
    return inst.model_copy(update={"jobs": jobs})


@pytest.mark.parametrize("seed", [0, 1])
def test_each_floor_is_below_the_optimum_of_the_other_jobs(seed):
    """The floor of job j bounds the other jobs' total JCT in every schedule of all jobs; the other jobs alone
    do at least as well as in any such schedule, so their proven optimum is above it."""
    inst = generate("small", seed=seed, jobs=5, servers=2)
    data = from_instance(inst)
    floors, status = others_floors(data)
    lp_only, _ = others_floors(data, plans=False)
    plans = configbound.others_floors(data, deadline=Deadline(PROOF_CLOCK))
    assert status == "Optimal" and floors.shape == (5,) and plans.shape == (5,)
    assert np.array_equal(floors, np.maximum(lp_only, plans))
    earliest = np.array([data.earliest_jct(j) for j in range(5)])
    assert (floors > earliest.sum() - earliest).any(), "the LP floor should be stronger than the earliest JCTs somewhere"
    for j in range(5):
        others = _drop(inst, j)
        rest = prove(solve_milp, others, fix=False)
        assert rest.status == Status.OPTIMAL and not FAMILY.check_result(others, rest)
        for floor in (lp_only[j], plans[j]):
            assert floor <= rest.objective + 1e-9, (j, floor, rest.objective)


@pytest.mark.parametrize("seed", range(8))
def test_windows_from_the_optimum_itself_keep_it(seed):
    """The tightest windows there are (the upper bound is the optimum) still hold an optimal schedule; the
    windows from the list schedulers' incumbent too. Every schedule is validated."""
    inst = generate("small", seed=seed, jobs=7, servers=3)
    plain = prove(solve_milp, inst, fix=False)
    assert plain.status == Status.OPTIMAL and not FAMILY.check_result(inst, plain)
    tight = prove(solve_milp, inst, fix=True, fix_min_jobs=0, upper_bound=plain.objective)
    found = prove(solve_milp, inst, fix=True, fix_min_jobs=0)
    for res in (tight, found):
        assert res.status == Status.OPTIMAL and res.objective == plain.objective
        assert not FAMILY.check_result(inst, res)
    w = tight.extra["windows"]
    assert w["upper_bound"] == plain.objective and w["lp"] == "Optimal"
    assert w["mean_window_slots"] < w["mean_window_slots_before"]
    assert found.extra["windows"]["incumbent_from"] is not None


def test_the_incumbent_comes_back_when_the_search_finds_nothing_better(monkeypatch):
    """A search that ends at its limit with no schedule of its own (the solver's answer replaced, so that the case
    does not depend on how far HiGHS gets): the list schedulers' incumbent is the result, valid, status
    time_limit, with the solver's bound below it; and optimal when that bound reaches it. (The windows' certified
    bound, which would close this search on its own, is left out.)"""
    from formulations.preemptive import milp

    monkeypatch.setattr("formulations.preemptive.windows.certified_plans", lambda *_a, **_k: None)

    inst = generate("small", seed=1, jobs=16)
    for bound, status in ((40.0, Status.TIME_LIMIT), (1e9, Status.OPTIMAL)):
        monkeypatch.setattr(milp, "solve_pyomo", lambda *a, b=bound, **k: SolverOutcome(
            Status.TIME_LIMIT, None, b, 0.1, "time limit", False))
        res = solve_milp(inst, time_limit=60.0)
        w = res.extra["windows"]
        assert w["returned_incumbent"], w
        assert res.status == status and res.objective == w["upper_bound"]
        assert res.bound == min(bound, res.objective)
        assert not FAMILY.check_result(inst, res)


def test_a_windowed_model_without_the_incumbent_is_an_error():
    inst = generate("small", seed=0, jobs=6)
    cut = job_windows(inst, from_instance(inst), upper_bound=None)
    assert cut.incumbent is not None
    for status in (Status.INFEASIBLE, Status.OPTIMAL):
        outcome = SolverOutcome(status, None, None, 0.1, "forged", False)
        with pytest.raises(ModelError, match="windows"):
            keep_incumbent(outcome, None, cut)
    # nothing to keep without an incumbent: the outcome is returned as it is
    outcome = SolverOutcome(Status.TIME_LIMIT, None, 3.0, 0.1, "t", False)
    assert keep_incumbent(outcome, None, dataclasses.replace(cut, incumbent=None)) == (outcome, None, False)
    assert isinstance(cut, Windows)


@pytest.mark.parametrize("seed", range(4))
def test_windows_from_the_searched_incumbent_are_tighter_and_hold_every_optimal_schedule(seed):
    """The MILP's windows start from the list schedulers' incumbent improved by the large-neighbourhood search
    (`milp.lns_improver`, which runs only without a work limit, so here `job_windows` is called directly). That
    incumbent is a valid schedule no worse than the list schedulers', so its value is at least the optimum, and
    every schedule at most that value completes each job within its window: the proven optimal one is checked."""
    from edgeopt.core import Deadline
    from formulations.preemptive.lns import completion_of
    from formulations.preemptive.milp import lns_improver

    inst = generate("small", seed=seed, jobs=8, servers=2)
    data = from_instance(inst)
    plain = prove(solve_milp, inst, fix=False)
    assert plain.status == Status.OPTIMAL and not FAMILY.check_result(inst, plain)
    listed = job_windows(inst, data, upper_bound=None)
    searched = job_windows(inst, data, upper_bound=None, deadline=Deadline(3600), improve=lns_improver(inst))
    assert plain.objective <= searched.upper_bound <= listed.upper_bound
    inc = searched.incumbent
    assert not FAMILY.validate(inst, FAMILY.parse_schedule(inc.schedule))
    assert FAMILY.objective(inst, FAMILY.parse_schedule(inc.schedule)) == pytest.approx(inc.objective)
    assert "lns_s" in searched.timings
    optimal = FAMILY.parse_schedule(plain.schedule)
    for js in optimal.jobs:
        j = int(js.job)
        assert completion_of(searched.data, js) <= searched.data.end(j), (j, searched.data.end(j))


def test_the_certified_bound_closes_a_search_it_meets_and_otherwise_only_raises_its_bound():
    """`close_by_certificate`: a time-limited search whose schedule the windows' certified bound reaches is optimal,
    its proof the certificate; a lower certified bound only lifts the reported bound; none changes nothing."""
    from types import SimpleNamespace

    from formulations.preemptive.windows import close_by_certificate

    cert = SimpleNamespace(bound=100.0, extra={"certificate": {"method": "config_jct", "bound": 100.0}})
    data = from_instance(generate("small", seed=0, jobs=2))
    met = SolverOutcome(Status.TIME_LIMIT, 100.0, 97.0, 1.0, "time limit", True)
    out, proof = close_by_certificate(met, Windows(data, certified=cert))
    assert out.status == Status.OPTIMAL and out.bound == 100.0 and proof["certificate"]["method"] == "config_jct"
    above = SolverOutcome(Status.TIME_LIMIT, 104.0, 97.0, 1.0, "time limit", True)
    out, proof = close_by_certificate(above, Windows(data, certified=cert))
    assert out.status == Status.TIME_LIMIT and out.bound == 100.0 and not proof
    out, proof = close_by_certificate(above, Windows(data))
    assert out == above and not proof
