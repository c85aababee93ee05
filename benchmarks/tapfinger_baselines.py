"""Fig. 4-style comparison of the tapfinger baselines: average and median task completion time.

Regimes (each stated in the JSON):

* ``small``: the ``small`` preset (2 clusters of 6 CPU / 4 GPU, 6 tasks, Poisson(1) arrivals),
  against the certified optimum (CP-SAT, proven optimal on every seed): ratio = total completion
  time / optimum.
* ``paper3`` (3 clusters of 16/16, Poisson(2), 192 tasks) and ``paper6`` (6 clusters, Poisson(4),
  384 tasks), noise off and on (+/-0.1), against the fastest-run + start-rate lower bound.

Every baseline uses the learned agents' conflict rule (eq. (11)); ``*_ordered`` are the earlier
agent-order variants (no pick lost), kept for comparison. Relaxed (preemptive) baselines are marked; partial results (unfinished tasks) get no numbers.

    python benchmarks/tapfinger_baselines.py --seeds 0-9 --out benchmarks/results
"""

from __future__ import annotations

import json
import statistics
import time

from edgeopt import api
from edgeopt.bench import benchmark_parser, result_path
from edgeopt.tapfinger import generate
from formulations.tapfinger import METHODS, start_rate_bound

ALGOS = ["optimus", "optimus_np", "tiresias", "tiresias_np", "random", "minimum", "greedy",
         "optimus_ordered", "optimus_np_ordered", "greedy_ordered"]
SETTINGS = {
    "paper3": {"clusters": 3, "arrival_rate": 2.0},
    "paper6": {"clusters": 6, "arrival_rate": 4.0},
}


def _times(inst, res) -> list[int]:
    return [p["end"] - inst.tasks[p["task"]].arrival for p in res.schedule["placements"]]


def run_setting(name: str, seeds: list[int], make, reference: str) -> dict:
    rows: dict[str, dict] = {a: {"times": [], "ratios": [], "partial": 0, "runtime_s": 0.0} for a in ALGOS}
    refs, n_tasks = [], 0
    for seed in seeds:
        inst = make(seed)
        n_tasks += len(inst.tasks)
        if reference == "optimum":
            opt = METHODS["cpsat"](inst, time_limit=60)
            assert opt.status.value == "optimal", (name, seed, opt.status)
            ref = opt.objective
        else:
            ref = start_rate_bound(inst)
        refs.append(ref)
        for a in ALGOS:
            res = api.run(a, inst, seed=seed)
            assert not api.validate(inst, res)
            rows[a]["runtime_s"] += res.runtime_s
            if res.status.value != "feasible":
                rows[a]["partial"] += 1
                continue
            rows[a]["times"] += _times(inst, res)
            rows[a]["ratios"].append(res.objective / ref)
    relaxed = {a: api.algorithms("tapfinger")[a].relaxed for a in ALGOS}
    table = {}
    for a, r in rows.items():
        t = r["times"]
        table[a] = {
            "relaxed": relaxed[a],
            "mean_completion": round(statistics.fmean(t), 3) if t else None,
            "median_completion": statistics.median(t) if t else None,
            f"mean_ratio_to_{reference}": round(statistics.fmean(r["ratios"]), 4) if r["ratios"] else None,
            f"max_ratio_to_{reference}": round(max(r["ratios"]), 4) if r["ratios"] else None,
            "partial_runs": r["partial"],
            "runtime_s_per_run": round(r["runtime_s"] / len(seeds), 4),
        }
    return {"reference": reference, "mean_reference_total": round(statistics.fmean(refs), 3),
            "reference_per_task": round(sum(refs) / max(1, n_tasks), 3), "rows": table}


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-9")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = {"seeds": args.seeds, "settings": {}}
    out["settings"]["small"] = {
        "regime": "small preset: 2 clusters 6 CPU/4 GPU, 6 tasks, Poisson(1), noise off",
        **run_setting("small", args.seeds, lambda s: generate("small", seed=s), "optimum")}
    for name, cfg in SETTINGS.items():
        for noise in (0.0, 0.1):
            key = f"{name}_noise{noise:g}"
            out["settings"][key] = {
                "regime": f"paper preset: {cfg['clusters']} clusters 16/16, Poisson({cfg['arrival_rate']:g}), "
                          f"64 tasks per cluster, noise {noise:g}",
                **run_setting(key, args.seeds, lambda s, c=cfg, z=noise: generate("paper", seed=s, noise=z, **c),
                              "bound")}
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    path = result_path(args.out, "tapfinger_baselines.json")
    path.write_text(json.dumps(out, indent=1))
    _plot(out, result_path(args.out, "tapfinger_fig4.png"))
    for key, s in out["settings"].items():
        print(f"\n{key} ({s['reference']} mean total {s['mean_reference_total']})")
        for a, r in s["rows"].items():
            print(f"  {a:12s}{' (relaxed)' if r['relaxed'] else '':10s} mean {r['mean_completion']} "
                  f"median {r['median_completion']} ratio {r.get('mean_ratio_to_' + s['reference'])} "
                  f"partial {r['partial_runs']}")
    print("wrote", path)


def _plot(out: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(out["settings"])
    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3.6), sharey=False)
    for ax, key in zip(axes, keys, strict=True):
        rows = out["settings"][key]["rows"]
        names = [a for a in ALGOS if rows[a]["mean_completion"] is not None]
        x = range(len(names))
        ax.bar([i - 0.2 for i in x], [rows[a]["mean_completion"] for a in names], 0.4, label="mean")
        ax.bar([i + 0.2 for i in x], [rows[a]["median_completion"] for a in names], 0.4, label="median")
        ref = out["settings"][key]["reference_per_task"]
        ax.axhline(ref, color="k", ls="--", lw=1, label=f"{out['settings'][key]['reference']} per task")
        ax.set_xticks(list(x), names, rotation=60, fontsize=8)
        ax.set_title(key, fontsize=9)
        ax.set_ylabel("completion time (timesteps)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
