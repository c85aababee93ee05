"""Regenerate the certified edgecloud instances of this folder and their optima.

    .venv/bin/python instances/edgecloud/make_certified.py

Each ``<name>.json`` is a seeded instance of the ``small`` generator (sizes
below); ``<name>.optimum.json`` holds the optimum of MINLP (2) and the proof:
both exact models (``milp``: Pyomo + HiGHS, ``cpsat``: OR-Tools CP-SAT) with
status ``optimal`` and the same objective, and the LP relaxation value of the
MILP (a regression guard on the formulation's strength). The script refuses to write an
optimum the two models do not agree on.
"""

from __future__ import annotations

from pathlib import Path

from edgeopt.core import Status
from edgeopt.core.jsonio import write_json
from edgeopt.edgecloud import FAMILY, generate
from formulations.edgecloud import METHODS
from formulations.edgecloud.milp import lp_relaxation

HERE = Path(__file__).resolve().parent

#: name -> (seed, jobs, edge servers); horizon is the preset's (24 slots).
CASES = {
    "small_seed0": (0, 4, 2),
    "small_seed7": (7, 4, 2),
    "j6_s4_seed2": (2, 6, 4),
    "j8_s2_seed1": (1, 8, 2),
    "j10_s3_seed3": (3, 10, 3),
}


def certify(name: str, seed: int, jobs: int, servers: int) -> dict:
    inst = generate("small", seed=seed, jobs=jobs, servers=servers)
    results = {m: solve(inst, time_limit=60) for m, solve in METHODS.items()}
    objs = {r.objective for r in results.values()}
    if any(r.status != Status.OPTIMAL for r in results.values()) or len(objs) != 1:
        raise SystemExit(f"{name}: models disagree or did not prove optimality: "
                         + ", ".join(f"{m}={r.status.value}/{r.objective}" for m, r in results.items()))
    for r in results.values():
        assert FAMILY.check_result(inst, r) == []
    write_json(HERE / f"{name}.json", inst.model_dump(mode="json"))
    return {
        "instance": f"{name}.json",
        "generated_by": {"preset": "small", "seed": seed, "jobs": jobs, "servers": servers},
        "objective": objs.pop(),
        "objective_name": FAMILY.objective_name,
        # Egret-style golden value: the LP relaxation of the MILP (full horizon, no deadline cuts).
        "milp_lp_relaxation": round(lp_relaxation(inst), 9),
        "certified_by": {m: {"status": r.status.value, "objective": r.objective, "bound": r.bound}
                         for m, r in results.items()},
    }


def main() -> None:
    for name, (seed, jobs, servers) in CASES.items():
        record = certify(name, seed, jobs, servers)
        write_json(HERE / f"{name}.optimum.json", record)
        print(name, record["objective"])


if __name__ == "__main__":
    main()
