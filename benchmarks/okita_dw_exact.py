"""okita's configuration LP with *exact* pricing on `exact_scale.py`'s ``small`` ladder: would branch-and-price pay?

The certified ``config_lp`` bound prices each job with a whole-worker Lagrangian (no solver), so its value mixes
two losses: the per-job bound's and the configuration LP's own. This script removes the first. Column generation
on the same master (one column per (job, complete single-job plan), the per-site capacity rows (2d) as the
coupling; `formulations.okita.configlp.ConfigRelaxation`) prices every job with the exact single-job MILP
(`formulations.okita.singlejob.exact`, HiGHS) until no plan has a negative reduced cost. When every pricing MILP
ends optimal, the master LP is then the Dantzig-Wolfe bound itself, the root of any branch-and-price on these
columns, and the Lagrangian value (master's capacity term plus each job's least priced cost) meets it.

A measurement, not a certificate: the single-job optima come from HiGHS, so no edgeopt bound rests on them.
Each rung's optimum, where one is known, is its golden's (`instances/okita/ladder/`, proven by two models).

    .venv/bin/python benchmarks/okita_dw_exact.py --rungs 8,10,12,14 --out benchmarks/results
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from exact_scale import LADDERS, SEED

from edgeopt.bench import benchmark_parser, cpu_seconds, result_path
from edgeopt.core.jsonio import write_json

ROOT = Path(__file__).resolve().parent.parent
#: Most rungs and iterations a caller may ask for (a typed count has a cap).
MAX_RUNG = 64
MAX_ITERATIONS = 1_000


def golden_optimum(n: int) -> float | None:
    """The proven optimum of the ladder's n-job rung, from its golden, when there is one."""
    path = ROOT / "instances" / "okita" / "ladder" / f"j{n}_seed{SEED}.optimum.json"
    return float(json.loads(path.read_text())["objective"]) if path.is_file() else None


def dw_exact(inst, *, price_limit: float, max_iterations: int) -> dict:
    """Column generation with exact pricing (module docstring); the trajectory and the last values."""
    import highspy

    from edgeopt.core import registry
    from edgeopt.okita.schedule import Schedule
    from formulations.okita import singlejob as sj
    from formulations.okita.configlp import ConfigRelaxation

    rel = ConfigRelaxation(inst)
    # every completion, not only those up to config_lp's cut: the exact pricing needs no tail bound
    rel.jobs = [sj.of_instance(inst, i) for i in range(len(inst.jobs))]
    S, K, T, J = rel.S, rel.K, rel.T, rel.J
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    inf = highspy.kHighsInf
    none_i = np.zeros(0, np.int32)
    h.addRows(J, np.ones(J), np.ones(J), 0, none_i, none_i, np.zeros(0))
    caps = rel.capacity[:S * K].ravel()
    h.addRows(S * K * T, np.full(S * K * T, -inf), caps, 0, none_i, none_i, np.zeros(0))
    seen: set = set()

    def add(i: int, plan) -> int:
        if (i, plan) in seen:
            return 0
        cost, ci, cv = rel.column(i, plan)
        rows = np.concatenate([[i], J + ci]).astype(np.int32)
        h.addCols(1, np.array([cost]), np.zeros(1), np.full(1, inf), rows.size, np.zeros(1, np.int32), rows,
                  np.concatenate([[1.0], cv]))
        seen.add((i, plan))
        return 1

    # first columns: the plans of the fast algorithms' schedules and each job's plans alone
    for name in ("drf", "fifo", "online", "oasis_latency"):
        res = registry.registered("okita")[name].fn(inst)
        for js in Schedule.model_validate(res.schedule).jobs:
            if js.completion is not None:
                add(int(js.job), sj.plan_of(js))
    for i, job in enumerate(rel.jobs):
        zero = np.zeros((job.slots, S))
        for plan in sj.candidate_plans(job, zero, zero):
            add(i, plan)
    # a dear "left out" column per job keeps the first master feasible
    h.addCols(J, np.full(J, 1e6), np.zeros(J), np.full(J, inf), J, np.arange(J, dtype=np.int32),
              np.arange(J, dtype=np.int32), np.ones(J))
    c0 = cpu_seconds()
    trajectory, best_L, exact_all, lp = [], -math.inf, False, math.nan
    for it in range(max_iterations):
        h.run()
        lp = float(h.getInfo().objective_function_value)
        duals = np.asarray(h.getSolution().row_dual)
        mu, pi = duals[:J], np.maximum(0.0, -duals[J:]).reshape(S, K, T)
        L = -float(caps @ pi.reshape(-1))
        added, exact_all = 0, True
        for i in range(J):
            w, P = rel.job_prices(i, pi)
            ex = sj.exact(rel.jobs[i], w, P, time_limit=price_limit)
            exact_all &= bool(ex.optimal)
            L += ex.bound
            if ex.plan is not None and ex.value - mu[i] < -1e-7 * max(1.0, abs(ex.value)):
                added += add(i, ex.plan)
        best_L = max(best_L, L)
        trajectory.append({"iteration": it, "master_lp": round(lp, 4), "lagrangian": round(L, 4), "added": added})
        if not added:
            break
    return {"dw_lp": lp, "lagrangian": best_L, "pricing_exact": exact_all, "converged": not trajectory[-1]["added"],
            "iterations": len(trajectory), "columns": len(seen), "cpu_s": round(cpu_seconds() - c0, 2),
            "trajectory": trajectory}


def main(argv: list[str] | None = None) -> int:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds=str(SEED))
    ap.add_argument("--rungs", default="8,10,12", help="jobs per rung, e.g. 8,10,12,14")
    ap.add_argument("--price-limit", type=float, default=20.0, help="seconds per single-job pricing MILP")
    ap.add_argument("--max-iterations", type=int, default=200)
    ap.add_argument("--name", default="okita_dw_exact.json")
    args = ap.parse_args(argv)
    try:
        rungs = [int(x) for x in args.rungs.split(",")]
    except ValueError:
        ap.error(f"--rungs: expected jobs separated by commas, got {args.rungs!r}")
    if not all(1 <= n <= MAX_RUNG for n in rungs):
        ap.error(f"--rungs: each rung is 1..{MAX_RUNG} jobs")
    if not 1 <= args.max_iterations <= MAX_ITERATIONS:
        ap.error(f"--max-iterations: 1..{MAX_ITERATIONS}")
    if not args.price_limit > 0:
        ap.error("--price-limit: must be positive")
    from edgeopt.families import get_family

    spec = get_family("okita")
    rows = []
    for n in rungs:
        kwargs = LADDERS["okita"][1](n)
        inst = spec.generate("small", seed=SEED, jobs=n, **kwargs)
        row = {"jobs": n, **kwargs, **dw_exact(inst, price_limit=args.price_limit,
                                                max_iterations=args.max_iterations)}
        opt = golden_optimum(n)
        if opt is not None:
            row.update({"optimum": opt, "dw_over_optimum": round(row["dw_lp"] / opt, 4)})
        print(json.dumps({k: v for k, v in row.items() if k != "trajectory"}), flush=True)
        rows.append(row)
    out = result_path(Path(args.out), args.name)
    write_json(out, {"setting": f"okita small ladder, seed {SEED}, 3 sites, T = 8 + jobs; exact pricing by "
                                f"singlejob.exact ({args.price_limit:g} s each); CPU seconds", "rungs": rows})
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
