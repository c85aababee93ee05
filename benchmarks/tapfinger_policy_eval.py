"""The learned TapFinger policy on held-out seeds against its ablation and the baselines (Fig. 4/5 style).

Held-out seeds: the benchmark's seeds (default 0-9) are never used in training (training instances
use seeds from 1,000,000 up, validation 900,000-900,003). Regimes (each stated in the JSON):

* ``small``: the ``small`` preset (2 clusters of 6 CPU / 4 GPU, 6 tasks, Poisson(1)), against the
  certified optimum (CP-SAT, proven optimal): ratio = total completion time / optimum.
* ``paper3`` (3 clusters of 16/16, Poisson(2), 192 tasks), ``paper6`` (6 clusters, Poisson(4), 384
  tasks) and ``paper6_rate2`` (6 clusters, Poisson(2), Fig. 5), each with noise off and on (+/-0.1).

Every baseline uses the agents' conflict rule (eq. (11)); ``optimus_ordered``, ``optimus_np_ordered``
and ``greedy_ordered`` (the earlier agent-order rule) show what that rule is worth. ``online``,
``online_bc`` (our ``reduced_bc`` recipe) and ``vanilla_marl`` get per-seed wins and ties against every other algorithm (total completion time).
Completion times are pooled over all tasks of all seeds (mean and median, as Fig. 4). The learned
policies take the most likely action (argmax). The inference time per decision is the
policy's wall time (graph building + network, all deciding agents together) per timestep with at
least one deciding agent, on the CPU the benchmark runs on (after a warm-up run that loads the
checkpoint), and the same in CPU time of the process (1 torch thread, the registered default; the
figure a loaded machine does not inflate). Relaxed (preemptive) baselines are marked; partial
results get no numbers.

``--durations paper`` gives the sensitive task the paper's 2-17 timesteps (what the ``full``
configuration trains on; default: the generator's 2-21), ``--settings`` and ``--algorithms`` run a
subset (``online`` is always run), and ``--name`` changes the output file's name.

    python benchmarks/tapfinger_policy_eval.py --seeds 0-9 --out benchmarks/results
    python benchmarks/tapfinger_policy_eval.py --checkpoint runs/full_cuda/best --durations paper \
        --settings paper3,paper6 --algorithms online,optimus,optimus_np,greedy,tiresias,random,minimum \
        --name tapfinger_policy_eval_full_cuda --out benchmarks/results
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from edgeopt import api
from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core.jsonio import write_json
from edgeopt.tapfinger import generate
from edgeopt.tapfinger.policy.registry import LAST_INFERENCE, LAST_INFERENCE_CPU
from edgeopt.tapfinger.policy.trainer import with_durations
from formulations.tapfinger import METHODS

ALGOS = ["online", "online_bc", "vanilla_marl", "optimus", "optimus_np", "tiresias", "tiresias_np", "random", "minimum",
         "greedy", "optimus_ordered", "optimus_np_ordered", "greedy_ordered"]
#: the learned policies: re-run even with --reuse, and given per-seed wins against every other algorithm
LEARNED = ("online", "online_bc", "vanilla_marl")
#: per-algorithm parameters (``--checkpoint`` evaluates another checkpoint as ``online``)
PARAMS: dict[str, dict] = {}
SETTINGS = {
    "paper3": {"clusters": 3, "arrival_rate": 2.0},
    "paper6": {"clusters": 6, "arrival_rate": 4.0},
    "paper6_rate2": {"clusters": 6, "arrival_rate": 2.0},
}


def run_setting(seeds: list[int], make, with_optimum: bool, reused: dict | None = None,
                algos: list[str] | None = None) -> dict:
    """The table of one setting; ``reused``: an earlier table of it, whose rows (other than the learned ones)
    are kept instead of re-running those algorithms (their per-seed totals feed the wins)."""
    algos = algos or ALGOS
    reused = {a: r for a, r in (reused or {}).items()
              if a in algos and a not in LEARNED and r.get("total_completion_per_seed")}
    rows = {a: {"times": [], "totals": [], "ratios": [], "partial": 0, "runtime_s": 0.0, "infer_ms": [],
                "infer_cpu_ms": []}
            for a in algos}
    for seed in seeds:
        inst = make(seed)
        opt = None
        if with_optimum:
            res = METHODS["cpsat"](inst, time_limit=60)
            assert res.status.value == "optimal", (seed, res.status)
            opt = res.objective
        for a in algos:
            if a in reused:
                continue
            res = api.run(a, inst, seed=seed, **PARAMS.get(a, {}))
            assert not api.validate(inst, res), (a, seed)
            rows[a]["runtime_s"] += res.runtime_s
            if a in LAST_INFERENCE:
                rows[a]["infer_ms"].append(LAST_INFERENCE.pop(a))
                rows[a]["infer_cpu_ms"].append(LAST_INFERENCE_CPU.pop(a))
            if res.status.value != "feasible":
                rows[a]["partial"] += 1
                continue
            rows[a]["times"] += [p["end"] - inst.tasks[p["task"]].arrival for p in res.schedule["placements"]]
            rows[a]["totals"].append(res.objective)
            if opt is not None:
                rows[a]["ratios"].append(res.objective / opt)
    relaxed = {a: api.algorithms("tapfinger")[a].relaxed for a in algos}
    table = {}
    for a, r in rows.items():
        t = r["times"]
        full = r["partial"] == 0
        table[a] = {
            "relaxed": relaxed[a],
            "mean_completion": round(statistics.fmean(t), 3) if t and full else None,
            "median_completion": statistics.median(t) if t and full else None,
            "partial_runs": r["partial"],
            "runtime_s_per_run": round(r["runtime_s"] / len(seeds), 4),
            "total_completion_per_seed": r["totals"] if full else None,
        }
        if with_optimum and r["ratios"] and full:
            table[a]["mean_ratio_to_optimum"] = round(statistics.fmean(r["ratios"]), 4)
            table[a]["max_ratio_to_optimum"] = round(max(r["ratios"]), 4)
        if r["infer_ms"]:
            table[a]["inference_ms_per_decision"] = round(statistics.fmean(r["infer_ms"]), 2)
            table[a]["inference_cpu_ms_per_decision"] = round(statistics.fmean(r["infer_cpu_ms"]), 2)
            table[a]["inference_cpu_ms_max_seed"] = round(max(r["infer_cpu_ms"]), 2)
    for a, r in reused.items():
        table[a] = r
        rows[a]["totals"] = r["total_completion_per_seed"]
    for a in LEARNED:  # per-seed head-to-head against every other algorithm
        if a not in rows:
            continue
        mine = rows[a]["totals"]
        if len(mine) == len(seeds):
            table[a]["wins_per_seed"] = {
                b: sum(x < y for x, y in zip(mine, rows[b]["totals"], strict=True))
                for b in rows if b != a and len(rows[b]["totals"]) == len(seeds)}
            table[a]["ties_per_seed"] = {
                b: sum(x == y for x, y in zip(mine, rows[b]["totals"], strict=True))
                for b in rows if b != a and len(rows[b]["totals"]) == len(seeds)}
    for a in ("online", "online_bc"):
        o, m = table.get(a), table.get("optimus")
        if o and m and o["mean_completion"] and m["mean_completion"]:
            table[a]["vs_optimus"] = {
                "mean_reduction_pct": round(100 * (1 - o["mean_completion"] / m["mean_completion"]), 1),
                "median_reduction_pct": round(100 * (1 - o["median_completion"] / m["median_completion"]), 1)}
    return table


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-9")
    ap.add_argument("--checkpoint", default="", help="evaluate this checkpoint directory as online (default: shipped)")
    ap.add_argument("--checkpoint-bc", default="", help="evaluate this checkpoint directory as online_bc (default: "
                    "shipped)")
    ap.add_argument("--reuse", type=Path, default=None, help="an earlier tapfinger_policy_eval.json with the same "
                    "seeds: keep its rows of every non-learned algorithm (only the learned ones are run)")
    ap.add_argument("--durations", choices=["code", "paper"], default="code",
                    help="sensitive-task durations of the paper settings (paper: 2-17 timesteps)")
    ap.add_argument("--settings", default=",".join(SETTINGS), help="comma-separated paper settings to run "
                    f"(of {', '.join(SETTINGS)}); the small regime runs only with all of them and the default durations")
    ap.add_argument("--algorithms", default=",".join(ALGOS), help="comma-separated algorithms (online always runs)")
    ap.add_argument("--name", default="tapfinger_policy_eval", help="output file name, without .json")
    args = ap.parse_args()
    settings = args.settings.split(",")
    algos = ["online"] + [a for a in args.algorithms.split(",") if a != "online"]
    unknown = [x for x in settings if x not in SETTINGS] + [a for a in algos if a not in ALGOS]
    if unknown:
        raise SystemExit(f"unknown settings or algorithms: {unknown}")
    old = json.loads(args.reuse.read_text()) if args.reuse else None
    if old is not None and old["seeds"] != args.seeds:
        raise SystemExit(f"--reuse: {args.reuse} has seeds {old['seeds']}, not {args.seeds}")
    if args.checkpoint:
        PARAMS["online"] = {"checkpoint": args.checkpoint}
    if args.checkpoint_bc:
        PARAMS["online_bc"] = {"checkpoint": args.checkpoint_bc}
    from edgeopt.tapfinger.policy.checkpoint import read_card
    from edgeopt.tapfinger.policy.registry import SHIPPED, available

    if not available():
        raise SystemExit("needs the rl extra and the shipped checkpoints")
    for name in LEARNED:  # warm-up: load the checkpoint once, outside the timings
        if name in algos:
            api.run(name, generate("small", seed=0), **PARAMS.get(name, {}))
    t0 = time.perf_counter()
    out = {"seeds": args.seeds, "durations": args.durations, "algorithms": algos, "checkpoints": {}, "settings": {}}
    for name, d in SHIPPED.items():
        if name not in algos:
            continue
        card = read_card(PARAMS.get(name, {}).get("checkpoint") or d)
        out["checkpoints"][name] = {k: card.get(k) for k in ("name", "steps", "episodes", "updates", "wall_time_s",
                                                              "hardware", "seed")}
    if set(settings) == set(SETTINGS) and args.durations == "code":
        out["settings"]["small"] = {
            "regime": "small preset: 2 clusters 6 CPU/4 GPU, 6 tasks, Poisson(1), noise off; vs certified optimum",
            "rows": run_setting(args.seeds, lambda s: generate("small", seed=s), True,
                                old["settings"]["small"]["rows"] if old else None, algos)}
    durations = {"code": "sensitive task 2-21 timesteps (the generator's)",
                 "paper": "sensitive task 2-17 timesteps (the paper's Sec. V-A)"}[args.durations]
    for name in settings:
        cfg = SETTINGS[name]
        for noise in (0.0, 0.1):
            key = f"{name}_noise{noise:g}"

            def make(s, c=cfg, z=noise):
                return with_durations(generate("paper", seed=s, noise=z, **c), args.durations)

            out["settings"][key] = {
                "regime": f"paper preset: {cfg['clusters']} clusters 16/16, Poisson({cfg['arrival_rate']:g}), "
                          f"64 tasks per cluster, noise {noise:g}, {durations}",
                "rows": run_setting(args.seeds, make, False, old["settings"][key]["rows"] if old else None, algos)}
            print(key, "done", round(time.perf_counter() - t0), "s", flush=True)
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    path = result_path(args.out, f"{args.name}.json")
    write_json(path, out, indent=1)
    fig = "tapfinger_policy_fig4.png" if args.name == "tapfinger_policy_eval" else f"{args.name}.png"
    _plot(out, result_path(args.out, fig))
    for key, s in out["settings"].items():
        print(f"\n{key}: {s['regime']}")
        for a, r in s["rows"].items():
            extra = {k: v for k, v in r.items() if k in ("mean_ratio_to_optimum", "inference_ms_per_decision",
                                                         "inference_cpu_ms_per_decision",
                                                         "wins_per_seed", "vs_optimus")}
            print(f"  {a:13s}{' (relaxed)' if r['relaxed'] else '':10s} mean {r['mean_completion']} "
                  f"median {r['median_completion']} partial {r['partial_runs']} {extra or ''}")
    print("wrote", path)


def _plot(out: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k in out["settings"] if k != "small"]
    fig, axes = plt.subplots(2, (len(keys) + 1) // 2, figsize=(4.2 * ((len(keys) + 1) // 2), 7.2))
    for ax, key in zip(axes.T.reshape(-1), keys, strict=False):
        rows = out["settings"][key]["rows"]
        names = [a for a in ALGOS if a in rows and rows[a]["mean_completion"] is not None]
        x = range(len(names))
        ax.bar([i - 0.2 for i in x], [rows[a]["mean_completion"] for a in names], 0.4, label="mean")
        ax.bar([i + 0.2 for i in x], [rows[a]["median_completion"] for a in names], 0.4, label="median")
        ax.set_xticks(list(x), names, rotation=60, fontsize=8)
        ax.set_title(key, fontsize=9)
        ax.set_ylabel("completion time (timesteps)")
    axes.reshape(-1)[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
