"""Speed of Okita (``online``) at the paper preset and how it grows with jobs and sites.

    .venv/bin/python benchmarks/okita_online_speed.py --seeds 0-2 --out benchmarks/results

Paper preset (Sec. V-B): R = 50 sites, T = 150, I = 100 jobs, exponential latency cost, arrivals
uniform in [0, T/3). Table: I in {100, 200, 400} at R = 50, and R in {25, 50, 100} at I = 100. Each
cell: mean and max wall time and process CPU time over the seeds (one process; the 2-core machine is
shared with other work, so the CPU time is the steadier number; the load average is recorded),
the number of OSF evaluations, and the result's status (a ``partial`` run says how many jobs did not
finish by T). The paper reports < 50 s in MATLAB (Fig. 13); the target here is < 5 s at the preset.
"""

from __future__ import annotations

import json
import os
import statistics

from edgeopt import api
from edgeopt.bench import benchmark_parser, measure, result_path
from edgeopt.okita import FAMILY, generate

CELLS = [(100, 50), (200, 50), (400, 50), (100, 25), (100, 100)]


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-2")
    ap.add_argument("--validate", action="store_true", help="also validate every schedule (slower)")
    args = ap.parse_args()
    rows = []
    for jobs, sites in CELLS:
        times, cpu, calls, statuses, peak = [], [], [], [], []
        for seed in args.seeds:
            inst = generate("paper", seed=seed, jobs=jobs, servers=sites)
            res, m = measure(lambda inst=inst: api.run("online", inst))
            times.append(m["wall_s"])
            cpu.append(m["cpu_s"])
            peak.append(m["peak_rss_mb"])
            calls.append(res.extra["osf_calls"])
            statuses.append(res.status.value + (f"({res.extra['rejected_count']})" if res.extra.get("rejected") else ""))
            if args.validate:
                assert not FAMILY.check_result(inst, res)
        row = {"jobs": jobs, "sites": sites, "horizon": 150, "mean_s": round(statistics.mean(times), 3),
               "max_s": round(max(times), 3), "cpu_mean_s": round(statistics.mean(cpu), 3),
               "cpu_max_s": round(max(cpu), 3), "peak_rss_mb_max": max(peak), "osf_calls_mean": round(statistics.mean(calls)), "status": statuses}
        rows.append(row)
        print(row, flush=True)
    out = {"setting": "paper preset (Sec. V-B), arrivals uniform in [0, 50)", "seeds": args.seeds, "rows": rows,
           "load_average_1min": os.getloadavg()[0], "cpus": os.cpu_count()}
    path = result_path(args.out, "okita_online_speed.json")
    path.write_text(json.dumps(out, indent=2) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
