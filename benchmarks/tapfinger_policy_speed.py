"""CPU time and peak memory of one run of the learned TapFinger policy (`online`) at the paper preset.

Each measurement runs in a fresh Python process: importing edgeopt, generating the ``paper``
instance (3 clusters, Poisson 2, 192 tasks), then ``api.run("online", ...)``, whose CPU time
includes importing torch (and PyTorch Geometric for the ``pyg`` backend) and loading the
checkpoint, as a user's first call would. Reported per backend and thread count: CPU seconds of
the run, CPU seconds of the whole process, peak RSS, the objective (the two backends must agree),
and the inference milliseconds per decision. Target (issue 18): under 3 s for 192 tasks.

    python benchmarks/tapfinger_policy_speed.py --seeds 0-2 --out benchmarks/results
"""

from __future__ import annotations

import json
import subprocess
import sys

from edgeopt.bench import benchmark_parser, result_path

CHILD = r"""
import json, resource, sys, time
t0 = time.process_time()
from edgeopt import api
from edgeopt.tapfinger import generate
from edgeopt.tapfinger.policy.registry import LAST_INFERENCE
seed, backend, threads = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
inst = generate("paper", seed=seed)
t1 = time.process_time()
res = api.run("online", inst, seed=seed, backend=backend, threads=threads)
t2 = time.process_time()
print(json.dumps({"seed": seed, "backend": backend, "threads": threads, "tasks": len(inst.tasks),
                  "run_cpu_s": round(t2 - t1, 3), "process_cpu_s": round(t2 - t0, 3),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  "objective": res.objective, "decisions": res.extra["decisions"],
                  "infer_ms_per_decision": round(LAST_INFERENCE["online"], 2)}))
"""


def main(argv: list[str] | None = None) -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-2")
    ap.add_argument("--threads", default="1", help="comma-separated torch thread counts")
    args = ap.parse_args(argv)
    rows = []
    for seed in args.seeds:
        for backend in ("dense", "pyg"):
            for threads in (int(t) for t in args.threads.split(",")):
                out = subprocess.run([sys.executable, "-c", CHILD, str(seed), backend, str(threads)],
                                     capture_output=True, text=True, check=True)
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(json.dumps(rows[-1]))
    doc = {"benchmark": "tapfinger_policy_speed", "regime": "paper preset (3 clusters, Poisson 2, 192 tasks), "
           "argmax policy, fresh process per run; CPU time (the machine may be shared)", "rows": rows}
    path = result_path(args.out, "tapfinger_policy_speed.json")
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
