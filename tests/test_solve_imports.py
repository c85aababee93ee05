"""`edgeopt solve` imports only the solver of the model asked for (issue 18, "cut the fixed costs"): a MILP
solve loads no OR-Tools (0.3 s of CPU with the pandas it imports) and nothing loads SciPy (with Pyomo loaded,
importing SciPy also imports scipy.stats: 0.6 s). What is imported is machine-independent; the time it costs
is measured by benchmarks/cli_startup.py."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

from edgeopt import api
from formulations import LazyFunction
from tests.reliability_helpers import PROOF_CLOCK, PROOF_WORK

FAMILIES = [s.name for s in api.families()]

PROBE = """
import json, sys
from edgeopt.cli import main
try:
    main({argv!r})
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
print(json.dumps(sorted(m for m in ("ortools", "pandas", "scipy", "pyomo", "pyomo.environ", "highspy", "torch")
                        if m in sys.modules)))
"""


@pytest.mark.parametrize("method", ["milp", "cpsat"])
def test_solve_imports_only_the_solver_of_its_method(method, tmp_path):
    inst, res = tmp_path / "i.json", tmp_path / "r.json"
    api.save(api.generate("edgecloud", "small", seed=1), inst)
    out = subprocess.run([sys.executable, "-c", PROBE.format(argv=["solve", str(inst), "--method", method, "-o",
                                                                  str(res)])],
                         capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    loaded = set(json.loads(out))
    result = api.load_result(res)
    assert result.status.value == "optimal" and not api.validate(api.load(inst), result)
    assert "torch" not in loaded
    assert "pyomo.environ" not in loaded  # pyomo.core suffices: half the import
    if method == "milp":
        assert {"pyomo", "highspy"} <= loaded and not {"ortools", "pandas", "scipy"} & loaded
    else:
        # the CP-SAT model's objective floor is the certified bound (formulations.strengthen), whose LP
        # reads its duals through scipy.sparse; a MILP solve adds no floor and loads no SciPy
        assert {"ortools", "scipy"} <= loaded
        assert result.extra.get("objective_floor") is not None


@pytest.mark.parametrize("family", FAMILIES)
def test_lazy_cpsat_method_is_the_function_itself(family):
    """The lazy entry calls, and shows the signature of, the family's CP-SAT model (warm starts read it to
    know whether the model takes a ``hint``); its names stay importable from the family's package."""
    import importlib

    package = importlib.import_module(f"formulations.{family}")
    entry = package.METHODS["cpsat"]
    assert isinstance(entry, LazyFunction)
    real = importlib.import_module(f"formulations.{family}.cpsat").solve_cpsat
    assert entry.load() is real and package.solve_cpsat is real
    assert inspect.signature(entry) == inspect.signature(real)
    with pytest.raises(AttributeError):
        package.no_such_name  # noqa: B018


SOLVE_ALL = """
import json, sys
from edgeopt import api
out = {}
for family in json.loads(sys.argv[1]):
    result = api.solve(api.generate(family, "small", seed=1), method="milp", time_limit=3600,
                       work_limit=float(sys.argv[2]))
    out[family] = [result.status.value, result.objective, result.bound, result.schedule]
out["pyomo.environ"] = "pyomo.environ" in sys.modules
print(json.dumps(out))
"""


def test_models_built_without_pyomo_environ_solve_the_same():
    """The exact models import ``pyomo.core``, not ``pyomo.environ`` (which loads every Pyomo plug-in): in a
    process that never loads ``pyomo.environ``, each family's MILP gives the same status, objective, bound
    and schedule as here, where it is loaded (the reference: Pyomo's documented way)."""
    import pyomo.environ  # noqa: F401

    out = subprocess.run([sys.executable, "-c", SOLVE_ALL, json.dumps(FAMILIES), str(PROOF_WORK)],
                         capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    without = json.loads(out)
    assert without.pop("pyomo.environ") is False
    for family in FAMILIES:
        # proofs by work (as in SOLVE_ALL): both processes stop at the same point on a loaded machine
        result = api.solve(api.generate(family, "small", seed=1), method="milp", time_limit=PROOF_CLOCK,
                           work_limit=PROOF_WORK)
        reference = json.loads(json.dumps([result.status.value, result.objective, result.bound, result.schedule]))
        assert without[family] == reference, family
