"""Exact models of the okita family (Han et al., program (2) with the bandwidth cost (1)).

``METHODS`` maps a method name to ``solve(instance, *, time_limit=60.0, **options) -> Result``; the
time limit covers building and solving (a `Deadline` is started on entry):

* ``milp``: Pyomo + HiGHS; by default each job's plan is indexed by its completion slot
  (``milp_completion.py``); ``formulation="slots"`` builds the model by slot, y * s linearised exactly, one
  binary per completion slot (``milp.py``), the reference the other is tested against;
* ``cpsat``: an independent OR-Tools CP-SAT model: element constraints for the completion slot and
  the latency table, enforced exchange-cost rows instead of products (``cpsat.py``).

``SIZES`` estimates each model before it is built, so the solve path can refuse one above budget.
``milp.lp_relaxation`` and ``bounds.latency_bound`` (each job alone in empty sites; scales to the paper preset)
are lower bounds, named as such, for instances too large to certify. ``NEIGHBOURHOODS``: the
large-neighbourhood search's windows, re-solved with the CP-SAT model (``lns.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from edgeopt.core import ModelSize, Result
from edgeopt.core.lns import Neighbourhood
from edgeopt.core.lowerbound import BoundMethod
from formulations import LazyFunction, lazy_attributes
from formulations.okita import milp
from formulations.okita.bounds import latency_bound
from formulations.okita.configlp import CONFIG_LP
from formulations.okita.lpbound import WORKER_LP
from formulations.okita.milp import build_milp, lp_relaxation, solve_milp

#: ``cpsat`` (and its names below) is imported on first use: a MILP solve does not import OR-Tools.
__getattr__ = lazy_attributes(__name__, {name: "cpsat" for name in ("cpsat", "build_cpsat", "solve_cpsat")})
METHODS: dict[str, Callable[..., Result]] = {"milp": solve_milp, "cpsat": LazyFunction(f"{__name__}.cpsat", "solve_cpsat")}
SIZES: dict[str, Callable[..., ModelSize]] = {"milp": milp.model_size,
                                              "cpsat": LazyFunction(f"{__name__}.cpsat", "model_size")}
#: Certified lower bounds (``edgeopt bound``; the first is ``auto``): ``lpbound.py``, ``configlp.py``.
LOWER_BOUNDS: dict[str, BoundMethod] = {"worker_lp": WORKER_LP, "config_lp": CONFIG_LP}
#: Large-neighbourhood search plug-ins by the exact model of their windows (``solve --lns``): ``lns.py``.
NEIGHBOURHOODS: dict[str, Callable[[], Neighbourhood]] = {"cpsat": LazyFunction(f"{__name__}.lns", "neighbourhood")}

__all__ = ["LOWER_BOUNDS", "METHODS", "SIZES", "build_cpsat", "build_milp", "latency_bound", "lp_relaxation", "solve_cpsat", "solve_milp"]
