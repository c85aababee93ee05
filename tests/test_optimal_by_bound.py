"""A warm start that meets the certified bound is optimal, and the bound's certificate is its proof.

`solve --warm-start` and `solve --lns` compute the family's certified bound; when it reaches the objective of
the validated warm-start (or LNS) schedule, the result is ``optimal`` with ``extra["certificate"]``, which
``validate`` and ``validate --certify`` re-check without a solver. Each instance below was found to have a
list scheduler's schedule at the bound (3 jobs, seed chosen per family); the exact model is refused by the
size budget (``max_model_size=1``), so the bound alone proves it, and a CP-SAT proof by work agrees.
"""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import Status
from edgeopt.solving import certify
from tests.reliability_helpers import PROOF_CLOCK, cli, edited_certificate, prove

#: (family, seed) of ``small`` instances with 3 jobs whose best list schedule meets the certified bound.
CASES = [("preemptive", 0), ("edgecloud", 0), ("tapfinger", 3), ("hetero", 0)]


@pytest.mark.parametrize(("family", "seed"), CASES, ids=[f"{f}-{s}" for f, s in CASES])
def test_a_warm_start_at_the_bound_is_proven_optimal_by_its_certificate(family: str, seed: int, tmp_path) -> None:
    inst = api.generate(family, "small", seed=seed, jobs=3)
    res = api.solve(inst, method="cpsat", warm_start="best", time_limit=PROOF_CLOCK, max_model_size=1)
    assert res.status == Status.OPTIMAL, res.extra
    assert res.objective == res.bound == res.extra["certificate"]["bound"]
    # the warm start is kept; or (preemptive) the exact model's own windows met the same certified bound with their
    # incumbent, so that model was not built either
    assert "proof" in res.extra and (res.extra["warm_start"]["kept"] or res.extra["model"].endswith("(not built)"))
    assert not api.validate(inst, res)
    assert certify.certify(inst, res, time_limit=PROOF_CLOCK).verdict == certify.CERTIFIED
    opt = prove(api.solve, inst, method="cpsat")
    assert opt.status == Status.OPTIMAL and opt.objective == pytest.approx(res.objective)
    higher = edited_certificate(res, bound=res.objective + 1)
    other = edited_certificate(res, method="no_such_bound")
    for bad in (higher, other):
        assert any(v.equation == "certificate" for v in api.validate(inst, bad))
        assert certify.certify(inst, bad, time_limit=PROOF_CLOCK).verdict == certify.FALSE
    ipath, rpath = tmp_path / "inst.json", tmp_path / "res.json"
    api.save(inst, ipath)
    api.save(higher, rpath)
    assert cli("validate", ipath, rpath) == 1


def test_the_lns_stops_at_once_when_its_warm_start_meets_the_bound() -> None:
    """No window runs: the certified bound already proves the warm start (a 600 s limit, never reached)."""
    inst = api.generate("preemptive", "small", seed=0, jobs=3)
    res = api.solve(inst, method="cpsat", lns=True, warm_start="best", time_limit=600)
    assert res.status == Status.OPTIMAL and res.extra["lns"]["iterations"] == 0
    assert res.objective == res.extra["certificate"]["bound"]
    assert not api.validate(inst, res)
