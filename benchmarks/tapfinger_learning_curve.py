"""Learning curve of a TapFinger training run: validation mean completion time against decisions.

Reads a run directory written by ``edgeopt train tapfinger`` (``metrics.csv``: one row per update,
the validation value where one was measured; ``card.json``: the training configuration) and
computes reference lines on the SAME validation instances (the configuration's ``eval_seeds`` at
its first setting, its tasks per cluster, noise and durations; argmax policy, unfinished tasks
counted until the horizon):

* ``optimus`` (relaxed, preemptive), ``optimus_np`` and ``greedy``: mean completion time per task
  (total completion time / tasks), averaged over the validation seeds as the trainer does;
* ``bound``: the family's certified lower bound (``api.bound``, method ``ti_lp``) divided by the
  tasks, averaged the same way (no schedule reaches below it).

The verdict numbers: the gap to Optimus at the first, best and last validation; a least-squares
fit of the validation value against log10(decisions) over the second half of the run (the change
per tenfold experience) and, if that slope is negative, the decisions at which the fitted line
would meet Optimus (an extrapolation, stated as one).

    python benchmarks/tapfinger_learning_curve.py --run runs/mid --out benchmarks/results \\
        --figure docs/img/tapfinger_learning_curve.png
    python benchmarks/tapfinger_learning_curve.py --run runs/full_cuda --name tapfinger_learning_curve_full_cuda \\
        --out benchmarks/results --figure docs/img/tapfinger_learning_curve_full_cuda.png
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import time
from pathlib import Path

from edgeopt import api
from edgeopt.bench import result_path

REFERENCES = ("optimus", "optimus_np", "greedy")


def read_curve(run: Path, eval_every: int) -> list[tuple[int, float]]:
    """(decisions, validation mean completion time) of every update that was validated (the rows between
    validations repeat the last value)."""
    with (run / "metrics.csv").open() as f:
        return [(int(r["steps"]), float(r["eval_mean_completion"])) for r in csv.DictReader(f)
                if int(r["update"]) % eval_every == 0 and r["eval_mean_completion"] not in ("", None)]


def references(cfg) -> dict[str, float]:
    """Mean completion time per task of the reference algorithms and the bound on the validation instances."""
    from edgeopt.tapfinger.policy.trainer import validation_instances

    vals: dict[str, list[float]] = {a: [] for a in (*REFERENCES, "bound")}
    for seed, inst in validation_instances(cfg):
        n = len(inst.tasks)
        for a in REFERENCES:
            res = api.run(a, inst, seed=seed)
            assert not api.validate(inst, res), (a, seed)
            assert res.status.value == "feasible", (a, seed, res.status)
            vals[a].append(res.objective / n)
        b = api.bound(inst, time_limit=120)
        assert b.status.value == "bound", b.status
        api.check_bound(inst, b)  # the certificate recomputes
        vals["bound"].append(b.bound / n)
    return {a: statistics.fmean(v) for a, v in vals.items()}


def fit(curve: list[tuple[int, float]]) -> dict[str, float] | None:
    """Least squares of value against log10(decisions) over the second half of the curve."""
    pts = curve[len(curve) // 2:]
    if len(pts) < 3:
        return None
    xs = [math.log10(d) for d, _ in pts]
    ys = [v for _, v in pts]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0
    return {"from_decisions": pts[0][0], "to_decisions": pts[-1][0], "points": len(pts),
            "slope_per_tenfold_decisions": slope, "intercept": my - slope * mx}


def summarise(curve: list[tuple[int, float]], refs: dict[str, float]) -> dict:
    opt = refs["optimus"]
    best = min(curve, key=lambda p: p[1])
    out = {"first": {"decisions": curve[0][0], "value": curve[0][1], "gap_to_optimus_pct": 100 * (curve[0][1] / opt - 1)},
           "best": {"decisions": best[0], "value": best[1], "gap_to_optimus_pct": 100 * (best[1] / opt - 1)},
           "last": {"decisions": curve[-1][0], "value": curve[-1][1], "gap_to_optimus_pct": 100 * (curve[-1][1] / opt - 1)}}
    f = fit(curve)
    if f is not None:
        s = f["slope_per_tenfold_decisions"]
        f["slope_pct_of_optimus_per_tenfold"] = 100 * s / opt
        if s < 0:
            f["extrapolated_decisions_to_reach_optimus"] = 10 ** ((opt - f["intercept"]) / s)
        out["fit_log10_second_half"] = f
    return out


def plot(curve: list[tuple[int, float]], refs: dict[str, float], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    ax.plot([d for d, _ in curve], [v for _, v in curve], "o-", ms=3, lw=1.2, color="C0",
            label="TapFinger policy (validation, argmax)")
    styles = {"optimus": ("C1", "--"), "optimus_np": ("C4", "-."), "greedy": ("C2", ":"), "bound": ("k", "-")}
    for a, v in refs.items():
        color, ls = styles[a]
        ax.axhline(v, color=color, ls=ls, lw=1.2, label=f"{'ti_lp lower bound' if a == 'bound' else a} ({v:.2f})")
    ax.set_xlabel("training decisions (agent actions)")
    ax.set_ylabel("mean completion time per task (timesteps)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, required=True, help="training run directory (metrics.csv, card.json)")
    ap.add_argument("--out", type=Path, default=None, help="directory for tapfinger_learning_curve.json")
    ap.add_argument("--figure", type=Path, default=None, help="PNG of the curve")
    ap.add_argument("--name", default="tapfinger_learning_curve", help="output file name, without .json")
    args = ap.parse_args(argv)
    from edgeopt.tapfinger.policy.checkpoint import read_card
    from edgeopt.tapfinger.policy.config import TrainConfig

    card = read_card(args.run)
    cfg = TrainConfig.model_validate(card["train_config"])
    curve = read_curve(args.run, cfg.eval_every)
    if not curve:
        raise SystemExit(f"{args.run}: no validated update in metrics.csv yet")
    c0 = time.process_time()
    refs = references(cfg)
    N, rate = cfg.settings[0]
    regime = (f"validation seeds {cfg.eval_seeds}: paper preset, {N} clusters 16/16, Poisson({rate:g}), "
              f"{cfg.jobs_per_cluster} tasks per cluster, noise {cfg.noise:g}, sensitive durations "
              f"'{cfg.sensitive_durations}'; mean completion time per task, seed-averaged")
    doc = {"benchmark": "tapfinger_learning_curve", "run": str(args.run), "config": cfg.name, "regime": regime,
           "decisions_total": card.get("steps"), "updates": card.get("updates"),
           "wall_time_s": card.get("wall_time_s"), "references": refs,
           "curve": [{"decisions": d, "validation_mean_completion": v} for d, v in curve],
           "summary": summarise(curve, refs), "reference_cpu_s": round(time.process_time() - c0, 2)}
    print(json.dumps({k: doc[k] for k in ("references", "summary")}, indent=1))
    if args.out:
        path = result_path(args.out, f"{args.name}.json")
        path.write_text(json.dumps(doc, indent=1) + "\n")
        print("wrote", path)
    if args.figure:
        plot(curve, refs, f"{cfg.name} run; validation: {N} clusters, Poisson({rate:g}), {cfg.jobs_per_cluster} tasks "
             f"per cluster, noise {cfg.noise:g}, {len(cfg.eval_seeds)} seeds", args.figure)
        print("wrote", args.figure)


if __name__ == "__main__":
    main()
