"""Which side of a wide certified interval on a real week is loose: the bound or the schedules?

Regime. The instances of `benchmarks/cross_family.py` (ITP trace, cluster06, the quiet / typical / busiest
week, 96 GPUs, seed 0). The week itself is far too large for an exact model, so for each wide row
(``--rows family:week,...``) this cuts sub-instances small enough for one to prove optimality: the week's
first ``n`` jobs (``--sizes``, default 10 and 20), every server kept, the horizon kept (`first_jobs`).
On each it computes

* the certified bound (``api.bound``, method ``auto``, re-checked by ``api.check_bound``; at most
  ``--bound-time`` s), the trivial bound of cross_family.py, and every registered algorithm (the best
  non-relaxed one is the sub-instance's "best heuristic");
* the optimum: ``api.solve(sub, method=M, time_limit=3600, work_limit=W)`` (``M``, ``W`` per family:
  `EXACT`; a deterministic work limit, so the same result on any machine at any load). A size whose
  solve does not prove optimality within ``W`` is reported as not proven and gets no ratios;
* bound / optimum and best heuristic / optimum: the share of the sub-instance's interval that is the
  bound's (optimum - bound) and the schedules' (best - optimum);
* each job alone (`alone`): the sum of single-job optima (a lower bound of the sub-instance's optimum:
  no schedule does better for a job than it would alone) and of single-job bounds, which splits the
  bound's part into what its single-job model misses and what its capacity coupling misses.

A sub-instance of the first jobs is a lightly loaded start of the week, not the week: its ratios say
how tight the bound and the heuristics are on few jobs, not the week's gap itself.

Schedules (``--no-schedules`` skips): for edgecloud, each week's schedules of every non-relaxed
algorithm split into the three parts of a job's completion time, summed over jobs: the upload delay
to the server it ran on (a_j + Delta_js, (2i)), the wait after that until it started, and the run;
with the number of jobs sent to the cloud and the sum of each job's fastest time alone (the trivial
bound). For hetero and okita: the total wait (start - arrival) and run (end - start) of each algorithm.

    python benchmarks/interval_diagnosis.py [--rows ...] [--sizes 10,20] [--bound-time 60]
        [--no-schedules] [--out benchmarks/results]

CPU seconds (time.process_time) are reported: the machine is shared.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

from edgeopt import api, traces
from edgeopt.bench import benchmark_parser, cpu_seconds, result_path
from edgeopt.core import InputError, ModelError
from edgeopt.traces.instances import from_trace

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("cross_family", HERE / "cross_family.py")
cf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cf)

#: The widest rows of cross_family.py's 60 s / online-only result (gap 55-90 %) plus preemptive's busiest week.
ROWS = ("edgecloud:quiet,edgecloud:typical,edgecloud:busiest,preemptive:busiest,okita:busiest:5/10,"
        "hetero:busiest:3/5")
#: The exact model and its deterministic work limit per family (CP-SAT deterministic seconds; chosen so
#: that the 10-job sub-instances prove in seconds on the development machine).
EXACT = {"edgecloud": ("cpsat", 60.0), "hetero": ("cpsat", 60.0), "preemptive": ("cpsat", 60.0),
         "okita": ("cpsat", 60.0), "tapfinger": ("cpsat", 60.0)}


def week_instance(family: str, label: str, jobs: Any, cluster: str = "cluster06", gpus: float = 96.0,
                  seed: int = 0) -> Any:
    """The instance cross_family.py builds for (family, week)."""
    load = cf.weekly_load(jobs, cluster)
    start = cf.choose_windows(load)[label] * cf.WEEK_S
    servers = max(1, math.ceil(gpus / cf.GPUS_PER_SERVER[family]))
    return from_trace(family, jobs, window=(start, start + cf.WEEK_S), cluster=cluster, seed=seed, servers=servers,
                      **cf.TRACE_OPTIONS.get(family, {}))


def first_jobs(inst: Any, n: int, horizon: int | None = None) -> Any:
    """The instance with only its first ``n`` jobs (tasks), everything else as it is (ids stay positions),
    and the horizon ``horizon`` where given."""
    data = inst.model_dump()
    key = "tasks" if "tasks" in data else "jobs"
    data[key] = data[key][:n]
    if horizon is not None:
        data["horizon"] = int(horizon)
    return type(inst).model_validate(data)


def last_end(schedule: Any) -> int:
    """The last slot any job of a schedule (any family's JSON) occupies, plus one."""
    if isinstance(schedule, list):
        return max((last_end(x) for x in schedule), default=0)
    if not isinstance(schedule, dict):
        return 0
    ends = [last_end(v) for k, v in schedule.items() if isinstance(v, (list, dict))]
    if isinstance(schedule.get("end"), (int, float)):
        ends.append(math.ceil(schedule["end"]))
    if isinstance(schedule.get("start"), (int, float)) and isinstance(schedule.get("duration"), (int, float)):
        ends.append(math.ceil(schedule["start"] + schedule["duration"]))
    if isinstance(schedule.get("slot"), int):
        ends.append(schedule["slot"] + 1)
    slots = schedule.get("slots")
    if isinstance(slots, list) and slots and all(isinstance(x, int) for x in slots):
        ends.append(max(slots) + 1)
    return max(ends, default=0)


def cut(inst: Any, family: str, n: int) -> tuple[Any, dict[str, Any]]:
    """The first ``n`` jobs with the horizon cut to the last slot any registered algorithm's complete,
    valid schedule of them uses (the week's horizon, hundreds to tens of thousands of slots, makes the
    exact models far too large for even 5 jobs; every algorithm's schedule fits the cut horizon)."""
    sub = first_jobs(inst, n)
    ends = []
    for name in api.algorithms(family):
        try:
            res = api.run(name, sub, seed=0)
        except (InputError, ImportError):
            continue
        if res.status.value == "feasible" and not api.validate(sub, res):
            ends.append(last_end(res.schedule))
    horizon = min(sub.horizon, max(ends)) if ends else sub.horizon
    try:
        return first_jobs(inst, n, horizon), {"horizon": horizon, "week_horizon": sub.horizon}
    except (ValueError, InputError) as exc:  # the family's model refuses the cut (pydantic's ValidationError is a ValueError)
        return sub, {"horizon": sub.horizon, "week_horizon": sub.horizon, "cut_refused": str(exc).splitlines()[0]}


def algorithms(inst: Any, family: str) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    rows = []
    for name, algo in api.algorithms(family).items():
        row: dict[str, Any] = {"algorithm": name, "kind": algo.kind, "relaxed": algo.relaxed}
        t0 = cpu_seconds()
        try:
            res = api.run(name, inst, seed=0)
        except (InputError, ImportError) as exc:
            row.update(status="not run", reason=str(exc).splitlines()[0])
            rows.append(row)
            continue
        row.update(cpu_s=round(cpu_seconds() - t0, 3), status=res.status.value, objective=res.objective,
                   valid=not api.validate(inst, res))
        rows.append(row)
    return rows, cf.best_schedule(rows)


def exact(inst: Any, family: str) -> dict[str, Any]:
    method, work = EXACT[family]
    out: dict[str, Any] = {"method": method, "work_limit": work, "time_limit_s": 3600}
    t0 = cpu_seconds()
    try:
        res = api.solve(inst, method=method, time_limit=3600, work_limit=work)
    except (InputError, ModelError) as exc:
        out.update(error=str(exc).splitlines()[0], cpu_s=round(cpu_seconds() - t0, 3))
        return out
    out.update(status=res.status.value, objective=res.objective, bound=res.bound,
               cpu_s=round(cpu_seconds() - t0, 3),
               valid=res.objective is not None and not api.validate(inst, res))
    out["proven"] = res.status.value == "optimal" and out["valid"]
    return out


def alone(sub: Any, family: str, bound_time: float) -> dict[str, Any]:
    """Each job of ``sub`` alone (servers and horizon kept): the sum of the single-job optima and of the
    single-job certified bounds. Every job's cost in any schedule is at least its optimum alone, so the
    first sum is a lower bound of ``sub``'s optimum; how far the bound is below it on one job is
    looseness of the relaxation's single-job model, not of its capacity coupling."""
    data = sub.model_dump()
    key = "tasks" if "tasks" in data else "jobs"
    opt = bnd = 0.0
    t0 = cpu_seconds()
    for proven, job in enumerate(data[key]):
        one = type(sub).model_validate({**data, key: [{**job, "id": 0}]})
        ex = exact(one, family)
        b = cf.certified_bound(one, bound_time)
        if not ex.get("proven") or not b["usable"]:
            return {"proven": False, "jobs_proven": proven, "cpu_s": round(cpu_seconds() - t0, 3)}
        opt += ex["objective"]
        bnd += b["checked"]
    return {"proven": True, "sum_optimum": opt, "sum_bound": bnd, "cpu_s": round(cpu_seconds() - t0, 3)}


def sub_row(inst: Any, family: str, n: int, bound_time: float) -> dict[str, Any]:
    sub, horizon = cut(inst, family, n)
    out: dict[str, Any] = {"jobs": n, **horizon}
    out.update({k: v for k, v in cf.best_bound(family, sub, bound_time).items()})
    rows, best = algorithms(sub, family)
    out["rows"], out["best"] = rows, best
    out["exact"] = ex = exact(sub, family)
    if ex.get("proven") and ex["objective"] > 0:
        opt, b = ex["objective"], out["bound"]
        out["bound_over_opt"] = b / opt
        if best is not None:
            out["best_over_opt"] = best["objective"] / opt
            width = best["objective"] - b
            out["bound_share"] = (opt - b) / width if width > 0 else None
            out["schedule_share"] = (best["objective"] - opt) / width if width > 0 else None
        out["alone"] = one = alone(sub, family, bound_time)
        if one.get("proven") and opt > b:
            # of the bound's part (opt - bound): what one job alone already shows, and the coupling
            out["bound_gap_single_job"] = (one["sum_optimum"] - b) / (opt - b)
    return out


# ---- the schedules of a week ------------------------------------------------------------------------

def edgecloud_parts(inst: Any, res: Any) -> dict[str, Any]:
    """Sum over jobs of upload delay to the server run on, wait after it, run; jobs on the cloud."""
    from edgeopt.edgecloud.instance import durations

    upload = wait = run = cloud = fastest = blocked = 0
    prev_start = None
    per_job = []
    for r in sorted(res.schedule["jobs"], key=lambda r: r["job"]):
        job = inst.jobs[r["job"]]
        release = inst.release(job.id)
        server = int(r["ps_server"])
        up = int(release[server]) - job.arrival
        w, d = int(r["start"]) - int(release[server]), int(r["end"]) - int(r["start"])
        upload, wait, run = upload + up, wait + w, run + d
        cloud += bool(inst.servers[server].is_cloud)
        fastest += int(release.min()) - job.arrival + int(durations(inst, job).min())
        blocked += prev_start is not None and w > 0 and int(r["start"]) == prev_start
        prev_start = int(r["start"])
        per_job.append((up, w, d))
    total = upload + wait + run
    return {"objective": res.objective, "upload": upload, "wait": wait, "run": run, "sum": total,
            "jobs": len(per_job), "on_cloud": cloud, "fastest_alone": fastest,
            "waits_ending_at_previous_start": blocked,
            "share": {"upload": upload / total, "wait": wait / total, "run": run / total} if total else None}


def wait_run_parts(inst: Any, res: Any, family: str) -> dict[str, Any]:
    """Sum over jobs of start - arrival and end - start (hetero, okita: the schedule's runs)."""
    sched = res.schedule
    runs = sched.get("jobs") or sched.get("runs") or []
    wait = run = 0.0
    count = 0
    for r in runs:
        j = int(r.get("job", r.get("id", -1)))
        if j < 0 or "start" not in r or "end" not in r:
            continue
        wait += float(r["start"]) - float(inst.jobs[j].arrival)
        run += float(r["end"]) - float(r["start"])
        count += 1
    return {"objective": res.objective, "wait_slots": wait, "run_slots": run, "jobs": count}


def schedules(family: str, inst: Any) -> dict[str, Any]:
    out = {}
    for name, algo in api.algorithms(family).items():
        if algo.relaxed:
            continue
        try:
            res = api.run(name, inst, seed=0)
        except (InputError, ImportError):
            continue
        if res.status.value != "feasible" or api.validate(inst, res):
            continue
        out[name] = edgecloud_parts(inst, res) if family == "edgecloud" else wait_run_parts(inst, res, family)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--rows", default=ROWS, help=f"family:week[:n1/n2...],... (default {ROWS}; "
                    "n1/n2: this row's sizes instead of --sizes)")
    ap.add_argument("--sizes", default="10,20", help="jobs per sub-instance (default 10,20)")
    ap.add_argument("--bound-time", type=float, default=60.0)
    ap.add_argument("--no-schedules", action="store_true", help="skip the week's schedule breakdown")
    ap.add_argument("--suffix", default="")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if any(not 1 <= n <= 100 for n in sizes):
        ap.error("--sizes: each in [1, 100]")
    jobs = traces.load_itp()
    report: dict[str, Any] = {"trace": "Microsoft ITP (ElasticFlow), cluster06, 96 GPUs, seed 0 (cross_family.py)",
                              "exact": {f: {"method": m, "work_limit": w} for f, (m, w) in EXACT.items()},
                              "bound_time_s": args.bound_time, "rows": [], "schedules": {}}
    path = result_path(args.out, f"interval_diagnosis{args.suffix}.json")
    for item in args.rows.split(","):
        family, label, *own = item.split(":")
        inst = week_instance(family, label, jobs)
        row: dict[str, Any] = {"family": family, "week": label, "week_jobs": len(getattr(inst, "tasks", None) or
                                                                                  inst.jobs), "subs": []}
        for n in [int(x) for x in own[0].split("/")] if own else sizes:
            sub = sub_row(inst, family, n, args.bound_time)
            row["subs"].append(sub)
            ex, best = sub["exact"], sub["best"]
            print(f"{family:10s} {label:8s} n={n:3d} bound {sub['bound']:.6g} ({sub['bound_kind']}) "
                  f"opt {ex.get('objective')} [{ex.get('status', ex.get('error'))}, {ex.get('cpu_s')} s CPU] "
                  f"best {best and best['objective']} ({best and best['algorithm']}) "
                  f"bound/opt {sub.get('bound_over_opt', float('nan')):.3f} "
                  f"best/opt {sub.get('best_over_opt', float('nan')):.3f} "
                  f"alone: sum opt {sub.get('alone', {}).get('sum_optimum')} sum bound {sub.get('alone', {}).get('sum_bound')}",
                  flush=True)
        report["rows"].append(row)
        if not args.no_schedules and family in ("edgecloud", "hetero", "okita"):
            report["schedules"][f"{family}:{label}"] = parts = schedules(family, inst)
            for name, p in parts.items():
                print(f"{family:10s} {label:8s} schedule {name:14s} {json.dumps({k: v for k, v in p.items() if k != 'share'})}",
                      flush=True)
        path.write_text(json.dumps(report, indent=1, default=float) + "\n")
    report["cpu_s_total"] = cpu_seconds()
    path.write_text(json.dumps(report, indent=1, default=float) + "\n")
    print(f"wrote {path}; CPU {report['cpu_s_total']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
