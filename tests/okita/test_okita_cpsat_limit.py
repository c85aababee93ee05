"""The CP-SAT model stopped at its limit: its result is the schedule's true objective with a bound on the
true optimum, never a crash.

The model scales costs to integers (the exponential latency table is rounded to 1e-4) and states the
parameter exchange as an epigraph variable ``exch >= cost``, so its objective is the true one only up to
`rounding_error`, and, for an incumbent that is not optimal, only at least its cost. `finish` used to
demand that the two agree to 1e-5 and raised `ModelError` ("solver objective 734.3574 != schedule
objective 733.878") for an incumbent CP-SAT returned at its time limit.
"""

from __future__ import annotations

import pytest

from edgeopt.core import ModelError, Status
from edgeopt.okita import FAMILY, generate
from formulations.common import SolverOutcome, finish
from formulations.okita import METHODS
from formulations.okita.cpsat import rounding_error
from tests.reliability_helpers import certified_names, limit_cpsat_by_work, load_certified, prove


def _valid_with_honest_bound(inst, res) -> None:
    assert not FAMILY.check_result(inst, res), res.status
    assert res.bound is not None and res.objective is not None
    assert res.bound <= res.objective
    assert res.extra["total"] == pytest.approx(res.objective)


def test_work_limited_cpsat_on_rounded_costs_returns_an_incumbent_and_a_bound_on_the_true_optimum(monkeypatch):
    # the Fig. 7 cell R = 3, I = 4 (mixed kinds, an exponential one: its table is rounded in the model); at a
    # 0.25 s wall-clock limit this instance's incumbent once carried 80.4 of slack in ``exch`` (model 554.3046,
    # schedule 473.898) and the solve raised ModelError
    inst = generate("small", seed=1004, jobs=4, servers=3)
    assert rounding_error(inst) > 0
    limit_cpsat_by_work(monkeypatch, 0.03)
    res = METHODS["cpsat"](inst, time_limit=600)
    assert res.status == Status.TIME_LIMIT  # stopped by its work budget, with an incumbent
    _valid_with_honest_bound(inst, res)
    assert res.extra["bound_rounding"] == pytest.approx(rounding_error(inst))


@pytest.mark.parametrize("name", certified_names("okita"))
def test_work_limited_cpsat_on_certified_instances_never_bounds_above_the_optimum(monkeypatch, name):
    inst, rec = load_certified("okita", name)
    limit_cpsat_by_work(monkeypatch, 0.02)
    res = METHODS["cpsat"](inst, time_limit=600)
    if res.objective is None:
        assert res.status == Status.TIME_LIMIT
    else:
        _valid_with_honest_bound(inst, res)
        assert res.objective >= rec["objective"] - 1e-6 * rec["objective"]
    assert res.bound is None or res.bound <= rec["objective"]


@pytest.fixture(scope="module")
def solved():
    """A small instance, its optimal CP-SAT result and its schedule (objective recomputed from it)."""
    inst = generate("small", seed=1)
    res = prove(METHODS["cpsat"], inst)  # by work, not by the clock
    assert res.status == Status.OPTIMAL
    return inst, res, FAMILY.parse_schedule(res.schedule)


def _outcome(status: Status, objective: float, bound: float) -> SolverOutcome:
    return SolverOutcome(status, objective, bound, 1.0, status.value, True)


def test_an_incumbent_with_slack_in_its_exchange_variables_is_its_true_cost_at_the_time_limit(solved):
    inst, res, sched = solved
    true = res.objective
    slack = _outcome(Status.TIME_LIMIT, true + 0.4794, true - 50.0)  # the reported crash: model value above cost
    with pytest.raises(ModelError, match="solver objective"):  # what every model without epigraph costs gets
        finish(FAMILY, inst, "cpsat", slack, sched)
    out = finish(FAMILY, inst, "cpsat", slack, sched, epigraph=True)
    assert out.status == Status.TIME_LIMIT and out.objective == true and out.bound == true - 50.0
    assert not FAMILY.check_result(inst, out)


def test_the_model_check_still_catches_a_model_that_disagrees_with_its_schedule(solved):
    inst, res, sched = solved
    true = res.objective
    # below the schedule's cost: no slack explains it, at any status
    for status in (Status.TIME_LIMIT, Status.OPTIMAL):
        with pytest.raises(ModelError):
            finish(FAMILY, inst, "cpsat", _outcome(status, true - 0.5, true - 1.0), sched, epigraph=True)
    # above it at a proven optimum: an optimal epigraph solution has no slack
    with pytest.raises(ModelError):
        finish(FAMILY, inst, "cpsat", _outcome(Status.OPTIMAL, true + 0.5, true + 0.5), sched, epigraph=True)
    # within the declared rounding: accepted, and the bound lowered by it
    out = finish(FAMILY, inst, "cpsat", _outcome(Status.OPTIMAL, true - 0.001, true - 0.001), sched, rounding=0.002)
    assert out.status == Status.OPTIMAL and out.objective == true
    assert out.bound == pytest.approx(true - 0.003)


def test_a_rounded_optimum_whose_true_gap_is_not_zero_is_not_called_optimal(solved):
    inst, res, sched = solved
    true = res.objective
    out = finish(FAMILY, inst, "cpsat", _outcome(Status.OPTIMAL, true, true), sched, rounding=0.01 * true)
    assert out.status == Status.FEASIBLE and out.bound == pytest.approx(0.99 * true)
    assert "rounding" in out.extra["reason"]
    assert not FAMILY.check_result(inst, out)


def test_rounding_error_is_zero_for_exact_costs_and_bounds_the_latency_rounding():
    inst = generate("small", seed=3, cost="linear")
    assert rounding_error(inst) == 0.0
    exp = generate("small", seed=3, cost="exponential")
    per_job = [max(abs(round(v * 10_000) / 10_000 - v) for v in exp.latency_table(i)[job.arrival:])
               for i, job in enumerate(exp.jobs)]
    assert rounding_error(exp) == pytest.approx(sum(per_job))
    assert 0 < rounding_error(exp) <= 0.5e-4 * len(exp.jobs)
