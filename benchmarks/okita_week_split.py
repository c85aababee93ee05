"""okita on the ITP weeks: how much of the interval is each job's own, and how much is congestion.

For every job of a week (built as `cross_family.py` builds it; or of a generated instance, ``--preset paper``
with ``--jobs`` and ``--sites``) alone on the empty sites, at zero prices:

* ``floor``: the whole-worker Lagrangian of the single-job problem (`formulations.okita.singlejob.lagrangian`,
  multipliers by `singlejob.best_multipliers`, 40 steps towards ``alone``): a lower bound on the job's cost
  in every schedule, whatever the other jobs do. `config_lp` at zero prices is the same kind of sum (over its
  jobs cut where the latency alone grows too large, with the multipliers it finds);
* ``alone``: the cheapest plan found for it alone (`candidate_plans` on a grid of 40 lengths, geometric from 1
  to the job's slots, plus the Lagrangian's own plan): what the job would cost if it had the sites to itself.

With ``--exact-seconds S`` each job is also planned alone by the exact single-job MILP (`singlejob.exact`, over
the slots up to the cheapest plan's completion plus `EXTRA` slots, hinted with that plan, at most S seconds):
``alone_exact``, the cheaper of the two, is a closer estimate of the job's cost alone (the heuristic plans were
up to 22 % dearer on quiet-week jobs), and ``exact_bound``, HiGHS's dual bound of that MILP when it stops, another
lower bound on the job's cost alone (the sums use, per job, the larger of it and the floor: ``sum_best_floor``).

So [sum floor, sum alone] is the part of the interval that lies within single jobs (the single-job bound's
weakness or the plans': the exact single-job MILP closed none of five such jobs of the quiet week in 40-60 s),
and [sum alone, best schedule] is congestion: the jobs' plans do not fit together. The bound does not see
congestion at all (prices on per-site capacity did not raise it, docs/families/okita.md), so that part is
the bound's or the schedules', and no exact model reaches these instances to say which.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from okita_config_lp import itp_week

from edgeopt import api
from edgeopt.bench import benchmark_parser, cpu_seconds, result_path
from edgeopt.core.jsonio import write_json
from formulations.okita import singlejob as sj

GRID = 40
STEPS = 40
#: Slots the exact single-job MILP models after the cheapest plan's completion (as the okita LNS).
EXTRA = 6


def job_split(inst, i: int, exact_seconds: float = 0.0, workers_seconds: float = 0.0,
              grouped_seconds: float = 0.0) -> dict[str, float]:
    """``floor``, ``alone`` and, where asked, ``alone_workers``, ``alone_exact`` and ``exact_bound`` of job ``i``
    (module docstring): the plans first, then the multipliers by Polyak steps towards the cheapest plan's cost
    (as `config_lp` improves them).

    ``alone_workers`` (``workers_seconds`` > 0): the cheaper of ``alone`` and `singlejob.best_plan` with whole
    workers by the fixed-PS MILP (at most ``workers_seconds`` each, on its two best candidates), the planner
    of the okita LNS. ``alone_exact`` (``exact_seconds`` > 0): the cheapest of those and the exact single-job
    MILP's plan. ``exact_bound`` is a lower bound on the job's cost alone only when the MILP's slots reach
    every completion that could cost less than the cheapest plan: they end ``EXTRA`` slots after its
    completion, and the latency grows with the completion, so it holds when the latency alone at the first
    slot past them is above ``alone``; otherwise it is -inf."""
    job = sj.of_instance(inst, i)
    w = np.zeros((job.slots, job.n_sites))
    P = np.zeros_like(w)
    mu0 = sj.start_multipliers(job)
    lag0 = sj.lagrangian(job, w, P, mu0)
    ends = [lag0.completion] if 0 <= lag0.completion < job.slots else []
    plans = sj.candidate_plans(job, w, P, lengths=sj.length_grid(job.slots, GRID), ends=ends)
    if ends:
        own = sj.plan_from(job, w, lag0.completion, lag0.slot_value, lag0.slot_ps)
        if own is not None:
            plans.append(own)
    costs = [sj.priced_cost(job, p, w, P) for p in plans]
    alone = min(costs, default=math.inf)
    _, lag = sj.best_multipliers(job, w, P, mu0, targets=[alone], steps=STEPS)
    out = {"floor": float(lag.value), "alone": float(alone)}
    best_plan = plans[int(np.argmin(costs))] if plans else None
    cheapest = alone
    if workers_seconds > 0:
        plan, cost, _, _ = sj.best_plan(job, exact_workers=True, steps=0, time_limit=workers_seconds)
        if plan is not None and cost < cheapest:
            best_plan, cheapest = plan, cost
        out["alone_workers"] = float(cheapest)
    if exact_seconds > 0 and best_plan is not None:
        last = min(int(inst.horizon) - 1, best_plan.completion + EXTRA)
        short = sj.of_instance(inst, i, last=last)
        found = sj.exact(short, time_limit=exact_seconds, hint=best_plan, rel_gap=1e-4)
        out["alone_exact"] = float(min(cheapest, found.value))
        past = last + 1 - job.arrival  # the first completion the MILP leaves out, as a length
        ok = last == int(inst.horizon) - 1 or float(inst.jobs[i].cost(past + 1)) > cheapest
        out["exact_bound"] = float(found.bound) if ok else -math.inf
    if grouped_seconds > 0:
        found = sj.exact_grouped(job, time_limit=grouped_seconds, upper=cheapest)
        out["alone_grouped"] = float(min(cheapest, found.value))
        out["grouped_bound"] = float(found.bound)
        out["grouped_optimal"] = float(found.optimal)
    return out


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--windows", default="quiet,typical,busiest")
    ap.add_argument("--preset", default="", help="a generated okita instance instead of the weeks (e.g. paper)")
    ap.add_argument("--jobs", type=int, default=None, help="with --preset: jobs (the preset's by default)")
    ap.add_argument("--sites", type=int, default=None, help="with --preset: sites (the preset's by default)")
    ap.add_argument("--name", default="okita_week_split.json")
    ap.add_argument("--workers-seconds", type=float, default=0.0,
                    help="also plan each job alone as the LNS does, whole workers by the fixed-PS MILP for at most "
                         "this long per candidate (0: not)")
    ap.add_argument("--exact-seconds", type=float, default=0.0,
                    help="also plan each job alone by the exact single-job MILP for at most this long (0: not)")
    ap.add_argument("--grouped-seconds", type=float, default=0.0,
                    help="also plan each job alone by the grouped single-job MILP (singlejob.exact_grouped: equal "
                         "slots counted, not named) for at most this long, with its bound (0: not)")
    ap.add_argument("--every", type=int, default=1, help="only every this-many-th job (1: all)")
    args = ap.parse_args()
    for name in ("jobs", "sites"):
        if getattr(args, name) is not None and not 1 <= getattr(args, name) <= 100_000:
            ap.error(f"--{name}: in [1, 100000]")
    if not 1 <= args.every <= 1000:
        ap.error("--every: in [1, 1000]")
    for name in ("workers_seconds", "exact_seconds", "grouped_seconds"):
        if not 0 <= getattr(args, name) <= 3600:
            ap.error(f"--{name.replace('_', '-')}: in [0, 3600] s")
    where = (f"okita's {args.preset} generator, seed {args.seeds[0]}" if args.preset else
             "ITP cluster06, 96 GPUs, okita as cross_family.py builds it, seed 0")
    out = {"setting": f"{where}; each job alone at zero prices; CPU seconds", "weeks": {}}
    path = result_path(args.out, args.name)
    cases = [args.preset] if args.preset else args.windows.split(",")
    for label in cases:
        if args.preset:
            inst = api.generate("okita", args.preset, seed=args.seeds[0], jobs=args.jobs, servers=args.sites)
            week = {"preset": args.preset, "seed": args.seeds[0], "sites": int(inst.capacity.shape[0])}
        else:
            week, inst = itp_week(label, args.seeds[0])
        t0 = cpu_seconds()
        chosen = range(0, len(inst.jobs), args.every)
        per_job = [job_split(inst, i, args.exact_seconds, args.workers_seconds, args.grouped_seconds)
                   for i in chosen]
        floor = math.fsum(j["floor"] for j in per_job)
        alone = math.fsum(j["alone"] for j in per_job)
        entry = {"week": week, "jobs": len(inst.jobs), "measured_jobs": list(chosen), "horizon": inst.horizon,
                 "sum_floor": round(floor, 3), "sum_alone": round(alone, 3),
                 "alone_over_floor": round(alone / floor, 4)}
        if args.workers_seconds > 0:
            workers = math.fsum(j["alone_workers"] for j in per_job)
            entry.update(workers_seconds=args.workers_seconds, sum_alone_workers=round(workers, 3),
                         alone_workers_over_floor=round(workers / floor, 4))
        if args.exact_seconds > 0:
            exact = math.fsum(j["alone_exact"] for j in per_job)
            best_floor = math.fsum(max(j["floor"], j["exact_bound"]) for j in per_job)
            entry.update(exact_seconds=args.exact_seconds, sum_alone_exact=round(exact, 3),
                         alone_exact_over_floor=round(exact / floor, 4), sum_best_floor=round(best_floor, 3),
                         exact_bound_above_floor=sum(j["exact_bound"] > j["floor"] for j in per_job))
        if args.grouped_seconds > 0:
            grouped = math.fsum(j["alone_grouped"] for j in per_job)
            gbound = math.fsum(max(j["floor"], j["grouped_bound"]) for j in per_job)
            entry.update(grouped_seconds=args.grouped_seconds, sum_alone_grouped=round(grouped, 3),
                         sum_grouped_floor=round(gbound, 3), grouped_proven=int(sum(j["grouped_optimal"] for j in per_job)),
                         grouped_bound_above_floor=sum(j["grouped_bound"] > j["floor"] for j in per_job))
        out["weeks"][label] = {**entry, "cpu_s": round(cpu_seconds() - t0, 1),
                               "per_job": [{k: round(v, 3) if math.isfinite(v) else None for k, v in j.items()}
                                           for j in per_job]}
        print(label, json.dumps({k: v for k, v in out["weeks"][label].items() if k != "per_job"}), flush=True)
        write_json(path, out)
    print("wrote", path)


if __name__ == "__main__":
    main()
