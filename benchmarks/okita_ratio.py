"""Fig. 7-8 of Han et al.: performance ratio (objective / certified optimum) of Okita and of each
baseline, over the number of sites R and of jobs I, on instances small enough to certify.

    .venv/bin/python benchmarks/okita_ratio.py --seeds 0-9 --cost exponential --name okita_ratio_exponential.json --out benchmarks/results
    .venv/bin/python benchmarks/okita_ratio.py --seeds 0-9 --out benchmarks/results   # the preset's mixed kinds

Instances: the ``small`` preset (T = 8, 0-3 chunks per site, rho/E in {1, 2}, all four latency-cost
kinds, or one kind with ``--cost``: ``exponential`` is the paper's default and the main row), R in {2, 3, 4} at I = 3 and I in {2, 3, 4} at R = 3, in two arrival regimes: ``spread``
(arrivals uniform in slots 0-2, the preset) and ``burst`` (every job arrives in slot 0, so they compete).
The optimum is CP-SAT's, proven optimal (``--cross-check`` also asks the HiGHS MILP for the same value);
an instance it cannot prove within ``--time-limit`` is counted as uncertified and left out. A ratio counts
only for a ``feasible`` result (every job scheduled); every result is validated. Each cell keeps every
instance's ratio (``points``, by seed) and the mean, standard deviation, min and max.
"""

from __future__ import annotations

import json
import resource
import statistics
import time

from edgeopt.bench import benchmark_parser, cpu_seconds, result_path
from edgeopt.core import Status, registered
from edgeopt.okita import FAMILY, generate
from formulations.okita import METHODS

GRID = [("R", 2, 3), ("R", 3, 3), ("R", 4, 3), ("I", 3, 2), ("I", 3, 4)]
REGIMES = {"spread": 3, "burst": 1}


def run(seeds: list[int], time_limit: float, cross_check: bool, grid=GRID, regimes=REGIMES, horizon: int = 8,
        cost: str | None = None) -> dict:
    out = {"setting": f"small preset, T = {horizon}, latency cost {cost or 'mixed (all four kinds)'}; R x I cells; "
                      "arrival windows " + json.dumps(regimes), "cells": []}
    for regime, window in regimes.items():
        for axis, R, I in grid:
            ratios: dict[str, list[float]] = {}
            points: dict[str, dict[int, float]] = {}
            partial: dict[str, int] = {}
            uncertified, solve_s = 0, []
            for seed in seeds:
                inst = generate("small", seed=1000 + seed, jobs=I, servers=R, arrival_window=window, horizon=horizon,
                                cost=cost)
                opt = METHODS["cpsat"](inst, time_limit=time_limit)
                if opt.status != Status.OPTIMAL:
                    uncertified += 1
                    continue
                solve_s.append(opt.runtime_s)
                if cross_check:
                    mip = METHODS["milp"](inst, time_limit=time_limit)
                    assert mip.status == Status.OPTIMAL and abs(mip.objective - opt.objective) <= 1e-6 * opt.objective
                for name, spec in sorted(registered("okita").items()):
                    res = spec(inst, seed=seed)
                    assert not FAMILY.check_result(inst, res), (name, seed)
                    if res.status != Status.FEASIBLE:
                        partial[name] = partial.get(name, 0) + 1
                        continue
                    r = res.objective / opt.objective
                    assert r >= 1 - 1e-6, (name, seed, r)
                    ratios.setdefault(name, []).append(r)
                    points.setdefault(name, {})[seed] = round(r, 4)
            cell = {"regime": regime, "axis": axis, "R": R, "I": I, "certified": len(solve_s),
                    "uncertified": uncertified, "cpsat_mean_s": round(statistics.mean(solve_s), 3) if solve_s else None,
                    "ratio": {n: {"mean": round(statistics.mean(v), 4), "max": round(max(v), 4), "n": len(v),
                                  "min": round(min(v), 4),
                                  "std": round(statistics.stdev(v), 4) if len(v) > 1 else 0.0, "points": points[n]}
                              for n, v in ratios.items()}, "partial": partial}
            out["cells"].append(cell)
            print(regime, axis, f"R={R} I={I}", cell["certified"], {n: (v["mean"], v["max"]) for n, v in
                                                                     cell["ratio"].items()}, partial, flush=True)
    summary: dict[str, list[float]] = {}
    for c in out["cells"]:
        for n, v in c["ratio"].items():
            summary.setdefault(n, []).append(v["max"])
    out["max_ratio_over_cells"] = {n: max(v) for n, v in summary.items()}
    return out


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-9")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--cross-check", action="store_true")
    ap.add_argument("--cell", default=None, help="one cell R,I,T (spread arrivals) instead of the grid, e.g. 4,6,10")
    ap.add_argument("--name", default="okita_ratio.json")
    ap.add_argument("--cost", default=None, choices=("exponential", "linear", "piecewise", "mixed"),
                    help="latency-cost kind of every job (default: the small preset's mix of all four)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.cell:
        R, I, T = (int(v) for v in args.cell.split(","))
        res = run(args.seeds, args.time_limit, args.cross_check, [("cell", R, I)], {"spread": 3}, T, args.cost)
    else:
        res = run(args.seeds, args.time_limit, args.cross_check, cost=args.cost)
    res["seeds"] = args.seeds
    res["wall_s"] = round(time.perf_counter() - t0, 1)
    res["cpu_s"] = round(cpu_seconds(), 1)
    res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    path = result_path(args.out, args.name)
    path.write_text(json.dumps(res, indent=2) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
