"""Fig. 4-5 (testbed), Fig. 9-10 (total cost over R and I), Fig. 11-12 (sensitivity to alpha, beta) and
Fig. 14 (latency-cost kinds) of Han et al., at the paper's presets.

    .venv/bin/python benchmarks/okita_paper.py --seeds 0-9 --out benchmarks/results [--only fig9,fig14]

Regimes, stated with every number: ``paper`` preset (R = 50, T = 150, I = 100, Sec. V-B), arrivals
uniform in [0, W) with W = 50 (the preset; "randomly" in the paper) and W = 150 (a lighter load) where a
figure says so; ``testbed`` preset (9 sites, 10 jobs in the first 10 of 30 slots). A total cost is
averaged only over the seeds where the algorithm scheduled every job; ``partial`` runs are counted (with
their rejected jobs), never averaged. Each cell keeps every seed's total (``points``), the mean, the
sample standard deviation, min and max, and the latency / transfer / exchange split (means). Both OASiS
versions run: ``oasis`` (the paper's) and ``oasis_latency`` (ours). CPU time per run is kept too.
"""

from __future__ import annotations

import json
import resource
import statistics
import time

from edgeopt import api
from edgeopt.bench import benchmark_parser, cpu_seconds, result_path
from edgeopt.core import Status
from edgeopt.okita import FAMILY, generate

ALGOS = ("online", "oasis", "oasis_latency", "drf", "fifo")


def spread(values: list[float]) -> dict:
    """Mean, sample standard deviation, min and max of ``values`` (None when empty)."""
    if not values:
        return {"mean": None, "std": None, "min": None, "max": None}
    return {"mean": statistics.mean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values)}


def _cell(instances, algos=ALGOS, params=None) -> dict:
    out = {}
    for name in algos:
        tots, parts, partial, times, cpu = [], {"latency": [], "transfer": [], "exchange": []}, 0, [], []
        span, points = [], {}
        for seed, inst in instances:
            c0 = cpu_seconds()
            res = api.run(name, inst, seed=seed, **(params or {}))
            cpu.append(cpu_seconds() - c0)
            assert not FAMILY.check_result(inst, res), name
            times.append(res.runtime_s)
            if res.status != Status.FEASIBLE:
                partial += 1
                points[seed] = f"partial ({res.extra['rejected_count']} rejected)"
                continue
            points[seed] = res.objective
            tots.append(res.objective)
            for k, values in parts.items():
                values.append(res.extra[k])
            slots = [e["slot"] for js in res.schedule["jobs"] for e in js["slots"] if e["workers"]]
            span.append(max(slots) - min(slots) + 1)
        st = spread(tots)
        out[name] = {"total_mean": st["mean"], "total_std": st["std"], "total_min": st["min"],
                     "total_max": st["max"], "n": len(tots), "partial": partial, "points": points,
                     "split_mean": {k: statistics.mean(v) for k, v in parts.items() if v},
                     "makespan_mean": statistics.mean(span) if span else None,
                     "makespan_points": span,
                     "runtime_mean_s": round(statistics.mean(times), 3), "cpu_mean_s": round(statistics.mean(cpu), 3)}
    return out


def _show(tag, cell):
    print(tag, {n: (None if v["total_mean"] is None else f"{v['total_mean']:.4g}", v["partial"])
                for n, v in cell.items()}, flush=True)


def fig4(seeds):
    rows = {}
    insts = [(s, generate("testbed", seed=s)) for s in seeds]
    rows["testbed"] = _cell(insts)
    _show("fig4 testbed", rows["testbed"])
    return {"setting": "testbed preset: 9 sites, 10 jobs arriving in slots 0-9, T = 30", "cells": rows}


def fig9(seeds, window=50):
    rows = {}
    for R in (10, 20, 30, 40, 50):
        rows[R] = _cell([(s, generate("paper", seed=s, servers=R, arrival_window=window)) for s in seeds])
        _show(f"fig9 R={R}", rows[R])
    return {"setting": f"paper preset, I = 100, T = 150, arrivals in [0, {window})", "by_sites": rows}


def fig10(seeds, window=50):
    rows = {}
    for I in (20, 40, 60, 80, 100):
        rows[I] = _cell([(s, generate("paper", seed=s, jobs=I, arrival_window=window)) for s in seeds])
        _show(f"fig10 I={I}", rows[I])
    return {"setting": f"paper preset, R = 50, T = 150, arrivals in [0, {window})", "by_jobs": rows}


def fig11_12(seeds):
    insts = [(s, generate("paper", seed=s)) for s in seeds]
    alphas = {}
    for a1, a2 in ((1, 1), (1, 2), (2, 1), (1, 4), (4, 1)):
        alphas[f"{a1}:{a2}"] = _cell(insts, ("online",), {"alpha1": float(a1), "alpha2": float(a2)})["online"]
        print("fig11", a1, a2, f"{alphas[f'{a1}:{a2}']['total_mean']:.5g}", flush=True)
    betas = {}
    for b in ((1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2), (1, 0, 1), (0, 1, 0)):
        key = ":".join(map(str, b))
        betas[key] = _cell(insts, ("online",), dict(zip(("beta1", "beta2", "beta3"), map(float, b), strict=True)))[
            "online"]
        print("fig12", key, f"{betas[key]['total_mean']:.5g}", flush=True)
    return {"setting": "paper preset (R = 50, I = 100, T = 150, arrivals in [0, 50)), Okita only",
            "alpha1:alpha2": alphas, "beta1:beta2:beta3": betas}


def fig14(seeds, kinds=("exponential", "linear", "piecewise"), windows=(50, 150)):
    rows = {}
    for window in windows:
        for kind in kinds:
            key = f"{kind}/W={window}"
            rows[key] = _cell([(s, generate("paper", seed=s, cost=kind, arrival_window=window)) for s in seeds])
            _show(f"fig14 {key}", rows[key])
    return {"setting": "paper preset (R = 50, I = 100, T = 150); arrivals in [0, W)", "by_kind": rows}


FIGS = {"fig4": fig4, "fig9": fig9, "fig10": fig10, "fig11_12": fig11_12, "fig14": fig14}


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-9")
    ap.add_argument("--only", default=",".join(FIGS), help="comma-separated figures: " + ", ".join(FIGS))
    ap.add_argument("--kinds", default="exponential,linear,piecewise", help="fig14: latency-cost kinds")
    ap.add_argument("--windows", default="50,150", help="fig14: arrival windows W")
    args = ap.parse_args()
    FIGS["fig14"] = lambda seeds: fig14(seeds, tuple(args.kinds.split(",")),
                                        tuple(int(w) for w in args.windows.split(",")))
    out = {"seeds": args.seeds}
    path = result_path(args.out, "okita_paper.json")
    if path.exists():
        out.update(json.loads(path.read_text()))
    for name in args.only.split(","):
        t0, c0 = time.perf_counter(), cpu_seconds()
        out[name] = FIGS[name](args.seeds)
        out[name]["wall_s"] = round(time.perf_counter() - t0, 1)
        out[name]["cpu_s"] = round(cpu_seconds() - c0, 1)
        out[name]["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        path.write_text(json.dumps(out, indent=2, default=str) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
