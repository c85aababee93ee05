"""Declared algorithm parameters, re-registration, and the `partial` rule of comparisons."""

from __future__ import annotations

import warnings
from typing import Literal

import pytest

from edgeopt import api
from edgeopt.core import InputError, Status, lookup, register, unregister
from edgeopt.core.registry import declared_params
from tests.reliability_helpers import PROOF_CLOCK, PROOF_WORK


def _algo(instance, *, seed: int = 0, k: int = 5, rule: Literal["arrival", "density"] = "arrival",
          cap: float | None = None, flag: bool = False):
    """A test algorithm.

    Args:
        k: a fixed worker count.
        rule: the job order.
    """


def test_params_are_read_from_the_signature_and_docstring():
    params = {p.name: p for p in declared_params(_algo)}
    assert list(params) == ["k", "rule", "cap", "flag"]
    assert params["k"].type is int and params["k"].default == 5 and params["k"].help == "a fixed worker count."
    assert params["rule"].choices == ("arrival", "density")
    assert params["cap"].type is float and params["cap"].optional
    assert params["k"].convert("7") == 7 and params["flag"].convert("yes") is True
    with pytest.raises(InputError, match="param.k"):
        params["k"].convert("seven")
    with pytest.raises(InputError, match="param.rule"):
        params["rule"].convert("bogus")
    with pytest.raises(InputError, match="param.cap"):
        params["cap"].convert("nan")


def test_unknown_parameter_is_an_input_error_naming_it():
    algo = lookup("hetero", "fifo") if api.family("hetero") else None
    with pytest.raises(InputError, match="param.bogus"):
        algo.check_params({"bogus": 1})
    assert algo.check_params({"workers": "4"}) == {"workers": 4}


def _drop_first_job(instance, *, seed: int = 0):
    """Runs `online`, then gives up on every job but the first: a valid schedule of some jobs."""
    spec = api.family("hetero")
    res = api.run("online", instance)
    sched = spec.parse_schedule(res.schedule)
    dropped = [run.job for run in sched.jobs[1:]]
    sched = sched.model_copy(update={"jobs": sched.jobs[:1], "rejected": sorted([*sched.rejected, *dropped])})
    return spec.algorithm_result(instance, "drops_one", sched, 0.0, rejected=sched.rejected)


def test_reregistering_replaces_with_a_warning():
    register("hetero", "drops_one", kind="baseline", summary="test")(_drop_first_job)
    try:
        def other(instance, *, seed: int = 0):
            return _drop_first_job(instance, seed=seed)

        with pytest.warns(UserWarning, match="registered again"):
            register("hetero", "drops_one", kind="baseline", summary="test 2")(other)
        assert lookup("hetero", "drops_one").summary == "test 2"
    finally:
        unregister("hetero", "drops_one")


def test_a_rejecting_algorithm_gets_status_partial_no_ratio_and_no_rank():
    inst = api.generate("hetero", "small", seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        register("hetero", "drops_one", kind="baseline", summary="test")(_drop_first_job)
    try:
        res = api.run("drops_one", inst)
        assert res.status == Status.PARTIAL and res.extra["rejected_count"] >= 1 and not res.comparable
        assert api.validate(inst, res) == []  # a valid schedule of the jobs it kept
        table = api.compare(inst, ["online", "drf", "drops_one"], optimal=True, time_limit=PROOF_CLOCK,
                             work_limit=PROOF_WORK)  # the optimum proved by work
        rows = {r.algorithm: r for r in table.rows}
        assert table.reference_name == "optimum"
        # the partial result has the smallest total (one job fewer) yet is neither ranked nor given a ratio
        assert rows["drops_one"].objective < min(rows["online"].objective, rows["drf"].objective)
        assert rows["drops_one"].ratio is None and rows["drops_one"].rank is None
        assert rows["drops_one"].rejected == len(inst.jobs) - 1
        ranked = sorted((r for r in table.rows if r.rank is not None), key=lambda r: r.rank)
        assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
        assert ranked[0].algorithm == "milp" and all(r.ratio >= 1 - 1e-9 for r in ranked)
    finally:
        unregister("hetero", "drops_one")
