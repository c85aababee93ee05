"""okita on the ITP weeks: how much of the interval is each job's own, and how much is congestion.

For every job of a week (built as `cross_family.py` builds it) alone on the empty sites, at zero prices:

* ``floor``: the whole-worker Lagrangian of the single-job problem (`formulations.okita.singlejob.lagrangian`,
  multipliers by `singlejob.best_multipliers`, 40 steps towards ``alone``): a lower bound on the job's cost
  in every schedule, whatever the other jobs do. `config_lp` at zero prices is the same kind of sum (over its
  jobs cut where the latency alone grows too large, with the multipliers it finds);
* ``alone``: the cheapest plan found for it alone (`candidate_plans` on a grid of 40 lengths, geometric from 1
  to the job's slots, plus the Lagrangian's own plan): what the job would cost if it had the sites to itself.

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
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from okita_config_lp import itp_week

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core.jsonio import write_json
from formulations.okita import singlejob as sj

GRID = 40
STEPS = 40


def job_split(inst, i: int) -> tuple[float, float]:
    """(floor, alone) of job ``i`` (module docstring): the plans first, then the multipliers by Polyak steps
    towards the cheapest plan's cost (as `config_lp` improves them)."""
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
    alone = min((sj.priced_cost(job, p, w, P) for p in plans), default=math.inf)
    _, lag = sj.best_multipliers(job, w, P, mu0, targets=[alone], steps=STEPS)
    return float(lag.value), float(alone)


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--windows", default="quiet,typical,busiest")
    ap.add_argument("--name", default="okita_week_split.json")
    args = ap.parse_args()
    out = {"setting": "ITP cluster06, 96 GPUs, okita as cross_family.py builds it, seed 0; each job alone at zero "
                      "prices; CPU seconds", "weeks": {}}
    path = result_path(args.out, args.name)
    for label in args.windows.split(","):
        week, inst = itp_week(label, args.seeds[0])
        t0 = time.process_time()
        per_job = [job_split(inst, i) for i in range(len(inst.jobs))]
        floor = math.fsum(f for f, _ in per_job)
        alone = math.fsum(a for _, a in per_job)
        out["weeks"][label] = {"week": week, "jobs": len(inst.jobs), "horizon": inst.horizon,
                               "sum_floor": round(floor, 3), "sum_alone": round(alone, 3),
                               "alone_over_floor": round(alone / floor, 4), "cpu_s": round(time.process_time() - t0, 1),
                               "per_job": [[round(f, 3), round(a, 3)] for f, a in per_job]}
        print(label, json.dumps({k: v for k, v in out["weeks"][label].items() if k != "per_job"}), flush=True)
        write_json(path, out)
    print("wrote", path)


if __name__ == "__main__":
    main()
