"""solve --warm-start: the incumbent is never worse than the warm start, and the result validates."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt import api
from edgeopt.core import Result, Status
from tests.reliability_helpers import cli


@pytest.mark.parametrize("family", ["hetero", "edgecloud", "okita"])
def test_incumbent_never_worse_than_the_warm_start(family: str) -> None:
    inst = api.generate(family, "small", seed=1)
    algos = [n for n, a in api.algorithms(family).items() if not a.relaxed]
    best = min(r.objective for r in (api.run(n, inst) for n in algos) if r.comparable)
    res = api.solve(inst, method="cpsat", time_limit=20, warm_start="best")
    assert not api.validate(inst, res)
    assert res.objective is not None and res.objective <= best + 1e-9
    assert res.extra["warm_start"]["objective"] == pytest.approx(best)


def test_a_tiny_time_limit_still_returns_the_warm_start() -> None:
    inst = api.generate("hetero", "small", seed=2)
    ws = api.run("fifo", inst)
    res = api.solve(inst, method="milp", time_limit=0.01, warm_start="fifo")
    assert not api.validate(inst, res)
    assert res.schedule is not None and res.objective <= ws.objective + 1e-9
    assert res.status in (Status.OPTIMAL, Status.TIME_LIMIT)


def test_a_model_above_the_budget_returns_the_warm_start_with_a_certified_bound() -> None:
    inst = api.generate("hetero", "small", seed=1)
    res = api.solve(inst, method="milp", time_limit=30, warm_start="best", max_model_size=1)
    assert res.status == Status.FEASIBLE and "budget" in res.extra["reason"]
    assert not api.validate(inst, res)
    assert res.bound is not None and res.bound <= res.objective


def test_cli_warm_start_and_bad_names(tmp_path: Path) -> None:
    inst = api.generate("okita", "small", seed=1)
    path = tmp_path / "i.json"
    api.save(inst, path)
    out = tmp_path / "r.json"
    assert cli("solve", path, "--method", "cpsat", "--time-limit", "20", "--warm-start", "fifo", "-o", out) == 0
    assert not api.validate(inst, Result.load(str(out)))
    assert cli("solve", path, "--warm-start", "nope") == 2


def test_tapfinger_cpsat_takes_the_warm_start_as_hints() -> None:
    inst = api.generate("tapfinger", "small", seed=1)
    ws = api.run("greedy", inst)
    res = api.solve(inst, method="cpsat", time_limit=30, warm_start="greedy")
    assert not api.validate(inst, res)
    assert res.extra["hinted_tasks"] == len(inst.tasks)
    assert res.objective <= ws.objective


def test_a_slow_later_algorithm_is_interrupted_at_the_deadline() -> None:
    """`best` runs the algorithms in turn; one that would run past the time limit is interrupted there and the
    best schedule before it is the warm start (CPU time, not wall-clock: a busy machine cannot break this)."""
    import time

    from edgeopt.core import register, unregister

    calls = []
    inst = api.generate("hetero", "small", seed=1)  # imports the family first: the slow one is registered last

    @register("hetero", "slow_for_warm_start", kind="offline", summary="test: spins for a minute")
    def slow(instance, *, seed: int = 0):
        calls.append("started")
        t0 = time.process_time()
        while time.process_time() - t0 < 60.0:
            pass
        calls.append("returned")
        raise AssertionError("not interrupted")

    try:
        c0 = time.process_time()
        res = api.solve(inst, method="milp", time_limit=3, warm_start="best")
        cpu = time.process_time() - c0
    finally:
        unregister("hetero", "slow_for_warm_start")
    assert "returned" not in calls
    assert cpu < 30.0
    assert not api.validate(inst, res)
    assert res.extra["warm_start"]["algorithm"] != "slow_for_warm_start"
