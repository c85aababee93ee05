"""Which side of a paper preset's wide interval is loose: the preset's generator at fewer jobs and servers.

Regime. The paper presets whose certified interval is still wide (issue 32's table): each row is the
family's generator with the preset's own parameters, seed 0 unless ``--seeds``, at ``jobs`` jobs and
``servers`` servers (edge servers or sites), chosen so that jobs per server stay those of the full preset
(its congestion); the last size of a row is the full preset where that runs within the budgets. The
horizon is the generator's own (every algorithm finishes within it), or ``--horizon`` per row.

On each instance:

* the certified bound (``api.bound``, method ``auto``, within ``--bound-time`` s, its certificate re-checked
  by ``api.check_bound``; `cross_family.best_bound`);
* every registered algorithm; the best validated complete schedule of a non-relaxed one is "best algorithm";
* the large-neighbourhood search from that algorithm (``api.solve(method=LNS, lns=True)``,
  ``--lns-time`` s), validated;
* the family's exact model (``EXACT``) with ``--exact-time`` s on the wall clock (reduced-cost fixing on where
  the model has it): proven optimum, or its incumbent and bound at the limit, or why it was refused. Where a
  valid schedule (the best algorithm's or the LNS's) meets the certified bound, that is the optimum too
  (``optimum_from`` says which proof).

Reported per instance: gap = (best - bound) / best for the algorithm and for the LNS, and where the optimum is
proven bound / optimum and best / optimum, i.e. how much of the interval is the bound's and how much the
schedules'. A row whose optimum is not proven says only how the interval changes with size.

    python benchmarks/preset_cuts.py --rows "preemptive:paper:regime=far_cloud:18/6,60/20,120/40"
        [--bound-method okita=config_lp] [--exact-method hetero=cpsat] [--bound-time 60] [--lns-time 180]
        [--exact-time 300] [--seeds 0] [--out benchmarks/results]

A row is ``family:preset[:option=value...]:jobs/servers[/horizon],...``. CPU seconds (time.process_time) are
reported next to each step: the machine may be shared.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from edgeopt import api
from edgeopt.bench import benchmark_parser, cpu_seconds, result_path
from edgeopt.core import InputError, ModelError
from edgeopt.core.jsonio import write_json

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("interval_diagnosis", HERE / "interval_diagnosis.py")
idg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(idg)
cf = idg.cf  # cross_family.py, as interval_diagnosis.py loads it

#: The exact model per family: the one that reaches furthest (docs/solvers.md, "Which exact method up to which
#: size"); preemptive's MILP cuts per-job windows, edgecloud's and hetero's fix by reduced cost.
EXACT = {"edgecloud": "cpsat", "hetero": "milp", "preemptive": "milp", "okita": "milp", "tapfinger": "milp"}
ROWS = ("preemptive:paper:regime=far_cloud:18/6,60/20,120/40,200/67;"
        "edgecloud:paper_compact:30/30,60/60,100/100")


def parse_row(text: str) -> tuple[str, str, dict[str, str], list[tuple[int, int, int | None]]]:
    """``family:preset[:k=v...]:n/s[/T],...`` -> (family, preset, options, sizes)."""
    parts = text.split(":")
    if len(parts) < 3:
        raise SystemExit(f"--rows: {text!r} is not family:preset[:option=value...]:jobs/servers,...")
    family, preset, *options, sizes = parts
    opts = dict(o.split("=", 1) for o in options)
    out = []
    for item in sizes.split(","):
        nums = [int(x) for x in item.split("/")]
        if len(nums) not in (2, 3) or not all(1 <= x <= 100_000 for x in nums):
            raise SystemExit(f"--rows: size {item!r} is not jobs/servers[/horizon] with counts in [1, 100000]")
        out.append((nums[0], nums[1], nums[2] if len(nums) == 3 else None))
    return family, preset, opts, out


def exact(inst: Any, family: str, time_limit: float, method: str | None = None, hint: Any = None,
          max_model_size: int | None = None) -> dict[str, Any]:
    method = method or EXACT[family]
    out: dict[str, Any] = {"method": method, "time_limit_s": time_limit, "hinted": hint is not None}
    if max_model_size is not None:
        out["max_model_size"] = max_model_size
    t0 = cpu_seconds()
    try:
        kw = {"hint": hint} if hint is not None else {}
        res = api.solve(inst, method=method, time_limit=time_limit, max_model_size=max_model_size, **kw)
    except (InputError, ModelError) as exc:
        out.update(error=str(exc).splitlines()[0][:400], cpu_s=round(cpu_seconds() - t0, 3))
        return out
    out.update(status=res.status.value, objective=res.objective, bound=res.bound, cpu_s=round(cpu_seconds() - t0, 3),
               valid=res.objective is not None and not api.validate(inst, res))
    out["proven"] = res.status.value == "optimal" and out["valid"]
    if isinstance(res.extra, dict) and isinstance(res.extra.get("windows"), dict):
        out["windows"] = res.extra["windows"]
    fixing = res.extra.get("fixing") if isinstance(res.extra, dict) else None
    if isinstance(fixing, dict) and "fixed_share" in fixing:
        out["fixed_share"] = fixing["fixed_share"]
    return out


def measure(family: str, preset: str, options: dict[str, str], jobs: int, servers: int, horizon: int | None,
            seed: int, args: Any) -> dict[str, Any]:
    inst = api.generate(family, preset, seed=seed, jobs=jobs, servers=servers, horizon=horizon, **options)
    row: dict[str, Any] = {"jobs": jobs, "servers": servers, "horizon": inst.horizon, "seed": seed}
    row.update(cf.best_bound(family, inst, args.bound_time, method=args.bound_method.get(family, "auto")))
    rows, best = idg.algorithms(inst, family)  # every registered algorithm, validated; the best non-relaxed one
    row["algorithms"], row["best"] = rows, best
    bound = row["bound"]
    if best is not None:
        row["gap_best"] = (best["objective"] - bound) / best["objective"]
        if args.lns_time > 0:
            row["lns"] = lns = cf.run_lns(inst, best["algorithm"], args.lns_time, bound, keep_schedule=args.exact_hint and args.exact_time > 0)
            if lns.get("valid") and lns.get("objective") is not None:
                row["gap_lns"] = (lns["objective"] - bound) / lns["objective"]
    opt = None
    if args.exact_time > 0:
        hint = None
        if args.exact_hint:  # the LNS's schedule, else the best algorithm's (run again: its schedule is not kept)
            hint = row.get("lns", {}).pop("schedule", None)
            if hint is None and best is not None:
                hint = api.run(best["algorithm"], inst).schedule
        row["exact"] = ex = exact(inst, family, args.exact_time, args.exact_method.get(family), hint=hint,
                                  max_model_size=args.exact_max_size)
        if ex.get("proven"):
            opt, row["optimum_from"] = ex["objective"], f"exact ({ex['method']})"
    found = [x["objective"] for x in (best, row.get("lns")) if x and x.get("objective") is not None
             and x.get("valid", True)]
    if opt is None and found and min(found) <= bound:
        # a valid schedule meets the certified bound: it is optimal, the certificate is the proof
        opt, row["optimum_from"] = min(found), "a schedule meets the certified bound"
    if opt is not None and opt > 0:
        row["optimum"] = opt
        row["bound_over_opt"] = bound / opt
        if best is not None:
            row["best_over_opt"] = best["objective"] / opt
        if row.get("lns", {}).get("valid"):
            row["lns_over_opt"] = row["lns"]["objective"] / opt
    return row


def main(argv: list[str] | None = None) -> int:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--rows", default=ROWS, help=f"rows separated by ';' (default {ROWS})")
    ap.add_argument("--bound-time", type=float, default=60.0)
    ap.add_argument("--lns-time", type=float, default=180.0, help="seconds of LNS per instance (0: none)")
    ap.add_argument("--exact-time", type=float, default=300.0, help="seconds of the exact model (0: none)")
    ap.add_argument("--bound-method", default="",
                    help="family=method,... : the certified bound's method per family (default: auto; e.g. "
                         "okita=config_lp, the okita intervals' bound)")
    ap.add_argument("--exact-method", default="",
                    help="family=method,... : the exact model per family (default: EXACT; e.g. hetero=cpsat, whose "
                         "interval model stays small where the time-indexed milp's does not)")
    ap.add_argument("--exact-hint", action="store_true",
                    help="hand the exact model the LNS's schedule (else the best algorithm's) as its hint; okita's "
                         "milp then builds only the completions a schedule as good can have")
    ap.add_argument("--exact-max-size", type=int, default=None,
                    help="the exact model's size budget in nonzeros (default: solve's); the guard judges the model "
                         "before any hint narrows it")
    ap.add_argument("--suffix", default="")
    args = ap.parse_args(argv)
    if args.exact_max_size is not None and not 1 <= args.exact_max_size <= 10**9:
        ap.error("--exact-max-size: in [1, 1e9] nonzeros")
    for name in ("bound_method", "exact_method"):
        try:
            setattr(args, name, dict(x.split("=", 1) for x in getattr(args, name).split(",") if x))
        except ValueError:
            ap.error(f"--{name.replace('_', '-')}: {getattr(args, name)!r} is not family=method,...")
    for name in ("bound_time", "lns_time", "exact_time"):
        if not 0 <= getattr(args, name) <= 3600:
            ap.error(f"--{name.replace('_', '-')}: in [0, 3600] s")
    rows = [parse_row(r) for r in args.rows.split(";") if r]
    report: dict[str, Any] = {"regime": "the paper presets' generators at fewer jobs and servers, jobs per server kept",
                              "bound_time_s": args.bound_time, "lns_time_s": args.lns_time,
                              "exact_time_s": args.exact_time, "exact": {**EXACT, **args.exact_method},
                              "exact_hint": args.exact_hint, "exact_max_size": args.exact_max_size,
                              "bound_method": args.bound_method, "lns_method": cf.LNS_METHOD,
                              "gap": "(best - bound) / best", "rows": []}
    path = result_path(args.out, f"preset_cuts{args.suffix}.json")
    for family, preset, options, sizes in rows:
        for seed in args.seeds:
            for jobs, servers, horizon in sizes:
                r = measure(family, preset, options, jobs, servers, horizon, seed, args)
                r.update(family=family, preset=preset, options=options)
                report["rows"].append(r)
                ex, best, lns = r.get("exact", {}), r.get("best") or {}, r.get("lns", {})
                print(f"{family} {preset} {options} n={jobs} s={servers} T={r['horizon']} seed={seed}: bound {r['bound']:.6g} "
                      f"best {best.get('objective')} ({best.get('algorithm')}) lns {lns.get('objective')} "
                      f"exact {ex.get('status', ex.get('error', '-'))} {ex.get('objective')} / {ex.get('bound')} "
                      f"[{ex.get('cpu_s')} s] bound/opt {r.get('bound_over_opt', float('nan')):.4f} "
                      f"best/opt {r.get('best_over_opt', float('nan')):.4f} gap lns {r.get('gap_lns', float('nan')):.4f}",
                      flush=True)
                write_json(path, report, what="--out")
    report["cpu_s_total"] = cpu_seconds()
    write_json(path, report, what="--out")
    print(f"wrote {path}; CPU {report['cpu_s_total']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
