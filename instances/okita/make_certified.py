"""Write the certified okita instances of this folder: ``<name>.json`` and ``<name>.optimum.json``.

Run from the repository root: ``.venv/bin/python instances/okita/make_certified.py``.
Each instance is solved by both exact models (HiGHS MILP and CP-SAT); the optimum is stored only
when both prove optimality and agree (1e-6 relative), with the MILP's LP relaxation (a golden LP
value). ``tests/okita/test_okita_golden.py`` re-solves them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from edgeopt.okita import generate
from formulations.common import write_certified
from formulations.okita import METHODS, lp_relaxation

HERE = Path(__file__).resolve().parent

#: name -> instance builder (the small preset: 3 sites, 3 jobs, T = 8, all four latency-cost kinds)
CASES = {
    "small_seed100": lambda: generate("small", seed=100),
    "small_seed101": lambda: generate("small", seed=101),
    "small_seed102": lambda: generate("small", seed=102),
    "small_j4_seed103": lambda: generate("small", seed=103, jobs=4),
    "small_s4_j2_seed104": lambda: generate("small", seed=104, servers=4, jobs=2),
}


def certify(name: str, time_limit: float = 300.0) -> dict:
    inst = CASES[name]()
    return write_certified(HERE, name, inst, METHODS, time_limit=time_limit,
                           golden={"lp_relaxation": lp_relaxation})


if __name__ == "__main__":
    for name in sys.argv[1:] or CASES:
        rec = certify(name)
        print(name, rec["objective"], {m: v["runtime_s"] for m, v in rec["certified_by"].items()})
