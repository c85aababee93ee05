"""Write the certified hetero instances of this folder: ``<name>.json`` and ``<name>.optimum.json``.

Run from the repository root: ``.venv/bin/python instances/hetero/make_certified.py``.
Each instance is solved by both exact models (HiGHS MILP and CP-SAT); the optimum is stored
only when both prove optimality and agree (1e-6 relative), with the LP relaxation value of the
MILP (a golden LP value, as Egret keeps). ``tests/hetero/test_hetero_golden.py`` re-solves them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from edgeopt.hetero import generate
from formulations.common import write_certified
from formulations.hetero import METHODS
from formulations.hetero.golden import lp_relaxation
from formulations.hetero.theory import assumption_instance

HERE = Path(__file__).resolve().parent

#: name -> instance builder
CASES = {
    "small_seed100": lambda: generate("small", seed=100),
    "small_seed101": lambda: generate("small", seed=101),
    "small_j6_s3_seed102": lambda: generate("small", seed=102, jobs=6, servers=3),
    "small_ra_seed100": lambda: generate("small_ra", seed=100),
    "small_ra_j6_seed101": lambda: generate("small_ra", seed=101, jobs=6),
    "assumptions_j10_seed0": lambda: assumption_instance(0, jobs=10, horizon=24, capacity=20.0, arrivals=6),
}


def certify(name: str, time_limit: float = 120.0) -> dict:
    inst = CASES[name]()
    return write_certified(HERE, name, inst, METHODS, time_limit=time_limit,
                           golden={"lp_relaxation": lp_relaxation})


if __name__ == "__main__":
    for name in sys.argv[1:] or CASES:
        rec = certify(name)
        print(name, rec["objective"], {m: v["runtime_s"] for m, v in rec["certified_by"].items()})
