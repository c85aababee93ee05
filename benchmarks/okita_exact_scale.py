"""How far the exact models certify: CP-SAT and the HiGHS MILP on growing ``small`` instances.

    .venv/bin/python benchmarks/okita_exact_scale.py --seeds 0-1 --out benchmarks/results

Each size (jobs x sites x slots, arrivals uniform in slots 0-2, mixed latency-cost kinds) is solved by
both models with ``--time-limit`` seconds (build + solve); the table gives status, time and the gap
of the best bound. The largest size where both prove optimality on every seed is the largest certified.
"""

from __future__ import annotations

import json

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.okita import generate
from formulations.okita import METHODS, SIZES

SIZES_GRID = [(3, 3, 8), (4, 3, 8), (3, 4, 8), (5, 3, 8), (4, 4, 10), (6, 4, 10)]


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-1")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--sizes", default=None, help="JxSxT,... instead of the default grid (e.g. 8x5x12)")
    ap.add_argument("--name", default="okita_exact_scale.json")
    args = ap.parse_args()
    grid = SIZES_GRID if not args.sizes else [tuple(int(v) for v in c.split("x")) for c in args.sizes.split(",")]
    rows = []
    for jobs, sites, T in grid:
        for seed in args.seeds:
            inst = generate("small", seed=500 + seed, jobs=jobs, servers=sites, horizon=T)
            row = {"jobs": jobs, "sites": sites, "horizon": T, "seed": seed,
                   "milp_nonzeros_est": SIZES["milp"](inst).nonzeros}
            for m, fn in METHODS.items():
                r = fn(inst, time_limit=args.time_limit)
                gap = None
                if r.objective is not None and r.bound is not None:
                    gap = round((r.objective - r.bound) / max(1e-9, abs(r.objective)), 4)
                row[m] = {"status": r.status.value, "objective": r.objective, "bound": r.bound, "gap": gap,
                          "runtime_s": round(r.runtime_s, 2)}
            rows.append(row)
            print(row, flush=True)
    out = {"setting": "small preset generator at growing sizes, arrivals in slots 0-2", "time_limit_s": args.time_limit,
           "rows": rows}
    path = result_path(args.out, args.name)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
