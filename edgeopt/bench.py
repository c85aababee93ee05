"""What every benchmark script shares: one flag style and a rule for where results go.

Every script under ``benchmarks/`` builds its parser with `benchmark_parser`, so
``--seeds 0-19`` (or ``1,4,7``) means the same everywhere, as in the CLI, and
``--out DIR`` says where its JSON and PNG go. Without ``--out`` results go to
``benchmarks/out/`` (ignored by git), so a run never overwrites the tracked
files in ``benchmarks/results/`` unless asked: ``--out benchmarks/results``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from edgeopt.core.errors import InputError
from edgeopt.core.jsonio import refuse_non_regular

T = TypeVar("T")

#: Default output folder (git-ignored); the tracked results live in benchmarks/results/.
DEFAULT_OUT = Path("benchmarks/out")


def parse_seeds(text: str) -> list[int]:
    """``'0-19'``, ``'1,4,7'`` or ``'3'`` -> list of non-negative seeds (InputError naming ``seeds``)."""
    try:
        if "-" in text:
            lo, hi = (int(x) for x in text.split("-", 1))
            seeds = list(range(lo, hi + 1))
        else:
            seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError("seeds", f"expected 'A-B' or 'a,b,c', got {text!r}") from None
    if not seeds or min(seeds) < 0:
        raise InputError("seeds", f"expected non-negative seeds, got {text!r}")
    return seeds


def benchmark_parser(description: str, *, seeds: str = "0-19") -> argparse.ArgumentParser:
    """An argument parser with the shared ``--seeds`` and ``--out`` flags."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--seeds", type=parse_seeds, default=parse_seeds(seeds),
                    help=f"seeds, 'A-B' or 'a,b,c' (default {seeds})")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help=f"folder for the JSON/PNG results (default {DEFAULT_OUT}; "
                         "the tracked results are rewritten only with --out benchmarks/results)")
    return ap


def result_path(out: Path, name: str) -> Path:
    """``out/name``, creating ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    return out / name


def run_entry(cmd: list[str], out: str, key: str, cwd: str) -> dict:
    """`benchmarks/reproduce.py --address`: run one entry's command into a private folder, move its files into ``out`` atomically, then write
    the done record. Runs on a Dask worker (or here); returns the record (``rc`` != 0: nothing is moved)."""
    import socket

    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    private = Path(tempfile.mkdtemp(dir=root, prefix=f".run-{key}-"))
    target = [*cmd[:-1], str(private / Path(cmd[-1]).name) if cmd[-1].endswith(".json") else str(private)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(target, cwd=cwd, capture_output=True, text=True, check=False)
        files = []
        if proc.returncode == 0:
            for f in sorted(p for p in private.rglob("*") if p.is_file()):
                dest = root / f.relative_to(private)
                dest.parent.mkdir(parents=True, exist_ok=True)
                refuse_non_regular(dest, what="results")  # a device or FIFO there is never replaced
                os.replace(f, dest)  # atomic: a reader sees the old file or the new one, never half of one
                files.append(str(dest.relative_to(root)))
        record = {"key": key, "rc": proc.returncode, "seconds": round(time.perf_counter() - t0, 1),
                  "files": files, "host": socket.gethostname(), "pid": os.getpid(),
                  "stderr_tail": proc.stderr[-2000:] if proc.returncode else ""}
        if proc.returncode == 0:
            done = root / ".done"
            done.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=done, prefix=f".{key}.", suffix=".tmp")
            with os.fdopen(fd, "w") as fh:
                json.dump(record, fh)
            os.replace(tmp, done / f"{key}.json")
        return record
    finally:
        shutil.rmtree(private, ignore_errors=True)


def peak_rss_reset() -> bool:
    """Reset the process's peak resident set size (Linux: ``/proc/self/clear_refs``); False if unsupported."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB since the last `peak_rss_reset` (VmHWM on Linux;
    elsewhere the lifetime peak from ``resource.getrusage``)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return _maxrss_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _maxrss_mb(maxrss: int) -> float:
    """``ru_maxrss`` in MiB: bytes on macOS, KiB elsewhere."""
    import sys

    return maxrss / (1024 * 1024) if sys.platform == "darwin" else maxrss / 1024


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of the child processes it has waited for.

    Read it before and after a call and take the difference. The children count because the largest HiGHS
    solves run in a child process (`formulations.highs_process`, so that the deadline can end them): the
    process's own clock (``time.process_time``) would miss nearly all of such a solve.
    """
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def children_peak_rss_mb() -> float:
    """The largest peak resident set size, in MiB, of any child process this process has waited for (0 when
    none): a HiGHS child's memory is not in `peak_rss_mb`."""
    import resource

    return _maxrss_mb(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def measure(fn: Callable[[], T]) -> tuple[T, dict[str, float]]:
    """Call ``fn()``; return its result and ``{"cpu_s", "wall_s", "peak_rss_mb"}`` of the call (CPU time of the
    process and its waited-for children, `cpu_seconds`, which a shared machine disturbs far less than wall
    time; the peak RSS of the process during the call where the platform can reset it, else the process's
    lifetime peak)."""
    peak_rss_reset()
    c0, t0 = cpu_seconds(), time.perf_counter()
    out = fn()
    cpu, wall = cpu_seconds() - c0, time.perf_counter() - t0
    return out, {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "peak_rss_mb": round(peak_rss_mb(), 1)}


def per_job_growth(per_job: list[float]) -> tuple[float | None, float | None]:
    """Growth of a cost per job over runs of increasing job counts: (largest over smallest, largest over the
    fewest jobs'). The second is how far any size rises above the first one (a cost per job that falls as
    fixed costs spread is not growth); None where undefined."""
    if not per_job or min(per_job) <= 0:
        return None, None
    return max(per_job) / min(per_job), max(per_job) / per_job[0]
