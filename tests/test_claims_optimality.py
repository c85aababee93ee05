"""Optimality and bound claims, for all five families: what `validate` checks, and `validate --certify`.

Instances have 4 jobs (seed 0), where the paper's online algorithm is strictly worse than the optimum
that CP-SAT proves (asserted below, so the lies are lies), and every exact re-solve takes well under a
second of CPU.
"""

from __future__ import annotations

import json

import pytest

from edgeopt import api, certify
from edgeopt.core import Result, Status
from tests.reliability_helpers import cli

FAMILIES = [spec.name for spec in api.families()]


@pytest.fixture(scope="module", params=FAMILIES)
def case(request):
    family = request.param
    inst = api.generate(family, "small", seed=0, jobs=4)
    online = api.run("online", inst)
    opt = api.solve(inst, method="cpsat", time_limit=120)
    assert opt.status == Status.OPTIMAL and not api.validate(inst, opt)
    assert online.objective > opt.objective + 1e-6, "the relabelled schedule must be a real lie"
    return family, inst, online, opt


def _relabel(res: Result, **changes) -> Result:
    return Result.from_dict({**res.to_dict(), **changes})


def test_optimal_needs_a_zero_gap_and_an_exact_method(case):
    _, inst, online, opt = case
    assert not api.validate(inst, opt)
    gap = _relabel(opt, bound=opt.objective * 0.9 - 1)
    assert any(v.equation == "optimal" and "zero gap" in v.message for v in api.validate(inst, gap))
    no_bound = _relabel(opt, bound=None)
    assert any(v.equation == "optimal" for v in api.validate(inst, no_bound))
    not_exact = _relabel(opt, algorithm="my_solver")
    assert any("not an exact method" in v.message for v in api.validate(inst, not_exact))
    heuristic = _relabel(online, status="optimal", bound=online.objective)  # a registered algorithm
    assert any(v.equation == "status" for v in api.validate(inst, heuristic))
    above = _relabel(online, algorithm="cpsat", status="time_limit", bound=online.objective + 5)
    assert any(v.equation == "bound" for v in api.validate(inst, above))


def test_relabelled_online_passes_plain_validation_but_not_certify(case):
    family, inst, online, opt = case
    lie = _relabel(online, algorithm="cpsat", status="optimal", bound=online.objective)
    assert not api.validate(inst, lie)  # the result alone cannot show it: the claim is listed as not checked
    listed = certify.claims(api.family(family), lie)
    assert "optimal: the objective is the optimum" in [c.claim for c in listed if not c.checked]
    cert = certify.certify(inst, lie, time_limit=120)
    assert cert.verdict == certify.FALSE, cert.to_dict()
    # the honest optimum is certified, and so is its bound
    good = certify.certify(inst, opt, time_limit=120)
    assert good.verdict == certify.CERTIFIED, good.to_dict()
    # an incumbent at the time limit whose bound is above the optimum: a false bound
    false_bound = _relabel(online, algorithm="cpsat", status="time_limit", bound=online.objective)
    assert not api.validate(inst, false_bound)
    found = certify.certify(inst, false_bound, time_limit=120)
    assert found.verdict == certify.FALSE and found.claims[0].claim.startswith("bound")


def test_undecidable_claims_say_not_certified(monkeypatch):
    inst = api.generate("hetero", "small", seed=0, jobs=4)
    opt = api.solve(inst, method="cpsat", time_limit=120)
    monkeypatch.delattr(api, "bound", raising=False)
    cert = certify.certify(inst, opt, time_limit=60, max_nonzeros=1)  # too large to re-solve, no bound routine
    assert cert.verdict == certify.NOT_CERTIFIED
    assert any("not re-solved" in e for e in cert.evidence)
    assert any("api.bound" in e for e in cert.evidence)
    online = api.run("online", inst)  # a result that claims nothing beyond its schedule
    assert certify.certify(inst, online, time_limit=10).verdict == certify.CERTIFIED


def test_validate_cli_lists_claims_and_certify_exits_1_on_a_lie(tmp_path, capsys):
    inst = api.generate("hetero", "small", seed=0, jobs=4)
    ipath = tmp_path / "i.json"
    api.save(inst, ipath)
    online = api.run("online", inst)
    lie = tmp_path / "lie.json"
    api.save(_relabel(online, algorithm="cpsat", status="optimal", bound=online.objective), lie)
    assert cli("validate", ipath, lie) == 0
    text = capsys.readouterr().out
    assert "not checked:" in text and "optimal: the objective is the optimum" in text.replace("\n", "")
    assert cli("validate", ipath, lie, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert "optimal: the objective is the optimum" in report["not_checked"]
    assert "optimal: zero gap (bound == objective)" in report["checked"]
    assert cli("validate", ipath, lie, "--certify", "--time-limit", "60") == 1
    assert "certify: false" in capsys.readouterr().out
    assert cli("validate", ipath, lie, "--certify", "--time-limit", "60", "--json") == 1
    assert json.loads(capsys.readouterr().out)["certify"]["verdict"] == "false"
    assert cli("validate", ipath, lie, "--certify", "--time-limit", "0") == 2


def test_certify_uses_a_lower_bound_when_the_instance_is_too_large_to_re_solve(monkeypatch):
    """Above the size budget, ``api.bound`` (when the toolkit has it) decides: a lower bound equal to
    the claimed optimum certifies it, a lower bound below it leaves it undecided."""
    inst = api.generate("hetero", "small", seed=0, jobs=4)
    opt = api.solve(inst, method="cpsat", time_limit=120)
    calls = []

    def fake_bound(instance, *, method="auto", time_limit=60.0, value=opt.objective):
        calls.append((method, time_limit))
        return Result(family="hetero", algorithm="fake_bound", status=Status.FEASIBLE, objective=None,
                      bound=value, runtime_s=0.0, schedule=None, instance_sha256=opt.instance_sha256)

    monkeypatch.setattr(api, "bound", fake_bound, raising=False)
    cert = certify.certify(inst, opt, time_limit=60, max_nonzeros=1)
    assert cert.verdict == certify.CERTIFIED and calls and calls[0][0] == "auto"
    assert all("fake_bound" in c.evidence for c in cert.claims)
    monkeypatch.setattr(api, "bound", lambda instance, **kw: fake_bound(instance, value=opt.objective - 5))
    assert certify.certify(inst, opt, time_limit=60, max_nonzeros=1).verdict == certify.NOT_CERTIFIED
