"""The strengthened exact models (``strengthen=True``: valid inequalities, symmetry breaking) keep the optimum.

For every family and both exact models, small random instances are solved with and without the added rows;
both must prove optimality with the same objective, and the certified floor used must not exceed it.
"""

from __future__ import annotations

import importlib

import pytest
from ortools.sat.python import cp_model

from edgeopt import api
from edgeopt.core import Status
from edgeopt.families import get_family
from formulations.strengthen import (
    add_cpsat_floor,
    consecutive_pairs,
    floor_in_model_units,
    identical_classes,
)
from tests.reliability_helpers import prove

#: generator sizes small enough for both models to prove optimality in about a second
SIZES = {
    "hetero": {"jobs": 4, "servers": 2, "horizon": 16},  # the small preset's two servers are identical
    "edgecloud": {"jobs": 5},
    "preemptive": {"jobs": 4, "servers": 2},
    "okita": {"jobs": 2, "servers": 3, "horizon": 8},
    "tapfinger": {"jobs": 5},
}
CASES = [(fam, seed) for fam in SIZES for seed in (4, 5)]


@pytest.mark.parametrize(("family", "seed"), CASES)
@pytest.mark.parametrize("model", ["milp", "cpsat"])
def test_strengthened_model_keeps_the_optimum(family: str, seed: int, model: str) -> None:
    spec = get_family(family)
    inst = spec.generate("small", seed=seed, **SIZES[family])
    solve = importlib.import_module(f"formulations.{family}").METHODS[model]
    original = prove(solve, inst, strengthen=False)  # proofs by work, not by the clock
    strong = prove(solve, inst, strengthen=True)
    assert original.status == Status.OPTIMAL and strong.status == Status.OPTIMAL, (original.extra, strong.extra)
    assert strong.objective == pytest.approx(original.objective, rel=1e-6, abs=1e-6)
    assert api.validate(inst, strong) == []
    assert original.extra["strengthen"] is False and strong.extra["strengthen"] is True
    if model == "cpsat":  # CP-SAT models get the certified bound as an objective floor
        assert original.extra["objective_floor"] is None
        floor = strong.extra["objective_floor"]
        assert floor is not None and floor <= strong.objective + 1e-6 * max(1.0, abs(strong.objective))


def test_hetero_symmetry_rows_over_identical_servers() -> None:
    from formulations.hetero.cpsat import build_cpsat
    from formulations.hetero.data import identical_servers, prepare
    from formulations.hetero.milp import build_milp

    data = prepare(get_family("hetero").generate("small", seed=4, **SIZES["hetero"]))
    assert identical_servers(data) == [[0, 1]]
    assert len(build_milp(data, strengthen=True).valid_symmetry_servers) == 1
    assert not hasattr(build_milp(data, strengthen=False), "valid_symmetry_servers")
    names = [c.name for c in build_cpsat(data, strengthen=True).model.proto.constraints]
    assert "valid_symmetry_servers_0_1" in names
    assert not any(n.startswith("valid_") for n in (c.name for c in build_cpsat(data, strengthen=False).model.proto.constraints))


def test_preemptive_symmetry_rows_over_chunks_and_workers() -> None:
    from formulations.preemptive.cpsat import build_cpsat
    from formulations.preemptive.data import from_instance
    from formulations.preemptive.milp import build_milp

    inst = get_family("preemptive").generate("small", seed=1, jobs=6, servers=3)
    data = from_instance(inst)
    names = [c.name for c in build_cpsat(data, strengthen=True).model.proto.constraints]
    assert any(n.startswith("valid_symmetry_chunks_") for n in names)  # some job has two or more chunks
    pairs = consecutive_pairs(data.identical_workers())
    assert all(n.startswith("valid_symmetry_workers_") for n in names if "workers" in n)
    assert len(build_milp(data, strengthen=True).valid_symmetry_workers) <= len(pairs)


def test_cpsat_floor_reads_the_objective_offset() -> None:
    m = cp_model.CpModel()
    x = m.new_int_var(0, 10, "x")
    m.minimize(2 * x + 3)
    add_cpsat_floor(m, floor_in_model_units(10.0))  # 2x + 3 >= 10 -> x >= 4 (integers) -> optimum 11
    solver = cp_model.CpSolver()
    assert solver.solve(m) == cp_model.OPTIMAL
    assert solver.objective_value == 11


def test_identical_classes_and_pairs() -> None:
    assert identical_classes(["a", "b", "a", "c", "a", "b"]) == [[0, 2, 4], [1, 5]]
    assert consecutive_pairs([[0, 2, 4], [1, 5]]) == [(0, 2), (2, 4), (1, 5)]
    assert floor_in_model_units(7.5, 2.0) == 15.0 and floor_in_model_units(7.2, 1.0, slack=0.1) == 8.0
