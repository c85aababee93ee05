"""Reduced-cost fixing (``formulations/fixing.py``, ``formulations/edgecloud/fixing.py``) is safe.

* the Lagrangian reduced costs bound every schedule: L(pi) + rc_j(column of j) <= its cost, for every job;
* fixing never removes a run of an optimal schedule while that schedule beats the incumbent (strict) or
  matches it (ties kept);
* on random instances, both edgecloud models give the same optimum with fixing as without, and a result
  proven by fixing is a valid schedule whose bound meets its objective;
* `conclude` turns the fixed model's answer into one about the whole problem only when the proof closes.

Every exact solve runs under a deterministic work limit with an hour on the clock: no assertion depends on the
machine's load.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgeopt import api
from edgeopt.core import Status
from edgeopt.core.limits import Deadline, work_limit
from formulations.common import SolverOutcome
from tests.reliability_helpers import PROOF_WORK

HOUR = 3600.0


def _instance(seed: int, jobs: int = 8):
    return api.generate("edgecloud", "small", seed=seed, jobs=jobs, servers=2, horizon=24 + 2 * jobs)


def _optimum(inst, method: str, **options):
    from formulations.edgecloud import METHODS

    with work_limit(PROOF_WORK):
        res = METHODS[method](inst, time_limit=HOUR, **options)
    assert res.status == Status.OPTIMAL, res.extra
    assert not api.validate(inst, res)
    return res


def _fixed(inst, incumbent_objective: float | None = None, *, strict: bool = True):
    """The fixed data, the fixing and the base data; the incumbent's value replaced when given."""
    import dataclasses

    from formulations.edgecloud.data import prepare
    from formulations.edgecloud.fixing import fix_runs, prepare_fixing

    base = prepare(inst)
    data, fixing, _ = prepare_fixing(inst, base, hint=None, deadline=Deadline(HOUR), strict=strict)
    assert fixing is not None
    if incumbent_objective is not None:
        inc = dataclasses.replace(fixing.incumbent, objective=float(incumbent_objective))
        data, fixing = fix_runs(inst, base, inc, fixing.prices, strict=strict)
    return data, fixing, base


def _runs_of(inst, data, result):
    """(job index, mode, start) of every run of ``result``'s schedule, mapped onto ``data``'s modes."""
    from formulations.edgecloud.start import runs_of

    sched = api.family_of(inst).parse_schedule(result.schedule)
    by_index = {jd.index: jd for jd in data.jobs}
    out = []
    for j, (k, run) in runs_of(data, inst, sched).items():
        out.append((j, by_index[j].modes[k], int(run.start)))
    assert len(out) == len(inst.jobs)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_reduced_costs_bound_every_schedule_through_any_job(seed: int) -> None:
    """L(pi) + rc_j(mapped run of j) <= cost of the optimal schedule, for every job j and at zero prices too."""
    from formulations.edgecloud.fixing import run_lower_bounds

    inst = _instance(seed)
    opt = _optimum(inst, "milp", fix=False)
    _, fixing, base = _fixed(inst)
    assert fixing.prices.lagrangian <= opt.objective + 1e-9
    assert fixing.prices.bound <= opt.objective
    for rc in fixing.prices.costs.rc:
        assert np.nanmin(rc) >= -1e-9  # priced cost minus the job's cheapest
    lower = run_lower_bounds(inst, fixing.prices)
    for j, mode, start in _runs_of(inst, base, opt):
        assert lower[(j, mode)][start] <= opt.objective + 1e-7, (j, mode, start)


@pytest.mark.parametrize("seed", range(6))
def test_fixing_never_removes_a_run_of_an_optimal_schedule(seed: int) -> None:
    """Strict fixing against any incumbent above the optimum, and fixing with ties kept against the optimum
    itself, leave every run of the optimal schedule in the model."""
    inst = _instance(seed)
    opt = _optimum(inst, "milp", fix=False)
    for incumbent, strict in ((opt.objective + 1, True), (opt.objective + 3, True), (opt.objective, False)):
        data, fixing, _ = _fixed(inst, incumbent, strict=strict)
        assert fixing.cutoff >= opt.objective
        for j, mode, start in _runs_of(inst, data, opt):
            jd = next(jd for jd in data.jobs if jd.index == j)
            assert start in jd.starts(mode, data.horizon), (incumbent, strict, j, mode, start)
        assert not fixing.jobs_without_column


def test_strict_fixing_at_the_optimum_may_leave_nothing_to_search() -> None:
    """With the optimum as incumbent, strict fixing keeps only schedules strictly better: none exist, and the
    solve returns the incumbent as optimal (or the model it searches is infeasible)."""
    inst = _instance(0)
    opt = _optimum(inst, "milp", fix=False)
    _, fixing, _ = _fixed(inst, opt.objective, strict=True)
    assert fixing.cutoff == opt.objective - 1
    assert fixing.fixed > 0


@pytest.mark.parametrize("method", ["milp", "cpsat"])
@pytest.mark.parametrize("seed", range(5))
def test_fixing_keeps_the_optimum_on_random_instances(method: str, seed: int) -> None:
    inst = _instance(seed, jobs=6 + seed)
    plain = _optimum(inst, method, fix=False)
    fixed = _optimum(inst, method, fix=True, fix_min_runs=0)
    assert fixed.objective == pytest.approx(plain.objective, abs=1e-9)
    assert fixed.bound == pytest.approx(fixed.objective, abs=1e-9)
    rec = fixed.extra["fixing"]
    assert 0 < rec["fixed"] <= rec["variables"]
    assert rec["incumbent"] >= fixed.objective
    assert {"incumbent_s", "bound_s", "fixing_s", "solve_s"} <= set(fixed.extra["timings"])


def test_small_models_are_solved_unfixed_by_default() -> None:
    """Below `FIX_MIN_RUNS` runs, the incumbent and the bound would cost more than they save."""
    inst = _instance(0, jobs=4)
    res = _optimum(inst, "milp")
    assert "fixing" not in res.extra


def test_edgecloud_fixing_on_the_ladder_fixes_most_runs() -> None:
    """The ``small`` ladder's 32-job rung (benchmarks/exact_scale.py): the bound is within 2 % of the optimum
    and fixing removes over 90 % of the runs; the solve is optimal with the known optimum (71)."""
    inst = api.generate("edgecloud", "small", seed=1, jobs=32, servers=8, horizon=88)
    res = _optimum(inst, "milp")
    assert res.objective == 71
    assert res.extra["fixing"]["fixed_share"] > 0.9


def _fixing_for(incumbent: float, bound: float, step: float | None = 1.0):
    from formulations.fixing import Fixing, Incumbent, Prices, cutoff

    prices = Prices(None, None, bound, bound, step, {}, "test", 0.0)
    inc = Incumbent("schedule", incumbent, "test", 0.0)
    return Fixing(inc, prices, cutoff(incumbent, step))


def _outcome(status: Status, objective=None, bound=None) -> SolverOutcome:
    return SolverOutcome(status, objective, bound, 1.0, status.value, objective is not None)


def test_conclude_closes_only_with_a_proof() -> None:
    from formulations.fixing import conclude

    fx = _fixing_for(incumbent=10, bound=7)
    # nothing better exists: the incumbent, optimal
    out, inc = conclude(_outcome(Status.INFEASIBLE), fx)
    assert inc and out.status == Status.OPTIMAL and out.objective == out.bound == 10
    # a better schedule proved optimal in the fixed model is the optimum
    out, inc = conclude(_outcome(Status.OPTIMAL, 8, 8), fx)
    assert not inc and out.status == Status.OPTIMAL and out.objective == out.bound == 8
    # a better schedule at a limit: not optimal, the bound is the better of the two
    out, inc = conclude(_outcome(Status.TIME_LIMIT, 9, 7.5), fx)
    assert not inc and out.status == Status.TIME_LIMIT and out.objective == 9 and out.bound == 7.5
    # nothing found at a limit: the incumbent with the certified bound
    out, inc = conclude(_outcome(Status.TIME_LIMIT, None, None), fx)
    assert inc and out.status == Status.TIME_LIMIT and out.objective == 10 and out.bound == 7
    # the fixed model's bound passes the cutoff (9): no integer schedule below 10, the incumbent is optimal
    out, inc = conclude(_outcome(Status.TIME_LIMIT, None, 9.2), fx)
    assert inc and out.status == Status.OPTIMAL and out.bound == 10
    # without an integrality step, a bound just below the incumbent proves nothing
    fx = _fixing_for(incumbent=10, bound=7, step=None)
    out, inc = conclude(_outcome(Status.TIME_LIMIT, None, 9.9), fx)
    assert inc and out.status == Status.TIME_LIMIT and out.bound == 9.9


def test_cutoff_and_skipped_search() -> None:
    from formulations.fixing import cutoff, skipped_search

    assert cutoff(10, 1.0) == 9 and cutoff(10.5, 1.0) == 10 and cutoff(10, None) == 10 and cutoff(12, 4.0) == 8
    assert skipped_search(_fixing_for(incumbent=10, bound=10)) is not None
    assert skipped_search(_fixing_for(incumbent=10, bound=9)) is None
    fx = _fixing_for(incumbent=10, bound=9)
    fx.jobs_without_column = [3]
    assert skipped_search(fx).status == Status.INFEASIBLE
    assert math.isfinite(fx.solver_cutoff()) and 9 < fx.solver_cutoff() < 10


def test_improve_incumbent_is_left_out_under_a_work_limit_and_never_worse() -> None:
    """The LNS step of hetero's and tapfinger's fixing (`improve_incumbent`) stops on the clock, so under a
    deterministic work limit it must not run (the fixed model is then the same at any load); without one it runs,
    records its time, and returns a schedule no worse than its start."""
    from edgeopt.tapfinger import FAMILY
    from formulations.fixing import improve_incumbent, incumbent_and_prices
    from formulations.tapfinger.fixing import INCUMBENT_ALGORITHMS, certified_prices
    from formulations.tapfinger.lns import neighbourhood

    inst = api.generate("tapfinger", "small", seed=1, jobs=16)
    incumbent, prices, timings = incumbent_and_prices(FAMILY, inst, hint=None, algorithms=INCUMBENT_ALGORITHMS,
                                                      deadline=Deadline(3600), prices_of=certified_prices)
    assert incumbent is not None and prices is not None and incumbent.objective > prices.bound
    assert {"incumbent_s", "incumbent_cpu_s", "bound_s", "bound_cpu_s"} <= set(timings)
    with work_limit(PROOF_WORK):
        same = improve_incumbent(FAMILY, inst, incumbent, prices.bound, neighbourhood(), 5.0, timings)
    assert same is incumbent and "lns_s" not in timings
    better = improve_incumbent(FAMILY, inst, incumbent, prices.bound, neighbourhood(), 1.0, timings, max_passes=1)
    assert "lns_s" in timings and "lns_cpu_s" in timings
    assert better.objective <= incumbent.objective
    schedule = FAMILY.parse_schedule(better.schedule)
    assert not FAMILY.validate(inst, schedule)
    assert FAMILY.objective(inst, schedule) == pytest.approx(better.objective)
