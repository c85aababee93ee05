"""She et al. Fig. 3-4 (and 7-10): total completion time of A_online vs the baselines, in stated regimes.

Fig. 3 / 7 / 9 vary the number of jobs J (edge servers fixed, default 200);
Fig. 4 / 8 / 10 vary the number of edge servers S (jobs fixed, default 200).
Algorithms: ``online``, ``fifo``, ``drf``, ``batchsche`` (the reference
algorithm of [8]), ``preemptive`` without resumption overhead (Fig. 7-8;
relaxed: outside MINLP (2)) and with ``--overhead`` slots per resumption
(Fig. 9-10). Regimes (``--regimes``):

* ``paper``: the ``paper`` preset, arrivals a_j in [1, T/1.5] as in Sec. VI,
  T = 6144, each worker and PS of a server of a random type.
* ``compact``: the ``paper_compact`` preset, arrivals in [1, 128], T = 4096
  (a burst: every job arrives within ~2 % of the horizon; congested).
* ``first``: ``compact`` arrivals with the toolkit's first generator reading
  (one worker type and one PS type per edge server), the setting of the
  toolkit's first published numbers.

Every schedule goes through the validator. Rule for rejections: a run that
rejected jobs (status ``partial``) sums fewer jobs, so it gets no mean, no
ratio and no rank: the table says "k rejected" and the plot draws its bar
hatched with the count. Per point, the JSON also holds the generator's
effect: how many edge servers can host a job colocated (its worker type and
PS type on one server), how many jobs have none, and how many jobs each
algorithm runs (partly) in the cloud.

    PYTHONPATH=. .venv/bin/python benchmarks/edgecloud_baselines.py --seeds 0-2 [--regimes paper,compact,first]
        [--jobs 100,200,300,400] [--servers 100,200,300] [--overhead 1] [--out benchmarks/results]

Writes ``edgecloud_baselines_<regime>.json`` and ``.png`` under ``--out``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import Status, lookup
from edgeopt.core.jsonio import read_json, write_json
from edgeopt.edgecloud import FAMILY, Instance, generate
from edgeopt.edgecloud.instance import COMPACT_HORIZON, COMPACT_LAST_ARRIVAL, paper_instance

ALGOS = ["online", "fifo", "drf", "batchsche", "preemptive", "preemptive+overhead"]
RELAXED = {"preemptive", "preemptive+overhead"}
REGIMES = {
    "paper": "arrivals a_j in [1, T/1.5] = [1, 4096], T = 6144, per-unit server types (Sec. VI)",
    "compact": "arrivals in [1, 128], T = 4096, per-unit server types",
    "first": "arrivals in [1, 128], T = 4096, one worker type and one PS type per edge server",
}


def make_instance(regime: str, seed: int, jobs: int, servers: int) -> Instance:
    if regime == "paper":
        return generate("paper", seed=seed, jobs=jobs, servers=servers)
    if regime == "compact":
        return generate("paper_compact", seed=seed, jobs=jobs, servers=servers)
    return paper_instance(seed, jobs=jobs, servers=servers, horizon=COMPACT_HORIZON,
                          last_arrival=COMPACT_LAST_ARRIVAL, server_types="per_server")


def generator_stats(inst: Instance) -> dict:
    """Edge servers able to host each job colocated (worker type u_j and PS type v_j on one server)."""
    W, P = inst.W()[:-1], inst.P()[:-1]
    hosts = np.array([int(((W[:, j.worker_type] > 0) & (P[:, j.ps_type] > 0)).sum()) for j in inst.jobs])
    return {"colocated_hosts_mean": float(hosts.mean()), "jobs_without_colocated_host": int((hosts == 0).sum())}


def run_point(regime: str, jobs: int, servers: int, seed: int, overhead: int) -> dict:
    inst = make_instance(regime, seed, jobs, servers)
    cloud = len(inst.servers) - 1
    out: dict = {"generator": generator_stats(inst)}
    for label in ALGOS:
        name = label.split("+")[0]
        kw = {"overhead_slots": overhead} if label == "preemptive+overhead" else {}
        t0 = time.perf_counter()
        res = lookup("edgecloud", name)(inst, **kw)
        wall = time.perf_counter() - t0
        bad = FAMILY.check_result(inst, res)
        if bad:
            raise SystemExit(f"{label} produced an invalid schedule: {bad[0]}")
        runs = res.schedule["jobs"]
        in_cloud = sum(1 for r in runs if cloud in {int(s) for s in r["workers"]} or r["ps_server"] == cloud)
        out[label] = {"status": res.status.value, "total_jct": res.objective, "rejected": len(res.rejected),
                      "jobs_in_cloud": in_cloud, "time_s": round(wall, 3)}
    return out


def aggregate(per_seed: list[dict]) -> dict:
    """Mean over seeds if every seed scheduled every job; else only the rejected count (partial rule)."""
    row: dict = {"generator": {k: float(np.mean([p["generator"][k] for p in per_seed]))
                               for k in per_seed[0]["generator"]}}
    for label in ALGOS:
        cells = [p[label] for p in per_seed]
        rejected = int(sum(c["rejected"] for c in cells))
        complete = rejected == 0
        row[label] = {
            "status": "feasible" if complete else "partial",
            "total_jct": float(np.mean([c["total_jct"] for c in cells])) if complete else None,
            "total_jct_of_scheduled": float(np.mean([c["total_jct"] for c in cells])),
            "rejected": rejected,
            "jobs_in_cloud": float(np.mean([c["jobs_in_cloud"] for c in cells])),
            "time_s": float(np.mean([c["time_s"] for c in cells])),
            "per_seed_total": [c["total_jct"] for c in cells],
            "per_seed_status": [c["status"] for c in cells],
        }
    ranked = sorted((row[a]["total_jct"], a) for a in ALGOS if row[a]["total_jct"] is not None)
    for k, (_, a) in enumerate(ranked, 1):
        row[a]["rank"] = k
    ref = row["online"]["total_jct"]
    for a in ALGOS:
        if row[a]["total_jct"] is not None and ref:
            row[a]["vs_online"] = row[a]["total_jct"] / ref
    return row


def cell(entry: dict) -> str:
    if entry["status"] == Status.PARTIAL.value:
        return f"{entry['rejected']} rejected"
    return f"{entry['total_jct']:.0f} (#{entry['rank']})"


def sweep(regime: str, points: list[tuple[int, int]], seeds: list[int], overhead: int, cache: dict,
          checkpoint=None) -> list[dict]:
    rows = []
    for jobs, servers in points:
        if (jobs, servers) not in cache:
            per_seed = [run_point(regime, jobs, servers, s, overhead) for s in seeds]
            cache[(jobs, servers)] = {"jobs": jobs, "servers": servers, "seeds": seeds, **aggregate(per_seed)}
        row = cache[(jobs, servers)]
        rows.append(row)
        g = row["generator"]
        print(f"J={jobs:4d} S={servers:4d}  " + "  ".join(f"{a}={cell(row[a])}" for a in ALGOS)
              + f"  | coloc hosts/job {g['colocated_hosts_mean']:.1f}, none {g['jobs_without_colocated_host']:.1f},"
              f" fifo->cloud {row['fifo']['jobs_in_cloud']:.1f}", flush=True)
        if checkpoint is not None:
            checkpoint(list(cache.values()))
    return rows


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    width = 0.8 / len(ALGOS)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, key, title in ((axes[0], "vary_jobs", "Fig. 3: vary J (S = {s})"),
                           (axes[1], "vary_servers", "Fig. 4: vary S (J = {j})")):
        rows = data[key]
        xs = np.arange(len(rows))
        for k, label in enumerate(ALGOS):
            for x, r in zip(xs, rows, strict=True):
                e = r[label]
                partial = e["status"] == "partial"
                h = e["total_jct_of_scheduled"]
                ax.bar(x + (k - len(ALGOS) / 2 + 0.5) * width, h, width, color=colors[k % len(colors)],
                       hatch="///" if partial else None, edgecolor="k" if partial else None, alpha=0.5 if partial else 1,
                       label=(label + (" (relaxed)" if label in RELAXED else "")) if x == 0 else None)
                if partial:
                    ax.text(x + (k - len(ALGOS) / 2 + 0.5) * width, h, f"{e['rejected']} rej", rotation=90,
                            ha="center", va="bottom", fontsize=6)
        param = "jobs" if key == "vary_jobs" else "servers"
        ax.set_xticks(xs, [str(r[param]) for r in rows])
        ax.set_xlabel("J (jobs)" if key == "vary_jobs" else "S (edge servers)")
        ax.set_ylabel("total completion time [slots = h], mean over seeds")
        ax.set_yscale("log")
        ax.set_title(title.format(s=rows[0]["servers"], j=rows[0]["jobs"]), fontsize=9)
    axes[0].legend(fontsize=6, title="hatched: k jobs rejected (not comparable)", title_fontsize=6, framealpha=0.6,
                   loc="lower left", bbox_to_anchor=(0, 1.08), ncol=3)
    fig.suptitle(f"edgecloud baselines, regime '{data['regime']}': {data['regime_text']}; seeds {data['seeds']}",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-2")
    ap.add_argument("--regimes", default="paper,compact,first", help="comma list of " + ", ".join(REGIMES))
    ap.add_argument("--jobs", type=_ints, default=_ints("100,200,300,400"))
    ap.add_argument("--servers", type=_ints, default=_ints("100,200,300"))
    ap.add_argument("--fixed-jobs", type=int, default=200)
    ap.add_argument("--fixed-servers", type=int, default=200)
    ap.add_argument("--overhead", type=int, default=1, help="preemption overhead in slots (Fig. 9-10)")
    ap.add_argument("--replot", action="store_true", help="only redraw the figures from the JSON files")
    args = ap.parse_args(argv)
    for regime in args.regimes.split(","):
        if regime not in REGIMES:
            raise SystemExit(f"unknown regime {regime!r}")
        base = result_path(args.out, f"edgecloud_baselines_{regime}")
        if args.replot:
            plot(read_json(base.with_suffix(".json")), base.with_suffix(".png"))
            continue
        print(f"regime {regime}: {REGIMES[regime]}; seeds {args.seeds}")
        cache: dict = {}
        t0 = time.perf_counter()

        def checkpoint(done: list[dict], regime: str = regime, base: Path = base) -> None:
            write_json(base.with_name(base.name + "_partial.json"), {"regime": regime, "points": done})

        print("Fig. 3 (vary J):")
        by_jobs = sweep(regime, [(j, args.fixed_servers) for j in args.jobs], args.seeds, args.overhead, cache,
                        checkpoint)
        print("Fig. 4 (vary S):")
        by_servers = sweep(regime, [(args.fixed_jobs, s) for s in args.servers], args.seeds, args.overhead, cache,
                           checkpoint)
        data = {"benchmark": "edgecloud_baselines", "regime": regime, "regime_text": REGIMES[regime],
                "seeds": args.seeds, "overhead_slots": args.overhead, "vary_jobs": by_jobs,
                "vary_servers": by_servers, "elapsed_s": round(time.perf_counter() - t0, 1)}
        write_json(base.with_suffix(".json"), data)
        base.with_name(base.name + "_partial.json").unlink(missing_ok=True)
        plot(data, base.with_suffix(".png"))
        print(f"wrote {base}.json and .png ({data['elapsed_s']} s)")


if __name__ == "__main__":
    main()
