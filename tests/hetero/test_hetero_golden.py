"""Golden optima: the certified instances of ``instances/hetero/`` re-solved and compared.

Each ``<name>.optimum.json`` holds the optimum of program (2)/(15) that both exact models proved
(``instances/hetero/make_certified.py``) and the LP relaxation of the time-indexed MILP. CP-SAT
re-solves every instance; the MILP re-solves the quick ones here and all of them under ``slow``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt import api
from edgeopt.core import Status, jsonio
from formulations.hetero import METHODS
from formulations.hetero.golden import lp_relaxation

DIR = Path(__file__).resolve().parents[2] / "instances" / "hetero"
NAMES = sorted(p.name[: -len(".optimum.json")] for p in DIR.glob("*.optimum.json"))
QUICK_MILP = {"small_seed100", "small_ra_seed100", "assumptions_j10_seed0"}


def _load(name: str):
    inst = api.load(DIR / f"{name}.json")
    spec = api.family_of(inst)
    assert spec.name == "hetero"
    return inst, jsonio.read_json(str(DIR / f"{name}.optimum.json"), what="optimum")


def test_at_least_five_certified_instances():
    assert len(NAMES) >= 5
    for name in NAMES:
        _, rec = _load(name)
        assert set(rec["certified_by"]) == {"milp", "cpsat"}
        assert all(v["status"] == "optimal" for v in rec["certified_by"].values())


def _check(name: str, method: str) -> None:
    inst, rec = _load(name)
    res = METHODS[method](inst, time_limit=120)
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
    inst, rec = _load(name)
    lp = lp_relaxation(inst)
    assert lp == pytest.approx(rec["lp_relaxation"], rel=1e-6, abs=1e-6)
    assert lp <= rec["objective"] + 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(NAMES) - QUICK_MILP))
def test_milp_reproduces_the_certified_optimum_slow(name):
    _check(name, "milp")
