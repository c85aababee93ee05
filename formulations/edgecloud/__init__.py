"""Exact models of the edgecloud family (She et al., MINLP (2)) and its batch problem (3)-(5).

``METHODS`` maps a method name to ``solve(instance, *, time_limit=60.0, **options) -> Result``:

* ``milp``: time-indexed MILP in Pyomo, solved by HiGHS (``milp.py``);
* ``cpsat``: interval + cumulative model in OR-Tools CP-SAT (``cpsat.py``).

Both linearise MINLP (2) the same way (``data.py``): a job picks one mode
(w workers, colocated or not) whose duration is fixed by (2e) and eq. (1).
The batch problem (3)/(4) of one round of A_online, its LP relaxation by
column generation and its dual (5) are in ``batch.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from edgeopt.core import ModelSize, Result
from edgeopt.core.lns import Neighbourhood
from edgeopt.core.lowerbound import BoundMethod
from formulations import LazyFunction, lazy_attributes
from formulations.edgecloud.batch import (
    BatchProblem,
    column_generation,
    dual_value,
    paper_oracle,
    price_exact,
    solve_batch_ilp,
)
from formulations.edgecloud.bound import TI_LP
from formulations.edgecloud.milp import build_milp, extract_milp, solve_milp
from formulations.edgecloud.sizes import SIZES as _SIZES

#: ``cpsat`` (and its names below) is imported on first use: a MILP solve does not import OR-Tools.
__getattr__ = lazy_attributes(__name__, {name: "cpsat" for name in ("build_cpsat", "extract_cpsat", "solve_cpsat")})
METHODS: dict[str, Callable[..., Result]] = {"milp": solve_milp, "cpsat": LazyFunction(f"{__name__}.cpsat", "solve_cpsat")}
#: ``{method: fn(instance) -> ModelSize}``: each model's size before it is built (the solve path's guard).
SIZES: dict[str, Callable[..., ModelSize]] = _SIZES
#: Certified lower bounds (``edgeopt bound``; the first is ``auto``): ``bound.py``.
LOWER_BOUNDS: dict[str, BoundMethod] = {"ti_lp": TI_LP}
#: Large-neighbourhood search plug-ins by the exact model of their windows (``solve --lns``): ``lns.py``.
NEIGHBOURHOODS: dict[str, Callable[[], Neighbourhood]] = {"cpsat": LazyFunction(f"{__name__}.lns", "neighbourhood")}

__all__ = [
    "LOWER_BOUNDS", "METHODS", "SIZES", "BatchProblem", "build_cpsat", "build_milp", "column_generation", "dual_value", "extract_cpsat",
    "extract_milp", "paper_oracle", "price_exact", "solve_batch_ilp", "solve_cpsat", "solve_milp",
]
