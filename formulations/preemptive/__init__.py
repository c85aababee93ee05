"""Exact models and lower bounds of the preemptive family (Wang et al., MINLP (2), ILP (4), dual (6)).

``METHODS`` maps a method name to ``solve(instance, *, time_limit=60.0, **options) -> Result``
with a validated schedule of MINLP (2):

* ``milp``: time-indexed MILP in Pyomo, solved by HiGHS (``milp.py``; chunks of a job counted);
* ``cpsat``: OR-Tools CP-SAT model naming every chunk (``cpsat.py``).

``BOUNDS`` maps a name to ``solve(instance, *, time_limit=60.0, **options) -> Result`` whose
``bound`` is a lower bound on the optimum of (2) (``schedule`` and ``objective`` are None):

* ``ilp4``: ILP (4) solved exactly (Lemma 1: <= optimum of (2));
* ``lp4``: its LP relaxation (Pyomo + HiGHS);
* ``lp4_agg``: the same LP relaxation without the PS rows (4c)/(4d), aggregated over identical
  chunks and workers (exact at ``bucket=1, pool=False``), optionally pooled per worker type and
  time-bucketed (still lower bounds), built with highspy's matrix API for 300 jobs / 100 servers
  (``lp4_large.py``); ``jct=True`` gives a lower bound on the JCT of (2) itself.

``NEIGHBOURHOODS``: the large-neighbourhood search's windows (``solve --lns``), solved with the
CP-SAT model of a few jobs over what the others leave (``lns.py``).

The dual (6) is ``ilp4.build_dual6`` / ``ilp4.solve_dual6``; the LP whose dual it is,
with (alpha, beta) read back from HiGHS's row duals, is ``ilp4.solve_p6``. The reading of the
paper shared by all models is in ``data.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from edgeopt.core import ModelSize, Result
from edgeopt.core.lns import Neighbourhood
from edgeopt.core.lowerbound import BoundMethod
from formulations import LazyFunction, lazy_attributes
from formulations.preemptive.configbound import CONFIG_JCT
from formulations.preemptive.ilp4 import build_dual6, build_ilp4, build_p6, solve_ilp4, solve_lp4
from formulations.preemptive.lp4_large import solve_lp4_large
from formulations.preemptive.lpbound import LP4_JCT
from formulations.preemptive.milp import build_milp, solve_milp
from formulations.preemptive.sizes import SIZES as _SIZES

#: ``cpsat`` (and its names below) is imported on first use: a MILP solve does not import OR-Tools.
__getattr__ = lazy_attributes(__name__, {name: "cpsat" for name in ("build_cpsat", "solve_cpsat")})
METHODS: dict[str, Callable[..., Result]] = {"milp": solve_milp, "cpsat": LazyFunction(f"{__name__}.cpsat", "solve_cpsat")}
#: ``{method: fn(instance) -> ModelSize}``: each model's size before it is built (the solve path's guard).
SIZES: dict[str, Callable[..., ModelSize]] = _SIZES
#: How far above the size budget the unfixed models may be estimated and still have their per-job windows cut
#: before the guard (`edgeopt.core.limits.deferred_size_guard`). The windows come from the list schedulers and
#: the certified LP, which grow with jobs x worker types x slots, not with the unfixed model (jobs x workers x
#: slots x chunks): the `paper` preset cut to 4-15 jobs keeps its long horizon (11,823-42,621 slots), 128-1,700
#: times the budget unfixed, and its windows cut 8 jobs from 977 M nonzeros to 6.5 M.
FIXING_HEADROOM: dict[str, float] = {"milp": 10_000.0, "cpsat": 10_000.0}
BOUNDS: dict[str, Callable[..., Result]] = {"ilp4": solve_ilp4, "lp4": solve_lp4, "lp4_agg": solve_lp4_large}
#: Certified lower bounds (``edgeopt bound``; the first is ``auto``): ``configbound.py`` (single-job plans,
#: each job paying its last slot) and ``lpbound.py`` (the aggregated LP of ILP (4), whose duals the per-job
#: windows of the exact models use).
LOWER_BOUNDS: dict[str, BoundMethod] = {"config_jct": CONFIG_JCT, "lp4_jct": LP4_JCT}
#: Large-neighbourhood search plug-ins by the exact model of their windows (``solve --lns``): ``lns.py``.
NEIGHBOURHOODS: dict[str, Callable[[], Neighbourhood]] = {"cpsat": LazyFunction(f"{__name__}.lns", "neighbourhood")}

__all__ = [
    "BOUNDS", "LOWER_BOUNDS", "METHODS", "SIZES", "build_cpsat", "build_dual6", "build_ilp4", "build_milp", "build_p6", "solve_cpsat",
    "solve_ilp4", "solve_lp4", "solve_lp4_large", "solve_milp",
]
