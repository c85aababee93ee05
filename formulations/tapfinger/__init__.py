"""Exact models of the tapfinger family (Li et al., problem (1)-(8)) and a scalable lower bound.

``METHODS`` maps a method name to ``solve(instance, *, time_limit=60.0) -> Result``:

* ``milp``: time-indexed MILP in Pyomo, solved by HiGHS (``milp.py``); ``fix=True``: reduced-cost fixing
  and the certified bound ``ti_lp_hull`` as the proof where it meets the incumbent (``fixing.py``);
* ``cpsat``: optional intervals + cumulative in OR-Tools CP-SAT (``cpsat.py``).

Both use the same allocation options (``data.py``: the Pareto-optimal allocations, durations from
the progress model including the instance's noise realisation), so they are exact for the
non-preemptive problem the paper formulates; the preemptive baselines solve a relaxation.
``SIZES`` estimates each model before it is built. ``bound.py``: the fastest-run + start-rate
lower bound, which scales to the paper's presets.
"""

from __future__ import annotations

from collections.abc import Callable

from edgeopt.core import ModelSize, Result
from edgeopt.core.lns import Neighbourhood
from edgeopt.core.lowerbound import BoundMethod
from formulations import LazyFunction, lazy_attributes
from formulations.tapfinger.bound import start_rate_bound
from formulations.tapfinger.data import cpsat_size, milp_size
from formulations.tapfinger.lpbound import TI_LP, TI_LP_HULL
from formulations.tapfinger.milp import build_milp, solve_milp

#: ``cpsat`` (and its names below) is imported on first use: a MILP solve does not import OR-Tools.
__getattr__ = lazy_attributes(__name__, {name: "cpsat" for name in ("build_cpsat", "solve_cpsat")})
METHODS: dict[str, Callable[..., Result]] = {"milp": solve_milp, "cpsat": LazyFunction(f"{__name__}.cpsat", "solve_cpsat")}
SIZES: dict[str, Callable[..., ModelSize]] = {"milp": milp_size, "cpsat": cpsat_size}
#: Certified lower bounds (``edgeopt bound``; the first is ``auto``): ``lpbound.py``. ``ti_lp_hull`` adds the
#: concurrency rows (stronger where clusters have few allocation kinds; the same as ``ti_lp`` elsewhere).
LOWER_BOUNDS: dict[str, BoundMethod] = {"ti_lp": TI_LP, "ti_lp_hull": TI_LP_HULL}
#: Large-neighbourhood search plug-ins by the exact model of their windows (``solve --lns``): ``lns.py``.
NEIGHBOURHOODS: dict[str, Callable[[], Neighbourhood]] = {"cpsat": LazyFunction(f"{__name__}.lns", "neighbourhood")}

__all__ = ["LOWER_BOUNDS", "METHODS", "SIZES", "build_cpsat", "build_milp", "solve_cpsat", "solve_milp", "start_rate_bound"]
