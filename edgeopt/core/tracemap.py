"""Family-neutral pieces of turning a job trace into an instance: arrivals, work, horizons, machines.

Each family's own mapping (``edgeopt/<family>/trace.py``, reached through `FamilySpec.from_trace`) is
built from these; ``edgeopt.traces`` holds the readers, the windows and the common checks above them.
See ``edgeopt.traces.instances`` for what every family takes from a trace.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from edgeopt.core import InputError
from edgeopt.core import bounds as B


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


def arrival_slots(jobs: pd.DataFrame, start_s: float, slot_seconds: float) -> np.ndarray:
    return np.floor((jobs["submit_s"].to_numpy() - start_s) / slot_seconds).astype(np.int64)


def work_slots(jobs: pd.DataFrame, slot_seconds: float) -> np.ndarray:
    return jobs["gpus"].to_numpy(dtype=np.float64) * jobs["duration_s"].to_numpy(dtype=np.float64) / slot_seconds


def days(seconds: float) -> str:
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
                                   f"{days(cap * slot_seconds)}): pass a --window shorter than that, or fewer --jobs")
    ends = arrivals + np.ceil(run_s / slot_seconds)
    k = int(np.argmax(ends))
    if ends[k] > cap:
        raise InputError("window", f"trace job {jobs['job_id'].iloc[k]!r} runs {run_s[k]:,.0f} s "
                                   f"({days(run_s[k])}) from slot {int(arrivals[k]):,} and ends after the longest "
                                   f"horizon {family} allows ({cap:,} slots of {slot_seconds:g} s): pass a --window "
                                   f"(or --cluster) without it, or one that starts later")


def list_horizon(arrivals: np.ndarray, work_slots: np.ndarray, gpus: np.ndarray, capacity: float,
                 extra: int = 0) -> int:
    """A horizon with room for a list schedule: last arrival + all work spread on ``capacity`` GPUs +
    twice the longest job (at its trace GPU count) + ``extra`` (delays), + 1."""
    longest = float(np.max(work_slots / np.maximum(gpus, 1))) if len(work_slots) else 0.0
    spread = float(work_slots.sum()) / max(capacity, 1.0)
    return int(min(B.MAX_HORIZON, int(arrivals.max(initial=0)) + math.ceil(spread + 2 * longest) + extra + 1))


def machine_rows(machines: pd.DataFrame | None, servers: int | None, rng: np.random.Generator
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
