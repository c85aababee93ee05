"""She et al. Fig. 3-4 (and 7-10): total completion time of A_online vs the baselines on the paper preset.

Fig. 3 / 7 / 9 vary the number of jobs J (edge servers fixed, default 200);
Fig. 4 / 8 / 10 vary the number of edge servers S (jobs fixed, default 200).
Algorithms: ``online``, ``fifo``, ``drf``, ``batchsche``, ``preemptive`` without
preemption overhead (Fig. 7-8) and with ``--overhead`` slots per resumption
(Fig. 9-10). Every schedule goes through the validator; a run that rejects jobs
is reported with its rejected count (its total covers fewer jobs).

Writes ``benchmarks/results/edgecloud_baselines.json`` and ``.png``.

    .venv/bin/python benchmarks/edgecloud_baselines.py [--jobs 100 200 300 400] [--servers 100 200 300]
        [--fixed-jobs 200] [--fixed-servers 200] [--seeds 0] [--overhead 1]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from edgeopt.core import lookup
from edgeopt.core.jsonio import write_json
from edgeopt.edgecloud import FAMILY, generate

ALGOS = [("online", {}), ("fifo", {}), ("drf", {}), ("batchsche", {}), ("preemptive", {}),
         ("preemptive+overhead", None)]


def run_point(jobs: int, servers: int, seed: int, overhead: int) -> dict[str, dict]:
    inst = generate("paper", seed=seed, jobs=jobs, servers=servers)
    out = {}
    for label, params in ALGOS:
        name = label.split("+")[0]
        kw = {"overhead_slots": overhead} if params is None else params
        t0 = time.perf_counter()
        res = lookup("edgecloud", name)(inst, **kw)
        wall = time.perf_counter() - t0
        bad = FAMILY.check_result(inst, res)
        if bad:
            raise SystemExit(f"{label} produced an invalid schedule: {bad[0]}")
        out[label] = {"total_jct": res.objective, "rejected": len(res.extra.get("rejected", [])), "time_s": round(wall, 3)}
    return out


def sweep(kind: str, values: list[int], fixed: int, seeds: list[int], overhead: int) -> list[dict]:
    rows = []
    for v in values:
        jobs, servers = (v, fixed) if kind == "jobs" else (fixed, v)
        per_seed = [run_point(jobs, servers, s, overhead) for s in seeds]
        row = {"jobs": jobs, "servers": servers, "seeds": seeds}
        for label, _ in ALGOS:
            row[label] = {
                "total_jct": float(np.mean([p[label]["total_jct"] for p in per_seed])),
                "rejected": int(sum(p[label]["rejected"] for p in per_seed)),
                "time_s": float(np.mean([p[label]["time_s"] for p in per_seed])),
            }
        rows.append(row)
        cells = "  ".join(f"{label}={row[label]['total_jct']:.0f}"
                          + (f"(rej {row[label]['rejected']})" if row[label]["rejected"] else "")
                          for label, _ in ALGOS)
        print(f"J={jobs:4d} S={servers:4d}  {cells}", flush=True)
    return rows


def plot(by_jobs: list[dict], by_servers: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, rows, key, title in ((axes[0], by_jobs, "jobs", "Fig. 3: vary J"),
                                 (axes[1], by_servers, "servers", "Fig. 4: vary S (edge servers)")):
        x = [r[key] for r in rows]
        for label, _ in ALGOS:
            y = [r[label]["total_jct"] for r in rows]
            ax.plot(x, y, marker="o", label=label)
            # a run that rejected jobs sums fewer jobs: mark it, it is not comparable
            bad = [(xi, yi) for xi, yi, r in zip(x, y, rows, strict=True) if r[label]["rejected"]]
            if bad:
                ax.scatter(*zip(*bad, strict=True), marker="x", s=80, color="k", zorder=3)
        ax.set_xlabel("J (jobs)" if key == "jobs" else "S (edge servers)")
        ax.set_ylabel("total completion time [slots = h]")
        ax.set_yscale("log")
        ax.set_title(title)
    axes[0].legend(fontsize=7, title="x: some jobs rejected", title_fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, nargs="+", default=[100, 200, 300, 400])
    ap.add_argument("--servers", type=int, nargs="+", default=[100, 200, 300])
    ap.add_argument("--fixed-jobs", type=int, default=200)
    ap.add_argument("--fixed-servers", type=int, default=200)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--overhead", type=int, default=1, help="preemption overhead in slots (Fig. 9-10)")
    ap.add_argument("--out", default="benchmarks/results/edgecloud_baselines")
    ap.add_argument("--replot", action="store_true", help="only redraw the figure from the JSON")
    args = ap.parse_args()
    if args.replot:
        import json

        data = json.loads(Path(args.out + ".json").read_text())
        plot(data["vary_jobs"], data["vary_servers"], args.out + ".png")
        return

    print("Fig. 3 (vary J):")
    by_jobs = sweep("jobs", args.jobs, args.fixed_servers, args.seeds, args.overhead)
    print("Fig. 4 (vary S):")
    by_servers = sweep("servers", args.servers, args.fixed_jobs, args.seeds, args.overhead)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out + ".json", {"benchmark": "edgecloud_baselines", "preset": "paper",
                                    "overhead_slots": args.overhead, "vary_jobs": by_jobs,
                                    "vary_servers": by_servers})
    plot(by_jobs, by_servers, args.out + ".png")
    print(f"wrote {args.out}.json and {args.out}.png")


if __name__ == "__main__":
    main()
