"""Fig. 12-13 of Wang et al. reproduced and extended: the competitive ratio of A_online.

The paper computed the ratio with MATLAB against a simplified ILP (4) (zeta_j = 1) for [5, 25] jobs
and [5, 45] servers only. Here, for speed augmentation eps in {0, 0.1, 0.5, 1} (A_online at speed
1 + eps, the optimum at speed 1, as in Theorem 3):

* ``exact`` panels: total JCT of A_online / the optimum of MINLP (2), proven by the MILP (HiGHS;
  CP-SAT as a fallback) on ``small``-preset instances of the paper's sizes. When no solver proves
  optimality within the limit the ratio is taken against the best proven bound and flagged.
* ``lp`` panels: the ``paper`` preset (Sec. V-A ranges) up to 300 jobs / 100 servers, against lower
  bounds from the LP relaxation of ILP (4) (aggregated, workers pooled per type, 1-slot buckets up to
  a cutoff and one tail bucket: `formulations.preemptive.lp4_large`):
  ``f/LP4`` = fractional flow time (4) of A_online / LP4 (Theorem 3's first statement, bound
  1 + 1/eps), and ``JCT/LB`` = total JCT / (LP4 + sum_j (P_j - 1)/2), a lower bound on OPT of (2)
  (`jct_bound_from_flow`; bound of Theorem 3: D_max (1 + 1/eps)).

Whole-slot rounding: a chunk of P slots takes ceil(P / (1 + eps)) slots at speed 1 + eps, so the
effective speed-up (sum of chunk-slots at speed 1 / at speed 1 + eps) is printed per row; on the
``small`` preset (P of 1-3 slots) it is well below 1 + eps.

The LP panels use the ``paper`` generator in the regime given by ``--regime`` (default ``paper``,
Sec. V-A as printed; ``short_chunks`` / ``far_cloud`` are regimes where the edge matters, not the
paper's); the exact panels use the ``small`` / ``testbed`` presets whatever the regime. A result
that rejected jobs (status ``partial``) gets no ratio ("rejected" in the table).

    .venv/bin/python benchmarks/preemptive_ratio.py --quick --seeds 0      # a few minutes
    .venv/bin/python benchmarks/preemptive_ratio.py --seeds 0-1            # about 10-20 minutes
    .venv/bin/python benchmarks/preemptive_ratio.py --quick --regime short_chunks

Writes ``preemptive_ratio[_<regime>].json`` and ``preemptive_fig12_13[_<regime>].png`` under ``--out``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import Status, registered
from edgeopt.core.jsonio import write_json
from edgeopt.preemptive import FAMILY, generate
from edgeopt.preemptive.instance import REGIMES
from formulations.preemptive import METHODS
from formulations.preemptive.data import from_instance
from formulations.preemptive.lp4_large import jct_bound_from_flow, solve_lp4_large

EPS = (0.0, 0.1, 0.5, 1.0)


def _online(inst: Any, eps: float) -> Any:
    """A_online at speed 1 + eps, validated. A result with rejected jobs (status partial) is kept
    but gets no ratio: its objective covers fewer jobs."""
    res = registered("preemptive")["online"](inst, seed=0, speed=1.0 + eps)
    bad = FAMILY.check_result(inst, res)
    if bad:
        raise RuntimeError(f"online at speed {1 + eps} invalid: {[str(v) for v in bad[:3]]}")
    return res


def _ok(res: Any) -> bool:
    return res.status == Status.FEASIBLE


def _effective_speed(inst: Any, eps: float) -> float:
    slow, fast = from_instance(inst), from_instance(inst, speed=1.0 + eps)
    return float((slow.chunks * slow.p_edge).sum() / (fast.chunks * fast.p_edge).sum())


def exact_point(jobs: int, servers: int, seed: int, time_limit: float, preset: str = "small") -> dict[str, Any]:
    """Online at each speed vs the optimum of (2) on one instance (``small`` or ``testbed`` preset)."""
    inst = generate(preset, seed=seed, jobs=jobs, servers=servers)
    runs = {eps: _online(inst, eps) for eps in EPS}
    feasible = [r.objective for r in runs.values() if _ok(r) and r.schedule["speed"] == 1.0]
    ub = feasible[0] if feasible else None  # a feasible schedule's objective: shrinks the models, keeps the optimum
    t0 = time.perf_counter()
    best = METHODS["milp"](inst, time_limit=time_limit, upper_bound=ub)
    solver = "milp"
    if best.status != Status.OPTIMAL:
        alt = METHODS["cpsat"](inst, time_limit=time_limit / 2, upper_bound=ub)
        if alt.status == Status.OPTIMAL or (alt.bound or 0) > (best.bound or 0):
            best, solver = alt, "cpsat"
    proven = best.status == Status.OPTIMAL
    ref = best.objective if proven else best.bound
    row = {"preset": preset, "jobs": jobs, "servers": servers, "seed": seed,
           "optimum": best.objective if proven else None,
           "incumbent": best.objective, "bound": best.bound, "proven": proven, "solver": solver, "solve_s": round(time.perf_counter() - t0, 2),
           "ratio": {}, "effective_speed": {}, "rejected": {}}
    for eps, res in runs.items():
        row["ratio"][str(eps)] = res.objective / ref if ref and _ok(res) else None
        row["rejected"][str(eps)] = res.extra.get("rejected", [])
        row["effective_speed"][str(eps)] = round(_effective_speed(inst, eps), 4)
    return row


def lp_point(jobs: int, servers: int, seed: int, time_limit: float, regime: str = "paper") -> dict[str, Any]:
    """Online at each speed vs the LP bounds of (4) on one ``paper``-generator instance of ``regime``."""
    inst = generate("paper", seed=seed, jobs=jobs, servers=servers, regime=regime)
    runs = {eps: _online(inst, eps) for eps in EPS}
    makespan = max(max(max(c["slots"]) for c in js["chunks"]) for r in runs.values() for js in r.schedule["jobs"]) + 1
    t0 = time.perf_counter()
    lp = solve_lp4_large(inst, pool=True, bucket=1, cutoff=makespan + 50, time_limit=time_limit)
    if lp.status != Status.OPTIMAL:
        raise RuntimeError(f"LP (4) not solved: {lp.status}")
    lb = jct_bound_from_flow(from_instance(inst), lp.bound)
    row = {"regime": regime, "jobs": jobs, "servers": servers, "seed": seed, "lp4": lp.bound, "jct_lower_bound": lb,
           "lp_columns": lp.extra["columns"], "lp_s": round(time.perf_counter() - t0, 2),
           "online_s": {str(e): round(r.runtime_s, 2) for e, r in runs.items()},
           "d_max": max(jb.chunks for jb in inst.jobs), "f_ratio": {}, "jct_ratio": {}, "effective_speed": {},
           "rejected": {}}
    for eps, res in runs.items():
        row["f_ratio"][str(eps)] = res.extra["fractional_flow_time"] / lp.bound if _ok(res) else None
        row["jct_ratio"][str(eps)] = res.objective / lb if _ok(res) else None
        row["rejected"][str(eps)] = res.extra.get("rejected", [])
        row["effective_speed"][str(eps)] = round(_effective_speed(inst, eps), 4)
    return row


def _fmt(x: float | None, mark: str = "") -> str:
    return "rej.  " if x is None else f"{x:.3f}{mark}"


def _mean(rows: list[dict], key: str, eps: float) -> float:
    vals = [r[key][str(eps)] for r in rows if r[key][str(eps)] is not None]
    return float(np.mean(vals)) if vals else float("nan")


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    panels = [
        (axes[0, 0], result["exact_J"], "jobs", "ratio",
         "Fig. 12 (exact): JCT / OPT(2) vs J (S=5; dashed: testbed preset, S=8)"),
        (axes[0, 1], result["exact_S"], "servers", "ratio", "Fig. 13 (exact): JCT / OPT(2) vs S"),
        (axes[1, 0], result["lp_J"], "jobs", "jct_ratio", f"Fig. 12 (LP): JCT / LB vs J (paper generator, regime {result['regime']})"),
        (axes[1, 1], result["lp_S"], "servers", "jct_ratio", f"Fig. 13 (LP): JCT / LB vs S (regime {result['regime']})"),
    ]
    for ax, rows, xkey, key, title in panels:
        if not rows:  # --lp-only: the exact panels do not depend on the regime
            ax.set_axis_off()
            ax.text(0.5, 0.5, f"{title}\nnot run here (--lp-only)", ha="center", va="center", fontsize=9)
            continue
        xs = sorted({r[xkey] for r in rows})
        for i, eps in enumerate(EPS):
            ys = [_mean([r for r in rows if r[xkey] == x], key, eps) for x in xs]
            ax.plot(xs, ys, marker="o", color=f"C{i}", label=f"eps = {eps}")
            if key == "jct_ratio":
                ys = [_mean([r for r in rows if r[xkey] == x], "f_ratio", eps) for x in xs]
                ax.plot(xs, ys, ls=":", marker=".", color=f"C{i}", alpha=0.6)
            if xkey == "jobs" and key == "ratio" and result.get("exact_testbed"):
                tb = result["exact_testbed"]
                txs = sorted({r["jobs"] for r in tb})
                ax.plot(txs, [_mean([r for r in tb if r["jobs"] == x], key, eps) for x in txs], ls="--",
                        marker="s", color=f"C{i}", alpha=0.7)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xkey)
        ax.set_ylabel("ratio (dotted: f / LP4)" if key == "jct_ratio" else "ratio")
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = benchmark_parser(__doc__.split("\n")[0], seeds="0-1")
    ap.add_argument("--quick", action="store_true", help="fewer sizes")
    ap.add_argument("--regime", choices=REGIMES, default="paper", help="workload regime of the LP panels")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per exact solve / LP")
    ap.add_argument("--lp-only", action="store_true",
                    help="only the LP panels (the exact panels do not depend on --regime)")
    args = ap.parse_args()
    seeds = args.seeds
    exact_J = [(j, 5) for j in ((5, 15, 25) if args.quick else (5, 10, 15, 20, 25, 35))]
    exact_S = [(15, s) for s in ((5, 25, 45) if args.quick else (5, 15, 25, 35, 45))]
    lp_J = [(j, 100) for j in ((25, 100, 300) if args.quick else (25, 50, 100, 200, 300))]
    lp_S = [(300, s) for s in ((10, 50) if args.quick else (10, 25, 50, 100))]
    exact_tb = [(j, 8) for j in ((3, 5) if args.quick else (3, 5, 7))]
    if args.lp_only:
        exact_J, exact_S, exact_tb = [], [], []
    suffix = "" if args.regime == "paper" else f"_{args.regime}"
    result: dict[str, Any] = {"regime": args.regime, "seeds": seeds, "quick": args.quick, "eps": list(EPS), "exact_J": [], "exact_S": [], "exact_testbed": [], "lp_J": [],
                              "lp_S": []}
    hdr = "  ".join(f"e={e:<4}" for e in EPS)
    print(f"{'panel':8} {'J':>4} {'S':>4} seed  {hdr}   reference")
    def exact_tb_point(jobs: int, servers: int, seed: int, time_limit: float) -> dict[str, Any]:
        return exact_point(jobs, servers, seed, time_limit, preset="testbed")

    def lp_regime_point(jobs: int, servers: int, seed: int, time_limit: float) -> dict[str, Any]:
        return lp_point(jobs, servers, seed, time_limit, regime=args.regime)

    for panel, sizes, fn in (("exact_J", exact_J, exact_point), ("exact_S", exact_S, exact_point),
                             ("exact_testbed", exact_tb, exact_tb_point),
                             ("lp_J", lp_J, lp_regime_point), ("lp_S", lp_S, lp_regime_point)):
        for jobs, servers in sizes:
            for seed in seeds:
                done = [r for r in result["lp_J"] if (r["jobs"], r["servers"], r["seed"]) == (jobs, servers, seed)]
                if panel == "lp_S" and done:  # the same instance as a point of the J sweep
                    row = done[0]
                else:
                    row = fn(jobs, servers, seed, args.time_limit)
                result[panel].append(row)
                if panel.startswith("exact"):
                    vals = "  ".join(_fmt(row["ratio"][str(e)], "" if row["proven"] else "*") for e in EPS)
                    ref = (f"OPT(2)={row['optimum']:.0f} ({row['solver']}, {row['solve_s']} s)" if row["proven"]
                           else f"* vs bound {row['bound']:.1f}; incumbent {row['incumbent']} ({row['solve_s']} s)")
                else:
                    vals = "  ".join(_fmt(row["jct_ratio"][str(e)]) for e in EPS)
                    fr = " ".join(_fmt(row["f_ratio"][str(e)]) for e in EPS)
                    ref = (f"LB={row['jct_lower_bound']:.0f} LP4={row['lp4']:.0f} ({row['lp_columns']} cols, "
                           f"{row['lp_s']} s); f/LP4: {fr}")
                print(f"{panel[:8]:8} {jobs:>4} {servers:>4} {seed:>4}  {vals}   {ref}", flush=True)
    eff = {panel: {str(e): round(_mean(result[panel], "effective_speed", e), 3) for e in EPS}
           for panel in ("exact_J", "lp_J")}
    result["effective_speed_mean"] = eff
    print("mean effective speed-up (whole-slot rounding):", eff)
    json_path = result_path(args.out, f"preemptive_ratio{suffix}.json")
    png_path = result_path(args.out, f"preemptive_fig12_13{suffix}.png")
    write_json(json_path, result)
    plot(result, png_path)
    print(f"wrote {json_path} and {png_path}")


if __name__ == "__main__":
    main()
