"""Speed of edgecloud's A_online on the paper preset (Sec. VI): 200 edge servers + cloud.

The issue's target: 1,000 jobs in under 60 s on 2 cores. Prints a table with
the time at each job count and writes ``benchmarks/results/edgecloud_online_speed.json``.
Every schedule is checked by the family's validator (outside the timing).

    .venv/bin/python benchmarks/edgecloud_online_speed.py [--jobs 250 500 1000] [--servers 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from edgeopt.core.jsonio import write_json
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud.online import online


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, nargs="+", default=[250, 500, 1000])
    ap.add_argument("--servers", type=int, default=200, help="edge servers (a cloud is added)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/results/edgecloud_online_speed.json")
    args = ap.parse_args()

    rows = []
    print(f"{'jobs':>6} {'servers':>8} {'horizon':>8} {'time_s':>8} {'scheduled':>9} {'rejected':>8} "
          f"{'total_JCT':>12} {'valid':>6} {'load1':>6}")
    for n in args.jobs:
        inst = generate("paper", seed=args.seed, jobs=n, servers=args.servers)
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        res = online(inst)
        wall = time.perf_counter() - t0
        violations = FAMILY.check_result(inst, res)
        rejected = len(res.extra.get("rejected", []))
        row = {"jobs": n, "servers": len(inst.servers), "horizon": inst.horizon, "seed": args.seed, "time_s": round(wall, 3),
                   "algorithm_runtime_s": round(res.runtime_s, 3), "scheduled": n - rejected, "rejected": rejected,
                   "total_jct": res.objective, "valid": not violations, "load_avg_1min_before": round(load, 2),
                   "cpu_count": os.cpu_count()}
        rows.append(row)
        print(f"{n:>6} {row['servers']:>8} {inst.horizon:>8} {wall:>8.2f} {n - rejected:>9} {rejected:>8} "
              f"{res.objective:>12.0f} {not violations!s:>6} {load:>6.2f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, {"benchmark": "edgecloud_online_speed", "preset": "paper", "rows": rows})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
