"""Golden optima: the certified instances in instances/edgecloud/ still solve to their stored optimum.

Each ``<name>.optimum.json`` was written by ``instances/edgecloud/make_certified.py``
only after both exact models proved the same optimum. Here both models solve
the stored instance again and must reproduce it, the MILP's LP relaxation its
stored value; every registered algorithm
with a complete schedule must not beat it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt import api
from edgeopt.core import Status, registered
from edgeopt.core.jsonio import read_json
from formulations.edgecloud import METHODS
from formulations.edgecloud.milp import lp_relaxation
from tests.reliability_helpers import PROOF_CLOCK, prove

FOLDER = Path(__file__).resolve().parents[2] / "instances" / "edgecloud"
CASES = sorted(p.name[: -len(".optimum.json")] for p in FOLDER.glob("*.optimum.json"))


def test_there_are_five_certified_instances() -> None:
    assert len(CASES) >= 5


@pytest.mark.parametrize("name", CASES)
def test_golden_optimum(name: str) -> None:
    record = read_json(FOLDER / f"{name}.optimum.json")
    inst = api.load(FOLDER / record["instance"])
    family = api.family_of(inst)
    assert family.name == "edgecloud"
    assert set(record["certified_by"]) == {"milp", "cpsat"}
    assert all(c["status"] == "optimal" for c in record["certified_by"].values())
    for method, solve in METHODS.items():
        res = prove(solve, inst)  # by work: the same on a loaded machine
        assert res.status == Status.OPTIMAL, method
        assert res.objective == pytest.approx(record["objective"], rel=1e-9), method
        assert family.check_result(inst, res) == []
    # Egret-style: the MILP's LP relaxation is a lower bound and has not drifted (formulation strength).
    lp = lp_relaxation(inst, time_limit=PROOF_CLOCK)  # an LP: no work limit reaches it, the clock never stops it
    assert lp <= record["objective"] + 1e-6
    assert lp == pytest.approx(record["milp_lp_relaxation"], abs=1e-6)
    for alg, spec in registered("edgecloud").items():
        res = spec(inst, seed=0)
        assert family.check_result(inst, res) == []
        if res.status == Status.FEASIBLE and not res.schedule.get("preemptive"):  # outside (2) otherwise
            assert res.objective >= record["objective"] - 1e-9, alg
