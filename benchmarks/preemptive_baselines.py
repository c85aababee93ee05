"""Fig. 7-10 of Wang et al.: JCT rate (total JCT / SRTF's total JCT) and preemption counts of
A_online and the baselines, over the number of jobs J (S edge servers fixed) and over the number of
edge servers S (J fixed), on the `paper` generator in one or more workload regimes.

Regimes (`edgeopt.preemptive.instance.REGIMES`): ``paper`` (Sec. V-A as printed: a chunk trains
for about 60 slots, the unlimited cloud is 10-15 slots away), ``short_chunks`` (m_j in
[0.001, 0.005] h: chunks of about 3-17 slots; not in the paper, the edge matters) and ``far_cloud``
(cloud upload delay 60-120 slots; not in the paper, the edge matters).

Algorithms: ``online`` (A_online), ``online_edge`` (A_online-E), ``srtf`` / ``tiresias_l`` (the
paper's non-elastic reading: a gang of the trace's requested workers), ``srtf_elastic`` /
``tiresias_l_elastic`` (one worker per chunk; not the paper's), ``batchsche`` (prices derived from
the reference algorithm: cloud price 0, lambda = 2 T H R F + 1) and ``batchsche_legacy`` (the same
algorithm with the earlier constants cloud price 1, base e^2).

Every schedule is validated. Rates are sums over seeds: sum_seeds JCT(algo) / sum_seeds JCT(srtf)
(``rate``, the paper's metric) and / JCT(srtf_elastic) (``rate_elastic``). The ``partial`` rule: an
algorithm that rejected jobs on any seed of a point gets no rate there; tables print "k rejected"
and figures mark the point. Preemptions are counted the same way for every algorithm
(`schedule.count_preemptions`: a chunk trained in t-1, unfinished, not trained in t).

Gap diagnostics (why `online` loses to the elastic gang baselines), per algorithm:
``last_over_mean`` = sum_j (c_j - r_j) / sum_j mean_d (c_jd - r_j) (A_greedy balances the average
chunk completion, JCT is the last chunk's); ``mixed_jobs`` = jobs with chunks on both the cloud and
the edge (they lose the colocated rate, zeta_j = 0); ``mixed_excess`` = sum over mixed jobs of
(c_j - r_j) - (Delta_jc + P_j colocated), i.e. what sending each such job entirely to the cloud
would save on that job alone (removing its chunks from edge queues delays no one), as a share of
the total JCT.

    .venv/bin/python benchmarks/preemptive_baselines.py --seeds 0-2 --regimes paper short_chunks
    .venv/bin/python benchmarks/preemptive_baselines.py --seeds 0 --jobs 50 100 --servers 20 50
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import registered
from edgeopt.core.jsonio import write_json
from edgeopt.preemptive import FAMILY, generate
from edgeopt.preemptive.instance import REGIMES, Instance

ALGOS = ["online", "online_edge", "srtf", "tiresias_l", "srtf_elastic", "tiresias_l_elastic", "batchsche",
         "batchsche_legacy"]
PREEMPTIVE = ["online", "online_edge", "srtf", "tiresias_l", "srtf_elastic", "tiresias_l_elastic"]
LEGACY = {"cloud_price": 1.0, "base": math.e ** 2}


def _run(name: str, inst: Instance, seed: int) -> Any:
    algos = registered("preemptive")
    if name == "batchsche_legacy":
        return algos["batchsche"](inst, seed=seed, **LEGACY)
    return algos[name](inst, seed=seed)


def gap_stats(inst: Instance, schedule: dict) -> dict[str, float]:
    """Last-chunk vs mean-chunk completion and the cost of mixing cloud and edge chunks (see module doc)."""
    cloud = inst.cloud
    jct = mean = mixed_excess = 0.0
    mixed = 0
    for js in schedule["jobs"]:
        j = js["job"]
        r = inst.jobs[j].arrival
        ends = np.array([max(c["slots"]) + 1 for c in js["chunks"]], dtype=float)
        jct += ends.max() - r
        mean += ends.mean() - r
        where = {c["server"] == cloud for c in js["chunks"]}
        if len(where) == 2:
            mixed += 1
            alone = inst.jobs[j].upload_delay_slots[cloud] + inst.chunk_slots(j, True)
            mixed_excess += max(0.0, ends.max() - r - alone)
    return {"jct": jct, "mean_chunk": mean, "mixed_jobs": mixed, "mixed_excess": mixed_excess}


def run_point(regime: str, jobs: int, servers: int, seeds: list[int], validate: bool) -> dict[str, Any]:
    acc = {a: {"jct": 0.0, "pre": 0.0, "jpre": 0.0, "time": 0.0, "cloud": 0.0, "rejected": 0, "mean_chunk": 0.0,
               "mixed_jobs": 0.0, "mixed_excess": 0.0, "per_seed": []} for a in ALGOS}
    for seed in seeds:
        inst = generate("paper", seed=seed, jobs=jobs, servers=servers, regime=regime)
        chunks = sum(j.chunks for j in inst.jobs)
        for name in ALGOS:
            t0 = time.perf_counter()
            res = _run(name, inst, seed)
            a = acc[name]
            a["time"] += time.perf_counter() - t0
            if validate:
                bad = FAMILY.check_result(inst, res)
                if bad:
                    raise SystemExit(f"{name}: invalid schedule ({regime}, J={jobs}, S={servers}, seed {seed}): {bad[0]}")
            a["rejected"] += int(res.extra.get("rejected_count", len(res.extra.get("rejected", []))))
            g = gap_stats(inst, res.schedule)
            a["jct"] += res.objective
            a["per_seed"].append(res.objective)
            a["mean_chunk"] += g["mean_chunk"]
            a["mixed_jobs"] += g["mixed_jobs"]
            a["mixed_excess"] += g["mixed_excess"]
            a["pre"] += res.extra["preemptions"]
            a["jpre"] += res.extra["job_preemptions"]
            a["cloud"] += res.extra["cloud_chunks"] / chunks
    n = len(seeds)

    def rate(name: str, base: str) -> float | None:
        if acc[name]["rejected"] or acc[base]["rejected"]:
            return None  # partial: no ratio
        return acc[name]["jct"] / acc[base]["jct"]

    out: dict[str, Any] = {}
    for name, v in acc.items():
        out[name] = {
            "rate": rate(name, "srtf"), "rate_elastic": rate(name, "srtf_elastic"),
            "rejected": v["rejected"], "total_jct": v["jct"] / n, "total_jct_per_seed": v["per_seed"],
            "preemptions": v["pre"] / n, "job_preemptions": v["jpre"] / n, "cloud_share": v["cloud"] / n,
            "seconds": v["time"] / n, "last_over_mean": v["jct"] / v["mean_chunk"] if v["mean_chunk"] else None,
            "mixed_jobs": v["mixed_jobs"] / n, "mixed_excess_share": v["mixed_excess"] / v["jct"] if v["jct"] else 0.0,
        }
    return out


def _cell(pt: dict, key: str) -> str:
    if pt[key] is None:
        return f"{pt['rejected']} rejected"
    return f"{pt[key]:.3f}"


def table(title: str, xname: str, xs: list[int], points: list[dict]) -> None:
    print(f"\n{title}")
    print(f"{xname:>5} " + " ".join(f"{a[:18]:>18}" for a in ALGOS))
    print("      " + " ".join(f"{'rate / rate_el / cl%':>18}" for _ in ALGOS))
    for x, pt in zip(xs, points, strict=True):
        cells = [f"{_cell(pt[a], 'rate')}/{_cell(pt[a], 'rate_elastic')}/{100 * pt[a]['cloud_share']:.0f}"
                 for a in ALGOS]
        print(f"{x:>5} " + " ".join(f"{c:>18}" for c in cells))
    print("      preemptions: " + "; ".join(
        f"{x}: " + ", ".join(f"{a}={pt[a]['preemptions']:.0f}" for a in PREEMPTIVE) for x, pt in zip(xs, points,
                                                                                                   strict=True)))
    print("      gap (online vs srtf_elastic): " + "; ".join(
        f"{x}: last/mean {pt['online']['last_over_mean']:.3f} vs {pt['srtf_elastic']['last_over_mean']:.3f}, "
        f"mixed jobs {pt['online']['mixed_jobs']:.1f}, mixed excess {100 * pt['online']['mixed_excess_share']:.1f}%"
        for x, pt in zip(xs, points, strict=True)))


def figure(path: Path, regime: str, jobs: list[int], by_j: list[dict], servers: list[int], by_s: list[dict],
           fixed_s: int, fixed_j: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    panels = [(axes[0, 0], jobs, by_j, "rate", "J (jobs)", f"Fig. 7: JCT rate vs J (S={fixed_s})"),
              (axes[0, 1], servers, by_s, "rate", "S (edge servers)", f"Fig. 8: JCT rate vs S (J={fixed_j})"),
              (axes[1, 0], jobs, by_j, "preemptions", "J (jobs)", "Fig. 9: preemptions vs J"),
              (axes[1, 1], servers, by_s, "preemptions", "S (edge servers)", "Fig. 10: preemptions vs S")]
    for ax, xs, pts, key, xl, title in panels:
        for i, a in enumerate(ALGOS):
            if key == "preemptions" and a not in PREEMPTIVE:
                continue  # non-preemptive
            style = "--" if a.endswith(("_elastic", "_legacy")) else "-"
            ys = [p[a][key] for p in pts]
            ok = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
            if ok:
                ax.plot(*zip(*ok, strict=True), marker="o", ls=style, color=f"C{i}", label=a)
            for x, p in zip(xs, pts, strict=True):  # partial: marked, no value
                if p[a][key] is None:
                    ax.annotate(f"{a}: {p[a]['rejected']} rejected", (x, 1.0), fontsize=7, color=f"C{i}",
                                rotation=90, xycoords=("data", "data"))
        ax.set_xlabel(xl)
        ax.set_title(title, fontsize=10)
        if key == "rate":
            ax.set_yscale("log")
            ax.set_ylabel("total JCT / SRTF's (paper reading)")
        else:
            ax.set_ylabel("chunk preemptions")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"preemptive, regime {regime!r}" + ("" if regime == "paper" else " (not the paper's setting)"))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-2")
    ap.add_argument("--regimes", nargs="+", choices=REGIMES, default=["paper", "short_chunks"])
    ap.add_argument("--jobs", type=int, nargs="+", default=[50, 100, 200, 300])
    ap.add_argument("--servers", type=int, nargs="+", default=[25, 50, 100])
    ap.add_argument("--fixed-servers", type=int, default=100)
    ap.add_argument("--fixed-jobs", type=int, default=300)
    ap.add_argument("--no-validate", action="store_true")
    args = ap.parse_args()
    for regime in args.regimes:
        t0 = time.perf_counter()
        by_j = [run_point(regime, j, args.fixed_servers, args.seeds, not args.no_validate) for j in args.jobs]
        table(f"[{regime}] Fig. 7 / 9: over J (S = {args.fixed_servers}, seeds {args.seeds})", "J", args.jobs, by_j)
        done = dict(zip(args.jobs, by_j, strict=True))
        by_s = [done[args.fixed_jobs] if s == args.fixed_servers and args.fixed_jobs in done
                else run_point(regime, args.fixed_jobs, s, args.seeds, not args.no_validate) for s in args.servers]
        table(f"[{regime}] Fig. 8 / 10: over S (J = {args.fixed_jobs}, seeds {args.seeds})", "S", args.servers, by_s)
        stem = f"preemptive_baselines_{regime}"
        write_json(result_path(args.out, f"{stem}.json"), {
            "regime": regime, "seeds": args.seeds, "fixed_servers": args.fixed_servers, "fixed_jobs": args.fixed_jobs,
            "algorithms": ALGOS, "batchsche_legacy_params": LEGACY,
            "over_jobs": dict(zip(map(str, args.jobs), by_j, strict=True)),
            "over_servers": dict(zip(map(str, args.servers), by_s, strict=True))})
        figure(result_path(args.out, f"{stem}.png"), regime, args.jobs, by_j, args.servers, by_s,
               args.fixed_servers, args.fixed_jobs)
        print(f"\nwrote {args.out}/{stem}.json and .png in {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
