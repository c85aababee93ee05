"""``edgeopt solve --fix/--no-fix`` and ``api.solve(fix=...)``: the switch reaches the models that have reduced-cost
fixing (edgecloud milp/cpsat, tapfinger milp, preemptive milp/cpsat), gives the same optimum as the model without it, and is refused with one
line naming ``fix`` (exit 2, nothing written) where it cannot apply. Exact solves stop by work (`PROOF_WORK`), not by
the clock; the instances are proven in well under a second.
"""

from __future__ import annotations

import json

import pytest

from edgeopt import api
from edgeopt.core import InputError, Result, Status
from tests.reliability_helpers import PROOF_WORK, cli


@pytest.fixture
def tapfinger_file(tmp_path):
    inst = api.generate("tapfinger", "small", seed=2, jobs=4)
    path = tmp_path / "tapfinger.json"
    api.save(inst, path)
    return inst, path


def _solve(path, out, *flags):
    code = cli("solve", path, "--method", "milp", "--work-limit", PROOF_WORK, "--time-limit", "3600", "-o", out, *flags)
    return code, (json.loads(out.read_text()) if out.exists() else None)


def test_fix_and_no_fix_give_the_same_proven_optimum(tapfinger_file, tmp_path):
    inst, path = tapfinger_file
    code_fix, fixed = _solve(path, tmp_path / "fixed.json", "--fix")
    code_plain, plain = _solve(path, tmp_path / "plain.json", "--no-fix")
    assert code_fix == code_plain == 0
    assert fixed["status"] == plain["status"] == Status.OPTIMAL.value
    assert fixed["objective"] == plain["objective"]
    assert fixed["extra"].get("fix") is True  # the switch reached the model
    assert "fix" not in plain["extra"]
    for data in (fixed, plain):
        assert not api.validate(inst, Result.from_dict(data))


def test_without_the_switch_the_model_keeps_its_default(tapfinger_file, tmp_path):
    _, path = tapfinger_file
    code, res = _solve(path, tmp_path / "default.json")
    assert code == 0 and "fix" not in res["extra"]  # tapfinger milp: off by default


@pytest.mark.parametrize("family,flags", [("hetero", ["--method", "cpsat", "--fix"]),
                                          ("okita", ["--method", "cpsat", "--no-fix"]),
                                          ("hetero", ["--method", "cpsat", "--no-fix"])])
def test_a_model_without_fixing_refuses_the_switch(family, flags, tmp_path, capsys):
    path, out = tmp_path / "inst.json", tmp_path / "res.json"
    api.save(api.generate(family, "small", seed=1), path)
    assert cli("solve", path, "-o", out, *flags) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: fix:") and "tapfinger milp" in err[0]
    assert not out.exists()


def test_preemptive_windows_follow_the_switch(tmp_path):
    """preemptive's per-job windows (its reduced-cost fixing) are on by default from 16 jobs; ``--no-fix`` leaves
    them out; both prove the same optimum, and both schedules validate."""
    inst = api.generate("preemptive", "small", seed=0, jobs=16)
    path = tmp_path / "preemptive.json"
    api.save(inst, path)
    code_default, default = _solve(path, tmp_path / "default.json")
    code_plain, plain = _solve(path, tmp_path / "plain.json", "--no-fix")
    assert code_default == code_plain == 0
    assert default["status"] == plain["status"] == Status.OPTIMAL.value
    assert default["objective"] == plain["objective"]
    assert default["extra"]["windows"]["mean_window_slots"] < default["extra"]["windows"]["mean_window_slots_before"]
    assert plain["extra"]["fix"] is False and "windows" not in plain["extra"]
    for data in (default, plain):
        assert not api.validate(inst, Result.from_dict(data))


def test_okita_completion_windows_follow_the_switch(tmp_path):
    """okita's milp cuts its completion windows from the warm start's schedule by default; ``--no-fix`` builds every
    completion; both prove the same optimum, and both schedules validate."""
    inst = api.generate("okita", "small", seed=1, jobs=3, servers=2, horizon=9)
    path = tmp_path / "okita.json"
    api.save(inst, path)
    code_default, default = _solve(path, tmp_path / "default.json", "--warm-start", "drf")
    code_plain, plain = _solve(path, tmp_path / "plain.json", "--warm-start", "drf", "--no-fix")
    assert code_default == code_plain == 0
    assert default["status"] == plain["status"] == Status.OPTIMAL.value
    assert default["objective"] == pytest.approx(plain["objective"], rel=1e-9)
    win = default["extra"]["windows"]
    assert win["from"] == "hint" and win["completions"] <= win["completions_unwindowed"]
    assert plain["extra"]["fix"] is False and "windows" not in plain["extra"]
    for data in (default, plain):
        assert not api.validate(inst, Result.from_dict(data))


def test_fix_with_lns_is_refused(tapfinger_file, tmp_path, capsys):
    _, path = tapfinger_file
    out = tmp_path / "res.json"
    assert cli("solve", path, "--fix", "--lns", "-o", out) == 2
    assert capsys.readouterr().err.strip().startswith("error: fix:")
    assert not out.exists()


def test_api_refuses_a_fix_that_is_not_a_boolean():
    inst = api.generate("tapfinger", "small", seed=2, jobs=4)
    with pytest.raises(InputError) as exc:
        api.solve(inst, method="milp", fix="yes")
    assert exc.value.field == "fix"
