"""okita: the certified interval [bound, best schedule] before and after the single-job subproblem.

    .venv/bin/python benchmarks/okita_interval.py --bound-time 600 --lns-time 600 --out benchmarks/results

Per regime (``paper``: 100 jobs, 50 sites, T = 150, seed 0; ``jobs150``: the same generator with 150 jobs):

* the bounds ``worker_lp`` (before) and ``config_lp`` (after: `formulations/okita/configlp.py`), each
  with its CPU time and the CPU time of its solver-free certificate check (`check_certificate`);
* the schedule: ``oasis_latency`` (the best algorithm), then the large-neighbourhood search of
  ``formulations/okita/lns.py`` (one-job windows re-planned by the single-job solver with every other
  job fixed; CP-SAT after them only on instances of at most 12 sites) for ``--lns-time`` seconds, through
  `edgeopt.core.lns.search`, which keeps only valid, complete, strictly better schedules;
* gap = (best - bound) / best before (worker_lp, the LNS's previous result) and after.

CPU seconds (``time.process_time``) are the numbers to compare: the machine was shared.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt.bench import cpu_seconds, result_path
from edgeopt.core.jsonio import write_json
from edgeopt.core.limits import Deadline
from edgeopt.core.lns import search
from edgeopt.core.lowerbound import check_certificate, compute_bound
from edgeopt.okita import FAMILY
from edgeopt.okita.baselines import oasis_latency
from edgeopt.okita.instance import generate
from edgeopt.okita.schedule import Schedule, objective, validate
from formulations.okita import LOWER_BOUNDS
from formulations.okita import lns as okita_lns

REGIMES = {"paper": {}, "jobs150": {"jobs": 150}}
#: The previous best schedules (benchmarks/results/okita_lns.json: 240 s of CP-SAT windows).
PREVIOUS_BEST = {"paper": 124569.07590222354, "jobs150": 261047.0}


def bound_row(name: str, inst, time_limit: float) -> dict:
    method = LOWER_BOUNDS[name]
    c0 = cpu_seconds()
    res = compute_bound("okita", method, inst, time_limit=time_limit)
    cpu = cpu_seconds() - c0
    c0 = cpu_seconds()
    checked = check_certificate(method, inst, res) if res.bound is not None else None
    return {"bound": res.bound, "status": res.status.value, "cpu_s": round(cpu, 1),
            "check_cpu_s": round(cpu_seconds() - c0, 1), "check_value": checked,
            "solver": res.extra.get("solver")}


def run(regime: str, bound_time: float, lns_time: float, sub_limit: float, bounds_from: dict | None = None) -> dict:
    inst = generate("paper", seed=0, **REGIMES[regime])
    row: dict = {"regime": regime, "jobs": len(inst.jobs), "seed": 0, "bounds": {}}
    for name in ("worker_lp", "config_lp"):
        if bounds_from is not None:  # the same instance's certified bounds from an earlier run (not recomputed)
            row["bounds"][name] = {**bounds_from["rows"][regime]["bounds"][name], "from": bounds_from["path"]}
            continue
        row["bounds"][name] = bound_row(name, inst, bound_time)
        print(regime, name, row["bounds"][name], flush=True)
    c0 = cpu_seconds()
    start = Schedule.model_validate(oasis_latency(inst).schedule)
    start_obj = objective(inst, start)
    c1 = cpu_seconds()
    # the neighbourhood first offers its rebuild (`sequential_insertion`), then the windows
    best, best_obj, log = search(FAMILY, inst, start, okita_lns.neighbourhood(), deadline=Deadline(lns_time), sub_limit=sub_limit)
    row["schedule"] = {"start": "oasis_latency", "start_objective": start_obj, "start_cpu_s": round(c1 - c0, 1),
                       "lns_objective": best_obj, "lns_cpu_s": round(cpu_seconds() - c1, 1),
                       "lns_time_limit_s": lns_time, "sub_limit_s": sub_limit,
                       "single_milp_limit_s": okita_lns.SINGLE_MILP_LIMIT, "valid": not validate(inst, best),
                       "previous_best": PREVIOUS_BEST.get(regime),
                       "lns": {k: v for k, v in log.as_dict().items() if k != "history"}}
    before_bound = row["bounds"]["worker_lp"]["bound"]
    after_bound = max(before_bound, row["bounds"]["config_lp"]["bound"] or 0.0)
    prev = PREVIOUS_BEST.get(regime, start_obj)
    row["gap_before"] = (prev - before_bound) / prev
    row["gap_after"] = (best_obj - after_bound) / best_obj
    print(regime, row["schedule"], "gap before", round(row["gap_before"], 4), "after", round(row["gap_after"], 4),
          flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--regimes", default="paper,jobs150")
    ap.add_argument("--bound-time", type=float, default=600.0)
    ap.add_argument("--lns-time", type=float, default=600.0)
    ap.add_argument("--sub-limit", type=float, default=10.0)
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--name", default="okita_interval.json", help="output file name in --out")
    ap.add_argument("--bounds-from", default=None,
                    help="take the bounds of an earlier result file (same instances) instead of recomputing them")
    ap.add_argument("--single-milp-limit", type=float, default=None,
                    help="seconds per fixed-PS MILP of the LNS's single-job planner (formulations.okita.lns."
                         "SINGLE_MILP_LIMIT; default: as it is)")
    args = ap.parse_args()
    if args.single_milp_limit is not None:
        if not 0.01 <= args.single_milp_limit <= 60:
            ap.error("--single-milp-limit: in [0.01, 60] s")
        okita_lns.SINGLE_MILP_LIMIT = args.single_milp_limit
    previous = None
    if args.bounds_from:
        previous = {"path": args.bounds_from,
                    "rows": {r["regime"]: r for r in json.loads(Path(args.bounds_from).read_text())}}
    rows = [run(r, args.bound_time, args.lns_time, args.sub_limit, previous) for r in args.regimes.split(",")]
    write_json(result_path(Path(args.out), args.name), rows, what="--out")


if __name__ == "__main__":
    main()
