"""Fig. 2 of Zhou et al. at 1,000 jobs: total weighted completion time of every algorithm, in two regimes,
and the measured causes of A_online's gap.

    .venv/bin/python benchmarks/hetero_paper_totals.py                 # seed 0, paper + paper_congested
    .venv/bin/python benchmarks/hetero_paper_totals.py --seeds 0-2 --jobs 300 --no-every-slot
    .venv/bin/python benchmarks/hetero_paper_totals.py --out benchmarks/results
    .venv/bin/python benchmarks/hetero_paper_totals.py --presets paper --only online_every_slot \
        --suffix _every_slot --out benchmarks/results       # the slow variant (about 10 min) alone

Regimes: ``paper`` (Sec. 7 setting, 150 servers, T = 300 as in Fig. 2, capacity fraction drawn in
[0.2, 0.5], arrivals uniform in [0, T/4)) and ``paper_congested`` (the same jobs, arrivals spread over
[0, T/2), capacity at the paper's lower fraction 0.2). Algorithms: every registered one with its defaults,
plus ``online`` with the literal window start (``window=alpha_tau``) and the density order, FIFO with
K = 5, 15, 30, and the preemptive baselines with a resumption overhead of one slot (3,600 s). A result
that rejected jobs (``partial``) gets no total comparison and no rank: the table shows "k rejected".

Named bound: LB = sum_j w_j (a_j + shortest d_j), each job alone on the idle cluster in its fastest
configuration; every total is also given over LB.

Causes (`online` only; the paper's "at least 30 % better" does not reproduce). For job j with arrival
a_j and start s_j: r_j = the first decision slot >= a_j (round i decides at tau_i - 1); l_j = the first
decision slot >= r_j whose round window tau_i is at least the job's shortest duration (A_dual cannot
place it in a shorter window). Then sum_j w_j (s_j - a_j) splits into
``boundary`` = sum w_j (r_j - a_j) (waiting for the next round), ``round_length`` = sum w_j (min(l_j,
s_j) - r_j) (waiting for a round long enough), and ``prices_capacity`` = the rest (prices and capacity
push the start later). The same table gives every algorithm's weighted wait and weighted run time
sum_j w_j d_j (for preemptive ones: completion - first start, suspensions included).

Writes ``hetero_paper_totals_<preset>.json`` (one file per preset) to ``--out``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import Status, jsonio, registered
from edgeopt.hetero import FAMILY, generate
from edgeopt.hetero.mincost import job_configs
from edgeopt.hetero.online import decision_slots

VARIANTS = [
    ("online[window=alpha_tau]", "online", {"window": "alpha_tau"}),
    ("online[order=density]", "online", {"order": "density"}),
    ("fifo[workers=5]", "fifo", {"workers": 5}),
    ("fifo[workers=30]", "fifo", {"workers": 30}),
    ("tiresias[overhead_s=3600]", "tiresias", {"overhead_s": 3600.0}),
    ("antman[overhead_s=3600]", "antman", {"overhead_s": 3600.0}),
]


def shortest(inst) -> np.ndarray:
    return np.array([int(job_configs(inst, j).d.min()) for j in inst.jobs])


def decompose(inst, schedule: dict, dmin: np.ndarray, with_rounds: bool) -> dict:
    """Weighted arrival, wait (split into its causes for `online`) and run time of a schedule."""
    w = np.array([j.weight for j in inst.jobs])
    a = np.array([j.arrival for j in inst.jobs])
    out = {"arrival": 0.0, "wait": 0.0, "run": 0.0}
    rounds = decision_slots(inst.horizon)
    slots = np.array([r.slot for r in rounds])
    taus = np.array([r.tau for r in rounds])
    causes = {"boundary": 0.0, "round_length": 0.0, "prices_capacity": 0.0}
    for js in schedule["jobs"]:
        j = js["job"]
        s, e = js["start"], js["start"] + js["duration"]
        out["arrival"] += w[j] * a[j]
        out["wait"] += w[j] * (s - a[j])
        out["run"] += w[j] * (e - s)
        if with_rounds:
            after = np.flatnonzero(slots >= a[j])
            r = int(slots[after[0]]) if len(after) else int(a[j])
            long_enough = [int(slots[k]) for k in after if taus[k] >= dmin[j]]
            lj = long_enough[0] if long_enough else inst.horizon
            lj = min(lj, s)
            r = min(r, s)  # a job forced by the deadline rule may start before
            causes["boundary"] += w[j] * (r - a[j])
            causes["round_length"] += w[j] * max(0, lj - r)
            causes["prices_capacity"] += w[j] * (s - max(r, lj))
    if with_rounds:
        out["causes"] = causes
    return out


def run_regime(preset: str, seed: int, jobs: int, horizon: int, every_slot: bool,
               only: set[str] | None = None) -> dict:
    inst = generate(preset, seed=seed, jobs=jobs, horizon=horizon)
    specs = registered("hetero")
    names = sorted(n for n in specs if every_slot or n != "online_every_slot")
    runs = [(n, n, {}) for n in names] + VARIANTS
    if only:
        runs = [r for r in runs if r[0] in only]
    dmin = shortest(inst)
    lb = float(sum(j.weight * (j.arrival + d) for j, d in zip(inst.jobs, dmin, strict=True)))
    rows = {}
    for label, name, params in runs:
        t0 = time.perf_counter()
        res = specs[name](inst, seed=seed, **params)
        wall = time.perf_counter() - t0
        bad = FAMILY.check_result(inst, res)
        if bad:
            raise SystemExit(f"{preset} seed {seed}: {label} fails the validator: {bad[:3]}")
        row = {"status": res.status.value, "wall_s": round(wall, 1), "relaxed": specs[name].relaxed}
        if res.status != Status.FEASIBLE:
            row["rejected"] = int(res.extra.get("rejected_count", 0))
        else:
            row["total"] = res.objective
            row["over_lb"] = res.objective / lb
            row.update(decompose(inst, res.schedule, dmin, with_rounds=name == "online"))
        for k in ("preemptions", "preempted_jobs", "workers"):
            if k in res.extra:
                row[k] = res.extra[k]
        if name == "online":
            row["alphas"] = sorted({r["alpha"] for r in res.extra["rounds"]})
            row["window_starts"] = [r.get("window_start") for r in res.extra["rounds"]]
        rows[label] = row
        print(f"  {label:<28} {_cell(row)}  ({wall:.1f} s)", flush=True)
    ranked = sorted((r["total"], k) for k, r in rows.items() if "total" in r)
    for rank, (_, k) in enumerate(ranked, 1):
        rows[k]["rank"] = rank
    return {"preset": preset, "seed": seed, "jobs": jobs, "horizon": horizon, "servers": len(inst.servers),
            "lower_bound": lb, "rows": rows}


def _cell(row: dict) -> str:
    if "total" not in row:
        return f"{row['rejected']} rejected"
    return f"{row['total'] / 1e6:8.1f} M  ({row['over_lb']:.2f} x LB)"


def main() -> None:
    ap = benchmark_parser(__doc__.split("\n\n")[0], seeds="0")
    ap.add_argument("--presets", default="paper,paper_congested")
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--horizon", type=int, default=300)
    ap.add_argument("--no-every-slot", action="store_true", help="skip online_every_slot (the slowest)")
    ap.add_argument("--only", default="", help="comma-separated row names to run (default: all)")
    ap.add_argument("--suffix", default="", help="appended to the result file's name (e.g. _every_slot)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    for preset in args.presets.split(","):
        out: dict = {"runs": []}
        for seed in args.seeds:
            print(f"{preset}, seed {seed}, {args.jobs} jobs, T = {args.horizon}", flush=True)
            out["runs"].append(run_regime(preset, seed, args.jobs, args.horizon, not args.no_every_slot,
                                          {x for x in args.only.split(",") if x} or None))
        out["runtime_s"] = round(time.perf_counter() - t0, 1)
        path = result_path(args.out, f"hetero_paper_totals_{preset}{args.suffix}.json")
        jsonio.write_json(path, out)
        print(f"wrote {path} ({out['runtime_s']} s)")


if __name__ == "__main__":
    main()
