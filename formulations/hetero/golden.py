"""Golden values of the hetero formulations: the LP relaxation of the time-indexed MILP."""

from __future__ import annotations

from typing import Any

from edgeopt.core import ModelError, Status
from formulations.hetero.data import prepare
from formulations.hetero.milp import build_milp, solve_model


def lp_relaxation(instance: Any, *, time_limit: float = 60.0) -> float:
    """Optimum of the LP relaxation of program (2)/(15) in the time-indexed formulation (a lower bound)."""
    model = build_milp(prepare(instance), objective="wct", relax=True)
    out = solve_model(model, time_limit=time_limit)
    if out.status != Status.OPTIMAL or out.objective is None:
        raise ModelError(f"LP relaxation ended {out.status.value}")
    return round(float(out.objective), 9)
