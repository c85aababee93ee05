"""Exact models of the hetero family (Zhou et al., program (2), (15) for Ring-AllReduce) and of its
batch problem (Sec. 5: (7), packing ILP (8), dual LP (9), pricing problem (12)/(13)).

``METHODS`` maps a method name to ``solve(instance, *, time_limit=60.0, **options) -> Result``:

* ``milp``: time-indexed MILP in Pyomo (``milp.py``), solved by HiGHS after reduced-cost fixing (``milp_solve.py``,
  ``fixing.py``);
* ``cpsat``: interval + cumulative model in OR-Tools CP-SAT, no time index (``cpsat.py``).

Both reduce the nonlinear rate of eq. (1)/(14) the same way (``data.py``): a job
picks one configuration (m, p, q, N) whose duration is fixed by (2f).
Sec. 5 (``batch.py``): the batch problem (7)/(16) exactly, the pricing problem (12)/(13) exactly,
and the LP relaxation of packing ILP (8)/(17) by column generation in highspy with A_mincost as
the pricing oracle, its dual (9) read back from HiGHS. ``theory.py``: the bounds of Theorems 3 and
5 and Lemma 2 as numbers, their assumptions as checks, instances built to satisfy them.
``checks.py``: both models against each other, the validator and every registered algorithm.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from edgeopt.core import ModelSize, Result
from edgeopt.core.lns import Neighbourhood
from edgeopt.core.lowerbound import BoundMethod
from formulations import LazyFunction, lazy_attributes
from formulations.hetero.bound import TI_LP
from formulations.hetero.milp import build_milp
from formulations.hetero.milp_solve import solve_milp
from formulations.hetero.sizes import SIZES as _SIZES

#: ``cpsat`` (and its names below) is imported on first use: a MILP solve does not import OR-Tools.
__getattr__ = lazy_attributes(__name__, {name: "cpsat" for name in ("build_cpsat", "solve_cpsat")})
METHODS: dict[str, Callable[..., Result]] = {"milp": solve_milp, "cpsat": LazyFunction(f"{__name__}.cpsat", "solve_cpsat")}
#: ``{method: fn(instance) -> ModelSize}``: each model's size before it is built (the solve path's guard).
SIZES: dict[str, Callable[..., ModelSize]] = _SIZES
#: Certified lower bounds (``edgeopt bound``; the first is ``auto``): ``bound.py``.
LOWER_BOUNDS: dict[str, BoundMethod] = {"ti_lp": TI_LP}
#: Large-neighbourhood search plug-ins by the exact model of their windows (``solve --lns``): ``lns.py``.
NEIGHBOURHOODS: dict[str, Callable[[], Neighbourhood]] = {
    window: functools.partial(LazyFunction(f"{__name__}.lns", "neighbourhood"), window) for window in ("cpsat", "milp")}

__all__ = ["LOWER_BOUNDS", "METHODS", "SIZES", "build_cpsat", "build_milp", "solve_cpsat", "solve_milp"]
