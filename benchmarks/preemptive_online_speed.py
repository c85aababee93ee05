"""Speed of `online` (A_online, Wang et al.) at the paper's simulation scale: 300 jobs, 100 edge servers + cloud.

The project's target is < 30 s on 2 cores. Reports, per seed, the algorithm's own runtime (Result.runtime_s:
the online run, A_ps, schedule assembly), the wall time of the call (adds the objective and the Result
construction), its process CPU time and peak resident memory (`edgeopt.bench.measure`; the machine is
shared, so CPU time is the number to compare), and the validator's time; every schedule is validated.

    .venv/bin/python benchmarks/preemptive_online_speed.py --seeds 0-2
    .venv/bin/python benchmarks/preemptive_online_speed.py --seeds 0-2 --regime short_chunks
    .venv/bin/python benchmarks/preemptive_online_speed.py --seeds 0 --jobs 250,500,1000,2000

With several job counts (issue 18's scaling check, at the paper's 100 servers) it prints the CPU ms per
job at each and their largest over smallest ratio, and writes ``preemptive_online_speed_growth.json``.
(4,000 jobs cannot be generated at 100 servers: the generator's safe horizon passes the 10^7-slot limit.)
"""

from __future__ import annotations

import time

from edgeopt.bench import benchmark_parser, measure, result_path
from edgeopt.core.jsonio import write_json
from edgeopt.preemptive import FAMILY, generate
from edgeopt.preemptive.instance import REGIMES
from edgeopt.preemptive.online import online


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-2")
    ap.add_argument("--regime", choices=REGIMES, default="paper")
    ap.add_argument("--jobs", type=lambda t: [int(x) for x in t.split(",") if x], default=[300],
                    help="job count, or a comma list of them")
    ap.add_argument("--servers", type=int, default=100)
    ap.add_argument("--speed", type=float, default=1.0)
    args = ap.parse_args()
    rows = []
    print(f"{'seed':>4} {'jobs':>5} {'chunks':>7} {'servers':>7} {'runtime_s':>9} {'cpu_s':>7} "
          f"{'valid_s':>7} {'JCT':>10} {'f(y)':>10} {'preempt':>7} {'cloud%':>6}")
    for n_jobs, seed in ((n, s) for n in args.jobs for s in args.seeds):
        inst = generate("paper", seed=seed, jobs=n_jobs, servers=args.servers, regime=args.regime)
        res, m = measure(lambda inst=inst, seed=seed: online(inst, seed=seed, speed=args.speed))
        call = m["wall_s"]
        t0 = time.perf_counter()
        violations = FAMILY.check_result(inst, res)
        valid_s = time.perf_counter() - t0
        if violations:
            raise SystemExit(f"invalid schedule: {violations[0]}")
        chunks = sum(j.chunks for j in inst.jobs)
        row = {"seed": seed, "jobs": len(inst.jobs), "chunks": chunks, "servers": len(inst.servers) - 1,
                   "runtime_s": res.runtime_s, "call_s": call, "cpu_s": m["cpu_s"], "peak_rss_mb": m["peak_rss_mb"],
                   "cpu_ms_per_job": round(1000 * m["cpu_s"] / len(inst.jobs), 2),
                   "validate_s": valid_s, "jct": res.objective,
                   "fractional_flow_time": res.extra["fractional_flow_time"], "preemptions": res.extra["preemptions"],
                   "cloud_share": res.extra["cloud_chunks"] / chunks, "status": res.status.value}
        rows.append(row)
        print(f"{seed:>4} {row['jobs']:>5} {chunks:>7} {row['servers']:>7} {res.runtime_s:>9.2f} {m['cpu_s']:>7.2f} "
              f"{valid_s:>7.2f} {res.objective:>10.0f} {row['fractional_flow_time']:>10.1f} "
              f"{row['preemptions']:>7} {100 * row['cloud_share']:>6.1f}")
    worst = max(r["call_s"] for r in rows)
    print(f"slowest call: {worst:.2f} s (target < 30 s)")
    out: dict = {"regime": args.regime, "rows": rows, "slowest_call_s": worst}
    if len(args.jobs) > 1:
        per_job = [r["cpu_ms_per_job"] for r in rows]
        out["per_job_growth"] = max(per_job) / min(per_job)
        out["machine"] = "shared 2-core machine; CPU seconds"
        print(f"CPU per job, largest over smallest: {out['per_job_growth']:.2f}x")
        suffix = "_growth"
    else:
        suffix = "" if args.jobs[0] == 300 else f"_{args.jobs[0]}"
    suffix = ("" if args.regime == "paper" else f"_{args.regime}") + suffix
    write_json(result_path(args.out, f"preemptive_online_speed{suffix}.json"), out)


if __name__ == "__main__":
    main()
