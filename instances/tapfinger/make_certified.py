"""Write the certified tapfinger instances of this folder: ``<name>.json`` and ``<name>.optimum.json``.

Run from the repository root: ``python instances/tapfinger/make_certified.py``. Each instance is
solved by both exact models (HiGHS MILP and CP-SAT); the optimum is stored only when both prove
optimality and agree. ``tests/tapfinger/test_tapfinger_algorithms.py`` re-solves them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from edgeopt.tapfinger import generate
from edgeopt.tapfinger.instance import ProgressModel, TaskType
from edgeopt.tapfinger.speedup import read_progress_table
from formulations.common import write_certified
from formulations.tapfinger import METHODS, start_rate_bound

HERE = Path(__file__).resolve().parent


def _table_instance():
    inst = generate("small", seed=104, jobs=6)
    types = [TaskType(name="insensitive", progress=ProgressModel(kind="insensitive")),
             TaskType(name="measured", progress=read_progress_table(HERE / "example_progress_table.csv"))]
    return inst.model_copy(update={"task_types": types, "clusters": [
        c.model_copy(update={"capacity": [8, 4]}) for c in inst.clusters]})


CASES = {
    "small_seed100": lambda: generate("small", seed=100),
    "small_seed101": lambda: generate("small", seed=101),
    "small_noise_seed102": lambda: generate("small", seed=102, noise=0.1),
    "small_3clusters_seed103": lambda: generate("small", seed=103, clusters=3, jobs=7),
    "small_table_seed104": _table_instance,
}


def certify(name: str, time_limit: float = 60.0) -> dict:
    inst = CASES[name]()
    inst = type(inst).model_validate(inst.model_dump(mode="json"))
    return write_certified(HERE, name, inst, METHODS, time_limit=time_limit,
                           golden={"start_rate_bound": start_rate_bound}, rel_tol=0.0, abs_tol=1e-9)


if __name__ == "__main__":
    for name in sys.argv[1:] or CASES:
        rec = certify(name)
        print(name, rec["objective"], {m: v["runtime_s"] for m, v in rec["certified_by"].items()})
