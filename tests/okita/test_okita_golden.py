"""Golden optima: the certified instances of ``instances/okita/`` re-solved and compared.

Each ``<name>.optimum.json`` holds the optimum of program (2) that both exact models proved
(``instances/okita/make_certified.py``) and the MILP's LP relaxation value.
"""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import Status
from formulations.okita import METHODS, lp_relaxation
from tests.reliability_helpers import certified_names, load_certified, prove

NAMES = certified_names("okita")


def test_at_least_five_certified_instances():
    assert len(NAMES) >= 5
    for name in NAMES:
        _, rec = load_certified("okita", name)
        assert set(rec["certified_by"]) == {"milp", "cpsat"}
        assert all(v["status"] == "optimal" for v in rec["certified_by"].values())


@pytest.mark.parametrize("name", NAMES)
def test_both_models_reproduce_the_certified_optimum_and_no_algorithm_beats_it(name):
    inst, rec = load_certified("okita", name)
    for method in ("cpsat", "milp"):
        res = prove(METHODS[method], inst)  # by work: the same on a loaded machine
        assert res.status == Status.OPTIMAL
        assert res.instance_sha256 == rec["instance_sha256"]
        assert res.objective == pytest.approx(rec["objective"], rel=1e-6)
        assert not api.family("okita").check_result(inst, res)
    lp = prove(lp_relaxation, inst)
    assert lp == pytest.approx(rec["lp_relaxation"], rel=1e-6, abs=1e-6)
    assert lp <= rec["objective"] + 1e-6
    for algo in api.algorithms("okita"):
        r = api.run(algo, inst)
        assert r.status != Status.FEASIBLE or r.objective >= rec["objective"] - 1e-6, algo
