"""The okita neighbourhood of the large-neighbourhood search (``formulations/okita/lns.py``).

* the window's sub-model keeps every other job as it is (its entries hold their resources as constants in
  (2d)), so the merged schedule validates and the other jobs' entries are unchanged;
* the totals reformulation of the transfers (``build_cpsat(per_slot_transfers=False)``) has the optimum of
  the default per-slot model, and a valid schedule is a complete, feasible hint of either;
* the LNS through ``api.solve(..., lns=True)`` validates and is never worse than its warm start, and a
  window re-solve improves a poor start.
"""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import Status
from formulations.common import complete_hints
from formulations.common import solve_cpsat as run_cpsat
from tests.reliability_helpers import PROOF_CLOCK, assert_lns_result, assert_window_kept_the_others, prove


def _warm(seed: int, algorithm: str, jobs: int = 8):
    inst = api.generate("okita", "small", seed=seed, jobs=jobs)
    ws = api.run(algorithm, inst)
    assert ws.comparable and not api.validate(inst, ws)
    return inst, ws, api.family_of(inst).parse_schedule(ws.schedule)


def _objective(inst, schedule) -> float:
    return float(api.family_of(inst).objective(inst, schedule))


@pytest.mark.parametrize("per_slot", [True, False])
def test_okita_cpsat_hints_of_a_valid_schedule_are_complete_and_feasible(per_slot: bool) -> None:
    from formulations.okita.cpsat import build_cpsat
    from formulations.okita.start import hint_cpsat

    inst, _ws, sched = _warm(1, "drf")
    model, V = build_cpsat(inst, per_slot_transfers=per_slot)
    assert hint_cpsat(model, V, inst, sched) == len(inst.jobs)
    # every hinted variable fixed to its hint: CP-SAT finds a solution, so the mapping is feasible
    assert complete_hints(model, time_limit=PROOF_CLOCK)  # no work limit reaches it; every variable is fixed


def test_okita_transfer_totals_have_the_per_slot_optimum() -> None:
    from formulations.okita.cpsat import SCALE, build_cpsat, extract_cpsat

    inst = api.generate("okita", "small", seed=0)
    values = []
    for per_slot in (True, False):
        model, V = build_cpsat(inst, per_slot_transfers=per_slot)
        outcome, solver = prove(run_cpsat, model, workers=2)  # by work, not by the clock
        assert outcome.status == Status.OPTIMAL
        schedule = extract_cpsat(solver, V, inst)
        assert api.family_of(inst).validate(inst, schedule) == []
        values.append(outcome.objective / SCALE)
    assert values[0] == pytest.approx(values[1], abs=1e-9)


def test_okita_window_keeps_the_other_jobs_entries_exactly() -> None:
    from formulations.okita.lns import order, reoptimise

    inst, ws, sched = _warm(1, "fifo")
    free = order(inst, sched)[:2]
    sub = reoptimise(inst, sched, free, 15.0)
    assert sub.schedule is not None
    assert_window_kept_the_others(inst, sched, sub.schedule, free)
    assert _objective(inst, sub.schedule) <= ws.objective + 1e-9


def test_okita_window_improves_a_poor_start() -> None:
    from formulations.okita.lns import order, reoptimise

    inst, _ws, sched = _warm(0, "fifo")
    sub = reoptimise(inst, sched, order(inst, sched)[:3], 15.0)
    assert sub.schedule is not None and api.family_of(inst).validate(inst, sub.schedule) == []
    assert _objective(inst, sub.schedule) < _objective(inst, sched) - 1.0


def test_okita_window_that_fails_leaves_the_incumbent() -> None:
    from formulations.okita.lns import reoptimise

    inst, _ws, sched = _warm(1, "fifo")
    assert reoptimise(inst, sched, [], 5.0).schedule is None
    assert reoptimise(inst, sched, [len(inst.jobs) + 5], 5.0).schedule is None  # no such job: an exception


def test_okita_lns_validates_and_is_never_worse_than_its_warm_start() -> None:
    inst, ws, _ = _warm(1, "fifo")
    res = api.solve(inst, method="cpsat", time_limit=8, warm_start="fifo", lns=True)
    assert_lns_result(inst, ws, res)


def test_okita_lns_from_the_best_warm_start() -> None:
    inst = api.generate("okita", "small", seed=3, jobs=8)
    res = api.solve(inst, method="cpsat", time_limit=8, warm_start="best", lns=True)
    assert res.status == Status.TIME_LIMIT and not api.validate(inst, res)
    ws = res.extra["warm_start"]
    assert ws["algorithm"] is not None and res.objective <= ws["objective"] + 1e-9
    assert res.extra["lns"]["method"] == "cpsat"
