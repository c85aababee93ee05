"""Learning curves of the learned TapFinger policy's training recipes on the same axes, with reference lines.

Regime: the runs' own validation instances (the first training setting, the validation seeds of their
configuration, never the benchmark's held-out seeds 0-9), argmax policy, mean completion time per task (an
unfinished task counts until the horizon). Each validation evaluation of a run directory (``metrics.csv``,
and for the ``bc`` recipe the cloning rounds' ``imitation.csv``) is placed at its agent decisions (for ``bc``:
labelled cloning decisions, then MAPPO's) and at the CPU seconds of the training process. Reference lines on
the same instances: ``optimus``, ``greedy`` and ``greedy_ordered`` (mean completion per task), and the certified
lower bound (``ti_lp_hull``, checked by `check_bound`) divided by the tasks. Every run must share the
validation setting and seeds.

    python benchmarks/tapfinger_recipes.py --run scratch=runs/scratch --run bc=runs/reduced_bc \\
        --out benchmarks/results
"""

from __future__ import annotations

import csv
import json
import statistics
import time
from pathlib import Path

from edgeopt import api
from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core.jsonio import write_json
from edgeopt.tapfinger.policy.config import TrainConfig
from edgeopt.tapfinger.policy.trainer import validation_instances

REFERENCES = ("optimus", "greedy", "greedy_ordered")


def curve(run: Path) -> list[dict]:
    """(phase, decisions, cpu_s, wall_s, eval) of every validation evaluation of a run directory."""
    points = []
    im = run / "imitation.csv"
    if im.exists():
        for r in csv.DictReader(im.open()):
            if r["round"] == "eval" and r["eval_mean_completion"]:
                points.append({"phase": "cloning", "decisions": int(r["steps"]), "cpu_s": float(r["cpu_s"]),
                               "wall_s": float(r["wall_s"]), "eval": float(r["eval_mean_completion"])})
    last = None
    for r in csv.DictReader((run / "metrics.csv").open()):
        ev = r.get("eval_mean_completion", "")
        if ev and ev != last and r.get("cpu_s"):
            points.append({"phase": "mappo", "decisions": int(r["steps"]), "cpu_s": float(r["cpu_s"]),
                           "wall_s": float(r["wall_s"]), "eval": float(ev)})
        last = ev
    return points


def references(cfg: TrainConfig, bound_time: float) -> dict:
    """Mean completion per task of the reference algorithms and the certified bound per task, averaged over the
    validation instances."""
    out: dict[str, list[float]] = {a: [] for a in (*REFERENCES, "bound")}
    for seed, inst in validation_instances(cfg):
        n = len(inst.tasks)
        for a in REFERENCES:
            res = api.run(a, inst, seed=seed)
            assert not api.validate(inst, res) and res.status.value == "feasible", (a, seed)
            out[a].append(res.objective / n)
        b = api.bound(inst, method="ti_lp_hull", time_limit=bound_time)
        assert b.bound is not None and api.check_bound(inst, b) >= b.bound - 1e-6 * max(1.0, b.bound), seed
        out["bound"].append(b.bound / n)
    return {k: round(statistics.fmean(v), 4) for k, v in out.items()}


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, x in zip(axes, ("decisions", "cpu_s"), strict=True):
        for name, pts in report["curves"].items():
            ax.plot([p[x] for p in pts], [p["eval"] for p in pts], marker=".", label=name)
        for k, style in zip((*REFERENCES, "bound"), (":", "--", "-.", "-"), strict=True):
            ax.axhline(report["references"][k], color="grey", linestyle=style, linewidth=1, label=k)
        ax.set_xlabel("agent decisions" if x == "decisions" else "CPU seconds")
        ax.set_yscale("log")  # the scratch recipe's early spikes would flatten the rest
    axes[0].set_ylabel("mean completion time per task (validation)")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0])
    ap.add_argument("--run", action="append", required=True, help="NAME=DIR of a training run (repeatable)")
    ap.add_argument("--bound-time", type=float, default=120.0, help="seconds for each validation instance's bound")
    ap.add_argument("--name", default="tapfinger_recipes")
    args = ap.parse_args()
    runs = dict(r.split("=", 1) for r in args.run)
    cfgs = {k: TrainConfig.model_validate(json.loads((Path(d) / "card.json").read_text())["train_config"])
            for k, d in runs.items()}
    first = next(iter(cfgs.values()))
    for k, c in cfgs.items():
        assert (c.settings[0], c.eval_seeds, c.jobs_per_cluster, c.noise) == \
            (first.settings[0], first.eval_seeds, first.jobs_per_cluster, first.noise), f"{k}: another validation set"
    t0 = time.perf_counter()
    report = {
        "regime": (f"validation instances: paper preset, {first.settings[0][0]} clusters, Poisson({first.settings[0][1]}), "
                   f"{first.jobs_per_cluster} tasks per cluster, noise {first.noise}, seeds {first.eval_seeds}; "
                   "argmax policy; mean completion time per task"),
        "runs": {k: {"dir": str(d), "config": cfgs[k].name, "init": cfgs[k].init} for k, d in runs.items()},
        "curves": {k: curve(Path(d)) for k, d in runs.items()},
        "references": references(first, args.bound_time),
    }
    report["wall_s"] = round(time.perf_counter() - t0, 1)
    path = result_path(args.out, f"{args.name}.json")
    write_json(path, report)
    plot(report, path.with_suffix(".png"))
    print(json.dumps(report["references"]), {k: v[-1] if v else None for k, v in report["curves"].items()})


if __name__ == "__main__":
    main()
