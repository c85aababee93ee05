"""Fig. 14 of She et al.: performance ratio of A_online against the certified offline optimum, in two regimes.

    PYTHONPATH=. .venv/bin/python benchmarks/edgecloud_ratio.py --seeds 0-9 --out benchmarks/results
    PYTHONPATH=. .venv/bin/python benchmarks/edgecloud_ratio.py --seeds 0-2 --jobs 4,8 --servers 1,3

The paper plots A_online's total JCT over the offline optimum's, for growing
numbers of jobs J and of edge servers S. Here the optimum is certified: CP-SAT
must prove it (status ``optimal``), and, unless ``--no-cross-check``, the
Pyomo + HiGHS MILP must prove the same value (a disagreement stops the run) on
instances of at most ``--cross-check-max-jobs`` jobs (default 8).
Instances come from the family's ``small`` generator (24 slots of 60 s,
U = V = 2, edge servers with 1-2 workers and 1 PS per type, a cloud with 3
workers and 2 PSs per type, D_j <= 3) with ``jobs`` and ``servers`` (edge
servers; one cloud is added) varied: the sizes both exact models prove within
seconds. The paper's own scale (200 edge servers, hundreds of jobs) is far
beyond any exact model, so this is the ratio on small instances, not on the
paper's preset.

Two regimes, reported with equal weight (``--regimes``):

* ``compact``: the preset's arrivals, slots 0-3, T = 24: nearly one batch.
* ``spread``: arrivals redrawn uniformly in [0, 16], T = 32: the small-scale
  counterpart of the paper's a_j in [1, T/1.5].

For each instance the JSON records, for every algorithm and for the optimum,
the total wait ``sum_j (start_j - a_j)`` and the total run time
``sum_j (end_j - start_j)``: the two parts of the total JCT, which show where
A_online loses (waiting for its round boundaries).

Every result goes through the family's validator. A ratio counts only when the
algorithm scheduled every job (status ``feasible``); a ``partial`` result is
counted as "k rejected" and gets no ratio. The ``preemptive`` baseline is
relaxed (preemption is outside MINLP (2)), so its ratio may be below 1.
Writes ``edgecloud_ratio_<regime>.json`` and ``edgecloud_fig14.png`` (both
regimes) under ``--out``.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import ModelError, Status, registered
from edgeopt.core.jsonio import write_json
from edgeopt.edgecloud import FAMILY, generate
from formulations.edgecloud import METHODS

REGIMES = {"compact": (None, None), "spread": (16, 32)}  # (last arrival, horizon); None: the preset's


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def certified_optimum(inst, time_limit: float, cross_check: bool) -> dict:
    """CP-SAT's proven optimum, cross-checked by the MILP; raises if they disagree."""
    cp = METHODS["cpsat"](inst, time_limit=time_limit)
    assert FAMILY.check_result(inst, cp) == []
    rec = {"cpsat_status": cp.status.value, "cpsat_s": round(cp.runtime_s, 3), "optimum": None}
    if cp.status != Status.OPTIMAL:
        return rec
    rec["optimum"] = cp.objective
    rec["optimum_wait"], rec["optimum_run"] = wait_and_run(inst, cp.schedule)
    rec["certified_by"] = ["cpsat"]
    if cross_check:
        mi = METHODS["milp"](inst, time_limit=time_limit)
        assert FAMILY.check_result(inst, mi) == []
        rec["milp_status"] = mi.status.value
        rec["milp_s"] = round(mi.runtime_s, 3)
        if mi.status == Status.OPTIMAL:
            if abs(mi.objective - cp.objective) > 1e-6 * max(1.0, cp.objective):
                raise ModelError(f"milp {mi.objective} != cpsat {cp.objective}")
            rec["certified_by"].append("milp")
    return rec


def wait_and_run(inst, schedule: dict) -> tuple[int, int]:
    """``(sum_j (start_j - a_j), sum_j (end_j - start_j))`` over the scheduled jobs."""
    runs = schedule["jobs"]
    return (sum(r["start"] - inst.jobs[r["job"]].arrival for r in runs), sum(r["end"] - r["start"] for r in runs))


def spread_arrivals(inst, last: int, seed: int):
    """The instance with arrivals redrawn uniformly in [0, last] (seeded), as the paper's a_j in [1, T/1.5]."""
    rng = np.random.default_rng(10_000 + seed)
    data = inst.model_dump(mode="json")
    for job in data["jobs"]:
        job["arrival"] = int(rng.integers(0, last + 1))
    return FAMILY.parse_instance(data)


def run_point(sweep: str, jobs: int, servers: int, regime: str, algorithms: list[str], args) -> list[dict]:
    rows = []
    last, horizon = REGIMES[regime]
    for seed in args.seeds:
        inst = generate("small", seed=seed, jobs=jobs, servers=servers, horizon=horizon)
        if last is not None:
            inst = spread_arrivals(inst, last, seed)
        row = {"sweep": sweep, "jobs": jobs, "servers": servers, "seed": seed}
        cross = args.cross_check and jobs <= args.cross_check_max_jobs
        row.update(certified_optimum(inst, args.time_limit, cross))
        for name in algorithms:
            res = registered("edgecloud")[name](inst, seed=0)
            bad = FAMILY.check_result(inst, res)
            if bad:
                raise ModelError(f"{name} on seed {seed}: {bad[:3]}")
            entry = {"status": res.status.value, "objective": res.objective, "runtime_s": round(res.runtime_s, 4),
                     "rejected": len(res.rejected)}
            entry["wait"], entry["run"] = wait_and_run(inst, res.schedule)
            if res.status == Status.FEASIBLE and row["optimum"]:
                entry["ratio"] = res.objective / row["optimum"]
                # A preemptive schedule is outside MINLP (2): it may go below the optimum.
                if entry["ratio"] < 1 - 1e-9 and not res.schedule.get("preemptive"):
                    raise ModelError(f"{name} beats the certified optimum on seed {seed}: a model is wrong")
            row[name] = entry
        rows.append(row)
    return rows


def _mean(xs: list[float]) -> float | None:
    return statistics.fmean(xs) if xs else None


def summarise(rows: list[dict], name: str) -> dict:
    ratios = [r[name]["ratio"] for r in rows if "ratio" in r[name]]
    return {
        "instances": len(rows),
        "certified": sum(r["optimum"] is not None for r in rows),
        "cross_checked": sum(len(r.get("certified_by", [])) == 2 for r in rows),
        "complete": len(ratios),
        "rejected_some": sum(r[name]["status"] == "partial" for r in rows),
        "rejected_jobs": sum(r[name].get("rejected", 0) for r in rows),
        "mean_wait": _mean([r[name]["wait"] for r in rows if "ratio" in r[name]]),
        "mean_run": _mean([r[name]["run"] for r in rows if "ratio" in r[name]]),
        "optimum_mean_wait": _mean([r["optimum_wait"] for r in rows if "ratio" in r[name]]),
        "optimum_mean_run": _mean([r["optimum_run"] for r in rows if "ratio" in r[name]]),
        "mean": statistics.fmean(ratios) if ratios else None,
        "min": min(ratios) if ratios else None,
        "max": max(ratios) if ratios else None,
    }


def plot(results: dict, algorithms: list[str], path: Path) -> None:
    """One row of two panels (J sweep, S sweep) per regime, same axes: equal prominence."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    regimes = list(results)
    fig, axes = plt.subplots(len(regimes), 2, figsize=(10, 3.6 * len(regimes)), sharey=True, squeeze=False)
    for row, regime in zip(axes, regimes, strict=True):
        summary = results[regime]["summary"]
        for ax, sweep, key, label in ((row[0], "J", "jobs", "number of jobs J"),
                                      (row[1], "S", "servers", "number of edge servers S (+1 cloud)")):
            for name in algorithms:
                pts = [p for p in summary[sweep] if p[name]["mean"] is not None]
                x = [p[key] for p in pts]
                mean = [p[name]["mean"] for p in pts]
                lo = [p[name]["mean"] - p[name]["min"] for p in pts]
                hi = [p[name]["max"] - p[name]["mean"] for p in pts]
                ax.errorbar(x, mean, yerr=[lo, hi], marker="o", capsize=3, label=name)
                for p in summary[sweep]:
                    if p[name]["rejected_some"]:
                        ax.annotate(f"{name}: {p[name]['rejected_some']} partial", (p[key], 1.0), fontsize=6)
            fixed = summary["fixed"]["servers"] if sweep == "J" else summary["fixed"]["jobs"]
            ax.set_title(f"{results[regime]['note']}; {'S' if sweep == 'J' else 'J'} = {fixed}", fontsize=8)
            ax.set_xlabel(label)
            ax.axhline(1.0, color="grey", lw=0.8, ls=":")
            ax.grid(alpha=0.3)
        row[0].set_ylabel("total JCT / certified optimum")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("edgecloud, Fig. 14: performance ratio (mean, min-max over seeds) in two arrival regimes",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_regime(regime: str, algorithms: list[str], args) -> dict:
    t0 = time.perf_counter()
    rows: list[dict] = []
    summary: dict = {"J": [], "S": [], "fixed": {"jobs": args.fixed_jobs, "servers": args.fixed_servers}}
    last, horizon = REGIMES[regime]
    note = f"arrivals in slots 0-{last if last is not None else 3}, T = {horizon or 24}"
    print(f"regime {regime}: {note}; seeds {args.seeds}")
    print(f"{'sweep':5} {'J':>3} {'S':>3} {'cert':>5} {'x-chk':>5} " + " ".join(
        f"{n + ' mean/min/max':>26} {'rej':>3}" for n in algorithms))
    points = [("J", j, args.fixed_servers) for j in args.jobs] + [("S", args.fixed_jobs, s) for s in args.servers]
    for sweep, jobs, servers in points:
        pr = run_point(sweep, jobs, servers, regime, algorithms, args)
        rows.extend(pr)
        point = {"jobs": jobs, "servers": servers, **{n: summarise(pr, n) for n in algorithms}}
        summary[sweep].append(point)
        first = point[algorithms[0]]
        cells = []
        for n in algorithms:
            s = point[n]
            txt = "-" if s["mean"] is None else f"{s['mean']:.3f}/{s['min']:.3f}/{s['max']:.3f}"
            cells.append(f"{txt:>26} {s['rejected_some']:>3}")
        print(f"{sweep:5} {jobs:>3} {servers:>3} {first['certified']:>5} {first['cross_checked']:>5} "
              + " ".join(cells), flush=True)
    overall = {}
    for n in algorithms:
        ratios = [r[n]["ratio"] for r in rows if "ratio" in r[n]]
        partial = sum(r[n]["status"] == "partial" for r in rows)
        if not ratios:
            print(f"{n}: no complete schedule on a certified instance ({partial} partial)")
            overall[n] = {"n": 0, "partial": partial}
            continue
        done = [r for r in rows if "ratio" in r[n]]
        overall[n] = {"mean": statistics.fmean(ratios), "min": min(ratios), "max": max(ratios), "n": len(ratios),
                      "partial": partial,
                      "total_wait": sum(r[n]["wait"] for r in done), "total_run": sum(r[n]["run"] for r in done),
                      "optimum_total_wait": sum(r["optimum_wait"] for r in done),
                      "optimum_total_run": sum(r["optimum_run"] for r in done)}
        o = overall[n]
        print(f"{n}: mean ratio {o['mean']:.4f}, min {o['min']:.4f}, max {o['max']:.4f} over {o['n']} certified "
              f"instances ({partial} partial); wait {o['total_wait']} vs optimum's {o['optimum_total_wait']}, "
              f"run {o['total_run']} vs {o['optimum_total_run']}")
    elapsed = time.perf_counter() - t0
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {"regime": regime, "note": note, "settings": settings, "algorithms": algorithms, "summary": summary,
            "overall": overall, "rows": rows, "elapsed_s": round(elapsed, 1)}


def main(argv: list[str] | None = None) -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-9")
    ap.add_argument("--regimes", default="compact,spread", help="comma list of " + ", ".join(REGIMES))
    ap.add_argument("--jobs", type=_ints, default=_ints("4,8,12,16"), help="J values of the J sweep")
    ap.add_argument("--servers", type=_ints, default=_ints("1,2,4,8"), help="edge-server counts of the S sweep")
    ap.add_argument("--fixed-jobs", type=int, default=8, help="J during the S sweep")
    ap.add_argument("--fixed-servers", type=int, default=2, help="edge servers during the J sweep")
    ap.add_argument("--time-limit", type=float, default=30.0, help="per exact solve, seconds")
    ap.add_argument("--no-cross-check", dest="cross_check", action="store_false",
                    help="certify by CP-SAT alone (skip the MILP)")
    ap.add_argument("--cross-check-max-jobs", type=int, default=8,
                    help="run the MILP cross-check only up to this many jobs (it needs 5-30 s at 16-20 jobs)")
    ap.add_argument("--algorithms", default="all",
                    help="comma list, or 'all' registered algorithms (online first; Fig. 14 itself is online)")
    args = ap.parse_args(argv)
    if args.algorithms == "all":
        algorithms = ["online"] + sorted(n for n in registered("edgecloud") if n != "online")
    else:
        algorithms = args.algorithms.split(",")
    results = {}
    for regime in args.regimes.split(","):
        if regime not in REGIMES:
            raise SystemExit(f"unknown regime {regime!r}")
        results[regime] = run_regime(regime, algorithms, args)
        write_json(result_path(args.out, f"edgecloud_ratio_{regime}.json"), results[regime])
    png = result_path(args.out, "edgecloud_fig14.png")
    plot(results, algorithms, png)
    print(f"wrote edgecloud_ratio_<regime>.json and {png}")


if __name__ == "__main__":
    main()
