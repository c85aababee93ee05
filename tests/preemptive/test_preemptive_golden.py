"""Golden optima: the certified instances in instances/preemptive/ (see make_certified.py there).

Each ``<name>.optimum.json`` stores the optimum of MINLP (2) proved by both exact models, the
optimum of ILP (4) and the value of its LP relaxation. Both exact models must reproduce the
optimum with a validated schedule, the bounds must reproduce their values, and no registered
algorithm may beat the optimum.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt import api
from edgeopt.core import Status, registered
from edgeopt.core.jsonio import read_json
from edgeopt.preemptive import FAMILY
from formulations.preemptive import BOUNDS, METHODS
from tests.reliability_helpers import prove

DIR = Path(__file__).resolve().parents[2] / "instances" / "preemptive"
NAMES = sorted(p.name[: -len(".optimum.json")] for p in DIR.glob("*.optimum.json"))


def test_there_are_five_certified_instances():
    assert len(NAMES) >= 5, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_golden_optimum(name):
    inst = api.load(DIR / f"{name}.json")
    spec = api.family_of(inst)
    assert spec.name == "preemptive"
    cert = read_json(DIR / f"{name}.optimum.json")
    assert set(cert["certified_by"]) == {"milp", "cpsat"}
    opt = cert["objective"]
    for method in ("milp", "cpsat"):
        res = prove(METHODS[method], inst)  # by work: the same on a loaded machine
        assert res.status == Status.OPTIMAL, (method, res.status)
        assert not FAMILY.check_result(inst, res)
        assert res.objective == pytest.approx(opt, rel=1e-6, abs=1e-6), method
    assert prove(BOUNDS["ilp4"], inst).bound == pytest.approx(cert["ilp4_optimum"], abs=1e-6)
    assert prove(BOUNDS["lp4"], inst).bound == pytest.approx(cert["lp4_value"], abs=1e-6)
    assert cert["lp4_value"] <= cert["ilp4_optimum"] + 1e-9 <= opt + 2e-9
    for algo_name, algo in registered("preemptive").items():
        res = algo(inst, seed=0)
        assert not FAMILY.check_result(inst, res), algo_name
        if res.status == Status.FEASIBLE:
            assert res.objective >= opt - 1e-6, (algo_name, res.objective, opt)
        else:
            # A_greedy ignores PSs (Lemma 3 assumes enough of them): where A_ps finds none free, the job
            # is rejected (decided with the model helper, /work/coord/preemptive.md 07:27). Only the
            # PS-bound instance may do that.
            assert res.status == Status.PARTIAL and res.extra.get("rejected"), (algo_name, res.status)
            assert name == "ps_bound", (algo_name, name, res.extra.get("rejected"))
