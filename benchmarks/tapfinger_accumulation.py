"""Task accumulation over time (the TapFinger paper's Fig. 4b, 4d and 5) on held-out seeds.

The accumulation at timestep t is the number of tasks that have arrived (arrival <= t) and not
finished (end > t): queued, paused or running. The paper plots it for 3 clusters at arrival rate 2
(Fig. 4b), 6 clusters at rate 4 (Fig. 4d) and 6 clusters at rate 2 (Fig. 5). Here: the ``paper``
preset (clusters of 16 CPU / 16 GPU, 64 tasks per cluster, the synthetic task types) with the
benchmark's held-out seeds (default 0-9, never used in training or validation), averaged over the
seeds at every timestep, for the learned policy (argmax), the paper's baselines and ours. What our
simulator does not model: the paper's test-bed workloads (Fig. 4's second row), so only the
synthetic panels are drawn. Every schedule goes through the validator; a run that leaves tasks
unfinished would count them as accumulated until the horizon (none did in the recorded runs).

    python benchmarks/tapfinger_accumulation.py --seeds 0-9 --out benchmarks/results
"""

from __future__ import annotations

import json
import statistics
import time

import numpy as np

from edgeopt import api
from edgeopt.bench import benchmark_parser, result_path
from edgeopt.tapfinger import generate

ALGOS = ["online", "optimus", "optimus_np", "tiresias", "random", "minimum", "greedy"]
PANELS = {
    "fig4b": {"clusters": 3, "arrival_rate": 2.0},
    "fig4d": {"clusters": 6, "arrival_rate": 4.0},
    "fig5": {"clusters": 6, "arrival_rate": 2.0},
}


def accumulation(inst, res) -> np.ndarray:
    """Tasks arrived and not finished at each timestep 0..horizon-1 (unfinished: until the horizon)."""
    H = inst.horizon
    delta = np.zeros(H + 1, dtype=np.int64)
    ends = {p["task"]: p["end"] for p in res.schedule["placements"]}
    for j, task in enumerate(inst.tasks):
        delta[min(task.arrival, H)] += 1
        delta[min(ends.get(j, H), H)] -= 1
    return np.cumsum(delta)[:H]


def main(argv: list[str] | None = None) -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-9")
    ap.add_argument("--noise", type=float, default=0.0, help="noise of the task types (paper preset)")
    ap.add_argument("--checkpoint", default="", help="evaluate this checkpoint directory as online (default: shipped)")
    args = ap.parse_args(argv)
    algos = [a for a in ALGOS if a in api.algorithms("tapfinger")]
    params = {"online": {"checkpoint": args.checkpoint}} if args.checkpoint else {}
    c0 = time.process_time()
    doc = {"benchmark": "tapfinger_accumulation", "seeds": args.seeds, "noise": args.noise, "panels": {}}
    for panel, setting in PANELS.items():
        curves: dict[str, list[np.ndarray]] = {a: [] for a in algos}
        unfinished = dict.fromkeys(algos, 0)
        for seed in args.seeds:
            inst = generate("paper", seed=seed, noise=args.noise, **setting)
            for a in algos:
                res = api.run(a, inst, seed=seed, **params.get(a, {}))
                assert not api.validate(inst, res), (a, seed)
                unfinished[a] += len(res.rejected)
                curves[a].append(accumulation(inst, res))
        H = min(len(c) for cs in curves.values() for c in cs)
        mean = {a: np.mean([c[:H] for c in cs], axis=0) for a, cs in curves.items()}
        last_arrival_mean = statistics.fmean(
            max(t.arrival for t in generate("paper", seed=s, noise=args.noise, **setting).tasks) for s in args.seeds)
        doc["panels"][panel] = {
            "regime": f"paper preset, {setting['clusters']} clusters 16/16, Poisson({setting['arrival_rate']:g}), "
                      f"64 tasks per cluster, noise {args.noise:g}; mean over seeds",
            "unfinished_tasks": unfinished,
            "mean_accumulation": {a: round(float(m.mean()), 3) for a, m in mean.items()},
            "peak_accumulation": {a: round(float(m.max()), 2) for a, m in mean.items()},
            "mean_last_arrival": last_arrival_mean,
            "curves": {a: [round(float(x), 2) for x in m] for a, m in mean.items()}}
        print(panel, {a: doc["panels"][panel]["mean_accumulation"][a] for a in algos}, flush=True)
    doc["cpu_s"] = round(time.process_time() - c0, 1)
    doc["relaxed"] = {a: api.algorithms("tapfinger")[a].relaxed for a in algos}
    path = result_path(args.out, "tapfinger_accumulation.json")
    path.write_text(json.dumps(doc) + "\n")
    plot(doc, result_path(args.out, "tapfinger_accumulation.png"))
    print("wrote", path)


def plot(doc: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(doc["panels"]), figsize=(5 * len(doc["panels"]), 3.8))
    for ax, (panel, d) in zip(np.atleast_1d(axes), doc["panels"].items(), strict=True):
        for a, ys in d["curves"].items():
            # the padding after the last task ends is flat zero: stop the curves a little after the last arrival
            end = min(len(ys), int(d["mean_last_arrival"]) + 40)
            label = f"{a}{' (relaxed)' if doc['relaxed'][a] else ''}"
            ax.plot(range(end), ys[:end], lw=1.6 if a == "online" else 1.0, label=label)
        ax.set_title(f"{panel}: {d['regime'].split(';')[0]}", fontsize=8)
        ax.set_xlabel("timestep (10 s)")
        ax.set_ylabel("accumulated tasks")
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
