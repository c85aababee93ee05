"""`edgeopt --version`, `--help`, `algorithms` and the CLI module itself load no heavy library (numpy, pandas, scipy,
Pyomo, torch): the start-up cost they would add is measured by benchmarks/cli_startup.py, and this test
keeps a regression from slipping in without asserting anything about the machine's speed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ["numpy", "pandas", "scipy", "pyomo", "torch", "ortools", "highspy", "matplotlib", "edgeopt.core"]

PROBE = """
import json, sys
from edgeopt import cli
args = {args!r}
try:
    if args:
        cli.main(args)
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


@pytest.mark.parametrize("args", [[], ["--version"], ["--help"], ["algorithms"], ["algorithms", "hetero"],
                                  ["algorithms", "--json"]],
                         ids=["import", "version", "help", "algorithms", "algorithms-family", "algorithms-json"])
def test_cli_start_up_loads_no_heavy_library(args: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args, heavy=HEAVY)],
        capture_output=True, text=True, check=True,
    ).stdout.strip().splitlines()[-1]
    # `algorithms` reads edgeopt/_catalog_data.py; stale, it imports the families: `python -m edgeopt.catalog --write`
    assert json.loads(out) == []
