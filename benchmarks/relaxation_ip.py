"""Where branch-and-price on a certified relaxation can pay: its integer optimum against the proven optimum.

A branch-and-price on the master LP of a family's time-indexed relaxation (`edgeopt.core.colgen`: one column
per job, mode and start, the pooled capacity rows as the coupling) branches towards the relaxation's own
*integer* optimum. However the tree is searched, the best bound it can certify is that integer optimum. So
before building one, this script measures, on `exact_scale.py`'s ``small`` ladders (seed 1):

* ``lp``: the relaxation's LP optimum (the certified bound once column generation converges);
* ``ip``: its integer optimum, by HiGHS on every column enumerated (a measurement, not a certificate: no
  bound of edgeopt rests on it);
* ``optimum``: the family's ``milp`` within ``--time-limit`` (status, value and bound as returned).

With ``--cuts family:preset:jobs/servers/seed,...`` it measures instead the paper presets' generators cut to a
few jobs (as ``preset_cuts.py`` cuts them), ``lp`` and ``ip`` only: where the exact model cannot prove the
optimum, ``ip`` (or HiGHS's own bound on it, ``ip_bound``, when the limit stops it) is still a lower bound on the
optimum, so ``ip_bound - lp`` is at least how much of the interval is the LP's fractional relaxation of the
pooled program. A measurement, not a certificate.

When ``ip`` < optimum, branch-and-price on that relaxation cannot prove the optimum at all (it can only raise
the bound towards ``ip``); when ``ip`` = optimum, it can, and ``lp``'s distance to it says how much branching
it needs. Instances with more than ``--max-columns`` columns are skipped (reported as such).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from exact_scale import LADDERS, SEED

from edgeopt.bench import benchmark_parser, cpu_seconds, result_path
from edgeopt.core.jsonio import write_json
from edgeopt.families import get_family

#: Rungs measured by default: around each family's largest proven rung and the issue's targets.
RUNGS = {"hetero": [8, 10, 12, 14, 16, 20, 24], "tapfinger": [8, 12, 16, 20, 24, 32],
         "edgecloud": [16, 32, 48]}



def relaxation_ip(rel, time_limit: float, max_columns: int) -> dict:
    """LP and integer optimum of the time-indexed relaxation ``rel`` over all its columns (HiGHS, one thread)."""
    import highspy

    J, R, T = rel.n_jobs, rel.n_rows, rel.horizon
    n_cols = sum(jm.n_columns() for jm in rel.jobs)
    if n_cols > max_columns:
        return {"columns": n_cols, "skipped": f"more than {max_columns} columns"}
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    none_i, none_v = np.zeros(0, np.int32), np.zeros(0)
    h.addRows(J, np.ones(J), np.ones(J), 0, none_i, none_i, none_v)
    h.addRows(R * T, np.full(R * T, -highspy.kHighsInf), rel.capacity.ravel(), 0, none_i, none_i, none_v)
    for j, jm in enumerate(rel.jobs):
        for k in range(jm.n_modes):
            for t in range(int(jm.earliest[k]), int(jm.latest - jm.duration[k]) + 1):
                cost, ci, cv = rel.column(j, (k, t))
                rows = np.concatenate([[j], J + np.asarray(ci, dtype=np.int64)])
                vals = np.concatenate([[1.0], np.asarray(cv, dtype=float)])
                rows, inv = np.unique(rows, return_inverse=True)
                h.addCol(cost, 0.0, 1.0, rows.size, rows.astype(np.int32), np.bincount(inv, weights=vals))
    c0 = cpu_seconds()
    h.run()
    lp = float(h.getInfo().objective_function_value)
    lp_cpu = cpu_seconds() - c0
    h.changeColsIntegrality(n_cols, np.arange(n_cols, dtype=np.int32), np.ones(n_cols, dtype=np.uint8))
    h.setOptionValue("time_limit", float(time_limit))
    c0 = cpu_seconds()
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    return {"columns": n_cols, "lp": lp, "lp_cpu_s": round(lp_cpu, 2), "ip_status": status,
            "ip": float(info.objective_function_value), "ip_bound": float(info.mip_dual_bound),
            "ip_cpu_s": round(cpu_seconds() - c0, 2)}


def _shifted(row: dict, offset: float) -> dict:
    """``row`` with the relaxation's constant ``offset`` added to its values (the family's objective)."""
    for key in ("lp", "ip", "ip_bound"):
        if key in row:
            row[key] = round(row[key] + offset, 6)
    return row


def measure(family: str, counts: list[int], time_limit: float, max_columns: int) -> list[dict]:
    import importlib

    from edgeopt.core.lowerbound import find_method
    from formulations import table

    spec = get_family(family)
    milp = importlib.import_module(f"formulations.{family}").METHODS["milp"]
    method = find_method(table(family, "LOWER_BOUNDS"), "auto", family)
    rows = []
    for n in counts:
        kwargs = LADDERS[family][1](n)
        inst = spec.generate("small", seed=SEED, jobs=n, **kwargs)
        rel = method.relax(inst)
        offset = float(method.offset(inst)) if method.offset else 0.0
        row = _shifted({"jobs": n, **kwargs, "relaxation": method.name, **relaxation_ip(rel, time_limit, max_columns)},
                       offset)
        c0 = cpu_seconds()
        res = milp(inst, time_limit=time_limit)
        row.update({"milp_status": res.status.value, "milp_objective": res.objective, "milp_bound": res.bound,
                    "milp_cpu_s": round(cpu_seconds() - c0, 2)})
        if res.status.value == "optimal" and row.get("ip_status") == "Optimal":
            row["ip_below_optimum"] = round(float(res.objective) - row["ip"], 6)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


#: Most jobs or servers of a cut (as in preset_cuts.py): a typed count has a cap.
MAX_CUT = 100_000


def parse_cuts(text: str) -> tuple[str, str, list[tuple[int, int, int]]]:
    """``family:preset:jobs/servers/seed,...`` -> (family, preset, [(jobs, servers, seed)])."""
    try:
        family, preset, sizes = text.split(":")
        cuts = [tuple(int(x) for x in part.split("/")) for part in sizes.split(",")]
    except ValueError:
        raise ValueError(f"--cuts: expected family:preset:jobs/servers/seed,..., got {text!r}") from None
    for cut in cuts:
        if len(cut) != 3 or not (1 <= cut[0] <= MAX_CUT and 1 <= cut[1] <= MAX_CUT and cut[2] >= 0):
            raise ValueError(f"--cuts: each cut is jobs/servers/seed with 1 <= jobs, servers <= {MAX_CUT:,}, got {cut}")
    return family, preset, cuts


def measure_cuts(family: str, preset: str, cuts: list[tuple[int, int, int]], time_limit: float, max_columns: int
                 ) -> list[dict]:
    """``lp`` and ``ip`` of the family's ``auto`` relaxation on each cut (jobs, servers, seed) of a preset (module
    docstring)."""
    from edgeopt import api
    from edgeopt.core.lowerbound import find_method
    from formulations import table

    method = find_method(table(family, "LOWER_BOUNDS"), "auto", family)
    rows = []
    for jobs, servers, seed in cuts:
        inst = api.generate(family, preset, seed=seed, jobs=jobs, servers=servers)
        offset = float(method.offset(inst)) if method.offset else 0.0
        row = _shifted({"family": family, "preset": preset, "jobs": jobs, "servers": servers, "seed": seed,
                        "relaxation": method.name, **relaxation_ip(method.relax(inst), time_limit, max_columns)}, offset)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds=str(SEED))
    ap.add_argument("--families", default=",".join(RUNGS))
    ap.add_argument("--rungs", default=None, help="JOBS,... for every family (default: RUNGS)")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds for the relaxation's IP and the milp")
    ap.add_argument("--max-columns", type=int, default=200_000)
    ap.add_argument("--name", default="relaxation_ip.json")
    ap.add_argument("--cuts", default=None, help="family:preset:jobs/servers/seed,...: a preset's cuts instead")
    args = ap.parse_args()
    if args.cuts:
        try:
            family, preset, cuts = parse_cuts(args.cuts)
        except ValueError as exc:
            ap.error(str(exc))  # exit 2, before anything is written
        path = result_path(args.out, args.name)
        write_json(path, {"setting": "preset cuts; HiGHS one thread; wall-clock limits, CPU seconds per call",
                          "time_limit_s": args.time_limit,
                          "cuts": measure_cuts(family, preset, cuts, args.time_limit, args.max_columns)})
        print("wrote", path)
        return
    out = {"setting": f"small generator, seed {SEED}, LADDERS of exact_scale.py; HiGHS one thread; wall-clock "
                      "limits, CPU seconds per call (machine shared, 2 cores)",
           "time_limit_s": args.time_limit, "families": {}}
    path = result_path(args.out, args.name)
    for fam in args.families.split(","):
        counts = [int(x) for x in args.rungs.split(",")] if args.rungs else RUNGS[fam]
        out["families"][fam] = measure(fam, counts, args.time_limit, args.max_columns)
        write_json(path, out)  # after each family; refuses a path that is not a regular file
    print("wrote", path)


if __name__ == "__main__":
    main()
