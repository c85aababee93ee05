"""Trace-driven instances: one window of a job trace -> an instance of any family.

What every family takes from the trace (the per-family details are in each ``_<family>`` function and
in docs/families/<family>.md, section "From a trace"):

* **Arrivals.** ``a_j = floor((submit_s - start) / slot_seconds)``, ``start`` the window's start (or
  the first submission): the papers map Philly submissions to slots of one hour (She et al., Wang
  et al.); each family keeps its own slot length.
* **Work.** A job that ran ``g`` GPUs for ``d`` seconds did ``W = g * d / slot_seconds`` GPU-slots of
  work. The family's counts of epochs x chunks x mini-batches are chosen so that, at the per-worker
  speed the family's paper draws, the job needs ``W`` worker-slots: ``steps = W / t`` mini-batches
  (``t`` the drawn time per mini-batch), chunks and mini-batches per chunk drawn from the paper's
  ranges (lowered when the job is too short for them), epochs ``= steps / (chunks x mini-batches)``;
  then ``t`` is rescaled by the rounding (``E D M t = W`` exactly, so a job's work on one GPU equals
  the trace's GPU time). See `factor_work`.
* **GPUs.** ``g`` becomes the job's worker count (preemptive: its gang size; edgecloud, hetero: the
  most workers it may use is at least ``g``; okita: one GPU per worker; tapfinger: its minimum GPU
  demand, capped at the largest cluster).
* **Machines.** With a machine list, servers / sites / clusters get the machines' GPUs (and CPUs,
  memory where listed); otherwise the paper's own server distribution is drawn.
* Everything the trace lacks (worker types, PS times, gradient sizes, bandwidths, upload delays,
  weights, latency costs...) is drawn from the paper's distributions with ``seed``.
* **Limits.** The instance gets the limits ``edgeopt generate`` has (`edgeopt.core.bounds`, the family's
  horizon limit): a window whose arrivals, or a job whose arrival + run time (at its trace GPUs), pass the
  family's longest horizon, and a preemptive window whose safe horizon (last arrival + all the work one
  chunk after another) does, is an `InputError` that names the limit and what to pass (a shorter
  ``--window``, fewer ``--jobs``), never an instance no algorithm can finish.

Same arguments -> the same instance, byte for byte (the CLI writes canonical JSON).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pydantic

from edgeopt.core import InputError
from edgeopt.core import bounds as B
from edgeopt.core.family import input_error

#: Most jobs one trace-driven instance takes (the families' own list bound).
MAX_TRACE_JOBS = B.MAX_JOBS


def factor_work(work_slots: float, step_slots: float, chunks: int, per_chunk: int, *,
                min_chunks: int = 1, max_count: int = B.MAX_COUNT) -> tuple[int, int, int, float]:
    """``(E, D, M, t')``: epochs, chunks, mini-batches per chunk and time per mini-batch (slots) with
    ``E * D * M * t' == work_slots``.

    ``steps = round(work_slots / step_slots)`` mini-batches at the drawn speed ``step_slots``; ``D`` is
    the drawn ``chunks`` (at least ``min_chunks``, at most ``max(min_chunks, steps)``), ``M`` the drawn
    ``per_chunk`` (lowered to ``steps // D``, at least 1), ``E = round(steps / (D M))`` in
    ``[1, max_count]`` (``M`` raised when ``E`` would pass ``max_count``). ``t' = work_slots / (E D M)``
    stays within a factor of about 2 of ``step_slots`` except for jobs shorter than one mini-batch.
    """
    steps = max(1, round(work_slots / step_slots))
    D = int(min(max(chunks, min_chunks), max(min_chunks, steps), max_count))
    M = int(max(1, min(per_chunk, steps // D)))
    E = int(min(max(1, round(steps / (D * M))), max_count))
    if E == max_count and steps > D * M * E:
        M = int(min(max_count, math.ceil(steps / (D * E))))
    return E, D, M, work_slots / (E * D * M)


def _arrivals(jobs: pd.DataFrame, start_s: float, slot_seconds: float) -> np.ndarray:
    return np.floor((jobs["submit_s"].to_numpy() - start_s) / slot_seconds).astype(np.int64)


def _work_slots(jobs: pd.DataFrame, slot_seconds: float) -> np.ndarray:
    return jobs["gpus"].to_numpy(dtype=np.float64) * jobs["duration_s"].to_numpy(dtype=np.float64) / slot_seconds


def horizon_limit(family: str) -> int:
    """The longest horizon ``family``'s instances may have (what ``edgeopt generate --horizon`` allows)."""
    from edgeopt import families

    return int(families.get_family(family).limits["horizon"])


def _days(seconds: float) -> str:
    return f"{seconds / 86400:,.1f} days"


def check_fits(family: str, jobs: pd.DataFrame, arrivals: np.ndarray, run_s: np.ndarray, slot_seconds: float,
               cap: int) -> None:
    """Refuse a window that the family's longest horizon ``cap`` (slots of ``slot_seconds``) cannot hold.

    Without this the horizon would be clamped to ``cap`` and a job arriving or ending after it would be
    a validation error on an instance field (or, ending late, a job no algorithm can finish). ``run_s``:
    each job's run time in seconds at its trace GPUs.
    """
    if not len(arrivals):
        return
    last = int(np.argmax(arrivals))
    if arrivals[last] >= cap:
        raise InputError("window", f"the jobs arrive over {int(arrivals[last]) + 1:,} slots of {slot_seconds:g} s, "
                                   f"beyond the longest horizon {family} allows ({cap:,} slots, "
                                   f"{_days(cap * slot_seconds)}): pass a --window shorter than that, or fewer --jobs")
    ends = arrivals + np.ceil(run_s / slot_seconds)
    k = int(np.argmax(ends))
    if ends[k] > cap:
        raise InputError("window", f"trace job {jobs['job_id'].iloc[k]!r} runs {run_s[k]:,.0f} s "
                                   f"({_days(run_s[k])}) from slot {int(arrivals[k]):,} and ends after the longest "
                                   f"horizon {family} allows ({cap:,} slots of {slot_seconds:g} s): pass a --window "
                                   f"(or --cluster) without it, or one that starts later")


def list_horizon(arrivals: np.ndarray, work_slots: np.ndarray, gpus: np.ndarray, capacity: float,
                 extra: int = 0) -> int:
    """A horizon with room for a list schedule: last arrival + all work spread on ``capacity`` GPUs +
    twice the longest job (at its trace GPU count) + ``extra`` (delays), + 1."""
    longest = float(np.max(work_slots / np.maximum(gpus, 1))) if len(work_slots) else 0.0
    spread = float(work_slots.sum()) / max(capacity, 1.0)
    return int(min(B.MAX_HORIZON, int(arrivals.max(initial=0)) + math.ceil(spread + 2 * longest) + extra + 1))


# ---- the families -----------------------------------------------------------------------------------

def _parse(family: str, data: dict[str, Any]) -> Any:
    """The instance through its family's own parser (every cap checked; an `InputError` naming the field)."""
    from edgeopt import families

    return families.get_family(family).parse_instance(data)


def _machine_rows(machines: pd.DataFrame | None, servers: int | None, rng: np.random.Generator
                  ) -> pd.DataFrame | None:
    """The GPU machines to use (all of them, or ``servers`` drawn without replacement, in list order)."""
    if machines is None:
        return None
    gpu = machines[machines["gpus"] > 0].reset_index(drop=True)
    if gpu.empty:
        raise InputError("machines", "the machine list has no GPU machine")
    if servers is not None and servers < len(gpu):
        keep = np.sort(rng.choice(len(gpu), size=servers, replace=False))
        gpu = gpu.iloc[keep].reset_index(drop=True)
    return gpu


def _edgecloud(jobs: pd.DataFrame, start_s: float, seed: int, servers: int | None,
               machines: pd.DataFrame | None) -> Any:
    from edgeopt.edgecloud import instance as ec

    rng = np.random.default_rng([seed, 1])
    slot = 3600.0
    n = len(jobs)
    base = ec.paper_instance(seed, jobs=n, servers=servers or 200, horizon=2).model_dump(mode="json")
    U, V = len(base["servers"][0]["workers"]), len(base["servers"][0]["ps"])
    rows = _machine_rows(machines, servers, rng)
    if rows is not None:
        edge = []
        for _, m in rows.iterrows():
            c = int(m["cpus"]) if not math.isnan(m["cpus"]) else int(rng.choice([4, 8]))
            edge.append({"is_cloud": False,
                         "workers": [int(x) for x in np.bincount(rng.integers(0, U, size=int(m["gpus"])), minlength=U)],
                         "ps": [int(x) for x in np.bincount(rng.integers(0, V, size=min(c, B.MAX_COUNT)), minlength=V)]})
        base["servers"] = edge + [base["servers"][-1]]
        for j in base["jobs"]:
            j["upload_delay_slots"] = [int(x) for x in rng.integers(1, 5, size=len(edge))] + \
                [j["upload_delay_slots"][-1]]
    arrivals = _arrivals(jobs, start_s, slot)
    check_fits("edgecloud", jobs, arrivals, jobs["duration_s"].to_numpy(dtype=float), slot,
               horizon_limit("edgecloud"))
    work = _work_slots(jobs, slot)
    gpus = jobs["gpus"].to_numpy()
    for k, j in enumerate(base["jobs"]):
        E, D, M, t = factor_work(work[k], j["worker_time_slots"] + j["ps_time_slots"], j["chunks"],
                                 j["minibatches_per_chunk"], min_chunks=int(min(gpus[k], B.MAX_COUNT)))
        j.update(arrival=int(arrivals[k]), epochs=E, chunks=D, minibatches_per_chunk=M,
                 worker_time_slots=max(t - j["ps_time_slots"], 1e-9))
    edge_gpus = sum(sum(s["workers"]) for s in base["servers"][:-1])
    # like the paper preset (T = 1.5 * 4096, last arrival 4096): the last arrival's geometric round
    # 2**k >= a_j must end by T, else the online algorithm has no window for it
    rounds = int(1.5 * 2 ** math.ceil(math.log2(int(arrivals.max()) + 1))) if len(arrivals) else 1
    base["horizon"] = int(min(B.MAX_HORIZON, max(rounds, list_horizon(arrivals, work, gpus, edge_gpus, extra=40))))
    return _parse("edgecloud", base)


def _hetero(jobs: pd.DataFrame, start_s: float, seed: int, servers: int | None,
            machines: pd.DataFrame | None) -> Any:
    from edgeopt.hetero import instance as he

    rng = np.random.default_rng([seed, 2])
    slot = 3600.0
    n = len(jobs)
    base = he.generate("paper", seed=seed, jobs=n, servers=servers or 150, horizon=150).model_dump(mode="json")
    rows = _machine_rows(machines, servers, rng)
    if rows is not None:
        caps = []
        for _, m in rows.iterrows():
            kind = he.EC2[list(he.EC2)[int(rng.integers(len(he.EC2)))]]
            cpus = float(m["cpus"]) if not math.isnan(m["cpus"]) else float(kind[1])
            mem = float(m["mem_gb"]) if not math.isnan(m["mem_gb"]) else float(kind[2])
            caps.append([float(m["gpus"]), cpus, mem, float(kind[3])])
        base["servers"] = [{"name": f"{r.machine_id}", "capacity": c} for r, c in zip(rows.itertuples(), caps,
                                                                                      strict=True)]
    else:  # the paper's EC2 P3/P2/G3 shapes, unscaled (real machines, not the paper's capacity fraction)
        kinds = list(he.EC2)
        base["servers"] = [{"name": f"h{h}-{k}", "capacity": [float(x) for x in he.EC2[k]]}
                           for h, k in enumerate(kinds[int(i)] for i in rng.integers(0, len(kinds),
                                                                                    size=servers or 150))]
    wt_gpus = np.array([t["demand"][0] for t in base["worker_types"]], dtype=float)
    arrivals = _arrivals(jobs, start_s, slot)
    check_fits("hetero", jobs, arrivals, jobs["duration_s"].to_numpy(dtype=float), slot, horizon_limit("hetero"))
    work = _work_slots(jobs, slot)
    gpus = jobs["gpus"].to_numpy()
    for k, j in enumerate(base["jobs"]):
        v = np.asarray(j["minibatch_time_slots"], dtype=float)
        ref = float(np.median(v * wt_gpus))  # GPU-slots per mini-batch of a typical worker type
        E, D, K, t = factor_work(work[k], ref, int(gpus[k]), j["minibatches_per_chunk"],
                                 min_chunks=int(min(gpus[k], B.MAX_COUNT)))
        scale = t / ref
        j.update(arrival=int(arrivals[k]), epochs=E, chunks=D, minibatches_per_chunk=K,
                 minibatch_time_slots=[float(min(max(x * scale, 1e-9), B.MAX_SLOTS_PER_STEP)) for x in v])
    total_gpus = sum(s["capacity"][0] for s in base["servers"])
    base["horizon"] = list_horizon(arrivals, work, gpus, total_gpus)
    return _parse("hetero", base)


def _preemptive(jobs: pd.DataFrame, start_s: float, seed: int, servers: int | None,
                machines: pd.DataFrame | None) -> Any:
    from edgeopt.preemptive import instance as pe

    rng = np.random.default_rng([seed, 3])
    slot = 3600.0
    n = len(jobs)
    # the paper preset's draws without its instance, whose safe horizon (of the drawn work) passes the
    # horizon limit beyond a few thousand jobs; the work and arrivals are replaced below
    sv0, js0 = pe.paper_draws(np.random.default_rng(seed), n, servers or 100, False)
    base = pe.Instance.model_construct(name="paper", horizon=1, slot_seconds=3600.0, servers=sv0,
                                       jobs=[pe.Job(**j) for j in js0]).model_dump(mode="json")
    rows = _machine_rows(machines, servers, rng)
    types = sorted({w for s in base["servers"] for w in s["workers"]})
    if rows is not None:
        edge = []
        for r, m in enumerate(rows.itertuples()):
            nw = int(m.gpus)
            ps = int(m.cpus) if not math.isnan(m.cpus) else int(nw * rng.integers(2, 5))
            edge.append({"name": f"edge{r}", "is_cloud": False,
                         "workers": [int(x) for x in rng.choice(types, size=nw)], "ps": min(ps, B.MAX_COUNT),
                         "storage_mb": None})
        base["servers"] = edge + [base["servers"][-1]]
        for j in base["jobs"]:
            j["upload_delay_slots"] = [int(x) for x in rng.integers(1, 5, size=len(edge))] + \
                [j["upload_delay_slots"][-1]]
    arrivals = _arrivals(jobs, start_s, slot)
    cap = horizon_limit("preemptive")
    check_fits("preemptive", jobs, arrivals, jobs["duration_s"].to_numpy(dtype=float), slot, cap)
    work = _work_slots(jobs, slot)
    gpus = jobs["gpus"].to_numpy()
    for k, j in enumerate(base["jobs"]):
        E, D, Bc, t = factor_work(work[k], j["worker_time_slots"] + j["ps_time_slots"], j["chunks"],
                                  j["minibatches_per_chunk"])
        j.update(arrival=int(arrivals[k]), epochs=E, chunks=D, minibatches_per_chunk=Bc,
                 worker_time_slots=max(t - j["ps_time_slots"], 1e-9),
                 requested_workers=int(max(1, min(gpus[k], D))))
    data = {k: v for k, v in base.items()}
    sv = [pe.Server(**s) for s in data["servers"]]
    data["horizon"] = pe._safe_horizon(sv, data["jobs"], data["slot_seconds"])
    if data["horizon"] > cap:
        # the safe horizon grows with every job: the longest prefix of the window that fits, by bisection
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if pe._safe_horizon(sv, data["jobs"][:mid], data["slot_seconds"]) <= cap:
                lo = mid
            else:
                hi = mid - 1
        what = (f"pass --jobs {lo} or fewer, or a shorter --window" if lo else
                f"trace job {jobs['job_id'].iloc[0]!r} alone does not fit: pass a --window (or --cluster) without it")
        raise InputError("jobs", f"the {n:,} jobs need a horizon of {data['horizon']:,} slots of {slot:g} s (the "
                                 f"last arrival + all their work one chunk after another, so that every algorithm "
                                 f"finishes), beyond the longest preemptive allows ({cap:,}): {what}")
    data["name"] = "trace"
    return _parse("preemptive", data)


def _okita(jobs: pd.DataFrame, start_s: float, seed: int, servers: int | None,
           machines: pd.DataFrame | None) -> Any:
    from edgeopt.okita import instance as ok

    rng = np.random.default_rng([seed, 4])
    # the paper's linear latency cost (Sec. V-B), not its default exponential one: f = tau * exp(0.25 x)
    # passes 10**10 at a latency of 100 slots, which real jobs of hours to days reach, so the exponential
    # cost would rank schedules by their single latest job
    base = ok.generate("paper_linear", seed=seed, jobs=len(jobs), servers=servers or 50).model_dump(mode="json")
    slot = float(base["slot_seconds"])
    rows = _machine_rows(machines, servers, rng)
    if rows is not None:
        kinds = list(ok.EC2.values())
        sites = []
        for m in rows.itertuples():
            kind = kinds[int(rng.integers(len(kinds)))]
            sites.append({"name": str(m.machine_id), "capacity": [
                float(m.gpus), float(m.cpus) if not math.isnan(m.cpus) else float(kind[1]),
                float(m.mem_gb) if not math.isnan(m.mem_gb) else float(kind[2]), float(kind[3])]})
        R = len(sites)
        base["sites"] = sites
        q = np.round(rng.uniform(0.02, 0.08, size=(R, R)), 3)
        q = np.triu(q, 1)
        base["bandwidth_cost_per_mb"] = [[float(v) for v in row] for row in q + q.T]
    R = len(base["sites"])
    arrivals = _arrivals(jobs, start_s, slot)
    cap = horizon_limit("okita")
    check_fits("okita", jobs, arrivals, jobs["duration_s"].to_numpy(dtype=float), slot, cap)
    work = _work_slots(jobs, slot)
    gpus = jobs["gpus"].to_numpy()
    for k, j in enumerate(base["jobs"]):
        per_worker = j["worker_chunks_per_slot"] / j["epochs"]  # chunks one worker trains per slot (2b)
        total = int(min(max(1, round(work[k] * per_worker)), 10**7))
        share = np.asarray(j["data_chunks"], dtype=float)[:R] if len(j["data_chunks"]) >= R else rng.uniform(10, 20, R)
        chunks = np.floor(total * share / share.sum()).astype(np.int64)
        chunks[int(np.argmax(share))] += total - int(chunks.sum())
        j.update(arrival=int(arrivals[k]), data_chunks=[int(x) for x in chunks],
                 worker_demand=[1.0] + list(j["worker_demand"][1:]))
    base["horizon"] = int(min(cap, list_horizon(arrivals, work, gpus, sum(s["capacity"][0] for s in base["sites"]))))
    return _parse("okita", base)


#: Timestep of trace-driven tapfinger instances, seconds (the paper's 10 s would give 60,480 steps a week).
TAPFINGER_TIMESTEP_S = 300.0


#: Speed-up law of the trace-driven tapfinger types: a task given ``x`` times its GPUs runs ``x**0.8`` faster.
SPEEDUP = 0.8


def _binned_types(gpus: np.ndarray, dur: np.ndarray, max_gpu: int) -> tuple[np.ndarray, list[dict]]:
    """Types = (GPU demand, one of 8 log-spaced duration bins); a type takes the geometric mean of its
    jobs' durations at its minimum GPUs, ``(g / gpu)**SPEEDUP`` of it with 2, 4, 8 times the GPUs."""
    edges = np.logspace(math.log10(max(dur.min(), 1.0)), math.log10(dur.max() + 1.0), 9)
    dbin = np.clip(np.searchsorted(edges, dur, side="right") - 1, 0, 7)
    keys = sorted({(int(g), int(b)) for g, b in zip(gpus, dbin, strict=True)})
    if len(keys) > 64:
        raise InputError("trace", f"the window needs {len(keys)} tapfinger task types (at most 64)")
    out = []
    for g, b in keys:
        secs = float(np.exp(np.mean(np.log(dur[(gpus == g) & (dbin == b)]))))
        table = [{"cpu": 0, "gpu": g * 2**k, "seconds": min(secs / (2**k) ** SPEEDUP, 1e7)}
                 for k in range(4) if g * 2**k <= max_gpu]
        out.append({"name": f"g{g}-d{b}", "progress": {"kind": "table", "table": table}})
    index = {key: t for t, key in enumerate(keys)}
    return np.array([index[(int(g), int(b))] for g, b in zip(gpus, dbin, strict=True)]), out


def _two_types(gpus: np.ndarray, dur: np.ndarray, max_gpu: int) -> tuple[np.ndarray, list[dict]]:
    """Two types, as many as the paper's (and its trained policies): ``short`` and ``long``, split at the
    median one-GPU-equivalent time ``d g**SPEEDUP``; each type's one-GPU time is the geometric mean of its
    jobs', and ``gpu`` GPUs take ``gpu**-SPEEDUP`` of it (table entries at 1, 2, 4, ... GPUs)."""
    one_gpu = dur * np.maximum(gpus, 1) ** SPEEDUP
    kind = (one_gpu > np.median(one_gpu)).astype(int)
    out = []
    for t, name in enumerate(("short", "long")):
        sel = one_gpu[kind == t] if (kind == t).any() else one_gpu
        secs = float(np.exp(np.mean(np.log(sel))))
        table = [{"cpu": 0, "gpu": 2**k, "seconds": min(secs / (2**k) ** SPEEDUP, 1e7)}
                 for k in range(11) if 2**k <= max_gpu]
        out.append({"name": name, "progress": {"kind": "table", "table": table}})
    return kind, out


def _tapfinger(jobs: pd.DataFrame, start_s: float, seed: int, servers: int | None,
               machines: pd.DataFrame | None, task_types: str = "binned") -> Any:
    from edgeopt.tapfinger import instance as tf

    rng = np.random.default_rng([seed, 5])
    step = TAPFINGER_TIMESTEP_S
    rows = _machine_rows(machines, None, rng)
    n_clusters = servers or 3
    if rows is not None:  # machines dealt round-robin into clusters, capacities capped at the model's limit
        caps = np.zeros((n_clusters, 2))
        for i, m in enumerate(rows.itertuples()):
            cpus = m.cpus if not math.isnan(m.cpus) else 2 * m.gpus
            caps[i % n_clusters] += (cpus, m.gpus)
        caps = np.minimum(caps, tf.MAX_CAPACITY).astype(int)
    else:
        caps = np.array([(16, 16)] * n_clusters)
    max_gpu = int(caps[:, 1].max())
    gpus = np.minimum(jobs["gpus"].to_numpy(), max_gpu)
    dur = jobs["duration_s"].to_numpy(dtype=float) * jobs["gpus"].to_numpy() / np.maximum(gpus, 1)
    cpus = jobs["cpus"].to_numpy(dtype=float)
    min_cpu = np.where(np.isnan(cpus), 2, np.clip(np.ceil(cpus), 1, int(caps[:, 0].max()))).astype(int)
    if task_types == "binned":
        task_type, task_types_json = _binned_types(gpus, dur, max_gpu)
    elif task_types == "two":
        task_type, task_types_json = _two_types(gpus, dur, max_gpu)
    else:
        raise InputError("task_types", f"must be 'binned' or 'two', got {task_types!r}")
    arrivals = _arrivals(jobs, start_s, step)
    check_fits("tapfinger", jobs, arrivals, dur, step, tf.MAX_HORIZON)
    tasks = []
    for k in range(len(jobs)):
        reach = tf._reachable(rng, n_clusters, "bandwidth")
        fit = [c for c in reach if caps[c, 1] >= gpus[k] and caps[c, 0] >= min_cpu[k]]
        if not fit:
            fit = [int(np.argmax(caps[:, 1]))]
        tasks.append({"id": k, "arrival": int(arrivals[k]), "task_type": int(task_type[k]),
                      "min_resources": [int(min_cpu[k]), int(gpus[k])], "reachable_clusters": fit})
    work_steps = dur * np.maximum(gpus, 1) / step
    T = list_horizon(arrivals, work_steps, gpus, float(caps[:, 1].sum()))
    return _parse("tapfinger", {
        "horizon": int(min(T, tf.MAX_HORIZON)), "timestep_seconds": step,
        "clusters": [{"name": f"edge{n}", "capacity": [int(c), int(g)]} for n, (c, g) in enumerate(caps)],
        "task_types": task_types_json, "tasks": tasks, "noise": 0.0, "noise_seed": int(seed)})


BUILDERS: dict[str, Callable[..., Any]] = {
    "edgecloud": _edgecloud, "hetero": _hetero, "preemptive": _preemptive, "okita": _okita, "tapfinger": _tapfinger,
}


def from_trace(family: str, jobs: pd.DataFrame, *, machines: pd.DataFrame | None = None,
               window: tuple[float, float] | None = None, n_jobs: int | None = None, seed: int = 0,
               servers: int | None = None, cluster: str | None = None, **options: Any) -> Any:
    """An instance of ``family`` from a job table (`edgeopt.traces.load_jobs`).

    ``options``: tapfinger's ``task_types`` (``binned``, the default: up to 64 types, durations kept
    to within a bin; ``two``: the paper's number of types, so that its trained policies apply).

    ``window`` = ``(start_s, end_s)`` on the trace's clock selects jobs submitted in it (slot 0 starts at
    ``start_s``); ``cluster`` keeps one cluster; ``n_jobs`` keeps the first N; only jobs that ran (a
    duration > 0) on at least one GPU are used. ``servers`` overrides the number of servers / sites /
    clusters (or machines drawn from ``machines``).
    """
    from edgeopt.traces.select import window as select

    if family not in BUILDERS:
        raise InputError("family", f"unknown family {family!r} (known: {', '.join(BUILDERS)})")
    if seed < 0:
        raise InputError("seed", f"must be >= 0, got {seed}")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1):
        raise InputError("jobs", f"must be an integer >= 1, got {n_jobs!r}")
    if window is not None and not all(isinstance(t, (int, float)) and math.isfinite(t) for t in window):
        raise InputError("window", f"must be two finite times in seconds, got {window!r}")
    if servers is not None and not 1 <= servers <= B.MAX_SERVERS:
        raise InputError("servers", f"must be in [1, {B.MAX_SERVERS}], got {servers}")
    start, end = window if window is not None else (None, None)
    picked = select(jobs, start_s=start, end_s=end, cluster=cluster, n_jobs=n_jobs)
    if picked.empty:
        raise InputError("window", "no job of the trace (that ran on a GPU) was submitted in the window")
    if len(picked) > MAX_TRACE_JOBS:
        raise InputError("jobs", f"the window holds {len(picked)} jobs, above {MAX_TRACE_JOBS}; "
                                 "narrow --window or pass --jobs")
    origin = float(start) if start is not None else float(picked["submit_s"].min())
    allowed = {"tapfinger": {"task_types"}}.get(family, set())
    for key in options:
        if key not in allowed:
            raise InputError(key, f"no trace option {key!r} for {family} (known: {', '.join(sorted(allowed)) or 'none'})")
    try:
        return BUILDERS[family](picked, origin, seed, servers, machines, **options)
    except pydantic.ValidationError as exc:  # a model built on the way (not through _parse): one line too
        raise input_error(exc, None, root="instance") from None


def generate_from_files(family: str, trace: str | Path, *, machines: str | Path | None = None,
                        window: str | None = None, n_jobs: int | None = None, seed: int = 0,
                        servers: int | None = None, cluster: str | None = None, **options: Any) -> Any:
    """`from_trace` on files (what ``edgeopt generate FAMILY --trace FILE`` calls)."""
    from edgeopt.traces.loaders import load_jobs, load_machines
    from edgeopt.traces.select import parse_window

    if n_jobs is not None and n_jobs < 1:
        raise InputError("jobs", f"must be >= 1, got {n_jobs}")
    jobs = load_jobs(trace)
    table = load_machines(machines) if machines is not None else None
    return from_trace(family, jobs, machines=table, window=parse_window(window) if window else None,
                      n_jobs=n_jobs, seed=seed, servers=servers, cluster=cluster, **options)
