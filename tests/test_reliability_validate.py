"""Issue 10, part 2: `edgeopt validate` never calls a lie valid (exit 1 or 2, never 0, never a traceback)."""

from __future__ import annotations

import json

import pytest

from edgeopt import api
from edgeopt.core import Status
from tests.reliability_helpers import (
    FAMILIES,
    PROOF_CLOCK,
    cli,
    make_job_too_long,
    prove,
    small_instance,
    write,
)


def _result_file(tmp_path, data, name="res.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))  # NaN written as JSON's extension, as a hostile file would hold it
    return path


@pytest.fixture(params=FAMILIES)
def setup(request, tmp_path):
    family = request.param
    _, inst_path = small_instance(family, tmp_path)
    inst = api.load(inst_path)
    online = api.run("online", inst).to_dict()
    return family, inst, inst_path, online


def _validate(tmp_path, inst_path, data, capsys) -> tuple[int, str]:
    code = cli("validate", inst_path, _result_file(tmp_path, data))
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err + cap.out
    return code, cap.out + cap.err


def test_the_honest_result_is_valid(setup, tmp_path, capsys):
    _, _, inst_path, online = setup
    assert _validate(tmp_path, inst_path, online, capsys)[0] == 0


def test_nan_objective_is_refused(setup, tmp_path, capsys):
    _, _, inst_path, online = setup
    code, out = _validate(tmp_path, inst_path, {**online, "objective": float("nan")}, capsys)
    assert code == 2 and "result.objective" in out


@pytest.mark.parametrize("runtime", [-1, "fast", None, float("inf"), True])
def test_bad_runtime_is_refused(setup, runtime, tmp_path, capsys):
    _, _, inst_path, online = setup
    code, out = _validate(tmp_path, inst_path, {**online, "runtime_s": runtime}, capsys)
    assert code == 2 and "result.runtime_s" in out


def test_an_algorithm_result_carries_no_bound(setup, tmp_path, capsys):
    _, _, inst_path, online = setup
    code, out = _validate(tmp_path, inst_path, {**online, "bound": online["objective"] / 2}, capsys)
    assert code == 1 and "bound" in out


def test_bound_above_objective_is_a_lie(setup, tmp_path, capsys):
    _, inst, inst_path, _ = setup
    # any exact result with an incumbent and a bound will do, not a proof: 2 units of deterministic work
    # (CP-SAT's, about 2 CPU s) stop it at the same point on any machine, the clock never does
    exact = api.solve(inst, method="cpsat", time_limit=PROOF_CLOCK, work_limit=2.0).to_dict()
    assert _validate(tmp_path, inst_path, exact, capsys)[0] == 0
    code, out = _validate(tmp_path, inst_path, {**exact, "bound": exact["objective"] + 1}, capsys)
    assert code == 1 and "bound" in out


def test_infeasible_without_a_reason_is_refused(setup, tmp_path, capsys):
    _, _, inst_path, online = setup
    lie = {**online, "algorithm": "milp", "status": "infeasible", "objective": None, "schedule": None, "extra": {}}
    code, out = _validate(tmp_path, inst_path, lie, capsys)
    assert code == 1 and "reason" in out


def test_infeasible_claim_on_a_feasible_instance_is_refuted(setup, tmp_path, capsys):
    _, _, inst_path, online = setup
    lie = {**online, "algorithm": "milp", "status": "infeasible", "objective": None, "schedule": None,
           "extra": {"reason": "trust me"}}
    code, out = _validate(tmp_path, inst_path, lie, capsys)
    assert code == 1 and "schedules every job" in out


def test_rejected_job_that_fits_alone_refutes_infeasible(setup, tmp_path, capsys):
    _, _, inst_path, online = setup
    lie = {**online, "algorithm": "milp", "status": "infeasible", "objective": None, "schedule": None,
           "extra": {"reason": "job 0 fits nowhere", "rejected": [0]}}
    code, out = _validate(tmp_path, inst_path, lie, capsys)
    assert code == 1 and "fits alone" in out


@pytest.mark.parametrize("family", FAMILIES)
def test_a_true_infeasible_claim_is_accepted(family, tmp_path, capsys):
    """A job far too long for the horizon: the exact model says infeasible, and validate agrees."""
    data, _ = small_instance(family, tmp_path)
    make_job_too_long(family, data)
    inst_path = write(tmp_path / "long.json", data)
    inst = api.load(inst_path)
    res = prove(api.solve, inst, method="cpsat")
    assert res.status == Status.INFEASIBLE and res.extra.get("reason")
    code, _ = _validate(tmp_path, inst_path, res.to_dict(), capsys)
    assert code == 0


def test_unknown_job_id_in_a_schedule(tmp_path, capsys):
    _, inst_path = small_instance("preemptive", tmp_path)
    inst = api.load(inst_path)
    res = api.run("online", inst).to_dict()
    res["schedule"]["jobs"][0]["job"] = 99
    code, _ = _validate(tmp_path, inst_path, res, capsys)
    assert code in (1, 2)


@pytest.mark.parametrize("family", FAMILIES)
def test_rejected_ids_that_do_not_exist(family, tmp_path, capsys):
    _, inst_path = small_instance(family, tmp_path)
    inst = api.load(inst_path)
    res = api.run("online", inst).to_dict()
    lie = {**res, "status": "partial", "extra": {**res["extra"], "rejected": [99], "rejected_count": 1}}
    code, out = _validate(tmp_path, inst_path, lie, capsys)
    assert code in (1, 2) and "99" in out
