"""Speed of edgecloud's A_online on the paper presets (Sec. VI): 200 edge servers + cloud.

Prints, per job count, the process CPU seconds of the call (the machine is shared, so
CPU time is the number to compare; wall time is recorded too), CPU ms per job and the
peak resident memory of the call, and writes ``edgecloud_online_speed_<preset>.json``
under ``--out``. Every schedule is checked by the family's validator (outside the
timing). Targets (issue 18): at least 5x faster than the former implementation at
1,000 jobs and a per-job cost within 1.3x from 250 to 4,000 jobs. ``--preset paper``
(arrivals in [1, T/1.5], T = 6144) or ``paper_compact`` (arrivals in [1, 128], T = 4096).
``--reference`` times the reference implementation kept for the equivalence tests
(`edgeopt.edgecloud.online.REFERENCE`).

    PYTHONPATH=. .venv/bin/python benchmarks/edgecloud_online_speed.py --seeds 0 [--jobs 250,1000,4000]
        [--preset paper] [--out benchmarks/results] [--reference]
"""

from __future__ import annotations

import os

from edgeopt.bench import benchmark_parser, measure, result_path
from edgeopt.core.jsonio import write_json
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud import online as ec_online


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--jobs", type=lambda t: [int(x) for x in t.split(",")], default=[250, 1000, 4000])
    ap.add_argument("--servers", type=int, default=200, help="edge servers (a cloud is added)")
    ap.add_argument("--preset", default="paper", choices=["paper", "paper_compact"])
    ap.add_argument("--reference", action="store_true", help="time the reference implementation")
    args = ap.parse_args()
    ec_online.REFERENCE = args.reference

    rows = []
    print(f"{'jobs':>6} {'servers':>8} {'horizon':>8} {'cpu_s':>8} {'wall_s':>8} {'cpu ms/job':>10} {'peak MiB':>9} "
          f"{'scheduled':>9} {'rejected':>8} {'total_JCT':>12} {'valid':>6}")
    for n, seed in ((n, s) for n in args.jobs for s in args.seeds):
        inst = generate(args.preset, seed=seed, jobs=n, servers=args.servers)
        load = os.getloadavg()[0]
        res, m = measure(lambda inst=inst: ec_online.online(inst))
        violations = FAMILY.check_result(inst, res)
        rejected = len(res.extra.get("rejected", []))
        row = {"jobs": n, "servers": len(inst.servers), "horizon": inst.horizon, "seed": seed, **m,
               "cpu_ms_per_job": round(1000 * m["cpu_s"] / n, 2), "algorithm_runtime_s": round(res.runtime_s, 3),
               "scheduled": n - rejected, "rejected": rejected, "total_jct": res.objective,
               "valid": not violations, "load_avg_1min_before": round(load, 2), "cpu_count": os.cpu_count()}
        rows.append(row)
        print(f"{n:>6} {row['servers']:>8} {inst.horizon:>8} {m['cpu_s']:>8.2f} {m['wall_s']:>8.2f} "
              f"{row['cpu_ms_per_job']:>10.2f} {m['peak_rss_mb']:>9.0f} {n - rejected:>9} {rejected:>8} "
              f"{res.objective:>12.0f} {not violations!s:>6}", flush=True)
    per_job = [r["cpu_ms_per_job"] for r in rows]
    growth = max(per_job) / min(per_job) if per_job and min(per_job) > 0 else None
    if growth is not None:
        print(f"CPU per job, largest over smallest: {growth:.2f}x (target <= 1.3x)")
    path = result_path(args.out, f"edgecloud_online_speed_{args.preset}.json")
    write_json(path, {"benchmark": "edgecloud_online_speed", "preset": args.preset,
                      "implementation": "reference" if args.reference else "fast",
                      "machine": "shared; CPU seconds", "per_job_growth": growth, "rows": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
