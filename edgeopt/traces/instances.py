"""Trace-driven instances: one window of a job trace -> an instance of any family.

What every family takes from the trace (the per-family details are in each family's own mapping,
``edgeopt/<family>/trace.py``, reached through `FamilySpec.from_trace`, and in docs/families/<family>.md,
section "From a trace"; the family-neutral helpers are in `edgeopt.core.tracemap`):

* **Arrivals.** ``a_j = floor((submit_s - start) / slot_seconds)``, ``start`` the window's start (or
  the first submission): the papers map Philly submissions to slots of one hour (She et al., Wang
  et al.); each family keeps its own slot length.
* **Work.** A job that ran ``g`` GPUs for ``d`` seconds did ``W = g * d / slot_seconds`` GPU-slots of
  work. The family's counts of epochs x chunks x mini-batches are chosen so that, at the per-worker
  speed the family's paper draws, the job needs ``W`` worker-slots: ``steps = W / t`` mini-batches
  (``t`` the drawn time per mini-batch), chunks and mini-batches per chunk drawn from the paper's
  ranges (lowered when the job is too short for them), epochs ``= steps / (chunks x mini-batches)``;
  then ``t`` is rescaled by the rounding (``E D M t = W`` exactly, so a job's work on one GPU equals
  the trace's GPU time). See `edgeopt.core.tracemap.factor_work`.
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
    from edgeopt import families
    from edgeopt.traces.select import window as select

    spec = families.get_family(family)
    if spec.from_trace is None:
        raise InputError("family", f"family {family!r} has no trace mapping")
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
    allowed = set(spec.trace_options)
    for key in options:
        if key not in allowed:
            raise InputError(key, f"no trace option {key!r} for {family} (known: {', '.join(sorted(allowed)) or 'none'})")
    try:
        return spec.from_trace(picked, origin, seed, servers, machines, **options)
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
