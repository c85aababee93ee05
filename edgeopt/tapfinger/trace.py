"""tapfinger: an instance from a window of a job trace (what ``edgeopt generate tapfinger --trace`` builds).

The family-neutral steps (window, arrivals, work, horizon checks) are in `edgeopt.traces.instances` and
`edgeopt.core.tracemap`; this module is the tapfinger mapping itself, described in docs/families/tapfinger.md,
section "From a trace". `edgeopt.tapfinger.spec` hands it to the core as ``FamilySpec.from_trace``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from edgeopt.core import InputError
from edgeopt.core.family import model_limits, parse_model
from edgeopt.core.tracemap import arrival_slots, check_fits, list_horizon, machine_rows
from edgeopt.tapfinger import instance as tf
from edgeopt.tapfinger.instance import Instance

#: The longest horizon a tapfinger instance may have (what ``edgeopt generate --horizon`` allows).
HORIZON_LIMIT = int(model_limits(Instance, horizon="horizon")["horizon"])


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


def from_trace(jobs: pd.DataFrame, start_s: float, seed: int, servers: int | None,
               machines: pd.DataFrame | None, task_types: str = "binned") -> Any:

    rng = np.random.default_rng([seed, 5])
    step = TAPFINGER_TIMESTEP_S
    rows = machine_rows(machines, None, rng)
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
    arrivals = arrival_slots(jobs, start_s, step)
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
    return parse_model(Instance, root="instance", data={
        "horizon": int(min(T, tf.MAX_HORIZON)), "timestep_seconds": step,
        "clusters": [{"name": f"edge{n}", "capacity": [int(c), int(g)]} for n, (c, g) in enumerate(caps)],
        "task_types": task_types_json, "tasks": tasks, "noise": 0.0, "noise_seed": int(seed)})
