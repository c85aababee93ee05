"""Fig. 7-10 of Wang et al.: JCT rate (total JCT / SRTF's total JCT) and preemption counts of
A_online and the baselines, over the number of jobs J (100 edge servers) and over the number of
edge servers S (300 jobs), on the `paper` preset (Sec. V-A ranges).

Every schedule is validated. Preemptions are counted the same way for every algorithm
(`schedule.count_preemptions`: a chunk trained in t-1, unfinished, not trained in t); job-level
preemptions (a job trained in t-1, unfinished, no chunk in t) are reported too.

    .venv/bin/python benchmarks/preemptive_baselines.py                      # one seed, ~3-5 min
    .venv/bin/python benchmarks/preemptive_baselines.py --seeds 3 --jobs 50 100 --servers 20 50
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from edgeopt.core import registered
from edgeopt.preemptive import FAMILY, generate

ALGOS = ["online", "online_edge", "srtf", "tiresias_l", "batchsche"]


def run_point(jobs: int, servers: int, seeds: int, validate: bool, gang: str) -> dict:
    algos = registered("preemptive")
    acc: dict[str, dict[str, float]] = {a: {"jct": 0.0, "pre": 0.0, "jpre": 0.0, "time": 0.0, "cloud": 0.0}
                                        for a in ALGOS}
    for seed in range(seeds):
        inst = generate("paper", seed=seed, jobs=jobs, servers=servers)
        chunks = sum(j.chunks for j in inst.jobs)
        for name in ALGOS:
            t0 = time.perf_counter()
            params = {"gang": gang} if name in ("srtf", "tiresias_l") else {}
            res = algos[name](inst, seed=seed, **params)
            acc[name]["time"] += time.perf_counter() - t0
            if res.status.value != "feasible":
                raise SystemExit(f"{name} rejected jobs {res.extra.get('rejected')} (J={jobs}, S={servers})")
            if validate:
                bad = FAMILY.check_result(inst, res)
                if bad:
                    raise SystemExit(f"{name}: invalid schedule: {bad[0]}")
            acc[name]["jct"] += res.objective
            acc[name]["pre"] += res.extra["preemptions"]
            acc[name]["jpre"] += res.extra["job_preemptions"]
            acc[name]["cloud"] += res.extra["cloud_chunks"] / chunks
    base = acc["srtf"]["jct"]
    return {
        name: {"jct_rate": v["jct"] / base, "total_jct": v["jct"] / seeds, "preemptions": v["pre"] / seeds,
               "job_preemptions": v["jpre"] / seeds, "cloud_share": v["cloud"] / seeds, "seconds": v["time"] / seeds}
        for name, v in acc.items()
    }


def table(title: str, xname: str, xs: list[int], points: list[dict]) -> None:
    print(f"\n{title}")
    print(f"{xname:>5} " + " ".join(f"{a:>22}" for a in ALGOS))
    print("      " + " ".join(f"{'rate / preempt / cloud%':>22}" for _ in ALGOS))
    for x, pt in zip(xs, points, strict=True):
        cells = [f"{pt[a]['jct_rate']:.3f} / {pt[a]['preemptions']:.0f} / {100 * pt[a]['cloud_share']:.0f}"
                 for a in ALGOS]
        print(f"{x:>5} " + " ".join(f"{c:>22}" for c in cells))


def figure(path: Path, jobs: list[int], by_j: list[dict], servers: list[int], by_s: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    panels = [(axes[0, 0], jobs, by_j, "jct_rate", "J (jobs)", "Fig. 7: JCT rate vs J (S=100)"),
              (axes[0, 1], servers, by_s, "jct_rate", "S (edge servers)", "Fig. 8: JCT rate vs S"),
              (axes[1, 0], jobs, by_j, "preemptions", "J (jobs)", "Fig. 9: preemptions vs J"),
              (axes[1, 1], servers, by_s, "preemptions", "S (edge servers)", "Fig. 10: preemptions vs S")]
    for ax, xs, pts, key, xl, title in panels:
        for a in ALGOS:
            if key == "preemptions" and a == "batchsche":
                continue  # non-preemptive
            ax.plot(xs, [p[a][key] for p in pts], marker="o", label=a)
        ax.set_xlabel(xl)
        ax.set_title(title)
        if key == "jct_rate":
            ax.set_yscale("log")
            ax.set_ylabel("total JCT / SRTF's")
        else:
            ax.set_ylabel("chunk preemptions")
        ax.grid(alpha=0.3)
    axes[0, 0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--jobs", type=int, nargs="+", default=[50, 100, 200, 300])
    ap.add_argument("--servers", type=int, nargs="+", default=[25, 50, 75, 100])
    ap.add_argument("--fixed-servers", type=int, default=100)
    ap.add_argument("--fixed-jobs", type=int, default=300)
    ap.add_argument("--no-validate", action="store_true")
    ap.add_argument("--gang", choices=["requested", "chunks"], default="requested",
                    help="gang size of SRTF / Tiresias-L: the trace's worker requirement, or one worker per chunk")
    ap.add_argument("--out", default=None, help="default benchmarks/results/preemptive_baselines_<gang>")
    args = ap.parse_args()
    t0 = time.perf_counter()
    by_j = [run_point(j, args.fixed_servers, args.seeds, not args.no_validate, args.gang) for j in args.jobs]
    table(f"[SRTF / Tiresias-L gang = {args.gang}] Fig. 7 / 9: over J (S = {args.fixed_servers}, {args.seeds} seed(s))", "J", args.jobs, by_j)
    by_s = [run_point(args.fixed_jobs, s, args.seeds, not args.no_validate, args.gang) for s in args.servers]
    table(f"Fig. 8 / 10: over S (J = {args.fixed_jobs}, {args.seeds} seed(s))", "S", args.servers, by_s)
    out = Path(args.out or f"benchmarks/results/preemptive_baselines_{args.gang}")
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(
        {"seeds": args.seeds, "gang": args.gang, "over_jobs": dict(zip(map(str, args.jobs), by_j, strict=True)),
         "over_servers": dict(zip(map(str, args.servers), by_s, strict=True))}, indent=1))
    figure(Path(f"{out}.png"), args.jobs, by_j, args.servers, by_s)
    print(f"\nwrote {out}.json and {out}.png in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
