"""Speed of edgecloud's A_online on the paper presets (Sec. VI): 200 edge servers + cloud.

Target: 1,000 jobs in under 60 s on 2 cores. Prints a table with the time at
each job count and writes ``edgecloud_online_speed_<preset>.json`` under ``--out``.
Every schedule is checked by the family's validator (outside the timing).
``--preset paper`` (arrivals in [1, T/1.5], T = 6144) or ``paper_compact``
(arrivals in [1, 128], T = 4096).

    PYTHONPATH=. .venv/bin/python benchmarks/edgecloud_online_speed.py --seeds 0 [--jobs 250,500,1000]
        [--preset paper] [--out benchmarks/results]
"""

from __future__ import annotations

import os
import time

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core.jsonio import write_json
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud.online import online


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--jobs", type=lambda t: [int(x) for x in t.split(",")], default=[250, 500, 1000])
    ap.add_argument("--servers", type=int, default=200, help="edge servers (a cloud is added)")
    ap.add_argument("--preset", default="paper", choices=["paper", "paper_compact"])
    args = ap.parse_args()

    rows = []
    print(f"{'jobs':>6} {'servers':>8} {'horizon':>8} {'time_s':>8} {'scheduled':>9} {'rejected':>8} "
          f"{'total_JCT':>12} {'valid':>6} {'load1':>6}")
    for n, seed in ((n, s) for n in args.jobs for s in args.seeds):
        inst = generate(args.preset, seed=seed, jobs=n, servers=args.servers)
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        res = online(inst)
        wall = time.perf_counter() - t0
        violations = FAMILY.check_result(inst, res)
        rejected = len(res.extra.get("rejected", []))
        row = {"jobs": n, "servers": len(inst.servers), "horizon": inst.horizon, "seed": seed, "time_s": round(wall, 3),
                   "algorithm_runtime_s": round(res.runtime_s, 3), "scheduled": n - rejected, "rejected": rejected,
                   "total_jct": res.objective, "valid": not violations, "load_avg_1min_before": round(load, 2),
                   "cpu_count": os.cpu_count()}
        rows.append(row)
        print(f"{n:>6} {row['servers']:>8} {inst.horizon:>8} {wall:>8.2f} {n - rejected:>9} {rejected:>8} "
              f"{res.objective:>12.0f} {not violations!s:>6} {load:>6.2f}")
    path = result_path(args.out, f"edgecloud_online_speed_{args.preset}.json")
    write_json(path, {"benchmark": "edgecloud_online_speed", "preset": args.preset, "rows": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
