"""The CLI starts without importing what it does not need (issue 21, section 5). Speed itself is measured
by benchmarks/cli_startup.py; here, what gets imported (machine-independent)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from edgeopt import api

PROBE = """
import sys
from edgeopt.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
heavy = [m for m in ("edgeopt.api", "edgeopt.hetero", "edgeopt.tapfinger", "scipy.optimize", "pyomo", "ortools",
                     "numpy", "pandas", "matplotlib") if m in sys.modules]
print(heavy)
"""


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["run", "--help"], ["train", "--help"]])
def test_version_and_help_import_no_family(argv):
    out = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, check=True)
    heavy = eval(out.stdout.strip().splitlines()[-1])
    if argv == ["train", "--help"]:  # the real train command (it lives in the tapfinger family)
        assert "--config" in out.stdout and "scipy.optimize" not in heavy
    else:
        assert heavy == []


def test_algorithms_imports_no_solver():
    out = subprocess.run([sys.executable, "-c", PROBE.format(argv=["algorithms"])], capture_output=True, text=True,
                         check=True)
    heavy = eval(out.stdout.strip().splitlines()[-1])
    assert "pyomo" not in heavy and "ortools" not in heavy and "scipy.optimize" not in heavy
    assert "cpsat" in out.stdout


def test_exact_method_names_match_the_formulations():
    for spec in api.families():
        assert api.exact_method_names(spec.name) == list(api.exact_methods(spec.name)), spec.name


def test_generate_help_lists_every_family_preset_and_option(capsys):
    from edgeopt.cli import main

    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    text = capsys.readouterr().out
    for spec in api.families():
        assert f"{spec.name}: {', '.join(spec.presets)}" in " ".join(text.split())
    assert "--arrival-rate" in text
