"""`solve_pyomo` counts the Pyomo-to-HiGHS translation against the deadline: HiGHS gets only what is left
after it, a translation that outlasts the deadline ends the call as a time limit, and the translation's
time is reported (extra.timings.translate_s)."""

from __future__ import annotations

import time

import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.solvers.highs import Highs

from edgeopt import api
from edgeopt.core import BuildTimeLimit, Deadline, Status
from formulations.common import solve_pyomo


def _tiny_model() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4), domain=pyo.Integers)
    m.c = pyo.Constraint(expr=2 * m.x <= 7)
    m.obj = pyo.Objective(expr=-m.x)
    return m


def test_translation_past_the_deadline_is_a_time_limit(monkeypatch):
    real = Highs.set_instance

    def slow(self, model):
        time.sleep(0.6)  # a translation that takes longer than the whole deadline
        return real(self, model)

    monkeypatch.setattr(Highs, "set_instance", slow)
    with pytest.raises(BuildTimeLimit, match="translation"):
        solve_pyomo(_tiny_model(), time_limit=60, deadline=Deadline(0.3))


def test_highs_gets_what_the_translation_left(monkeypatch):
    real_set, real_solve, seen = Highs.set_instance, Highs.solve, {}

    def slow(self, model):
        time.sleep(0.4)
        return real_set(self, model)

    def spy(self, model, **kw):
        seen["time_limit"] = kw["time_limit"]
        return real_solve(self, model, **kw)

    monkeypatch.setattr(Highs, "set_instance", slow)
    monkeypatch.setattr(Highs, "solve", spy)
    deadline = Deadline(30.0)
    out = solve_pyomo(_tiny_model(), time_limit=30.0, deadline=deadline)
    assert out.status == Status.OPTIMAL and out.objective == -3
    assert out.translate_s >= 0.4
    assert seen["time_limit"] <= 30.0 - out.translate_s  # the translation came out of HiGHS's share


def test_solve_reports_the_translation_time():
    inst = api.generate("hetero", "small", seed=1, jobs=3)
    res = api.solve(inst, method="milp", time_limit=60)
    t = res.extra["timings"]
    assert 0 < t["translate_s"] <= t["solve_s"]
