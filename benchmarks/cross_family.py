"""One real workload across the five papers: a week of one ITP cluster -> an instance of every family.

Regime. The shipped Microsoft ITP (ElasticFlow) trace; one cluster (``--cluster``, default cluster06);
three of its full weeks chosen by measured load (GPU-hours submitted per week): the quietest, the median
("typical") and the busiest. Each week becomes an instance of every family through
`edgeopt.traces.instances.from_trace` (docs/families/<family>.md, "From a trace"), with the same GPU
capacity for all three weeks: ``--gpus`` (default 96, about the cluster's mean GPU demand over the
whole trace, 86 GPUs), i.e. as many of the family's own servers as hold that many GPUs on average.
Every registered algorithm of the family runs (online algorithm, baselines and the ``offline`` reference
heuristics, e.g. hetero's and edgecloud's ``offline_fill``); every schedule is validated; a result that
rejected jobs (``partial``) gets no ratio.

Ratios are to a lower bound, never to an optimum (no exact model scales to these sizes); each ratio
names its bound (``ratio_against``): the certified ``api.bound`` (``method="auto"``, at most
``--bound-time`` seconds), used only after ``api.check_bound`` has recomputed it from its certificate and
only where it is at least the family's trivial bound; else the trivial bound (sum over jobs of the least
cost each could have alone: `trivial_bound`). Both bounds, the bound's status, CPU time and check are
recorded per family and window.

The certified interval (``interval``): [bound, best valid complete schedule], where "best" is the better
of every non-relaxed algorithm (a relaxed one, e.g. edgecloud's ``preemptive`` baseline, schedules a
relaxation and may lie below the optimum: it gets a ratio but is no upper end) and of the
large-neighbourhood search (``api.solve(method="cpsat", lns=True)``) started from that best algorithm for
``--lns-time`` seconds (0: no search; never worse than its start; the search spends up to a quarter of its
time on its own certified bound first, recorded as ``lns.bound``). Gap = (best - bound) / best. The
results of the previous version of this script (online algorithms and baselines against a 60 s bound;
``--before``, default the tracked ``benchmarks/results/cross_family.json``) are copied beside each as
``before``, with which side of the interval moved. The committed run used ``--bound-time 120
--lns-time 120`` on a shared 2-core machine (600 s each would be the ideal; not affordable there).

    python benchmarks/cross_family.py [--cluster cluster06] [--gpus 96] [--seeds 0] [--bound-time 60]
        [--lns-time 120] [--bound-max-size N] [--before FILE]
        [--families ...] [--windows quiet,typical,busiest] [--out benchmarks/results]

CPU time (`edgeopt.bench.cpu_seconds`: the process and its HiGHS child processes) and peak RSS are reported;
the machine may be shared, so wall times are not.
"""

from __future__ import annotations

import json
import math
import resource
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from edgeopt import api, traces
from edgeopt.bench import benchmark_parser, cpu_seconds, result_path
from edgeopt.core import InputError, ModelError
from edgeopt.traces.instances import from_trace

WEEK_S = 7 * 86400.0
FAMILIES = ("edgecloud", "hetero", "preemptive", "okita", "tapfinger")
#: Mean GPUs per server of each family's own server draw when no machine list is given (docs/families).
#: Trace options: tapfinger with the paper's two task types, so that its trained policies (A_online) run.
TRACE_OPTIONS = {"tapfinger": {"task_types": "two"}}
#: api.bound's model-size budget here: None, its default (2,000,000 nonzeros). tapfinger's estimate now
#: counts what column generation builds (0.33 M / 0.45 M in the typical / busiest week), no longer the
#: never-built full time-indexed relaxation (3.2 M / 5.6 M), which needed 8 M here before.
BOUND_MAX_SIZE = None
#: The previous results (online algorithms and baselines against a 60 s bound), copied as "before".
BEFORE = Path(__file__).resolve().parent / "results" / "cross_family.json"
#: The exact model whose windows the large-neighbourhood search solves (every family has a CP-SAT one).
LNS_METHOD = "cpsat"
GPUS_PER_SERVER = {"edgecloud": 6.0, "hetero": 5.0, "preemptive": 4.6, "okita": 28 / 3, "tapfinger": 16.0}


def weekly_load(jobs: pd.DataFrame, cluster: str) -> pd.DataFrame:
    """GPU-hours and jobs submitted per full week of ``cluster`` (weeks from the trace's clock 0)."""
    c = jobs[jobs["cluster"] == cluster]
    week = (c["submit_s"] // WEEK_S).astype(int)
    table = pd.DataFrame({"week": week, "gpu_hours": c["gpus"] * c["duration_s"] / 3600.0}).groupby("week").agg(
        jobs=("gpu_hours", "size"), gpu_hours=("gpu_hours", "sum")).reset_index()
    last = float(c["submit_s"].max())
    return table[(table["week"] + 1) * WEEK_S <= last].reset_index(drop=True)  # full weeks only


def choose_windows(load: pd.DataFrame) -> dict[str, int]:
    """quiet = least GPU-hours, typical = the median week, busiest = most GPU-hours."""
    order = load.sort_values(["gpu_hours", "week"]).reset_index(drop=True)
    return {"quiet": int(order["week"].iloc[0]), "typical": int(order["week"].iloc[(len(order) - 1) // 2]),
            "busiest": int(order["week"].iloc[-1])}


# ---- trivial bounds (each job alone, at its fastest; summed) -------------------------------------

def _edgecloud_bound(inst: Any) -> float:
    from formulations.edgecloud.data import prepare
    from formulations.edgecloud.milp import trivial_bound

    return trivial_bound(prepare(inst))


def _hetero_bound(inst: Any) -> float:
    from edgeopt.hetero.instance import min_duration

    ps = [None] if inst.architecture != "ps" else list(range(len(inst.ps_types)))
    total = 0.0
    for job in inst.jobs:
        best = math.inf
        for m in range(len(inst.worker_types)):
            for p in ps:
                for q in (True, False):
                    for n in {1, job.chunks} if inst.architecture == "ps" else range(1, job.chunks + 1):
                        best = min(best, min_duration(inst, job, m, p, q, n))
        total += job.weight * (job.arrival + best)
    return total


def _preemptive_bound(inst: Any) -> float:
    """A job's chunks train on the edge (not colocated) after the least edge upload delay, or all on the
    unlimited cloud (colocated) after the cloud's: JCT_j >= the smaller of the two, one chunk each."""
    total = 0.0
    for j, job in enumerate(inst.jobs):
        edge = [d for d, sv in zip(job.upload_delay_slots, inst.servers, strict=True) if not sv.is_cloud and sv.workers]
        cloud = [d for d, sv in zip(job.upload_delay_slots, inst.servers, strict=True) if sv.is_cloud]
        options = [min(edge) + inst.chunk_slots(j, False)] if edge else []
        options += [min(cloud) + inst.chunk_slots(j, True)] if cloud else []
        total += min(options)
    return float(total)


def _okita_bound(inst: Any) -> float:
    from formulations.okita.bounds import latency_bound

    return latency_bound(inst)


def _tapfinger_bound(inst: Any) -> float:
    from formulations.tapfinger.bound import start_rate_bound

    return start_rate_bound(inst)


TRIVIAL = {"edgecloud": (_edgecloud_bound, "trivial: sum_j least JCT alone (earliest start + fastest mode)"),
           "hetero": (_hetero_bound, "trivial: sum_j w_j (a_j + shortest duration of any configuration)"),
           "preemptive": (_preemptive_bound, "trivial: sum_j min(least edge delay + one chunk, cloud delay + one chunk colocated)"),
           "okita": (_okita_bound, "trivial: sum_i f_i(least latency with every site's workers) (latency_bound)"),
           "tapfinger": (_tapfinger_bound, "trivial: fastest runs + start-rate waits (start_rate_bound)")}


def trivial_bound(family: str, inst: Any) -> tuple[float, str]:
    fn, name = TRIVIAL[family]
    return float(fn(inst)), name


def certified_bound(inst: Any, time_limit: float, max_model_size: int | None = None,
                    method: str = "auto") -> dict[str, Any]:
    """``api.bound(method=method)`` (``auto`` unless named) within ``time_limit`` s (and ``max_model_size``
    nonzeros, the budget of `api.bound`), its certificate re-checked by ``api.check_bound``.

    Returns what happened, always: method, status, value, CPU and wall seconds of the bound and of the
    check. ``usable`` is true only when the status is ``bound`` and the independent check recomputed the
    same number; the value used is then the checked one.
    """
    out: dict[str, Any] = {"usable": False}
    fn = getattr(api, "bound", None)
    if fn is None:
        out["error"] = "this edgeopt has no api.bound"
        return out
    t0 = cpu_seconds()
    try:
        res = fn(inst, method=method, time_limit=time_limit, max_model_size=max_model_size)
    except (InputError, ModelError, NotImplementedError) as exc:
        out.update(error=str(exc).splitlines()[0], cpu_s=round(cpu_seconds() - t0, 3))
        return out
    out.update(method=res.algorithm, status=res.status.value, value=res.bound, time_limit_s=time_limit,
               max_model_size=max_model_size,
               cpu_s=round(cpu_seconds() - t0, 3), wall_s=round(res.runtime_s, 3))
    extra = res.extra if isinstance(res.extra, dict) else {}
    if "reason" in extra:
        out["reason"] = str(extra["reason"]).splitlines()[0]
    if isinstance(extra.get("solver"), dict):
        out["solver"] = extra["solver"]
    if res.status.value != "bound" or res.bound is None or not math.isfinite(res.bound):
        return out
    t0 = cpu_seconds()
    try:
        checked = float(api.check_bound(inst, res))
    except ModelError as exc:
        out.update(check_error=str(exc).splitlines()[0], check_cpu_s=round(cpu_seconds() - t0, 3))
        return out
    out.update(checked=checked, check_cpu_s=round(cpu_seconds() - t0, 3), usable=True)
    return out


def best_bound(family: str, inst: Any, time_limit: float, max_model_size: int | None = None,
               method: str = "auto") -> dict[str, Any]:
    """The larger of the family's trivial bound and the certified ``api.bound`` (used only once its
    certificate has been re-checked), with both recorded and the one used named in ``bound_name``."""
    t0 = cpu_seconds()
    value, name = trivial_bound(family, inst)
    out: dict[str, Any] = {"trivial_bound": value, "trivial_bound_name": name,
                           "trivial_bound_cpu_s": round(cpu_seconds() - t0, 3)}
    cert = certified_bound(inst, time_limit, max_model_size, method)
    out["certified_bound"] = cert
    if cert["usable"] and cert["checked"] >= value:
        out.update(bound=cert["checked"], bound_kind="certified",
                   bound_name=f"certified: api.bound {cert['method']} (certificate re-checked)")
    else:
        out.update(bound=value, bound_kind="trivial", bound_name=name)
    return out


def best_schedule(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The best validated complete schedule of a non-relaxed algorithm (the interval's upper end), or None."""
    ok = [r for r in rows if r.get("status") == "feasible" and r.get("valid") and not r.get("relaxed")
          and r.get("objective") is not None]
    if not ok:
        return None
    r = min(ok, key=lambda r: r["objective"])
    return {"algorithm": r["algorithm"], "kind": r["kind"], "objective": r["objective"]}


def run_lns(inst: Any, start: str, time_limit: float, bound: float, keep_schedule: bool = False) -> dict[str, Any]:
    """`api.solve` (``LNS_METHOD``, ``lns=True``) started from the registered algorithm ``start`` (the best
    one: what ``warm_start="best"`` would pick, without running every algorithm again inside the limit);
    its schedule validated; CPU seconds of the whole call."""
    out: dict[str, Any] = {"method": LNS_METHOD, "warm_start": start, "time_limit_s": time_limit}
    t0 = cpu_seconds()
    try:
        res = api.solve(inst, method=LNS_METHOD, lns=True, warm_start=start, time_limit=time_limit)
    except (InputError, ModelError) as exc:
        out.update(error=str(exc).splitlines()[0], cpu_s=round(cpu_seconds() - t0, 3))
        return out
    out.update(cpu_s=round(cpu_seconds() - t0, 3), wall_s=round(res.runtime_s, 3), status=res.status.value,
               objective=res.objective)
    violations = api.validate(inst, res)
    out["valid"] = not violations
    if violations:
        out["violations"] = [str(v) for v in violations[:5]]
    extra = res.extra if isinstance(res.extra, dict) else {}
    log = extra.get("lns", {})
    keys = ("start_objective", "objective", "improvements", "windows", "stop", "rebuild", "local", "history")
    out["search"] = {k: log[k] for k in keys if k in log}
    if "reason" in extra:
        out["reason"] = str(extra["reason"]).splitlines()[0]
    out["bound"] = res.bound  # the search's own certified bound (a quarter of its time), for the record
    if res.objective is not None and bound > 0:
        out["ratio_to_bound"] = res.objective / bound
    if keep_schedule and out["valid"]:
        out["schedule"] = res.schedule  # the caller's to use (e.g. as an exact model's hint), not to write out
    return out


def interval(out: dict[str, Any]) -> dict[str, Any]:
    """[bound, best valid complete schedule of the algorithms and of the LNS] and its gap."""
    best = best_schedule(out["rows"])
    lns = out.get("lns") or {}
    if lns.get("valid") and lns.get("objective") is not None and (best is None or lns["objective"] < best["objective"]):
        best = {"algorithm": "lns", "kind": "lns", "objective": lns["objective"], "from": lns["warm_start"]}
    if best is None:
        return {"bound": out["bound"], "best": None, "gap": None}
    return {"bound": out["bound"], "bound_kind": out["bound_kind"], "best": best["objective"],
            "best_by": best["algorithm"], "best_kind": best["kind"],
            "gap": (best["objective"] - out["bound"]) / best["objective"] if best["objective"] > 0 else 0.0,
            "ratio": best["objective"] / out["bound"] if out["bound"] > 0 else None}


def before_entry(old: dict[str, Any] | None, label: str, family: str) -> dict[str, Any] | None:
    """The previous result of (window, family) from the report ``old``: its bound, its best online
    algorithm (and best online algorithm or baseline, what that version compared) and their gaps. A report of this
    version carries its own ``before`` forward, so a rerun keeps comparing with the same old numbers."""
    if not old:
        return None
    entry = next((f for f in old.get("windows", {}).get(label, {}).get("families", []) if f.get("family") == family),
                 None)
    if entry is None:
        return None
    if "before" in entry:
        return entry["before"]
    rows = [r for r in entry.get("rows", []) if r.get("kind") in ("online", "baseline")]
    best = best_schedule(rows)
    online = best_schedule([r for r in rows if r.get("kind") == "online"])
    b = float(entry["bound"])
    return {"bound": b, "bound_kind": entry.get("bound_kind"),
            "bound_method": entry.get("certified_bound", {}).get("method"),
            "bound_cpu_s": entry.get("certified_bound", {}).get("cpu_s"),
            "bound_time_s": old.get("bound_time_s"),
            "best_online": online and {**online, "gap": (online["objective"] - b) / online["objective"]},
            "best": best and {**best, "gap": (best["objective"] - b) / best["objective"]}}


def moved(before: dict[str, Any] | None, now: dict[str, Any]) -> dict[str, Any] | None:
    """Which side of the interval moved against ``before``: the bound (up is tighter) and the best
    schedule (down is tighter; against the old best non-relaxed online algorithm or baseline, the old
    gap's upper end, and against the old best online algorithm alone)."""
    if not before or now.get("best") is None:
        return None
    rel = lambda new, old: (new - old) / old if old else None
    out = {"bound_change": rel(now["bound"], before["bound"])}
    for key in ("best_online", "best"):
        if before.get(key):
            out[f"upper_change_vs_{key}"] = rel(now["best"], before[key]["objective"])
            out[f"gap_before_{key}"] = before[key]["gap"]
    out["gap_after"] = now["gap"]
    b, u = out["bound_change"] or 0.0, out.get("upper_change_vs_best") or 0.0
    out["sides"] = "+".join(side for side, m in (("bound", b > 1e-9), ("schedule", u < -1e-9)) if m) or "neither"
    return out


def run_family(family: str, jobs: pd.DataFrame, start: float, cluster: str, gpus: float, seed: int,
               bound_time: float, bound_max_size: int | None = None, lns_time: float = 0.0,
               before: dict[str, Any] | None = None) -> dict[str, Any]:
    servers = max(1, math.ceil(gpus / GPUS_PER_SERVER[family]))
    t0 = cpu_seconds()
    inst = from_trace(family, jobs, window=(start, start + WEEK_S), cluster=cluster, seed=seed, servers=servers,
                      **TRACE_OPTIONS.get(family, {}))
    out: dict[str, Any] = {"family": family, "jobs": len(inst.jobs), "servers": servers, "horizon": inst.horizon,
                           "build_cpu_s": round(cpu_seconds() - t0, 3),
                           "objective_name": api.family(family).objective_name}
    out.update(best_bound(family, inst, bound_time, bound_max_size))
    rows = []
    for name, algo in api.algorithms(family).items():
        row: dict[str, Any] = {"algorithm": name, "kind": algo.kind, "relaxed": algo.relaxed}
        t0 = cpu_seconds()
        try:
            res = api.run(name, inst, seed=seed)
        except (InputError, ImportError) as exc:
            row.update(status="not run", reason=str(exc).splitlines()[0])
            rows.append(row)
            continue
        row["cpu_s"] = round(cpu_seconds() - t0, 3)
        violations = api.validate(inst, res)
        row.update(status=res.status.value, objective=res.objective, valid=not violations,
                   rejected=len(res.rejected()) if res.status.value == "partial" else 0)
        if violations:
            row["violations"] = [str(v) for v in violations[:5]]
        if res.status.value == "feasible" and not violations and out["bound"] > 0 and res.objective is not None:
            row["ratio_to_bound"] = res.objective / out["bound"]
            row["ratio_against"] = out["bound_kind"]  # every ratio names its bound
        rows.append(row)
    out["rows"] = rows
    start_from = best_schedule(rows)
    if lns_time > 0 and start_from is not None:
        out["lns"] = run_lns(inst, start_from["algorithm"], lns_time, out["bound"])
    out["interval"] = interval(out)
    out["before"] = before
    out["moved"] = moved(before, out["interval"])
    return out


def _write(path: Path, report: dict[str, Any]) -> None:
    """Replace ``path`` whole (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=1, default=float) + "\n")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--cluster", default="cluster06", help="ITP cluster (default cluster06)")
    ap.add_argument("--gpus", type=float, default=96.0, help="GPU capacity of every instance (default 96)")
    ap.add_argument("--bound-time", type=float, default=60.0, help="seconds for api.bound, where it exists")
    ap.add_argument("--bound-max-size", type=int, default=BOUND_MAX_SIZE,
                    help="model-size budget of api.bound, nonzeros (default: api.bound's, 2,000,000)")
    ap.add_argument("--lns-time", type=float, default=120.0,
                    help="seconds of large-neighbourhood search from the best algorithm (0: none; default 120)")
    ap.add_argument("--before", type=Path, default=BEFORE,
                    help="the previous result to compare with (default: the tracked cross_family.json)")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--windows", default="quiet,typical,busiest")
    ap.add_argument("--suffix", default="", help="appended to the result file's name")
    args = ap.parse_args(argv)
    seed = args.seeds[0]
    for name, value in (("--bound-time", args.bound_time), ("--lns-time", args.lns_time)):
        if not (math.isfinite(value) and 0 <= value <= 86400):
            ap.error(f"{name}: seconds in [0, 86400], got {value}")
    old = json.loads(args.before.read_text()) if args.before and args.before.is_file() else None
    path = result_path(args.out, f"cross_family{args.suffix}.json")
    jobs = traces.load_itp()
    load = weekly_load(jobs, args.cluster)
    chosen = choose_windows(load)
    report: dict[str, Any] = {
        "trace": "Microsoft ITP (ElasticFlow), shipped copy", "cluster": args.cluster, "gpus": args.gpus,
        "seed": seed, "bound_time_s": args.bound_time, "bound_max_size": args.bound_max_size,
        "lns_time_s": args.lns_time, "lns_method": LNS_METHOD,
        "lns_note": f"{args.lns_time:g} s of LNS and {args.bound_time:g} s of bound per family and week on a "
                    "shared 2-core machine (the committed run: 120 s each; 600 s each would be the ideal)",
        "before_source": str(args.before) if old else None,
        "weekly_load": load.to_dict(orient="records"), "windows": {}, "complete": False}
    for label in args.windows.split(","):
        week = chosen[label]
        start = week * WEEK_S
        wl = load[load["week"] == week].iloc[0]
        entry: dict[str, Any] = {"week": week, "start_s": start, "end_s": start + WEEK_S, "jobs": int(wl["jobs"]),
                                 "gpu_hours": float(wl["gpu_hours"]),
                                 "load": float(wl["gpu_hours"]) / (args.gpus * 168.0), "families": []}
        for family in args.families.split(","):
            res = run_family(family, jobs, start, args.cluster, args.gpus, seed, args.bound_time,
                             args.bound_max_size, args.lns_time, before_entry(old, label, family))
            entry["families"].append(res)
            report["windows"][label] = entry
            _write(path, report)  # after every family: a long run interrupted keeps what it measured
            cb = res["certified_bound"]
            print(f"{label:8s} {family:10s} bound used: {res['bound_kind']} {res['bound']:.6g} "
                  f"(trivial {res['trivial_bound']:.6g}; api.bound {cb.get('method', '-')} {cb.get('status', '-')} "
                  f"{cb.get('value')} checked {cb.get('checked')} in {cb.get('cpu_s', '-')} s CPU"
                  f"{', error: ' + cb['error'] if 'error' in cb else ''}"
                  f"{', check failed: ' + cb['check_error'] if 'check_error' in cb else ''})", flush=True)
            for r in res["rows"]:
                ratio = f"{r['ratio_to_bound']:.3f}" if "ratio_to_bound" in r else (
                    f"{r.get('rejected', 0)} rejected" if r["status"] == "partial" else "-")
                print(f"{label:8s} {family:10s} {r['algorithm']:18s} {r['status']:9s} "
                      f"{r.get('objective') if r.get('objective') is not None else '-'!s:>14.14s} {ratio:>12s} "
                      f"{r.get('cpu_s', '-')!s:>8s}  [{res['bound_name'].split(':')[0]}]", flush=True)
            lns, iv, mv = res.get("lns") or {}, res["interval"], res.get("moved") or {}
            if lns:
                print(f"{label:8s} {family:10s} lns from {lns['warm_start']}: {lns.get('objective')} "
                      f"({lns.get('search', {}).get('improvements')} improvements, {lns.get('cpu_s')} s CPU"
                      f"{', error: ' + lns['error'] if 'error' in lns else ''})", flush=True)
            gap = f"{iv['gap']:.1%}" if iv.get("gap") is not None else "-"
            was = mv.get("gap_before_best")
            print(f"{label:8s} {family:10s} interval [{iv['bound']:.6g}, {iv.get('best')}] by {iv.get('best_by')}: "
                  f"gap {gap} (before {was if was is None else f'{was:.1%}'}; moved: {mv.get('sides')})", flush=True)
        report["windows"][label] = entry
    report["cpu_s_total"] = cpu_seconds()
    report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    report["machine"] = "2 cores shared with other jobs: CPU times, not wall times"
    report["complete"] = True
    _write(path, report)
    print(f"wrote {path}; CPU {report['cpu_s_total']:.1f} s, peak RSS {report['peak_rss_mb']:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
