"""Certified bounds on the ITP weeks of `cross_family.py` with column generation's finer buckets.

Regime. The weeks and instances of ``cross_family.py`` (shipped ITP trace, cluster06, 96 GPUs, seed 0;
quiet = week 0, typical = week 2, busiest = week 4); per family its ``ti_lp`` bound through
`edgeopt.core.lowerbound.compute_bound` with ``--time-limit`` seconds (the issue's bound budget is 600 s).
On a long horizon column generation buckets the master's rows (T / 512 slots per bucket) and, once a level
converges with time to spare, runs again with buckets a quarter as wide (`edgeopt.core.colgen`): each
level's bucket, certified value and seconds are recorded (``solver.levels``), with the CPU time of the call
and of the solver-free certificate check. The gaps are against the best schedules of the tracked
``cross_family*.json`` results (``--upper``: the LNS runs there), never against an optimum.

    .venv/bin/python benchmarks/bound_levels.py --families tapfinger,edgecloud,hetero --time-limit 600
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt import traces
from edgeopt.bench import cpu_seconds
from edgeopt.core.jsonio import write_json
from edgeopt.core.lowerbound import check_certificate, compute_bound
from edgeopt.traces.instances import from_trace
from formulations import table

sys.path.insert(0, str(Path(__file__).resolve().parent))
# cross_family.py's own tables (mean GPUs per server of each family's draw, tapfinger's two task types)
from cross_family import GPUS_PER_SERVER, TRACE_OPTIONS, WEEK_S

WEEKS = {"quiet": 0, "typical": 2, "busiest": 4}


def week_instance(family: str, jobs, week: int, **options):
    """The ``family`` instance of ITP week ``week`` as cross_family.py builds it (``options`` override
    ``TRACE_OPTIONS``)."""
    start = week * WEEK_S
    return from_trace(family, jobs, window=(start, start + WEEK_S), cluster="cluster06", seed=0,
                      servers=max(1, math.ceil(96 / GPUS_PER_SERVER[family])),
                      **{**TRACE_OPTIONS.get(family, {}), **options})


def measure(family: str, jobs, week: int, time_limit: float) -> dict:
    inst = week_instance(family, jobs, week)
    method = table(family, "LOWER_BOUNDS")["ti_lp"]
    c0 = cpu_seconds()
    res = compute_bound(family, method, inst, time_limit=time_limit)
    cpu = cpu_seconds() - c0
    c0 = cpu_seconds()
    checked = check_certificate(method, inst, res)
    return {"family": family, "week": week, "jobs": len(inst.jobs), "horizon": inst.horizon, "bound": res.bound,
            "cpu_s": round(cpu, 1), "check": checked, "check_cpu_s": round(cpu_seconds() - c0, 1),
            "solver": res.extra["solver"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default="tapfinger,edgecloud,hetero")
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/bound_levels.json"))
    args = ap.parse_args()
    jobs = traces.load_itp()
    rows = []
    for family in args.families.split(","):
        for label, week in WEEKS.items():
            row = {"window": label, **measure(family, jobs, week, args.time_limit)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    write_json(args.out, {"regime": "ITP cluster06, 96 GPUs, seed 0; ti_lp through compute_bound",
                          "time_limit_s": args.time_limit, "rows": rows})  # refuses a path that is not a file
    print("wrote", args.out)


if __name__ == "__main__":
    main()
