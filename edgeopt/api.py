"""The Python API: what the CLI, the notebooks and the sweeps call.

Examples:
    >>> from edgeopt import api
    >>> inst = api.generate("hetero", "small", seed=1)          # doctest: +SKIP
    >>> res = api.run("online", inst)                           # doctest: +SKIP
    >>> opt = api.solve(inst, method="milp", time_limit=10)     # doctest: +SKIP
    >>> res.objective / opt.objective                           # doctest: +SKIP
    >>> res.to_frame(inst)                                      # doctest: +SKIP
    >>> api.plot_schedule(inst, res)                            # doctest: +SKIP

This module is a face: every function lives in the services below it and is re-exported here under the
name users know. Where a function is:

* `edgeopt.services.lookup`: families, algorithms, exact models and bounds by name (`family`,
  `algorithms`, `exact_methods`, `check_choice`...);
* `edgeopt.services.instances`: `generate`, `load`, `load_result`, `save`, `result_schema`;
* `edgeopt.services.running`: `run`, `validate`, `register_algorithm`;
* `edgeopt.services.comparison`: `compare`, `Comparison`, `Row`;
* `edgeopt.services.plots`: `plot_schedule`, `plot_utilisation`;
* `edgeopt.solving.exact`: `solve` (warm starts and LNS in `edgeopt.solving.warmstart`);
* `edgeopt.solving.bounds`: `bound`, `check_bound` (and `edgeopt.solving.certify` for ``--certify``).
"""

from __future__ import annotations

from edgeopt.services.comparison import INVALID, Comparison, Row, compare
from edgeopt.services.instances import generate, generator_options, load, load_result, result_schema, save
from edgeopt.services.lookup import (
    MAX_TIME_LIMIT,
    algorithms,
    bound_methods,
    check_algorithm,
    check_choice,
    did_you_mean,
    exact_method_names,
    exact_methods,
    families,
    family,
    family_of,
    is_builtin,
    model_sizes,
    unavailable_algorithms,
)
from edgeopt.services.plots import InvalidResultWarning, plot_schedule, plot_utilisation
from edgeopt.services.running import check_plugin_result, register_algorithm, run, validate
from edgeopt.solving.bounds import bound, check_bound
from edgeopt.solving.exact import solve

__all__ = [
    "INVALID",
    "MAX_TIME_LIMIT",
    "Comparison",
    "InvalidResultWarning",
    "Row",
    "algorithms",
    "bound",
    "bound_methods",
    "check_algorithm",
    "check_bound",
    "check_choice",
    "check_plugin_result",
    "compare",
    "did_you_mean",
    "exact_method_names",
    "exact_methods",
    "families",
    "family",
    "family_of",
    "generate",
    "generator_options",
    "is_builtin",
    "load",
    "load_result",
    "model_sizes",
    "plot_schedule",
    "plot_utilisation",
    "register_algorithm",
    "result_schema",
    "run",
    "save",
    "solve",
    "unavailable_algorithms",
    "validate",
]
