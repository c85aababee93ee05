"""Statistics of a job table: counts, arrival rate over time, quantiles, and their figures."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from edgeopt.core import InputError

QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)
#: Most arrival bins one call may count: 8 MB of counts. A bin of 3.6 ms over the shipped ITP trace's
#: 60 days would need 1.4 * 10**9 of them (10.7 GiB); the plot cannot show more than a few thousand anyway.
MAX_BINS = 10**6


def smallest_bin_s(jobs: pd.DataFrame) -> float:
    """The narrowest arrival bin (seconds) that `MAX_BINS` allows over ``jobs``' submissions."""
    if jobs.empty:
        return 0.0
    span = float(jobs["submit_s"].max() - jobs["submit_s"].min())
    # the first bin starts at or before the first submission, so the bins span up to one bin more
    return span / (MAX_BINS - 2)


def check_bin(jobs: pd.DataFrame, bin_s: float, *, field: str = "bin_s", unit_s: float = 1.0,
              unit: str = "s") -> None:
    """Refuse a bin width that is not a finite number > 0, or that needs more than `MAX_BINS` bins
    (`InputError` naming ``field``, with the smallest width allowed in ``unit`` = ``unit_s`` seconds)."""
    number = isinstance(bin_s, (int, float, np.integer, np.floating)) and not isinstance(bin_s, bool)
    if not (number and math.isfinite(bin_s) and bin_s > 0):
        raise InputError(field, f"must be a finite number of {unit} > 0, got {bin_s / unit_s if number else bin_s!r}")
    least = smallest_bin_s(jobs)
    if bin_s < least:
        allowed = float(f"{least / unit_s * 1.001:.3g}")  # rounded up, so the width given is allowed
        raise InputError(field, f"{bin_s / unit_s:g} {unit} needs more than {MAX_BINS:,} bins over the trace's "
                                f"{least * (MAX_BINS - 2) / 86400:,.1f} days of submissions: pass at least "
                                f"{allowed:g} {unit}")


def _quantiles(values: pd.Series) -> dict[str, float]:
    v = values.dropna().to_numpy(dtype=np.float64)
    if not len(v):
        return {}
    out = {f"p{round(q * 100)}": float(np.quantile(v, q)) for q in QUANTILES}  # numpy's default (linear)
    out.update(min=float(v.min()), max=float(v.max()), mean=float(v.mean()))
    return out


def arrival_counts(jobs: pd.DataFrame, bin_s: float = 3600.0) -> pd.Series:
    """Jobs submitted per bin of ``bin_s`` seconds, over ``[first, last]`` submission (empty bins kept);
    the index is the bin's start in seconds of the trace's clock. A bin width that is not finite and
    > 0, or that needs more than `MAX_BINS` bins, is an `InputError` (`check_bin`)."""
    check_bin(jobs, bin_s)
    if jobs.empty:
        return pd.Series([], dtype=np.int64)
    t0 = math.floor(jobs["submit_s"].min() / bin_s) * bin_s
    k = ((jobs["submit_s"] - t0) // bin_s).astype(np.int64)
    counts = np.bincount(k.to_numpy(), minlength=int(k.max()) + 1)
    return pd.Series(counts, index=t0 + bin_s * np.arange(len(counts)), name="jobs")


def trace_stats(jobs: pd.DataFrame, bin_s: float = 3600.0) -> dict[str, Any]:
    """Job count, span, arrival rate per bin, quantiles of GPUs and durations, GPU-hours, per cluster."""
    counts = arrival_counts(jobs, bin_s)
    ran = jobs["duration_s"].notna()
    span = float(jobs["submit_s"].max() - jobs["submit_s"].min()) if len(jobs) else 0.0
    stats: dict[str, Any] = {
        "jobs": len(jobs),
        "jobs_with_duration": int(ran.sum()),
        "first_submit_s": float(jobs["submit_s"].min()) if len(jobs) else None,
        "last_submit_s": float(jobs["submit_s"].max()) if len(jobs) else None,
        "span_days": span / 86400.0,
        "arrivals_per_bin": {"bin_s": bin_s, "bins": len(counts),
                             "mean": float(counts.mean()) if len(counts) else 0.0,
                             **{k: v for k, v in _quantiles(counts.astype(float)).items() if k != "mean"},
                             "empty_bins": int((counts == 0).sum())},
        "gpus": _quantiles(jobs["gpus"].astype(float)),
        "duration_s": _quantiles(jobs["duration_s"]),
        "gpu_hours": float((jobs["gpus"] * jobs["duration_s"]).sum() / 3600.0),
    }
    if jobs["cpus"].notna().any():
        stats["cpus"] = _quantiles(jobs["cpus"])
    if jobs["mem_gb"].notna().any():
        stats["mem_gb"] = _quantiles(jobs["mem_gb"])
    clusters = sorted(c for c in set(jobs["cluster"]) if c)
    if clusters:
        stats["clusters"] = {
            c: {"jobs": int((g := jobs[jobs["cluster"] == c]).shape[0]),
                "first_submit_s": float(g["submit_s"].min()), "last_submit_s": float(g["submit_s"].max()),
                "max_gpus": int(g["gpus"].max()), "gpu_hours": float((g["gpus"] * g["duration_s"]).sum() / 3600.0)}
            for c in clusters
        }
    return stats


def plot_trace(jobs: pd.DataFrame, bin_s: float = 3600.0) -> Any:
    """A figure: arrivals per bin over time, and histograms of GPUs per job and of durations."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, (ax_a, ax_g, ax_d) = plt.subplots(1, 3, figsize=(14, 3.8))
    counts = arrival_counts(jobs, bin_s)
    ax_a.plot(counts.index / 86400.0, counts.to_numpy(), lw=0.7)
    ax_a.set_xlabel("submission time (days of the trace)")
    ax_a.set_ylabel(f"jobs per {bin_s / 3600:g} h")
    ax_a.set_title("arrivals")
    g = jobs["gpus"].value_counts().sort_index()
    ax_g.bar([str(x) for x in g.index], g.to_numpy())
    ax_g.set_yscale("log")
    ax_g.set_xlabel("GPUs per job")
    ax_g.set_ylabel("jobs")
    ax_g.set_title("GPU counts")
    d = jobs["duration_s"].dropna()
    d = d[d > 0]
    if len(d):
        ax_d.hist(d / 3600.0, bins=np.logspace(np.log10(d.min() / 3600.0), np.log10(d.max() / 3600.0), 40))
        ax_d.set_xscale("log")
    ax_d.set_xlabel("duration (hours)")
    ax_d.set_ylabel("jobs")
    ax_d.set_title("durations")
    fig.tight_layout()
    return fig


def format_stats(stats: dict[str, Any]) -> str:
    """The statistics as plain text lines."""
    lines = [f"jobs: {stats['jobs']} ({stats['jobs_with_duration']} with a duration), span {stats['span_days']:.1f} days "
             f"(submissions {stats['first_submit_s']:g} s .. {stats['last_submit_s']:g} s)" if stats["jobs"] else "jobs: 0"]
    a = stats["arrivals_per_bin"]
    if stats["jobs"]:
        lines.append(f"arrivals per {a['bin_s']:g} s bin: mean {a['mean']:.2f}, p50 {a['p50']:g}, p90 {a['p90']:g}, "
                     f"p99 {a['p99']:g}, max {a['max']:g}; {a['empty_bins']} of {a['bins']} bins empty")
    for key, label in (("gpus", "GPUs per job"), ("duration_s", "duration (s)"), ("cpus", "CPUs per job"),
                       ("mem_gb", "memory (GB)")):
        q = stats.get(key)
        if q:
            lines.append(f"{label}: " + ", ".join(f"{k} {v:.6g}" for k, v in q.items()))
    lines.append(f"GPU-hours: {stats['gpu_hours']:.1f}")
    for c, s in stats.get("clusters", {}).items():
        lines.append(f"  {c}: {s['jobs']} jobs, submissions {s['first_submit_s']:g}..{s['last_submit_s']:g} s, "
                     f"max {s['max_gpus']} GPUs, {s['gpu_hours']:.1f} GPU-hours")
    return "\n".join(lines)
