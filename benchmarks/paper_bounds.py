"""Ratio to the certified lower bound for the paper-scale tables of docs/reproduction/*.md.

    .venv/bin/python benchmarks/paper_bounds.py --only okita_fig9,okita_fig10,okita_fig14 --out benchmarks/results

For every instance behind a paper-scale table (regenerated from the same generator call and seed as the
benchmark that wrote the table), the family's certified lower bound (``api.bound``, method ``auto``) is
computed and re-checked from its certificate (``api.check_bound``, no solver); each algorithm's total is
then divided by it. The totals are read from the table's own result file (so the ratios are of exactly
the numbers in the table), except for tapfinger, whose result file keeps no per-seed totals: its
non-relaxed baselines are re-run (same seeds).

A ratio to a bound is an *upper estimate* of the ratio to the optimum (the optimum lies in [bound, best
schedule]); it is never averaged with a ratio to a proven optimum. Ratios are given only for complete
runs of non-relaxed algorithms (a relaxed, e.g. preemptive, baseline solves another program: the bound
does not bound it). Per cell: mean, max and n of the per-seed ratios, and the mean bound. CPU seconds
(``time.process_time``) of every bound are kept; the machine these numbers come from was shared.
Output: ``paper_bounds.json`` (merged into an existing file, one key per table).
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt import api
from edgeopt.bench import benchmark_parser, cpu_seconds, result_path
from edgeopt.core.family import instance_sha256

RESULTS = Path(__file__).resolve().parent / "results"
_CACHE: dict[str, dict[str, Any]] = {}


def certified(inst: Any, time_limit: float, max_size: int | None) -> dict[str, Any]:
    """The checked bound of ``inst`` (cached by instance hash), with its CPU seconds."""
    key = instance_sha256(inst)
    if key not in _CACHE:
        c0 = cpu_seconds()
        res = api.bound(inst, time_limit=time_limit, max_model_size=max_size)
        cpu = cpu_seconds() - c0
        value = api.check_bound(inst, res) if res.bound is not None else None
        cert = res.extra.get("certificate", {})
        _CACHE[key] = {"bound": value, "method": res.algorithm, "status": res.status.value, "cpu_s": round(cpu, 2),
                       "trivial": cert.get("trivial"), "converged": (res.extra.get("solver") or {}).get("converged")}
    return _CACHE[key]


def cell(family: str, instances: list[tuple[int, Any]], totals: dict[str, dict[int, Any]], time_limit: float,
         max_size: int | None) -> dict[str, Any]:
    """Per algorithm the mean / max / n of total / bound over the seeds with a complete run."""
    relaxed = {n: a.relaxed for n, a in api.algorithms(family).items()}
    bounds = {seed: certified(inst, time_limit, max_size) for seed, inst in instances}
    methods = sorted({b["method"] for b in bounds.values()})
    out: dict[str, Any] = {"ratio_against": f"{'/'.join(methods)} bound",
                           "bounds": {str(s): b for s, b in bounds.items()},
                           "bound_mean": statistics.fmean(b["bound"] for b in bounds.values() if b["bound"]),
                           "bound_cpu_s": round(sum(b["cpu_s"] for b in bounds.values()), 1), "ratio_to_bound": {}}
    for name, points in totals.items():
        if relaxed.get(name.split("[")[0], True):  # relaxed, or unknown: no ratio to this bound
            continue
        ratios = [float(points[s]) / bounds[s]["bound"] for s, _ in instances
                  if isinstance(points.get(s), (int, float)) and bounds[s]["bound"]]
        if ratios:
            out["ratio_to_bound"][name] = {"mean": round(statistics.fmean(ratios), 3), "max": round(max(ratios), 3),
                                           "n": len(ratios)}
    return out


def _points(entry: dict[str, Any]) -> dict[int, Any]:
    return {int(s): v for s, v in entry["points"].items()}


def okita(fig: str, key: str, make) -> Any:
    def run(args) -> dict[str, Any]:
        data = json.loads((RESULTS / "okita_paper.json").read_text())[fig][key]
        rows = {}
        for label, algos in data.items():
            if args.cells and label not in args.cells.split(","):
                continue
            insts = [(s, make(label, s)) for s in args.seeds]
            rows[label] = cell("okita", insts, {n: _points(v) for n, v in algos.items()}, args.time_limit,
                               args.max_size)
            print(fig, label, {n: r["mean"] for n, r in rows[label]["ratio_to_bound"].items()},
                  f"bound CPU {rows[label]['bound_cpu_s']} s", flush=True)
        return {"source": f"okita_paper.json [{fig}][{key}]", "cells": rows}
    return run


def _okita_kind(label: str, s: int) -> Any:
    kind, window = label.split("/W=")
    return api.generate("okita", "paper", seed=s, cost=kind, arrival_window=int(window))


def hetero(args) -> dict[str, Any]:
    rows = {}
    for preset in ("paper", "paper_congested"):
        run = json.loads((RESULTS / f"hetero_paper_totals_{preset}.json").read_text())["runs"][0]
        inst = api.generate("hetero", preset, seed=run["seed"], jobs=run["jobs"], servers=run["servers"],
                            horizon=run["horizon"])
        totals = {n: {run["seed"]: r["total"]} for n, r in run["rows"].items()
                  if r.get("status") == "feasible" and "total" in r}
        rows[preset] = cell("hetero", [(run["seed"], inst)], totals, args.time_limit, args.max_size)
        print("hetero", preset, rows[preset]["bound_mean"], rows[preset]["ratio_to_bound"], flush=True)
    return {"source": "hetero_paper_totals_<preset>.json", "cells": rows}


def tapfinger(args) -> dict[str, Any]:
    settings = {"paper3": {"clusters": 3, "arrival_rate": 2.0}, "paper6": {"clusters": 6, "arrival_rate": 4.0}}
    algos = [n for n, a in api.algorithms("tapfinger").items()
             if not a.relaxed and n in ("optimus_np", "tiresias_np", "random", "minimum", "greedy")]
    rows = {}
    for name, cfg in settings.items():
        for noise in (0.0, 0.1):
            insts = [(s, api.generate("tapfinger", "paper", seed=s, noise=noise, **cfg)) for s in args.seeds]
            totals: dict[str, dict[int, Any]] = {a: {} for a in algos}
            for s, inst in insts:
                for a in algos:
                    res = api.run(a, inst, seed=s)
                    if res.comparable and not api.validate(inst, res):
                        totals[a][s] = res.objective
            label = f"{name}_noise{noise:g}"
            rows[label] = cell("tapfinger", insts, totals, args.time_limit, args.max_size)
            print("tapfinger", label, {n: r["mean"] for n, r in rows[label]["ratio_to_bound"].items()}, flush=True)
    return {"source": "re-run of tapfinger_baselines.py's non-relaxed baselines", "cells": rows}


def preemptive(regime: str) -> Any:
    def run(args) -> dict[str, Any]:
        data = json.loads((RESULTS / f"preemptive_baselines_{regime}.json").read_text())
        seeds = list(range(int(data["seeds"]))) if isinstance(data["seeds"], int) else list(data["seeds"])
        rows = {}
        for axis, fixed in (("over_jobs", "fixed_servers"), ("over_servers", "fixed_jobs")):
            for value, algos in data[axis].items():
                jobs, servers = (int(value), data[fixed]) if axis == "over_jobs" else (data[fixed], int(value))
                label = f"J={jobs},S={servers}"
                if label in rows:
                    continue
                insts = [(s, api.generate("preemptive", "paper", seed=s, jobs=jobs, servers=servers, regime=regime))
                         for s in seeds]
                totals = {n: dict(zip(seeds, a["total_jct_per_seed"], strict=True)) for n, a in algos.items()
                          if a.get("rejected", 0) == 0 and len(a.get("total_jct_per_seed", [])) == len(seeds)}
                rows[label] = cell("preemptive", insts, totals, args.time_limit, args.max_size)
                print("preemptive", regime, label, {n: r["mean"] for n, r in rows[label]["ratio_to_bound"].items()},
                      flush=True)
        return {"source": f"preemptive_baselines_{regime}.json", "cells": rows}
    return run


def edgecloud(regime: str, preset: str) -> Any:
    def run(args) -> dict[str, Any]:
        data = json.loads((RESULTS / f"edgecloud_baselines_{regime}.json").read_text())
        rows = {}
        for point in data["vary_jobs"] + data["vary_servers"]:
            label = f"J={point['jobs']},S={point['servers']}"
            if label in rows:
                continue
            seeds = list(point["seeds"])
            insts = [(s, api.generate("edgecloud", preset, seed=s, jobs=point["jobs"], servers=point["servers"]))
                     for s in seeds]
            totals = {n: {s: t for s, t, st in zip(seeds, a["per_seed_total"], a["per_seed_status"], strict=True)
                          if st == "feasible"}
                      for n, a in point.items() if isinstance(a, dict) and "per_seed_total" in a}
            rows[label] = cell("edgecloud", insts, totals, args.time_limit, args.max_size)
            print("edgecloud", regime, label, {n: r["mean"] for n, r in rows[label]["ratio_to_bound"].items()},
                  flush=True)
        return {"source": f"edgecloud_baselines_{regime}.json", "cells": rows}
    return run


TABLES = {
    "okita_fig9": okita("fig9", "by_sites", lambda R, s: api.generate("okita", "paper", seed=s, servers=int(R),
                                                                       arrival_window=50)),
    "okita_fig10": okita("fig10", "by_jobs", lambda n, s: api.generate("okita", "paper", seed=s, jobs=int(n),
                                                                        arrival_window=50)),
    "okita_fig14": okita("fig14", "by_kind", _okita_kind),
    "hetero_totals": hetero,
    "tapfinger_baselines": tapfinger,
    "preemptive_paper": preemptive("paper"),
    "preemptive_far_cloud": preemptive("far_cloud"),
    "preemptive_short_chunks": preemptive("short_chunks"),
    "edgecloud_paper": edgecloud("paper", "paper"),
    "edgecloud_compact": edgecloud("compact", "paper_compact"),
}


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-9")
    ap.add_argument("--only", default=",".join(TABLES), help="comma-separated: " + ", ".join(TABLES))
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per bound (whole call)")
    ap.add_argument("--cells", default="", help="okita tables: only these cells (e.g. 50 for Fig. 9's R = 50)")
    ap.add_argument("--max-size", type=int, default=None, help="model-size budget of api.bound (nonzeros)")
    args = ap.parse_args()
    path = result_path(args.out, "paper_bounds.json")
    out = json.loads(path.read_text()) if path.exists() else {}
    for name in args.only.split(","):
        c0, w0 = cpu_seconds(), time.perf_counter()
        out[name] = TABLES[name](args)
        out[name].update(seeds=args.seeds, cpu_s=round(cpu_seconds() - c0, 1),
                         wall_s=round(time.perf_counter() - w0, 1),
                         peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1))
        path.write_text(json.dumps(out, indent=2, default=str) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
