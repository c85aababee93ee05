"""Competitive ratios of the hetero algorithms against certified optima, and the theorems' ratios.

    .venv/bin/python benchmarks/hetero_ratios.py                    # 20 seeds of `small`, theorem table
    .venv/bin/python benchmarks/hetero_ratios.py --seeds 5 --preset small_ra --no-theorems

Part 1 (the issue's table): ``online`` and every registered baseline on ``--seeds`` seeded
instances of ``--preset``: mean and max of objective / optimum. The optimum is certified: CP-SAT
must prove it, and (unless ``--no-cross-check``) the HiGHS MILP must prove the same value. A ratio
counts only when the algorithm scheduled every job (status ``feasible``); every result goes
through the validator (``FAMILY.check_result``).

Part 2: the theorem checks of ``tests/hetero/test_hetero_theorems.py`` on more seeds, worst
observed ratio next to the proven bound (Theorem 1 / 6, Theorem 3, weak duality of (9),
Lemma 2, Theorem 5), on instances built for their assumptions (``formulations/hetero/theory.py``).

Writes the numbers to ``--json`` (default ``benchmarks/results/hetero_ratios.json``).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from edgeopt.core import Status, jsonio, registered
from edgeopt.hetero import FAMILY, generate


def ratio_table(preset: str, seeds: int, cross_check: bool, time_limit: float) -> dict:
    from formulations.hetero import METHODS

    ratios: dict[str, list[float]] = {}
    rejected: dict[str, int] = {}
    per_instance = []
    for seed in range(seeds):
        inst = generate(preset, seed=seed)
        opt = METHODS["cpsat"](inst, time_limit=time_limit)
        if opt.status != Status.OPTIMAL:
            raise SystemExit(f"seed {seed}: CP-SAT did not prove optimality ({opt.status.value})")
        if cross_check:
            mip = METHODS["milp"](inst, time_limit=time_limit)
            if mip.status != Status.OPTIMAL or abs(mip.objective - opt.objective) > 1e-6 * opt.objective:
                raise SystemExit(f"seed {seed}: MILP {mip.status.value} {mip.objective} vs CP-SAT {opt.objective}")
        row = {"seed": seed, "optimum": opt.objective}
        for name, spec in sorted(registered("hetero").items()):
            res = spec(inst, seed=seed)
            bad = FAMILY.check_result(inst, res)
            if bad:
                raise SystemExit(f"seed {seed}: {name} fails the validator: {bad[:3]}")
            if res.status != Status.FEASIBLE:
                rejected[name] = rejected.get(name, 0) + 1
                row[name] = None
                continue
            r = res.objective / opt.objective
            if r < 1 - 1e-9:
                raise SystemExit(f"seed {seed}: {name} objective {res.objective} below the optimum {opt.objective}")
            ratios.setdefault(name, []).append(r)
            row[name] = r
        per_instance.append(row)
    summary = {name: {"mean": statistics.fmean(v), "max": max(v), "n": len(v), "rejected": rejected.get(name, 0)}
               for name, v in ratios.items()}
    for name, k in rejected.items():
        summary.setdefault(name, {"mean": None, "max": None, "n": 0, "rejected": k})
    return {"preset": preset, "seeds": seeds, "cross_checked": cross_check, "summary": summary,
            "instances": per_instance}


def theorem_table(seeds: int) -> list[dict]:
    """Worst observed ratio next to the proven bound, per result (the tests' checks on more seeds)."""
    from edgeopt.hetero.mincost import min_cost
    from edgeopt.hetero.online import dual_schedule, max_weight_batch, online, prices, smallest_consumption
    from formulations.hetero.batch import solve_max_weight, solve_min_cost
    from formulations.hetero.cpsat import solve_cpsat
    from formulations.hetero.theory import alpha_of, assumption_instance, check_assumptions, gamma_of

    rows = []
    # Theorem 1 / 6: A_mincost cost over the exact optimum of (12)/(13), per case
    worst, n = 1.0, 0
    for preset in ("small", "small_ra"):
        for seed in range(seeds):
            inst = generate(preset, seed=seed, jobs=3)
            rng = np.random.default_rng(100 + seed)
            cap = inst.capacity
            usage = np.floor(cap[:, :, None] * rng.uniform(0.0, 0.7, size=(*cap.shape, inst.horizon)))
            delta = prices(usage, cap, lam=50.0) * rng.uniform(0.5, 1.5, size=usage.shape)
            for j in range(len(inst.jobs)):
                for q in (True, False):
                    pl = min_cost(inst, j, delta, cap[:, :, None] - usage, (2, inst.horizon), colocated=q)
                    ex = solve_min_cost(inst, j, delta, (2, inst.horizon), usage=usage, colocated=q)
                    if ex.value is None or pl is None:
                        continue
                    n += 1
                    if ex.value > 0:
                        worst = max(worst, pl.cost / ex.value)
    rows.append({"result": "Theorem 1/6: A_mincost / OPT(13)", "cases": n, "worst": worst, "bound": 1.0})

    t3, wd, l2, t5 = [1.0], [0.0], [0.0], [1.0]
    b3, b5 = [], []
    tau = 4
    for seed in range(seeds):
        inst = assumption_instance(seed, jobs=30, horizon=tau, capacity=16.0)
        jobs = list(range(len(inst.jobs)))
        F = max(j.weight / smallest_consumption(inst, j) for j in inst.jobs)
        lam = 2.0 * tau * len(inst.servers) * len(inst.resources) * F + 1.0
        assert check_assumptions(inst, lam, window=tau).hold
        opt = solve_max_weight(inst, jobs, (0, tau))
        out = max_weight_batch(inst, jobs, (0, tau), lam=lam)
        got = sum(inst.jobs[j].weight for j in out.placements)
        t3.append(opt.value / got if got else math.inf)
        b3.append(gamma_of(lam))
        wd.append(opt.value / out.dual_objective(inst))
        alpha = alpha_of([j.weight for j in inst.jobs], lam)
        big = inst.model_copy(update={"horizon": alpha * tau})
        dual = dual_schedule(big, jobs, 0, tau, alpha, lam=lam)
        l2.append(opt.value / sum(big.jobs[j].weight for j in dual.placements))
        inst5 = assumption_instance(seed, jobs=10, horizon=24, capacity=20.0, arrivals=6)
        F5 = max(j.weight / smallest_consumption(inst5, j) for j in inst5.jobs)
        lam5 = 2.0 * inst5.horizon * len(inst5.servers) * len(inst5.resources) * F5 + 1.0
        assert check_assumptions(inst5, lam5).hold
        res = online(inst5)
        o = solve_cpsat(inst5, time_limit=60)
        if res.status == Status.FEASIBLE and o.status == Status.OPTIMAL:
            t5.append(res.objective / o.objective)
            b5.append(4 * alpha_of([j.weight for j in inst5.jobs], lam5))
    rows.append({"result": "Theorem 3: OPT(7) / A_maxweight", "cases": seeds, "worst": max(t3),
                 "bound": min(b3)})
    rows.append({"result": "weak duality: OPT(7) / dual objective (9) of A_maxweight", "cases": seeds,
                 "worst": max(wd), "bound": 1.0})
    rows.append({"result": "Lemma 2: OPT(7) / weight of A_dual", "cases": seeds, "worst": max(l2), "bound": 1.0})
    rows.append({"result": "Theorem 5: A_online / OPT(2)", "cases": len(b5), "worst": max(t5),
                 "bound": min(b5) if b5 else None})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="small")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--theorem-seeds", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--no-cross-check", action="store_true", help="certify with CP-SAT only (no MILP)")
    ap.add_argument("--no-theorems", action="store_true")
    ap.add_argument("--json", default="benchmarks/results/hetero_ratios.json")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = {"ratios": ratio_table(args.preset, args.seeds, not args.no_cross_check, args.time_limit)}
    print(f"\nRatio to the certified optimum, {args.seeds} seeds of `{args.preset}`"
          f" ({'CP-SAT + MILP' if not args.no_cross_check else 'CP-SAT'} certified)")
    print(f"{'algorithm':<12} {'mean':>8} {'max':>8} {'n':>4} {'rejected':>9}")
    for name, s in sorted(out["ratios"]["summary"].items()):
        mean = f"{s['mean']:.4f}" if s["mean"] is not None else "-"
        mx = f"{s['max']:.4f}" if s["max"] is not None else "-"
        print(f"{name:<12} {mean:>8} {mx:>8} {s['n']:>4} {s['rejected']:>9}")
    if not args.no_theorems:
        out["theorems"] = theorem_table(args.theorem_seeds)
        print(f"\nTheorems on numbers ({args.theorem_seeds} seeds each)")
        print(f"{'result':<60} {'cases':>5} {'worst':>9} {'bound':>9}")
        for r in out["theorems"]:
            b = f"{r['bound']:.4g}" if r["bound"] is not None else "-"
            print(f"{r['result']:<60} {r['cases']:>5} {r['worst']:>9.4g} {b:>9}")
    out["runtime_s"] = round(time.perf_counter() - t0, 1)
    jsonio.write_json(args.json, out)
    print(f"\nwrote {args.json} ({out['runtime_s']} s)")


if __name__ == "__main__":
    main()
