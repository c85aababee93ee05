"""Golden optima: the certified instances of ``instances/hetero/`` re-solved and compared.

Each ``<name>.optimum.json`` holds the optimum of program (2)/(15) that both exact models proved
(``instances/hetero/make_certified.py``) and the LP relaxation of the time-indexed MILP. CP-SAT
re-solves every instance; the MILP re-solves the quick ones here and all of them under ``slow``.
"""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import Status
from formulations.hetero import METHODS
from formulations.hetero.golden import lp_relaxation
from tests.reliability_helpers import PROOF_CLOCK, certified_names, load_certified, prove

NAMES = certified_names("hetero")
QUICK_MILP = {"small_seed100", "small_ra_seed100", "assumptions_j10_seed0"}


def test_at_least_five_certified_instances():
    assert len(NAMES) >= 5
    for name in NAMES:
        _, rec = load_certified("hetero", name)
        assert set(rec["certified_by"]) == {"milp", "cpsat"}
        assert all(v["status"] == "optimal" for v in rec["certified_by"].values())


def _check(name: str, method: str) -> None:
    inst, rec = load_certified("hetero", name)
    res = prove(METHODS[method], inst)  # by work: the same on a loaded machine
    assert res.status == Status.OPTIMAL
    assert res.instance_sha256 == rec["instance_sha256"]
    assert res.objective == pytest.approx(rec["objective"], rel=1e-6)
    assert not api.family("hetero").check_result(inst, res)


@pytest.mark.parametrize("name", NAMES)
def test_cpsat_reproduces_the_certified_optimum(name):
    _check(name, "cpsat")


@pytest.mark.parametrize("name", sorted(set(NAMES) & QUICK_MILP))
def test_milp_reproduces_the_certified_optimum(name):
    _check(name, "milp")
    inst, rec = load_certified("hetero", name)
    lp = lp_relaxation(inst, time_limit=PROOF_CLOCK)  # an LP: no work limit reaches it, the clock never stops it
    assert lp == pytest.approx(rec["lp_relaxation"], rel=1e-6, abs=1e-6)
    assert lp <= rec["objective"] + 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(NAMES) - QUICK_MILP))
def test_milp_reproduces_the_certified_optimum_slow(name):
    _check(name, "milp")
