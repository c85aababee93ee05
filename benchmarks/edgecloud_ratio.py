"""Fig. 14 of She et al.: performance ratio of A_online against the certified offline optimum.

    .venv/bin/python benchmarks/edgecloud_ratio.py                 # default sweeps (a few minutes)
    .venv/bin/python benchmarks/edgecloud_ratio.py --seeds 3 --jobs 4,8 --servers 1,3

The paper plots A_online's total JCT over the offline optimum's, for growing
numbers of jobs J and of edge servers S. Here the optimum is certified: CP-SAT
must prove it (status ``optimal``), and, unless ``--no-cross-check``, the
Pyomo + HiGHS MILP must prove the same value (a disagreement stops the run) on
instances of at most ``--cross-check-max-jobs`` jobs (default 12; the MILP
takes 5-30 s at 16-20 jobs, CP-SAT 0.4-9 s).
Instances come from the family's ``small`` generator (arrivals in slots 0-3,
24 slots of 60 s, U = V = 2, edge servers with 1-2 workers and 1 PS per type,
a cloud with 3 workers and 2 PSs per type, D_j <= 3) with ``jobs`` and
``servers`` (edge servers; one cloud is added) varied: the sizes both exact
models prove within seconds. The paper's own scale (200 edge servers, hundreds
of jobs) is far beyond any exact model, so this is the ratio on small,
congested instances, not on the paper's preset.

``--arrivals-up-to N`` redraws the arrivals uniformly in [0, N] (the paper
spreads a_j over [1, T/1.5]; the preset's arrivals are 0-3, nearly a batch).

Every result goes through the family's validator. A ratio counts only when the
algorithm scheduled every job (status ``feasible``); rejections are counted
apart. Baselines are reported next to ``online`` (``--algorithms``); the
``preemptive`` baseline's schedules are outside MINLP (2) (preemption), so its
ratio to the non-preemptive optimum may be below 1. Writes a table to stdout, a JSON of every instance's numbers
(``--json``, default ``benchmarks/results/edgecloud_ratio.json``) and the
figure (``--out``, default ``benchmarks/results/edgecloud_fig14.png``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from edgeopt.core import ModelError, Status, registered
from edgeopt.core.jsonio import write_json
from edgeopt.edgecloud import FAMILY, generate
from formulations.edgecloud import METHODS

ROOT = Path(__file__).resolve().parents[1]


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


def spread_arrivals(inst, last: int, seed: int):
    """The instance with arrivals redrawn uniformly in [0, last] (seeded), as the paper's a_j in [1, T/1.5]."""
    rng = np.random.default_rng(10_000 + seed)
    data = inst.model_dump(mode="json")
    for job in data["jobs"]:
        job["arrival"] = int(rng.integers(0, last + 1))
    return FAMILY.parse_instance(data)


def run_point(sweep: str, jobs: int, servers: int, seeds: int, algorithms: list[str], args) -> list[dict]:
    rows = []
    for seed in range(seeds):
        inst = generate("small", seed=seed, jobs=jobs, servers=servers, horizon=args.horizon)
        if args.arrivals_up_to is not None:
            inst = spread_arrivals(inst, args.arrivals_up_to, seed)
        row = {"sweep": sweep, "jobs": jobs, "servers": servers, "seed": seed}
        cross = args.cross_check and jobs <= args.cross_check_max_jobs
        row.update(certified_optimum(inst, args.time_limit, cross))
        for name in algorithms:
            res = registered("edgecloud")[name](inst, seed=0)
            bad = FAMILY.check_result(inst, res)
            if bad:
                raise ModelError(f"{name} on seed {seed}: {bad[:3]}")
            entry = {"status": res.status.value, "objective": res.objective, "runtime_s": round(res.runtime_s, 4)}
            if res.status == Status.FEASIBLE and row["optimum"]:
                entry["ratio"] = res.objective / row["optimum"]
                # A preemptive schedule is outside MINLP (2): it may go below the optimum.
                if entry["ratio"] < 1 - 1e-9 and not res.schedule.get("preemptive"):
                    raise ModelError(f"{name} beats the certified optimum on seed {seed}: a model is wrong")
            row[name] = entry
        rows.append(row)
    return rows


def summarise(rows: list[dict], name: str) -> dict:
    ratios = [r[name]["ratio"] for r in rows if "ratio" in r[name]]
    return {
        "instances": len(rows),
        "certified": sum(r["optimum"] is not None for r in rows),
        "cross_checked": sum(len(r.get("certified_by", [])) == 2 for r in rows),
        "complete": len(ratios),
        "rejected_some": sum(r[name]["status"] == "partial" for r in rows),
        "mean": statistics.fmean(ratios) if ratios else None,
        "min": min(ratios) if ratios else None,
        "max": max(ratios) if ratios else None,
    }


def plot(summary: dict, algorithms: list[str], path: Path, note: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, sweep, key, label in ((axes[0], "J", "jobs", "number of jobs J"),
                                  (axes[1], "S", "servers", "number of edge servers S (+1 cloud)")):
        for name in algorithms:
            pts = [p for p in summary[sweep] if p[name]["mean"] is not None]
            x = [p[key] for p in pts]
            mean = [p[name]["mean"] for p in pts]
            lo = [p[name]["mean"] - p[name]["min"] for p in pts]
            hi = [p[name]["max"] - p[name]["mean"] for p in pts]
            ax.errorbar(x, mean, yerr=[lo, hi], marker="o", capsize=3, label=name)
        fixed = summary["fixed"]["servers"] if sweep == "J" else summary["fixed"]["jobs"]
        ax.set_title(f"{'S' if sweep == 'J' else 'J'} = {fixed}")
        ax.set_xlabel(label)
        ax.axhline(1.0, color="grey", lw=0.8, ls=":")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("total JCT / certified optimum")
    axes[0].legend()
    fig.suptitle(f"edgecloud, Fig. 14: performance ratio (mean, min-max over seeds)\n{note}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=_ints, default=_ints("4,8,12,16,20"), help="J values of the J sweep")
    ap.add_argument("--servers", type=_ints, default=_ints("1,2,4,8,12"), help="edge-server counts of the S sweep")
    ap.add_argument("--fixed-jobs", type=int, default=8, help="J during the S sweep")
    ap.add_argument("--fixed-servers", type=int, default=2, help="edge servers during the J sweep")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--horizon", type=int, default=None, help="slots (default: the small preset's 24)")
    ap.add_argument("--arrivals-up-to", type=int, default=None,
                    help="redraw arrivals uniformly in [0, N] (default: the preset's 0-3)")
    ap.add_argument("--time-limit", type=float, default=30.0, help="per exact solve, seconds")
    ap.add_argument("--no-cross-check", dest="cross_check", action="store_false",
                    help="certify by CP-SAT alone (skip the MILP)")
    ap.add_argument("--cross-check-max-jobs", type=int, default=12,
                    help="run the MILP cross-check only up to this many jobs (it needs 5-30 s at 16-20 jobs)")
    ap.add_argument("--algorithms", default="all",
                    help="comma list, or 'all' registered algorithms (online first; Fig. 14 itself is online)")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "edgecloud_ratio.json")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "edgecloud_fig14.png")
    args = ap.parse_args(argv)
    if args.algorithms == "all":
        algorithms = ["online"] + sorted(n for n in registered("edgecloud") if n != "online")
    else:
        algorithms = args.algorithms.split(",")

    t0 = time.perf_counter()
    rows: list[dict] = []
    summary: dict = {"J": [], "S": [], "fixed": {"jobs": args.fixed_jobs, "servers": args.fixed_servers}}
    print(f"{'sweep':5} {'J':>3} {'S':>3} {'cert':>5} {'x-chk':>5} " + " ".join(
        f"{n + ' mean/min/max':>26} {'rej':>3}" for n in algorithms))
    points = [("J", j, args.fixed_servers) for j in args.jobs] + [("S", args.fixed_jobs, s) for s in args.servers]
    for sweep, jobs, servers in points:
        pr = run_point(sweep, jobs, servers, args.seeds, algorithms, args)
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
    elapsed = time.perf_counter() - t0
    overall = {}
    for n in algorithms:
        ratios = [r[n]["ratio"] for r in rows if "ratio" in r[n]]
        if not ratios:
            print(f"{n}: no complete schedule on a certified instance")
            continue
        overall[n] = {"mean": statistics.fmean(ratios), "min": min(ratios), "max": max(ratios), "n": len(ratios)}
        print(f"{n}: overall mean ratio {overall[n]['mean']:.4f}, min {overall[n]['min']:.4f}, "
              f"max {overall[n]['max']:.4f} over {len(ratios)} certified instances")
    print(f"{elapsed:.1f} s")
    settings = {k: v for k, v in vars(args).items() if not isinstance(v, Path)}
    write_json(args.json, {"settings": settings,
                           "algorithms": algorithms, "summary": summary, "overall": overall, "rows": rows,
                           "elapsed_s": round(elapsed, 1)})
    arrivals = "0-3" if args.arrivals_up_to is None else f"0-{args.arrivals_up_to}"
    plot(summary, algorithms, args.out, f"arrivals in slots {arrivals}, T = {args.horizon or 24}")
    print(f"wrote {args.json} and {args.out}")


if __name__ == "__main__":
    main()
