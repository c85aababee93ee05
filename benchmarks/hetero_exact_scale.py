"""How far the exact models of program (2) scale: largest instance proved optimal, gaps, build vs solve.

    .venv/bin/python benchmarks/hetero_exact_scale.py --time-limit 60
    .venv/bin/python benchmarks/hetero_exact_scale.py --time-limit 60 --skip-ladder --paper-jobs 20

Part 1 (ladder): instances of the ``small`` generator of growing size (jobs x servers x slots);
each exact model (``milp``: Pyomo + HiGHS, ``cpsat``: CP-SAT) runs with ``--time-limit`` until it
first fails to prove optimality. Reports status, objective, bound, gap, Pyomo build time vs
HiGHS solve time, and the largest size each model proved optimal.

Part 2 (paper preset, Sec. 7: 150 servers, T = 150, 8 worker / 10 PS types, D_j up to 50):
20 / 50 / 100 jobs. The models are only built when their size is below ``--max-milp-starts`` /
``--max-cpsat-configs``; otherwise the table says how large they would be (configurations x
starts), which is the honest answer at that scale. Results go to ``--out`` (default benchmarks/out;
``--out benchmarks/results`` rewrites the tracked file): ``hetero_exact_scale.json`` for a 60 s limit,
``hetero_exact_scale_<limit>.json`` otherwise.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import Status, jsonio
from edgeopt.hetero import generate

LADDER = [(5, 2, 20), (6, 2, 20), (7, 2, 20), (8, 3, 20), (10, 3, 24), (12, 4, 24), (16, 4, 30), (20, 5, 40),
          (24, 6, 48)]


def _row(res, size) -> dict:
    gap = res.gap
    timings = res.extra.get("timings", {})
    return {"jobs": size[0], "servers": size[1], "slots": size[2], "status": res.status.value,
            "objective": res.objective, "bound": res.bound, "gap": gap,
            "build_s": timings.get("build_s"), "solve_s": timings.get("solve_s"),
            "runtime_s": round(res.runtime_s, 3)}


def ladder(time_limit: float, methods: list[str]) -> dict:
    from formulations.hetero import METHODS

    out: dict[str, list] = {m: [] for m in methods}
    alive = set(methods)
    for size in LADDER:
        if not alive:
            break
        inst = generate("small", seed=1, jobs=size[0], servers=size[1], horizon=size[2])
        for m in sorted(alive):
            res = METHODS[m](inst, time_limit=time_limit)
            row = _row(res, size)
            out[m].append(row)
            print(f"{m:6s} {size[0]:3d} jobs x {size[1]} servers x {size[2]:3d} slots: {row['status']:10s} "
                  f"obj {row['objective']} bound {row['bound']} gap {row['gap']} build {row['build_s']} s "
                  f"solve {row['solve_s']} s", flush=True)
            if res.status != Status.OPTIMAL:
                alive.discard(m)
    return out


def paper(jobs_list: list[int], time_limit: float, max_starts: int, max_configs: int) -> list[dict]:
    from formulations.hetero import METHODS
    from formulations.hetero.data import prepare

    rows = []
    for n in jobs_list:
        inst = generate("paper", seed=0, jobs=n)
        t0 = time.perf_counter()
        data = prepare(inst)
        prep_s = time.perf_counter() - t0
        configs = sum(len(jd.configs) for jd in data.jobs)
        starts = sum(len(jd.starts(c.duration, data.length)) for jd in data.jobs for c in jd.configs)
        row = {"jobs": n, "servers": len(inst.servers), "slots": inst.horizon, "configurations": configs,
               "start_variables": starts, "prepare_s": round(prep_s, 2), "unschedulable": len(data.unschedulable())}
        for m, limit, size in (("milp", max_starts, starts), ("cpsat", max_configs, configs)):
            if size > limit:
                row[m] = {"status": "not built", "why": f"{size} > {limit} (model too large for this machine)"}
            else:
                res = METHODS[m](inst, time_limit=time_limit)
                row[m] = _row(res, (n, len(inst.servers), inst.horizon))
        print(row, flush=True)
        rows.append(row)
    return rows


def paper_trivial(jobs_list: list[int]) -> list[dict]:
    """Where no exact model gets an incumbent: A_online's schedule against the trivial bound
    sum_j w_j (a_j + shortest duration of j) (every job completes no earlier)."""
    from edgeopt.core import registered
    from formulations.hetero.data import prepare

    rows = []
    for n in jobs_list:
        inst = generate("paper", seed=0, jobs=n)
        data = prepare(inst)
        lb = sum(jd.weight * (inst.jobs[jd.index].arrival + min(c.duration for c in jd.configs))
                 for jd in data.jobs if jd.configs)
        res = registered("hetero")["online"](inst, seed=0)
        row = {"jobs": n, "trivial_bound": lb, "online_status": res.status.value, "online_objective": res.objective,
               # a gap only means something for a complete schedule (rejected jobs are not counted in the objective)
               "gap_online_vs_trivial": (res.objective - lb) / res.objective
               if res.status == Status.FEASIBLE and res.objective else None,
               "online_runtime_s": round(res.runtime_s, 2), "rejected": len(res.extra.get("rejected", []))}
        print(row, flush=True)
        rows.append(row)
    return rows


def main() -> None:
    ap = benchmark_parser(__doc__.split("\n\n")[0], seeds="0")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--methods", default="milp,cpsat")
    ap.add_argument("--skip-ladder", action="store_true")
    ap.add_argument("--paper-jobs", default="20,50,100")
    ap.add_argument("--max-milp-starts", type=int, default=300_000)
    ap.add_argument("--max-cpsat-configs", type=int, default=200_000)
    ap.add_argument("--trivial-jobs", default="", help="paper preset: online vs trivial bound for these job counts")
    args = ap.parse_args()
    import os

    name = "hetero_exact_scale.json" if args.time_limit == 60 else f"hetero_exact_scale_{int(args.time_limit)}.json"
    args.json = str(result_path(args.out, name))

    # parts not re-run keep their previous numbers
    out: dict = jsonio.read_json(args.json, what="results") if os.path.exists(args.json) else {}
    out["time_limit"] = args.time_limit
    methods = [m for m in args.methods.split(",") if m]
    if not args.skip_ladder:
        out["ladder"] = ladder(args.time_limit, methods)
        print("\nLargest instance proved optimal within", args.time_limit, "s:")
        for m, rows in out["ladder"].items():
            ok = [r for r in rows if r["status"] == "optimal"]
            best = ok[-1] if ok else None
            print(f"  {m}: " + (f"{best['jobs']} jobs x {best['servers']} servers x {best['slots']} slots "
                                f"(build {best['build_s']} s, solve {best['solve_s']} s)" if best else "none"))
    if args.paper_jobs:
        out["paper"] = paper([int(x) for x in args.paper_jobs.split(",")], args.time_limit, args.max_milp_starts,
                             args.max_cpsat_configs)
    if args.trivial_jobs:
        out["paper_trivial_bound"] = paper_trivial([int(x) for x in args.trivial_jobs.split(",")])
    jsonio.write_json(args.json, out)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
