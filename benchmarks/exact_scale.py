"""Largest generated instance each exact model proves optimal within a time limit, per family.

    nice .venv/bin/python benchmarks/exact_scale.py --time-limit 60 --out benchmarks/results
    nice .venv/bin/python benchmarks/exact_scale.py --families hetero,okita --models milp --name x.json
    nice .venv/bin/python benchmarks/exact_scale.py --original ...   # the models without the valid inequalities

For every family the ``small`` generator is run with one fixed seed at a growing job count (the
other sizes grow with it as `LADDERS` says, so that every instance stays feasible and the
congestion stays comparable). Each exact model (``METHODS`` of ``formulations.<family>``) gets
``--time-limit`` seconds for the whole call (build + solve, wall clock: the limit the solvers
enforce) and climbs the ladder until it first fails to prove optimality; the largest size proved
optimal is reported. Every row also records the process CPU time of the call (all solver threads,
`resource.getrusage`) and the peak RSS, because the machine the numbers come from may be shared.

``--original`` passes ``strengthen=False`` to every model: the formulation without the
symmetry-breaking rows and valid inequalities of `formulations.strengthen` (same optimum; tested in
``tests/test_strengthened_models.py``). ``--paired`` runs both back to back on every rung (model
``milp/original``, ``milp/strengthened``, ...), so that on a shared machine both see the same load;
a run without either flag (``default``) measures the models as they are.

``--fixing`` runs every model that takes ``fix`` (reduced-cost fixing, `formulations.fixing`) without and
with it back to back (``milp/unfixed``, ``milp/fixed``); each row then records the time split
(``incumbent_s``, ``bound_s``, ``fixing_s``, model building and search) and the share of variables fixed.
``--rungs 12,16,24`` measures those rungs instead of climbing: every certified bound, every algorithm, a short
LNS (``--lns-time``) and each model, so that the gap between schedules and bounds is known before a method is
chosen to close it (``measure_rungs``). ``--after-failure K`` keeps a model climbing K rungs past its first failure (a harder rung is not always a
larger one); ``largest_optimal_jobs`` is still the largest rung proved before the first failure, and
``largest_proved_jobs`` the largest proved at all. Every row records the process CPU time of the call, and
``cpu_limit_s`` (``--cpu-limit``, default the time limit) says which proofs count as "within the limit of CPU"
(``largest_within_cpu``): on a machine shared with other jobs the wall clock measures the load as much as the
solver, so the wall-clock limit is only a guard then (``--time-limit`` larger than ``--cpu-limit``).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt.bench import benchmark_parser, children_peak_rss_mb, cpu_seconds, result_path
from edgeopt.core import ModelError, Status
from edgeopt.families import get_family
from edgeopt.services.lookup import method_takes

#: Per family: the job counts climbed, and the generator's other sizes as a function of the job count.
LADDERS: dict[str, tuple[list[int], object]] = {
    # Zhou et al.: 2 worker / 2 PS types; servers and slots grow with the jobs (the ladder of hetero_exact_scale.py)
    "hetero": ([4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 32, 40, 48],
               lambda n: {"servers": max(2, (n + 3) // 4), "horizon": max(20, 2 * n)}),
    # She et al.: 2 edge servers + cloud per 8 jobs, T = 24 + 2 slots per job
    "edgecloud": ([4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 112, 128],
                  lambda n: {"servers": max(2, (n + 7) // 8 * 2), "horizon": 24 + 2 * n}),
    # Wang et al.: edge servers grow with the jobs; T is the generator's (every algorithm finishes within it)
    "preemptive": ([4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96],
                   lambda n: {"servers": max(2, (n + 3) // 4)}),
    # Han et al.: 3 sites, T = 8 + one slot per job
    "okita": ([2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16],
              lambda n: {"servers": 3, "horizon": 8 + n}),
    # Li et al.: 2 clusters, T = 64 (the small preset) up to 24 tasks, then T = 2n + 16: at T = 64 the relaxation
    # has no schedule of 48 tasks and every list scheduler leaves tasks unfinished from 40 (80 holds 40, 112 holds 48)
    "tapfinger": ([4, 6, 8, 10, 12, 14, 16, 20, 24, 32, 40, 48],
                  lambda n: {} if 2 * n + 16 <= 64 else {"horizon": 2 * n + 16}),
}
SEED = 1



def _fixing_row(res) -> dict:
    """The time split and the fixing's record of a result (empty when it ran without fixing)."""
    out = {}
    timings = res.extra.get("timings") or {}
    keys = ("incumbent_s", "bound_s", "fixing_s", "windows_s", "model_s", "build_s", "translate_s", "solve_s", "lns_s",
            "search_s", "incumbent_cpu_s", "lns_cpu_s", "bound_cpu_s", "fixing_cpu_s", "model_cpu_s", "search_cpu_s")
    out["timings"] = {k: round(float(timings[k]), 3) for k in keys if k in timings}
    if res.extra.get("windows"):  # preemptive's per-job windows (its fixing): the incumbent and the cut
        out["windows"] = res.extra["windows"]
        out["variables"] = res.extra.get("variables")
    fx = res.extra.get("fixing")
    if fx:
        out["fixing"] = {k: fx[k] for k in ("incumbent", "incumbent_from", "bound", "cutoff", "variables", "fixed",
                                            "fixed_share", "rounds", "incumbents") if k in fx}
    return out


def climb(family: str, models: list[str], time_limit: float, variants: dict[str, dict], max_jobs: int | None,
          after_failure: int = 0, cpu_limit: float | None = None) -> dict:
    """Each model (in each variant: its solve options) up the ladder until its first failure to prove optimality
    (``after_failure`` more rungs after it).

    With several variants, they run back to back on each rung, so that on a shared machine they see the
    same load. A variant whose options the model does not take (``fix`` for a model without fixing) is
    skipped for that model.
    """
    import importlib

    spec = get_family(family)
    methods = importlib.import_module(f"formulations.{family}").METHODS
    counts, sizes = LADDERS[family]
    runs = [(m, v) for m in models for v in variants if all(method_takes(family, m, k) for k in variants[v])]
    rows: dict[str, list] = {f"{m}/{v}": [] for m, v in runs}
    largest: dict[str, int | None] = {f"{m}/{v}": None for m, v in runs}
    proved: dict[str, int | None] = {f"{m}/{v}": None for m, v in runs}
    within: dict[str, int | None] = {f"{m}/{v}": None for m, v in runs}
    failures: dict[str, int] = {f"{m}/{v}": 0 for m, v in runs}
    cpu_limit = time_limit if cpu_limit is None else cpu_limit
    alive = list(runs)
    for n in counts:
        if not alive or (max_jobs is not None and n > max_jobs):
            break
        kwargs = sizes(n)
        inst = spec.generate("small", seed=SEED, jobs=n, **kwargs)
        for m, v in list(alive):
            cpu0, t0 = cpu_seconds(), time.perf_counter()
            try:
                res = methods[m](inst, time_limit=time_limit, **variants[v])
                outcome = {"status": res.status.value, "objective": res.objective, "bound": res.bound}
            except ModelError as exc:  # a model whose solution fails its check: recorded, and the climb stops
                res, outcome = None, {"status": "error", "objective": None, "bound": None, "error": str(exc)}
            row = {"jobs": n, **kwargs, **outcome,
                   "wall_s": round(time.perf_counter() - t0, 2), "cpu_s": round(cpu_seconds() - cpu0, 2),
                   "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                   "child_peak_rss_mb": round(children_peak_rss_mb()),
                   "load_1min": round(os.getloadavg()[0], 2), **(_fixing_row(res) if res is not None else {})}
            key = f"{m}/{v}"
            rows[key].append(row)
            share = row.get("fixing", {}).get("fixed_share")
            print(f"{family:10s} {m:5s} {v:12s} {n:3d} jobs {kwargs}: {row['status']:10s} obj {row['objective']} "
                  f"bound {row['bound']} wall {row['wall_s']} s cpu {row['cpu_s']} s"
                  + (f" fixed {100 * share:.1f} %" if share is not None else ""), flush=True)
            if res is not None and res.status == Status.OPTIMAL:
                if not failures[key]:
                    largest[key] = n
                proved[key] = n
                if row["cpu_s"] <= cpu_limit:
                    within[key] = n
            else:
                failures[key] += 1
                if failures[key] > after_failure:
                    alive.remove((m, v))
    return {"largest_optimal_jobs": largest, "largest_proved_jobs": proved, "largest_within_cpu": within,
            "rows": rows}


def measure_rungs(family: str, counts: list[int], time_limit: float, lns_s: float) -> list[dict]:
    """Per rung of ``family``'s ladder: each certified bound (value, CPU s), every non-relaxed registered
    algorithm (objective or ``partial``), a short CP-SAT LNS from the best of them (``lns_s`` seconds), and each
    exact model within ``time_limit`` (status, objective, bound, CPU s): where the gap between the best
    schedule and the best bound is, before any method is chosen to close it."""
    import importlib

    from edgeopt import api
    from edgeopt.core.lowerbound import compute_bound

    spec = get_family(family)
    mod = importlib.import_module(f"formulations.{family}")
    _, sizes = LADDERS[family]
    out = []
    for n in counts:
        kwargs = sizes(n)
        inst = spec.generate("small", seed=SEED, jobs=n, **kwargs)
        row: dict = {"jobs": n, **kwargs, "horizon": int(inst.horizon), "bounds": {}, "algorithms": {}}
        for name, method in mod.LOWER_BOUNDS.items():
            cpu0 = cpu_seconds()
            res = compute_bound(family, method, inst, time_limit=time_limit)
            row["bounds"][name] = {"status": res.status.value, "bound": res.bound,
                                   "master_lp": (res.extra.get("solver") or {}).get("master_lp"),
                                   "cpu_s": round(cpu_seconds() - cpu0, 2)}
        for name, algo in api.algorithms(family).items():
            if algo.relaxed or algo.kind == "online":
                continue
            res = api.run(name, inst)
            row["algorithms"][name] = res.objective if res.status == Status.FEASIBLE else res.status.value
        if "cpsat" in getattr(mod, "NEIGHBOURHOODS", {}):
            cpu0 = cpu_seconds()
            try:
                res = api.solve(inst, method="cpsat", lns=True, warm_start="best", time_limit=lns_s)
                row["lns"] = {"objective": res.objective, "cpu_s": round(cpu_seconds() - cpu0, 2),
                              "from": res.extra["warm_start"]["algorithm"],
                              "warm_start": res.extra["warm_start"]["objective"]}
            except Exception as exc:  # noqa: BLE001 - no complete warm start on this rung: recorded
                row["lns"] = {"error": str(exc)}
        for m, fn in mod.METHODS.items():
            cpu0, t0 = cpu_seconds(), time.perf_counter()
            res = fn(inst, time_limit=time_limit)
            row[m] = {"status": res.status.value, "objective": res.objective, "bound": res.bound,
                      "cpu_s": round(cpu_seconds() - cpu0, 2), "wall_s": round(time.perf_counter() - t0, 2)}
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds=str(SEED))
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--families", default=",".join(LADDERS))
    ap.add_argument("--models", default="milp,cpsat")
    ap.add_argument("--max-jobs", type=int, default=None)
    ap.add_argument("--original", action="store_true", help="build the models without the issue-19 cuts")
    ap.add_argument("--paired", action="store_true",
                    help="run the original and the strengthened model back to back on every rung")
    ap.add_argument("--formulations", default="",
                    help="FORM,...: run the models that take formulation= once per formulation, back to back "
                         "(okita's milp: completion,slots)")
    ap.add_argument("--fixing", action="store_true",
                    help="run the models that take fix= without and with reduced-cost fixing, back to back")
    ap.add_argument("--after-failure", type=int, default=0, help="rungs climbed past a model's first failure")
    ap.add_argument("--cpu-limit", type=float, default=None,
                    help="CPU seconds within which a proof counts (default: the time limit)")
    ap.add_argument("--name", default="exact_scale.json")
    ap.add_argument("--rungs", default=None,
                    help="JOBS,...: measure these rungs of --families instead of climbing (bounds, algorithms, "
                         "a short LNS, each model), see measure_rungs")
    ap.add_argument("--lns-time", type=float, default=20.0, help="seconds of the LNS of --rungs")
    args = ap.parse_args()
    if args.rungs:
        counts = [int(x) for x in args.rungs.split(",")]
        path = result_path(args.out, args.name)
        out = {"setting": f"small generator, seed {SEED}, the rungs {counts} of LADDERS; wall-clock limits, CPU "
                          "seconds of each call (machine shared)", "time_limit_s": args.time_limit,
               "lns_time_s": args.lns_time, "families": {}}
        for fam in args.families.split(","):
            out["families"][fam] = measure_rungs(fam, counts, args.time_limit, args.lns_time)
            path.write_text(json.dumps(out, indent=2) + "\n")
        print("wrote", path)
        return
    if args.formulations:
        from formulations.okita.milp import FORMULATIONS

        for f in args.formulations.split(","):
            if f not in FORMULATIONS:
                ap.error(f"--formulations: {f!r} is not one of {', '.join(FORMULATIONS)}")
        variants = {f"formulation={f}": {"formulation": f} for f in args.formulations.split(",")}
    elif args.fixing:
        variants = {"unfixed": {"fix": False}, "fixed": {"fix": True}}
    elif args.paired:
        variants = {"original": {"strengthen": False}, "strengthened": {"strengthen": True}}
    elif args.original:
        variants = {"original": {"strengthen": False}}
    else:
        variants = {"default": {}}
    out = {"setting": f"small generator, seed {SEED}, growing job count (LADDERS); wall-clock limit per call; "
                      "machine shared (2 cores), CPU time per call recorded",
           "time_limit_s": args.time_limit, "cpu_limit_s": args.cpu_limit or args.time_limit,
           "after_failure": args.after_failure, "variants": variants, "families": {}}
    path = result_path(args.out, args.name)
    cpu0 = cpu_seconds()
    for fam in args.families.split(","):
        out["families"][fam] = climb(fam, args.models.split(","), args.time_limit, variants, args.max_jobs,
                                     args.after_failure, args.cpu_limit)
        out["total_cpu_s"] = round(cpu_seconds() - cpu0, 1)
        path.write_text(json.dumps(out, indent=2) + "\n")  # after each family: a partial run keeps its rows
    print("wrote", path, "total cpu", out["total_cpu_s"], "s")


if __name__ == "__main__":
    main()
