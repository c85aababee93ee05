"""One real workload across the five papers: a week of one ITP cluster -> an instance of every family.

Regime. The shipped Microsoft ITP (ElasticFlow) trace; one cluster (``--cluster``, default cluster06);
three of its full weeks chosen by measured load (GPU-hours submitted per week): the quietest, the median
("typical") and the busiest. Each week becomes an instance of every family through
`edgeopt.traces.instances.from_trace` (docs/families/<family>.md, "From a trace"), with the same GPU
capacity for all three weeks: ``--gpus`` (default 96, about the cluster's mean GPU demand over the
whole trace, 86 GPUs), i.e. as many of the family's own servers as hold that many GPUs on average.
Every registered algorithm of the family runs (online algorithm and baselines); every schedule is
validated; a result that rejected jobs (``partial``) gets no ratio.

Ratios are to a lower bound, never to an optimum (no exact model scales to these sizes); each ratio
names its bound (``ratio_against``): the certified ``api.bound`` (``method="auto"``, at most
``--bound-time`` seconds), used only after ``api.check_bound`` has recomputed it from its certificate and
only where it is at least the family's trivial bound; else the trivial bound (sum over jobs of the least
cost each could have alone: `trivial_bound`). Both bounds, the bound's status, CPU time and check are
recorded per family and window.

    python benchmarks/cross_family.py [--cluster cluster06] [--gpus 96] [--seeds 0] [--bound-time 60]
        [--bound-max-size 8000000]
        [--families ...] [--windows quiet,typical,busiest] [--out benchmarks/results]

CPU time (time.process_time) and peak RSS are reported; the machine may be shared, so wall times are not.
"""

from __future__ import annotations

import json
import math
import resource
import sys
import time
from typing import Any

import pandas as pd

from edgeopt import api, traces
from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import InputError, ModelError
from edgeopt.traces.instances import from_trace

WEEK_S = 7 * 86400.0
FAMILIES = ("edgecloud", "hetero", "preemptive", "okita", "tapfinger")
#: Mean GPUs per server of each family's own server draw when no machine list is given (docs/families).
#: Trace options: tapfinger with the paper's two task types, so that its trained policies (A_online) run.
TRACE_OPTIONS = {"tapfinger": {"task_types": "two"}}
#: api.bound's model-size budget here (nonzeros of the full relaxation). Its default, 2,000,000, refuses
#: tapfinger's time-indexed relaxation of the typical and busiest weeks (3.2 M and 5.6 M nonzeros), which
#: column generation never builds in full (its master holds only generated columns: about 330 MB peak).
BOUND_MAX_SIZE = 8_000_000
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


def certified_bound(inst: Any, time_limit: float, max_model_size: int | None = None) -> dict[str, Any]:
    """``api.bound(method="auto")`` within ``time_limit`` s (and ``max_model_size`` nonzeros, the budget of
    `api.bound`), its certificate re-checked by ``api.check_bound``.

    Returns what happened, always: method, status, value, CPU and wall seconds of the bound and of the
    check. ``usable`` is true only when the status is ``bound`` and the independent check recomputed the
    same number; the value used is then the checked one.
    """
    out: dict[str, Any] = {"usable": False}
    fn = getattr(api, "bound", None)
    if fn is None:
        out["error"] = "this edgeopt has no api.bound"
        return out
    t0 = time.process_time()
    try:
        res = fn(inst, method="auto", time_limit=time_limit, max_model_size=max_model_size)
    except (InputError, ModelError, NotImplementedError) as exc:
        out.update(error=str(exc).splitlines()[0], cpu_s=round(time.process_time() - t0, 3))
        return out
    out.update(method=res.algorithm, status=res.status.value, value=res.bound, time_limit_s=time_limit,
               max_model_size=max_model_size,
               cpu_s=round(time.process_time() - t0, 3), wall_s=round(res.runtime_s, 3))
    extra = res.extra if isinstance(res.extra, dict) else {}
    if "reason" in extra:
        out["reason"] = str(extra["reason"]).splitlines()[0]
    if isinstance(extra.get("solver"), dict):
        out["solver"] = extra["solver"]
    if res.status.value != "bound" or res.bound is None or not math.isfinite(res.bound):
        return out
    t0 = time.process_time()
    try:
        checked = float(api.check_bound(inst, res))
    except ModelError as exc:
        out.update(check_error=str(exc).splitlines()[0], check_cpu_s=round(time.process_time() - t0, 3))
        return out
    out.update(checked=checked, check_cpu_s=round(time.process_time() - t0, 3), usable=True)
    return out


def best_bound(family: str, inst: Any, time_limit: float, max_model_size: int | None = None) -> dict[str, Any]:
    """The larger of the family's trivial bound and the certified ``api.bound`` (used only once its
    certificate has been re-checked), with both recorded and the one used named in ``bound_name``."""
    t0 = time.process_time()
    value, name = trivial_bound(family, inst)
    out: dict[str, Any] = {"trivial_bound": value, "trivial_bound_name": name,
                           "trivial_bound_cpu_s": round(time.process_time() - t0, 3)}
    cert = certified_bound(inst, time_limit, max_model_size)
    out["certified_bound"] = cert
    if cert["usable"] and cert["checked"] >= value:
        out.update(bound=cert["checked"], bound_kind="certified",
                   bound_name=f"certified: api.bound {cert['method']} (certificate re-checked)")
    else:
        out.update(bound=value, bound_kind="trivial", bound_name=name)
    return out


def run_family(family: str, jobs: pd.DataFrame, start: float, cluster: str, gpus: float, seed: int,
               bound_time: float, bound_max_size: int | None = None) -> dict[str, Any]:
    servers = max(1, math.ceil(gpus / GPUS_PER_SERVER[family]))
    t0 = time.process_time()
    inst = from_trace(family, jobs, window=(start, start + WEEK_S), cluster=cluster, seed=seed, servers=servers,
                      **TRACE_OPTIONS.get(family, {}))
    out: dict[str, Any] = {"family": family, "jobs": len(inst.jobs), "servers": servers, "horizon": inst.horizon,
                           "build_cpu_s": round(time.process_time() - t0, 3),
                           "objective_name": api.family(family).objective_name}
    out.update(best_bound(family, inst, bound_time, bound_max_size))
    rows = []
    for name, algo in api.algorithms(family).items():
        row: dict[str, Any] = {"algorithm": name, "kind": algo.kind, "relaxed": algo.relaxed}
        t0 = time.process_time()
        try:
            res = api.run(name, inst, seed=seed)
        except (InputError, ImportError) as exc:
            row.update(status="not run", reason=str(exc).splitlines()[0])
            rows.append(row)
            continue
        row["cpu_s"] = round(time.process_time() - t0, 3)
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
    return out


def main(argv: list[str] | None = None) -> int:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--cluster", default="cluster06", help="ITP cluster (default cluster06)")
    ap.add_argument("--gpus", type=float, default=96.0, help="GPU capacity of every instance (default 96)")
    ap.add_argument("--bound-time", type=float, default=60.0, help="seconds for api.bound, where it exists")
    ap.add_argument("--bound-max-size", type=int, default=BOUND_MAX_SIZE,
                    help=f"model-size budget of api.bound, nonzeros (default {BOUND_MAX_SIZE:,})")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--windows", default="quiet,typical,busiest")
    ap.add_argument("--suffix", default="", help="appended to the result file's name")
    args = ap.parse_args(argv)
    seed = args.seeds[0]
    jobs = traces.load_itp()
    load = weekly_load(jobs, args.cluster)
    chosen = choose_windows(load)
    report: dict[str, Any] = {
        "trace": "Microsoft ITP (ElasticFlow), shipped copy", "cluster": args.cluster, "gpus": args.gpus,
        "seed": seed, "bound_time_s": args.bound_time, "bound_max_size": args.bound_max_size, "weekly_load": load.to_dict(orient="records"), "windows": {}}
    for label in args.windows.split(","):
        week = chosen[label]
        start = week * WEEK_S
        wl = load[load["week"] == week].iloc[0]
        entry: dict[str, Any] = {"week": week, "start_s": start, "end_s": start + WEEK_S, "jobs": int(wl["jobs"]),
                                 "gpu_hours": float(wl["gpu_hours"]),
                                 "load": float(wl["gpu_hours"]) / (args.gpus * 168.0), "families": []}
        for family in args.families.split(","):
            res = run_family(family, jobs, start, args.cluster, args.gpus, seed, args.bound_time,
                             args.bound_max_size)
            entry["families"].append(res)
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
        report["windows"][label] = entry
    report["cpu_s_total"] = time.process_time()
    report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    report["machine"] = "2 cores shared with other jobs: CPU times, not wall times"
    path = result_path(args.out, f"cross_family{args.suffix}.json")
    path.write_text(json.dumps(report, indent=1, default=float) + "\n")
    print(f"wrote {path}; CPU {report['cpu_s_total']:.1f} s, peak RSS {report['peak_rss_mb']:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
