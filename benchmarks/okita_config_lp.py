"""okita: the `config_lp` bound (value, CPU, CPU of its solver-free check) at the paper preset and on ITP weeks.

    .venv/bin/python benchmarks/okita_config_lp.py --cases paper,quiet --time-limit 600 --out benchmarks/results

``paper``: the `paper` preset (100 jobs, 50 sites, T = 150, seed 0); ``jobs150``: its generator with 150 jobs; ``quiet`` / ``typical`` / ``busiest``: the
ITP weeks as `cross_family.py` builds them (cluster06, 96 GPUs, seed 0). One case per process is the way to
compare CPU seconds on a shared machine (``time.process_time``).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cross_family import GPUS_PER_SERVER, WEEK_S, choose_windows, weekly_load
from okita_interval import bound_row

from edgeopt import traces
from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core.jsonio import write_json
from edgeopt.families import get_family
from edgeopt.traces.instances import from_trace


def itp_week(label: str, seed: int):
    """(week index, okita instance) of the ITP week ``label`` (quiet, typical, busiest) as `cross_family.py`
    builds it: cluster06, 96 GPUs."""
    jobs = traces.load_itp()
    week = choose_windows(weekly_load(jobs, "cluster06"))[label]
    servers = max(1, math.ceil(96.0 / GPUS_PER_SERVER["okita"]))
    return week, from_trace("okita", jobs, window=(week * WEEK_S, week * WEEK_S + WEEK_S), cluster="cluster06",
                            seed=seed, servers=servers)


def instance(case: str, seed: int):
    """The `paper` preset (``jobs150``: its generator with 150 jobs), or an ITP week (`itp_week`)."""
    if case == "paper":
        return get_family("okita").generate("paper", seed=seed)
    if case == "jobs150":
        return get_family("okita").generate("paper", seed=seed, jobs=150)
    return itp_week(case, seed)[1]


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--cases", default="paper,quiet")
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--name", default="okita_config_lp.json")
    args = ap.parse_args()
    path = result_path(args.out, args.name)
    out = {"setting": f"okita config_lp, seed {args.seeds[0]}, {args.time_limit:g} s limit, CPU seconds",
           "cases": {}}
    for case in args.cases.split(","):
        out["cases"][case] = bound_row("config_lp", instance(case, args.seeds[0]), args.time_limit)
        print(case, out["cases"][case], flush=True)
        write_json(path, out)
    print("wrote", path)


if __name__ == "__main__":
    main()
