"""Speed of the hetero family's A_online (Zhou et al.) on the paper preset.

Runs ``online`` on ``generate("paper", jobs=N, servers=150, horizon=300)`` for
N in 250, 500, 1000 (by default), checks every schedule with the validator, and
prints wall-clock and CPU seconds, time per job, and the objective. The target
of the project: 1,000 jobs, 150 servers, T = 300 in under 60 s on a 2-core machine.
Writes ``hetero_online_speed.json`` to ``--out`` (``--out benchmarks/results`` rewrites the tracked file).

    python benchmarks/hetero_online_speed.py [--jobs 250 500 1000] [--seeds 0] [--baselines]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt import api
from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core.jsonio import write_json


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--jobs", type=int, nargs="+", default=[250, 500, 1000])
    ap.add_argument("--servers", type=int, default=150)
    ap.add_argument("--horizon", type=int, default=300)
    ap.add_argument("--baselines", action="store_true", help="also time every other registered algorithm")
    args = ap.parse_args()
    args.seed = args.seeds[0]

    spec = api.family("hetero")
    names = ["online"] + (sorted(n for n in api.algorithms("hetero") if n != "online") if args.baselines else [])
    rows = []
    print(f"cpus available: {len(os.sched_getaffinity(0))}")
    print(f"{'algorithm':<10} {'jobs':>5} {'wall s':>8} {'cpu s':>8} {'ms/job':>8} {'objective':>14} "
          f"{'rejected':>8} {'valid':>5}")
    for n in args.jobs:
        inst = api.generate("hetero", "paper", seed=args.seed, jobs=n, servers=args.servers, horizon=args.horizon)
        for name in names:
            c0, t0 = time.process_time(), time.perf_counter()
            res = api.run(name, inst, seed=args.seed)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            valid = not spec.check_result(inst, res)
            rej = len(res.extra.get("rejected", []))
            rows.append({"algorithm": name, "jobs": n, "servers": args.servers, "horizon": args.horizon,
                         "seed": args.seed, "wall_s": wall, "cpu_s": cpu, "ms_per_job": 1000 * wall / n,
                         "objective": res.objective, "rejected": rej, "valid": valid})
            print(f"{name:<10} {n:>5} {wall:>8.2f} {cpu:>8.2f} {1000 * wall / n:>8.1f} {res.objective:>14.0f} "
                  f"{rej:>8} {valid!s:>5}", flush=True)
    write_json(result_path(args.out, "hetero_online_speed.json"), {"rows": rows})


if __name__ == "__main__":
    main()
