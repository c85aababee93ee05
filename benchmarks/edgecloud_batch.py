"""One round of A_online against its batch problem: A_maxsche vs ILP (3), LP (4) and dual (5).

    PYTHONPATH=. .venv/bin/python benchmarks/edgecloud_batch.py --seeds 0-5 --out benchmarks/results  # ~1 min
    PYTHONPATH=. .venv/bin/python benchmarks/edgecloud_batch.py --seeds 0-2 --points 16:1:4:8

For a round with window [lo, hi) on idle servers (A_online's rounds use
disjoint windows, so each starts idle) and the jobs of the ``small`` generator
that arrived before lo, it reports:

* ``maxsche``: jobs A_maxsche (Alg. 2, the family's `max_schedule`, prices
  (7)-(8)) accepts;
* ``ilp``: the optimum of (3) (time-indexed MILP, HiGHS);
* ``lp``: the LP relaxation of (4) by column generation, with COST_C/COST_D
  looped over (start, D_u) as the pricing oracle (``lp_oracle``) and exact
  pricing to certify (``lp``);
* ``dual_paper``: dual (5) at the prices A_maxsche ends with and eta of eq. (6):
  the upper bound the paper's primal-dual argument provides.

Always maxsche <= ilp <= lp <= dual_paper (weak duality; the script checks it).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core.jsonio import write_json
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud.online import Prices, max_schedule
from edgeopt.edgecloud.schedule import Schedule
from edgeopt.edgecloud.state import make_ledger
from formulations.edgecloud.batch import (
    BatchProblem,
    column_generation,
    dual_value,
    paper_oracle,
    solve_batch_ilp,
)


def _point(text: str) -> tuple[int, int, int, int]:
    jobs, servers, lo, hi = (int(x) for x in text.split(":"))
    return jobs, servers, lo, hi


def one_round(seed: int, jobs: int, servers: int, window: tuple[int, int], time_limit: float) -> dict:
    inst = generate("small", seed=seed, jobs=jobs, servers=servers)
    waiting = [j.id for j in inst.jobs if j.arrival < window[0]]
    pb = BatchProblem.fresh(inst, waiting, window)
    ledger = make_ledger(inst)
    prices = Prices.for_instance(inst)
    runs = max_schedule(inst, waiting, window, ledger, prices)
    sched = Schedule(jobs=[runs[j] for j in sorted(runs)], rejected=[j.id for j in inst.jobs if j.id not in runs])
    assert FAMILY.validate(inst, sched) == []
    outcome, _ = solve_batch_ilp(pb, time_limit=time_limit)
    cg = column_generation(pb, oracle=paper_oracle)
    lam = np.zeros_like(pb.free_workers)
    mu = np.zeros_like(pb.free_ps)
    for j in waiting:
        job = inst.jobs[j]
        pw, pp, _, _ = prices.arrays(inst, ledger, job, 0, inst.horizon)
        lam[:, job.worker_type] = pw
        mu[:, job.ps_type] = pp
    dual_paper, _ = dual_value(pb, lam, mu)
    row = {"seed": seed, "jobs": jobs, "servers": servers, "window": list(window), "waiting": len(waiting),
           "maxsche": len(runs), "ilp_status": str(outcome.status), "ilp": outcome.objective,
           "ilp_bound": outcome.bound, "lp_oracle": cg.oracle_value, "lp": cg.lp_value,
           "dual_paper": dual_paper, "cg_iterations": cg.iterations, "cg_columns": len(cg.columns),
           "cg_s": round(cg.runtime_s, 3)}
    ilp_hi = outcome.bound if outcome.bound is not None else outcome.objective
    if not (row["maxsche"] <= ilp_hi + 1e-6 and outcome.objective <= cg.lp_value + 1e-6
            and cg.lp_value <= dual_paper + 1e-6):
        raise AssertionError(f"weak duality broken: {row}")
    return row


def main(argv: list[str] | None = None) -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-5")
    ap.add_argument("--points", nargs="+", type=_point,
                    default=[_point(p) for p in ("8:2:4:8", "16:1:4:8", "20:2:4:8", "16:2:4:12")],
                    help="jobs:edge_servers:lo:hi per point")
    ap.add_argument("--time-limit", type=float, default=30.0)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = []
    print(f"{'J':>3} {'S':>3} {'window':>8} {'waiting':>7} {'maxsche':>8} {'ilp':>6} {'lp_oracle':>9} {'lp':>7} "
          f"{'dual_paper':>10} {'maxsche/ilp':>11}")
    for jobs, servers, lo, hi in args.points:
        for seed in args.seeds:
            r = one_round(seed, jobs, servers, (lo, hi), args.time_limit)
            rows.append(r)
            print(f"{jobs:>3} {servers:>3} {f'[{lo},{hi})':>8} {r['waiting']:>7} {r['maxsche']:>8} {r['ilp']:>6.1f} "
                  f"{r['lp_oracle']:>9.3f} {r['lp']:>7.3f} {r['dual_paper']:>10.2f} {r['maxsche'] / r['ilp']:>11.3f}",
                  flush=True)
    eff = [r["maxsche"] / r["ilp"] for r in rows if r["ilp"]]
    print(f"A_maxsche / ILP optimum: mean {statistics.fmean(eff):.3f}, min {min(eff):.3f} over {len(eff)} rounds; "
          f"LP(4) by COST_C/COST_D pricing = certified LP in "
          f"{sum(abs(r['lp_oracle'] - r['lp']) < 1e-6 for r in rows)}/{len(rows)}; {time.perf_counter() - t0:.1f} s")
    path = result_path(args.out, "edgecloud_batch.json")
    write_json(path, {"settings": {"seeds": args.seeds, "points": [list(p) for p in args.points],
                                        "time_limit": args.time_limit}, "rows": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
