"""Shared body of the ``benchmarks/<family>_gap.py`` scripts: a certified interval [bound, best schedule].

For each regime (a preset plus generator options) and seed: the family's certified lower bound
(``api.bound``, method ``auto``, its certificate re-checked by ``api.check_bound``), then every
listed registered algorithm that schedules the real problem (never a relaxed one); the best complete
schedule (status feasible, every job scheduled, validated) is the upper bound; with
``--warm-start-method M`` the exact method M then runs from it (``solve --warm-start``) and its
incumbent counts when better. The gap is
(best - bound) / best. Each step reports CPU seconds (``edgeopt.bench.cpu_seconds``: with the HiGHS child
processes) and the process's peak RSS; the machine these numbers come from was shared, so CPU time is the number to compare.
Results are JSON, one file per family, in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt import api
from edgeopt.bench import cpu_seconds


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_regime(family: str, regime: str, preset: str, options: dict[str, Any], seed: int, algorithms: list[str],
               time_limit: float, polish: str | None = None, polish_time: float = 120.0) -> dict[str, Any]:
    """One row: the bound, each algorithm's objective, the best complete one and the gap."""
    inst = api.generate(family, preset, seed=seed, **options)
    c0, w0 = cpu_seconds(), time.perf_counter()
    res = api.bound(inst, time_limit=time_limit)
    bound_cpu, bound_wall = cpu_seconds() - c0, time.perf_counter() - w0
    c0 = cpu_seconds()
    checked = api.check_bound(inst, res) if res.bound is not None else None
    check_cpu = cpu_seconds() - c0
    cert = res.extra.get("certificate", {})
    row: dict[str, Any] = {
        "family": family, "regime": regime, "preset": preset, "options": options, "seed": seed,
        "jobs": len(getattr(inst, "jobs", None) or getattr(inst, "tasks", [])), "status": res.status.value,
        "method": res.algorithm, "bound": res.bound, "trivial_bound": cert.get("trivial"),
        "relaxation_value": cert.get("relaxation_value"), "solver": res.extra.get("solver"),
        "bound_cpu_s": round(bound_cpu, 2), "bound_wall_s": round(bound_wall, 2),
        "check_cpu_s": round(check_cpu, 2), "check_value": checked, "algorithms": {},
    }
    best = None
    for name in algorithms:
        c0 = cpu_seconds()
        run = api.run(name, inst, seed=0)
        cpu = cpu_seconds() - c0
        valid = not api.validate(inst, run)
        row["algorithms"][name] = {"status": run.status.value, "objective": run.objective, "valid": valid,
                                   "rejected": run.extra.get("rejected_count", 0), "cpu_s": round(cpu, 2)}
        if valid and run.comparable and (best is None or run.objective < best[1]):
            best = (name, run.objective)
    if polish and best is not None:
        # solve --warm-start: the exact method from the best algorithm's schedule (hints where supported)
        c0 = cpu_seconds()
        try:
            sol = api.solve(inst, method=polish, time_limit=polish_time, warm_start=best[0])
            entry = {"status": sol.status.value, "objective": sol.objective, "solver_bound": sol.bound,
                     "warm_start": sol.extra.get("warm_start"), "valid": not api.validate(inst, sol)}
            if entry["valid"] and sol.objective is not None and sol.objective < best[1]:
                best = (f"solve {polish} --warm-start {best[0]}", sol.objective)
        except Exception as exc:  # noqa: BLE001 - a refused model is reported, not fatal
            entry = {"error": f"{exc.__class__.__name__}: {exc}"}
        entry["cpu_s"] = round(cpu_seconds() - c0, 2)
        row["warm_started_solve"] = entry
    row["best_algorithm"], row["best_objective"] = best if best else (None, None)
    if best and res.bound is not None:
        row["gap"] = (best[1] - res.bound) / best[1]
        if cert.get("trivial") is not None:
            row["gap_vs_trivial"] = (best[1] - cert["trivial"]) / best[1]
        row["ratio_against"] = f"{res.algorithm} bound"  # a ratio to a certified bound, never to an optimum
        row["ratio_to_bound"] = {n: a["objective"] / res.bound for n, a in row["algorithms"].items()
                                 if a["status"] == "feasible" and a["valid"] and res.bound > 0}
    row["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    return row


def schedulers(family: str) -> list[str]:
    """Every registered algorithm of ``family`` that schedules the real problem (relaxed ones excluded)."""
    return [name for name, algo in api.algorithms(family).items() if not algo.relaxed]


def main(family: str, regimes: dict[str, tuple[str, dict[str, Any]]], default_algorithms: list[str] | None = None,
         argv: list[str] | None = None) -> list[dict[str, Any]]:
    """``default_algorithms`` None: every non-relaxed registered algorithm (`schedulers`)."""
    if default_algorithms is None:
        default_algorithms = schedulers(family)
    ap = argparse.ArgumentParser(description=f"{family}: certified bound, best schedule and gap per regime")
    ap.add_argument("--regimes", default=",".join(regimes), help="comma-separated: " + ", ".join(regimes))
    ap.add_argument("--seeds", default="0", help="comma-separated seeds")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds for each bound (whole call)")
    ap.add_argument("--algorithms", default=",".join(default_algorithms), help="registered algorithms to run")
    ap.add_argument("--out", default="", help="folder for <family>_gap.json")
    ap.add_argument("--warm-start-method", default="", help="also run `solve --method M --warm-start <best algorithm>`")
    ap.add_argument("--warm-start-time", type=float, default=120.0, help="seconds for that solve")
    args = ap.parse_args(argv)
    rows = []
    for regime in args.regimes.split(","):
        preset, options = regimes[regime]
        for seed in (int(s) for s in args.seeds.split(",")):
            row = run_regime(family, regime, preset, options, seed, [a for a in args.algorithms.split(",") if a],
                             args.time_limit, args.warm_start_method or None, args.warm_start_time)
            rows.append(row)
            gap = row.get("gap")
            print(f"{family} {regime} seed {seed}: bound {row['bound']} ({row['method']}, {row['bound_cpu_s']} s CPU), "
                  f"trivial {row['trivial_bound']}, best {row['best_algorithm']} {row['best_objective']}, "
                  f"gap {'-' if gap is None else f'{gap:.2%}'}", flush=True)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / f"{family}_gap.json").write_text(json.dumps(rows, indent=2, default=str))
    return rows
