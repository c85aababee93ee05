"""Ratios of the hetero algorithms to certified optima, in two regimes, and the theorems on numbers.

    .venv/bin/python benchmarks/hetero_ratios.py                          # 20 seeds, small + small_congested
    .venv/bin/python benchmarks/hetero_ratios.py --seeds 0-4 --presets small --no-theorems
    .venv/bin/python benchmarks/hetero_ratios.py --out benchmarks/results  # rewrite the tracked results

Part 1: on every seed of every preset (``small``: arrivals in [0, 3], the default; ``small_congested``:
arrivals spread over T = 20 and capacity at 0.2 of the summed ideal demand), the optimum of program (2)
is certified (CP-SAT proves it and, unless ``--no-cross-check``, the HiGHS MILP proves the same value),
and every registered algorithm runs with its defaults, plus these readings:

* ``online[window=alpha_tau]``: the paper's literal window start alpha_i tau_i;
* ``online[window=alpha_tau,T=2000]``: the same on the instance with its horizon stretched to 2,000 slots
  (so that the literal rule can place jobs at all); its "ratio" is divided by the optimum at T = 20,
  which is >= the optimum at T = 2,000, so the number printed is a LOWER bound of its true ratio;
* ``online[order=density]``: A_maxweight takes jobs by w_j / shortest duration;
* ``tiresias[overhead_s=0]``, ``antman[overhead_s=0]``: the preemptive baselines without resumption
  overhead (the default 60 s is 6 slots of the small presets' 10 s slots);
* ``fifo[workers=K]`` for K = 5, 30 (the default is 15; on ``small`` D_j <= 3 caps every K above 3).

Every result goes through the validator (``FAMILY.check_result``). A result that rejected jobs
(``partial``) gets no ratio: the tables show "k rejected" (the rule of `edgeopt.core.Status.PARTIAL`).
Relaxed (preemptive) baselines are compared with the optimum of the non-preemptive program and may lie
below 1. The measured causes of `online`'s gap are in `hetero_paper_totals.py`.

Part 2: the theorem checks of ``tests/hetero/test_hetero_theorems.py`` on more seeds, worst observed ratio
next to the proven bound (Theorem 1 / 6, Theorem 3, weak duality of (9), Lemma 2, Theorem 5), on instances
built for their assumptions (``formulations/hetero/theory.py``).

Writes ``hetero_ratios.json`` to ``--out``.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import Status, jsonio, registered
from edgeopt.hetero import FAMILY, generate

#: extra readings run next to every registered algorithm: (row name, algorithm, params, horizon or None)
VARIANTS = [
    ("online[window=alpha_tau]", "online", {"window": "alpha_tau"}, None),
    ("online[window=alpha_tau,T=2000]", "online", {"window": "alpha_tau"}, 2000),
    ("online[order=density]", "online", {"order": "density"}, None),
    ("online_every_slot[order=density]", "online_every_slot", {"order": "density"}, None),
    ("tiresias[overhead_s=0]", "tiresias", {"overhead_s": 0.0}, None),
    ("antman[overhead_s=0]", "antman", {"overhead_s": 0.0}, None),
    ("fifo[workers=5]", "fifo", {"workers": 5}, None),
    ("fifo[workers=30]", "fifo", {"workers": 30}, None),
]


def ratio_table(preset: str, seeds: list[int], cross_check: bool, time_limit: float) -> dict:
    from formulations.hetero import METHODS

    specs = registered("hetero")
    runs = [(name, name, {}, None) for name in sorted(specs)] + VARIANTS
    ratios: dict[str, list[float]] = {r[0]: [] for r in runs}
    partial: dict[str, list[int]] = {r[0]: [] for r in runs}
    per_instance = []
    for seed in seeds:
        inst = generate(preset, seed=seed)
        opt = METHODS["cpsat"](inst, time_limit=time_limit)
        if opt.status != Status.OPTIMAL:
            raise SystemExit(f"{preset} seed {seed}: CP-SAT did not prove optimality ({opt.status.value})")
        if cross_check:
            mip = METHODS["milp"](inst, time_limit=time_limit)
            if mip.status != Status.OPTIMAL or abs(mip.objective - opt.objective) > 1e-6 * opt.objective:
                raise SystemExit(f"{preset} seed {seed}: MILP {mip.status.value} {mip.objective} vs CP-SAT "
                                 f"{opt.objective}")
        row: dict = {"seed": seed, "optimum": opt.objective}
        for label, name, params, horizon in runs:
            run_inst = inst if horizon is None else inst.model_copy(update={"horizon": horizon})
            res = specs[name](run_inst, seed=seed, **params)
            bad = FAMILY.check_result(run_inst, res)
            if bad:
                raise SystemExit(f"{preset} seed {seed}: {label} fails the validator: {bad[:3]}")
            if res.status != Status.FEASIBLE:
                k = int(res.extra.get("rejected_count", 0))
                partial[label].append(k)
                row[label] = f"{k} rejected"
                continue
            r = res.objective / opt.objective
            if r < 1 - 1e-9 and not specs[name].relaxed and horizon is None:
                raise SystemExit(f"{preset} seed {seed}: {label} objective {res.objective} below the optimum")
            ratios[label].append(r)
            row[label] = r
        per_instance.append(row)
    summary = {}
    for label, name, _params, _h in runs:
        v = ratios[label]
        summary[label] = {
            "mean": statistics.fmean(v) if v else None, "max": max(v) if v else None,
            "min": min(v) if v else None, "n": len(v), "partial_instances": len(partial[label]),
            "rejected_jobs": sum(partial[label]), "relaxed": specs[name].relaxed,
            "lower_bound_only": _h is not None,
        }
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


def print_summary(table: dict) -> None:
    print(f"\nRatio to the certified optimum, {len(table['seeds'])} seeds of `{table['preset']}`"
          f" ({'CP-SAT + MILP' if table['cross_checked'] else 'CP-SAT'} certified)")
    print(f"{'algorithm':<36} {'mean':>8} {'max':>8} {'n':>4}  partial")
    for name, s in table["summary"].items():
        mean = f"{s['mean']:.3f}" if s["mean"] is not None else "-"
        mx = f"{s['max']:.3f}" if s["max"] is not None else "-"
        tag = " (relaxed)" if s["relaxed"] else (" (>=, lower bound)" if s["lower_bound_only"] else "")
        part = f"{s['partial_instances']} instances, {s['rejected_jobs']} rejected" if s["partial_instances"] else ""
        print(f"{name + tag:<36} {mean:>8} {mx:>8} {s['n']:>4}  {part}")


def main() -> None:
    ap = benchmark_parser(__doc__.split("\n\n")[0])
    ap.add_argument("--presets", default="small,small_congested", help="comma-separated presets")
    ap.add_argument("--theorem-seeds", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--no-cross-check", action="store_true", help="certify with CP-SAT only (no MILP)")
    ap.add_argument("--no-theorems", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out: dict = {"regimes": {}}
    for preset in args.presets.split(","):
        table = ratio_table(preset, args.seeds, not args.no_cross_check, args.time_limit)
        out["regimes"][preset] = table
        print_summary(table)
    if not args.no_theorems:
        out["theorems"] = theorem_table(args.theorem_seeds)
        print(f"\nTheorems on numbers ({args.theorem_seeds} seeds each)")
        print(f"{'result':<60} {'cases':>5} {'worst':>9} {'bound':>9}")
        for r in out["theorems"]:
            b = f"{r['bound']:.4g}" if r["bound"] is not None else "-"
            print(f"{r['result']:<60} {r['cases']:>5} {r['worst']:>9.4g} {b:>9}")
    out["runtime_s"] = round(time.perf_counter() - t0, 1)
    path = result_path(args.out, "hetero_ratios.json")
    jsonio.write_json(path, out)
    print(f"\nwrote {path} ({out['runtime_s']} s)")


if __name__ == "__main__":
    main()
