"""Cutting a window of jobs out of a trace table."""

from __future__ import annotations

import math

import pandas as pd

from edgeopt.core import InputError


def _seconds(text: str, field: str) -> float:
    """``3600``, ``90m``, ``36h``, ``7d``, ``2w`` -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
    t = text.strip().lower()
    scale = units.get(t[-1:], None)
    num = t[:-1] if scale else t
    try:
        value = float(num) * (scale or 1)
    except ValueError:
        raise InputError(field, f"{text!r} is not a time (seconds, or a number with s/m/h/d/w)") from None
    if not math.isfinite(value) or value < 0:
        raise InputError(field, f"{text!r} must be a finite time >= 0")
    return value


def parse_window(text: str) -> tuple[float, float]:
    """``START:END`` (seconds of the trace's clock, or with a unit: ``14d:21d``) -> (start_s, end_s)."""
    start, sep, end = text.partition(":")
    if not sep:
        raise InputError("window", f"{text!r} is not START:END (e.g. 14d:21d or 1209600:1814400)")
    s, e = _seconds(start, "window"), _seconds(end, "window")
    if e <= s:
        raise InputError("window", f"END must be after START, got {text!r}")
    return s, e


def window(jobs: pd.DataFrame, *, start_s: float | None = None, end_s: float | None = None,
           cluster: str | None = None, n_jobs: int | None = None, ran_only: bool = True) -> pd.DataFrame:
    """The jobs submitted in ``[start_s, end_s)`` (of one ``cluster`` when given), at most the first
    ``n_jobs`` of them; with ``ran_only``, only jobs with a known duration > 0 and at least one GPU
    (the families schedule GPU training jobs). The index is reset to ``0 .. n-1``."""
    mask = pd.Series(True, index=jobs.index)
    if start_s is not None:
        mask &= jobs["submit_s"] >= start_s
    if end_s is not None:
        mask &= jobs["submit_s"] < end_s
    if cluster is not None:
        if cluster not in set(jobs["cluster"]):
            known = sorted(set(jobs["cluster"]))
            raise InputError("cluster", f"no cluster {cluster!r} in the trace (known: {', '.join(known[:20])})")
        mask &= jobs["cluster"] == cluster
    if ran_only:
        mask &= jobs["duration_s"].notna() & (jobs["duration_s"] > 0) & (jobs["gpus"] >= 1)
    out = jobs[mask]
    if n_jobs is not None:
        if n_jobs < 1:
            raise InputError("jobs", f"must be >= 1, got {n_jobs}")
        out = out.head(n_jobs)
    return out.reset_index(drop=True)
