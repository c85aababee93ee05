"""Speed of `online` (A_online, Wang et al.) at the paper's simulation scale: 300 jobs, 100 edge servers + cloud.

The issue asks for < 30 s on 2 cores. Reports, per seed, the algorithm's own runtime (Result.runtime_s:
the online run, A_ps, schedule assembly), the wall time of the call (adds the objective and the Result
construction), and the validator's time; every schedule is validated.

    .venv/bin/python benchmarks/preemptive_online_speed.py --seeds 3
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from edgeopt.preemptive import FAMILY, generate
from edgeopt.preemptive.online import online


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--servers", type=int, default=100)
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--out", default="benchmarks/results/preemptive_online_speed.json")
    args = ap.parse_args()
    rows = []
    print(f"{'seed':>4} {'jobs':>5} {'chunks':>7} {'servers':>7} {'runtime_s':>9} {'call_s':>7} "
          f"{'valid_s':>7} {'JCT':>10} {'f(y)':>10} {'preempt':>7} {'cloud%':>6}")
    for seed in range(args.seeds):
        inst = generate("paper", seed=seed, jobs=args.jobs, servers=args.servers)
        t0 = time.perf_counter()
        res = online(inst, seed=seed, speed=args.speed)
        call = time.perf_counter() - t0
        t0 = time.perf_counter()
        violations = FAMILY.check_result(inst, res)
        valid_s = time.perf_counter() - t0
        if violations:
            raise SystemExit(f"invalid schedule: {violations[0]}")
        chunks = sum(j.chunks for j in inst.jobs)
        row = {"seed": seed, "jobs": len(inst.jobs), "chunks": chunks, "servers": len(inst.servers) - 1,
                   "runtime_s": res.runtime_s, "call_s": call, "validate_s": valid_s, "jct": res.objective,
                   "fractional_flow_time": res.extra["fractional_flow_time"], "preemptions": res.extra["preemptions"],
                   "cloud_share": res.extra["cloud_chunks"] / chunks, "status": res.status.value}
        rows.append(row)
        print(f"{seed:>4} {row['jobs']:>5} {chunks:>7} {row['servers']:>7} {res.runtime_s:>9.2f} {call:>7.2f} "
              f"{valid_s:>7.2f} {res.objective:>10.0f} {row['fractional_flow_time']:>10.1f} "
              f"{row['preemptions']:>7} {100 * row['cloud_share']:>6.1f}")
    worst = max(r["call_s"] for r in rows)
    print(f"slowest call: {worst:.2f} s (target < 30 s)")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"rows": rows, "slowest_call_s": worst}, indent=1))


if __name__ == "__main__":
    main()
