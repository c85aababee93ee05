"""Golden optima at the sizes issue 35 reached: rungs of `benchmarks/exact_scale.py`'s ladders (``small`` generator,
seed 1, the ladder's servers and horizon), each proven optimal by at least two exact methods that agree.

Writes ``instances/<family>/ladder/j<n>_seed1.json`` (the instance) and ``.optimum.json`` (the optimum, the optimal
schedule of the first method, and per method its status, objective, bound, CPU seconds (HiGHS child processes included)
and wall seconds). A rung is written only
when at least two listed methods prove it optimal with the same objective and schedules the family's validator
accepts; a method that did not prove it within the limit is recorded under ``not_proven_within_limit``.
The proofs take minutes, so the tests do not re-solve these instances: `tests/test_ladder_goldens.py` checks the
stored schedule, the bounds and every algorithm against the stored optimum.

    .venv/bin/python instances/make_ladder_goldens.py preemptive 32 --time-limit 900
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt import api
from edgeopt.bench import cpu_seconds
from edgeopt.core import Status
from edgeopt.core.jsonio import write_json

HERE = Path(__file__).resolve().parent
SEED = 1
_spec = importlib.util.spec_from_file_location("exact_scale", HERE.parent / "benchmarks" / "exact_scale.py")
_exact_scale = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_exact_scale)

#: The ladder's sizes per family: the generator's other sizes as a function of the job count, those of
#: `benchmarks/exact_scale.LADDERS` (one definition, so a golden is a rung of the ladder the docs measure).
SIZES = {family: sizes for family, (_, sizes) in _exact_scale.LADDERS.items()}
#: The methods that prove a rung: (label, exact method, options). Two different models or solvers per family.
PROOFS: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "preemptive": [("milp", "milp", {}), ("milp/original", "milp", {"strengthen": False}), ("cpsat", "cpsat", {})],
    "edgecloud": [("milp", "milp", {}), ("cpsat", "cpsat", {})],
    "tapfinger": [("milp", "milp", {}), ("milp/fixed", "milp", {"fix": True})],
    # hetero: the MILP with reduced-cost fixing (its default from 5,000 start variables) and without it, two
    # different searches (the fixed model has a cutoff and a fraction of the columns); CP-SAT proves 6 jobs only
    "hetero": [("milp", "milp", {}), ("milp/unfixed", "milp", {"fix": False}), ("cpsat", "cpsat", {})],
    # okita: the MILP by completion (its default since 2026-12-07) and the model by slot it replaced, two
    # different formulations; CP-SAT proves 7 jobs in 60 s and stops at 1,399.12 / 1,270.12 on 10 after 900 s
    "okita": [("milp", "milp", {}), ("milp/slots", "milp", {"formulation": "slots"}), ("cpsat", "cpsat", {})],
}


def certify(family: str, n: int, time_limit: float, only: list[str] | None) -> dict[str, Any] | None:
    options = SIZES[family](n)
    inst = api.generate(family, "small", seed=SEED, jobs=n, **options)
    spec = api.family_of(inst)
    proofs: dict[str, Any] = {}
    unproven: dict[str, Any] = {}
    schedule, opt = None, None
    for label, method, kw in PROOFS[family]:
        if only and label not in only:
            continue
        c0, w0 = cpu_seconds(), time.perf_counter()  # the children count: large HiGHS solves run in a child
        # the size budget counts the unfixed model; with fixing (edgecloud) the model built is far smaller
        res = api.solve(inst, method=method, time_limit=time_limit, max_model_size=10**9, **kw)
        cpu, wall = round(cpu_seconds() - c0, 1), round(time.perf_counter() - w0, 1)
        print(f"{family} j{n} {label}: {res.status.value} {res.objective} bound {res.bound} cpu {cpu} s wall {wall} s",
              flush=True)
        if spec.check_result(inst, res):
            raise SystemExit(f"{family} j{n}: {label}'s result fails the validator")
        if res.status != Status.OPTIMAL:  # recorded, not counted: the golden needs two proofs that agree
            unproven[label] = {"method": method, "options": kw, "status": res.status.value, "objective": res.objective,
                               "bound": res.bound, "cpu_s": cpu, "wall_s": wall}
            continue
        if opt is not None and abs(res.objective - opt) > 1e-6 * max(1.0, abs(opt)):
            raise SystemExit(f"{family} j{n}: {label} {res.objective} != {opt}")
        opt = res.objective if opt is None else opt
        schedule = res.schedule if schedule is None else schedule
        proofs[label] = {"method": method, "options": kw, "status": res.status.value, "objective": res.objective,
                         "bound": res.bound, "cpu_s": cpu, "wall_s": wall}
    if len(proofs) < 2:
        return None
    name = f"j{n}_seed{SEED}"
    folder = HERE / family / "ladder"  # below the family's small goldens, which their tests re-solve
    folder.mkdir(exist_ok=True)
    write_json(folder / f"{name}.json", inst.model_dump(mode="json"))
    cert = {"instance": f"{name}.json", "family": family, "objective": opt, "objective_name": spec.objective_name,
            "generated_by": {"preset": "small", "seed": SEED, "jobs": n, **options}, "certified_by": proofs,
            "not_proven_within_limit": unproven,
            "schedule": schedule, "time_limit_s": time_limit}
    write_json(folder / f"{name}.optimum.json", cert)
    return cert


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("family", choices=sorted(PROOFS))
    ap.add_argument("jobs", type=int)
    ap.add_argument("--time-limit", type=float, default=900.0)
    ap.add_argument("--only", default=None, help="comma-separated labels of PROOFS to run (at least two)")
    args = ap.parse_args()
    cert = certify(args.family, args.jobs, args.time_limit, args.only.split(",") if args.only else None)
    print("written" if cert else "not certified: nothing written")


if __name__ == "__main__":
    main()
