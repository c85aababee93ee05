"""Readers of public ML-cluster job traces into one typed table.

Every loader returns a `pandas.DataFrame` with one row per job and exactly the columns of
`JOB_COLUMNS` (machine lists: `MACHINE_COLUMNS`), in that order and with those dtypes. Units are in
the column names:

==============  ========  =====================================================================
column          dtype     meaning
==============  ========  =====================================================================
``job_id``      str       the trace's job identifier (or ``row<N>`` where the trace has none)
``cluster``     str       cluster / virtual cluster, ``""`` when the trace has one cluster
``submit_s``    float64   submission time, seconds from the trace's own origin (never re-zeroed)
``duration_s``  float64   run time in seconds; NaN when the job never ran or the trace lacks it
``gpus``        int64     GPUs requested (0 for a CPU-only job)
``cpus``        float64   CPU cores requested; NaN when the trace lacks it
``mem_gb``      float64   memory requested, GB (GiB for traces in MiB: 1 GB = 1024 MiB); NaN if absent
``status``      str       the trace's final status, ``""`` when absent
==============  ========  =====================================================================

Machine lists: ``machine_id`` (str), ``gpus`` (int64), ``cpus`` (float64, NaN if absent),
``mem_gb`` (float64, NaN if absent), ``gpu_model`` (str, ``""`` if absent).

Rows are sorted by ``(submit_s, cluster, job_id)``; the index is ``0 .. n-1``. Any file that does not
have the expected columns, or holds a value that is not a number where one is needed, is an
`InputError` naming the file, the row and the field (the CLI prints it in one line, exit 2).

Every number must be finite and inside a bound (`MAX_TRACE_SECONDS` for clock times,
`MAX_TRACE_DURATION_S` for durations, `MAX_JOB_GPUS`, `MAX_CPUS`, `MAX_MEMORY_MIB`): ``inf``, ``nan``
or ``1e300`` would otherwise reach the instance mappings, which turn them into integers (an
``OverflowError``) or into horizons no algorithm can allocate.

A trace is read like an instance file (`edgeopt.core.jsonio.read_bytes`): only a regular file (a FIFO
would block, ``/dev/zero`` never ends), at most the input cap (`edgeopt.core.jsonio.max_input_bytes`,
64 MiB unless ``--max-input-bytes`` raises it) after gzip decompression, and a JSON trace through
`edgeopt.core.jsonio.loads` (nesting depth checked before Python's recursive decoder sees it).
"""

from __future__ import annotations

import calendar
import io
import math
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from edgeopt.core import InputError, jsonio
from edgeopt.core import bounds as B

JOB_COLUMNS: dict[str, str] = {
    "job_id": "object", "cluster": "object", "submit_s": "float64", "duration_s": "float64",
    "gpus": "int64", "cpus": "float64", "mem_gb": "float64", "status": "object",
}
MACHINE_COLUMNS: dict[str, str] = {
    "machine_id": "object", "gpus": "int64", "cpus": "float64", "mem_gb": "float64", "gpu_model": "object",
}
#: Most GPUs one job may ask for (Philly's and ITP's largest jobs use 64; the Alibaba nodes hold 8).
MAX_JOB_GPUS = 10**4
#: Largest clock time (seconds, either sign) a trace may hold: Unix times up to the year 2286 and
#: offsets of 317 years. Beyond it a time is a wrong unit (milliseconds) or garbage.
MAX_TRACE_SECONDS = 1e10
#: Longest job a trace may hold, seconds (about 3.2 years; the longest job of the shipped ITP trace
#: ran 18 days, of Alibaba GPU v2023 145 days). Also the longest gap between a start and an end time.
MAX_TRACE_DURATION_S = 1e8
#: Most CPU cores and MiB of memory one job or machine may list (the families' capacity bound).
MAX_CPUS = B.MAX_CAPACITY
MAX_MEMORY_MIB = B.MAX_CAPACITY * 1024

#: Where the shipped ITP trace lives (package data; see data/SOURCE.md).
DATA_DIR = Path(__file__).with_name("data")
SHIPPED_ITP = DATA_DIR / "itp_elasticflow_jobs.csv.gz"


def shipped_itp_path() -> Path:
    """The ITP (ElasticFlow) trace shipped with edgeopt: 69,351 jobs, MIT licence (data/SOURCE.md)."""
    return SHIPPED_ITP


#: Short names of the shipped trace, accepted wherever a trace file is (`trace-stats itp`,
#: ``generate --trace itp``, `load_jobs("itp")`).
SHIPPED_NAMES = ("itp", "itp-elasticflow")


def resolve_trace(path: str | Path) -> str | Path:
    """``path``, or the shipped trace for one of `SHIPPED_NAMES`. A file of that name in the working
    directory wins: a short name never hides a user's own file."""
    if str(path).lower() in SHIPPED_NAMES and not Path(path).exists():
        return SHIPPED_ITP
    return path


# ---- reading ---------------------------------------------------------------------------------------

def _read_text(path: str | Path, field: str) -> str:
    """The text of a trace file, read through `jsonio.read_bytes` (regular files only, the input cap).

    A gzip file is recognised by its first bytes too (a ``.csv.gz`` renamed without the suffix), and
    decompressed with the same cap, so a small gzip bomb is refused as well.
    """
    p = Path(path)
    cap = jsonio.max_input_bytes()
    raw = jsonio.read_bytes(p, what=field, max_bytes=cap)
    if raw[:2] == b"\x1f\x8b" and p.suffix != ".gz":
        raw = jsonio._gunzip(raw, cap, p, field)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(field, f"{p} is not UTF-8 text") from None


def _read_csv(path: str | Path, field: str, required: Sequence[str]) -> pd.DataFrame:
    text = _read_text(path, field)
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "empty file"
        raise InputError(field, f"{Path(path).name} is not a CSV file: {first}") from None
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(field, f"{Path(path).name} lacks column(s) {', '.join(missing)} "
                                f"(has: {', '.join(df.columns) or 'none'})")
    return df


def _numbers(df: pd.DataFrame, column: str, field: str, *, optional: bool = False, lo: float = 0.0,
             hi: float = math.inf, integer: bool = False) -> np.ndarray:
    """Column ``column`` as float64; empty cells are NaN when ``optional``, an error otherwise.

    A value must be finite and in ``[lo, hi]``: ``inf`` and ``nan`` are refused whatever the bounds
    (pandas reads them as numbers), naming the row and the column.
    """
    values = df[column].astype(str).str.strip()
    out = pd.to_numeric(values.where(values != "", None), errors="coerce").to_numpy(dtype=np.float64)
    empty = (values == "").to_numpy()
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(out) & (~empty | (not optional))
        ok = np.isfinite(out)
        bad |= ok & ((out < lo) | (out > hi) | (integer & (np.floor(out) != out)))
    if bad.any():
        k = int(np.argmax(bad))
        what = "an integer" if integer else "a finite number"
        raise InputError(f"{field}.row{k + 2}.{column}",
                         f"{values.iloc[k]!r} is not {what} in [{lo:g}, {hi:g}]" if values.iloc[k] else "is empty")
    return out


def _durations(end: np.ndarray, start: np.ndarray, df: pd.DataFrame, column: str, field: str) -> np.ndarray:
    """``end - start`` (NaN where either is missing); a gap above `MAX_TRACE_DURATION_S` is an error
    naming the row and the end column."""
    dur = end - start
    with np.errstate(invalid="ignore"):
        bad = dur > MAX_TRACE_DURATION_S
    if bad.any():
        k = int(np.argmax(bad))
        raise InputError(f"{field}.row{k + 2}.{column}",
                         f"{df[column].iloc[k]!r} is {dur[k]:.6g} s after the start, above the longest job a "
                         f"trace may hold ({MAX_TRACE_DURATION_S:g} s)")
    return dur


def _finish(rows: dict[str, Any], n: int) -> pd.DataFrame:
    """The typed job table from column arrays (missing optional columns filled)."""
    defaults = {"cluster": "", "duration_s": math.nan, "cpus": math.nan, "mem_gb": math.nan, "status": ""}
    data = {}
    for col, dtype in JOB_COLUMNS.items():
        value = rows.get(col, defaults.get(col))
        if not isinstance(value, (np.ndarray, list, pd.Series)):
            value = [value] * n
        data[col] = pd.Series(value, dtype=dtype).reset_index(drop=True)
    df = pd.DataFrame(data)
    df = df.sort_values(["submit_s", "cluster", "job_id"], kind="stable").reset_index(drop=True)
    return df


def _machines(rows: dict[str, Any], n: int) -> pd.DataFrame:
    defaults = {"cpus": math.nan, "mem_gb": math.nan, "gpu_model": ""}
    data = {}
    for col, dtype in MACHINE_COLUMNS.items():
        value = rows.get(col, defaults.get(col))
        if not isinstance(value, (np.ndarray, list, pd.Series)):
            value = [value] * n
        data[col] = pd.Series(value, dtype=dtype).reset_index(drop=True)
    return pd.DataFrame(data)


# ---- ITP (ElasticFlow) -----------------------------------------------------------------------------

def load_itp(path: str | Path = SHIPPED_ITP) -> pd.DataFrame:
    """Microsoft ITP clusters (ElasticFlow traces), as derived in data/SOURCE.md.

    Column mapping: ``job_id`` <- ``job_id`` (``row<N>`` in file order when the column is absent, as in
    the shipped copy), ``cluster`` <- ``cluster``, ``submit_s`` <- ``submit_time`` (or the raw trace's
    ``submission_time``), ``duration_s`` <- ``duration_s`` (or ``duration``), ``gpus`` <- ``num_gpus``
    (or ``num_gpu``). The trace has no CPU, memory or status fields (NaN / ``""``).
    """
    field = "trace"
    df = _read_csv(path, field, [])
    rename = {"submission_time": "submit_time", "duration": "duration_s", "num_gpu": "num_gpus"}
    df = df.rename(columns={k: v for k, v in rename.items() if k in df.columns and v not in df.columns})
    _require(df, path, field, ["submit_time", "duration_s", "num_gpus"])
    n = len(df)
    ids = df["job_id"].astype(str).to_numpy() if "job_id" in df.columns else [f"row{k}" for k in range(n)]
    cluster = df["cluster"].astype(str).to_numpy() if "cluster" in df.columns else ""
    return _finish({
        "job_id": ids, "cluster": cluster,
        "submit_s": _numbers(df, "submit_time", field, hi=MAX_TRACE_SECONDS),
        "duration_s": _numbers(df, "duration_s", field, hi=MAX_TRACE_DURATION_S),
        "gpus": _numbers(df, "num_gpus", field, hi=MAX_JOB_GPUS, integer=True).astype(np.int64),
    }, n)


def _require(df: pd.DataFrame, path: str | Path, field: str, required: Sequence[str]) -> None:
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(field, f"{Path(path).name} lacks column(s) {', '.join(missing)} "
                                f"(has: {', '.join(df.columns) or 'none'})")


# ---- Alibaba GPU v2023 -----------------------------------------------------------------------------

def load_alibaba_jobs(path: str | Path) -> pd.DataFrame:
    """Alibaba cluster-trace-gpu-v2023 pods (the derived ``alibaba_gpu_v2023_jobs.csv``, or upstream's
    ``openb_pod_list_default.csv``).

    Column mapping, derived file (upstream in brackets): ``job_id`` <- ``job_id`` (``name``),
    ``submit_s`` <- ``submit_time`` (``creation_time``), ``duration_s`` <- ``duration_s``
    (``deletion_time - scheduled_time``; NaN for never-scheduled pods), ``gpus`` <- ``num_gpus``
    (``num_gpu``), ``cpus`` <- ``num_cpus`` (``cpu_milli / 1000``), ``mem_gb`` <- ``memory_mib / 1024``,
    ``status`` <- ``status`` (``pod_phase``). A GPU-sharing pod (``gpu_milli < 1000``) counts as 1 GPU.
    """
    field = "trace"
    df = _read_csv(path, field, [])
    n = len(df)
    if "creation_time" in df.columns:  # upstream layout
        _require(df, path, field, ["name", "creation_time", "scheduled_time", "deletion_time", "num_gpu",
                                   "cpu_milli", "memory_mib"])
        start = _numbers(df, "scheduled_time", field, optional=True, hi=MAX_TRACE_SECONDS)
        end = _numbers(df, "deletion_time", field, optional=True, hi=MAX_TRACE_SECONDS)
        return _finish({
            "job_id": df["name"].astype(str).to_numpy(),
            "submit_s": _numbers(df, "creation_time", field, hi=MAX_TRACE_SECONDS),
            "duration_s": _durations(end, start, df, "deletion_time", field),
            "gpus": _numbers(df, "num_gpu", field, hi=MAX_JOB_GPUS, integer=True),
            "cpus": _numbers(df, "cpu_milli", field, hi=MAX_CPUS * 1000) / 1000.0,
            "mem_gb": _numbers(df, "memory_mib", field, hi=MAX_MEMORY_MIB) / 1024.0,
            "status": df["pod_phase"].astype(str).to_numpy() if "pod_phase" in df.columns else "",
        }, n)
    _require(df, path, field, ["job_id", "submit_time", "duration_s", "num_gpus", "num_cpus", "memory_mib"])
    return _finish({
        "job_id": df["job_id"].astype(str).to_numpy(),
        "submit_s": _numbers(df, "submit_time", field, hi=MAX_TRACE_SECONDS),
        "duration_s": _numbers(df, "duration_s", field, optional=True, hi=MAX_TRACE_DURATION_S),
        "gpus": _numbers(df, "num_gpus", field, hi=MAX_JOB_GPUS, integer=True),
        "cpus": _numbers(df, "num_cpus", field, hi=MAX_CPUS),
        "mem_gb": _numbers(df, "memory_mib", field, hi=MAX_MEMORY_MIB) / 1024.0,
        "status": df["status"].astype(str).to_numpy() if "status" in df.columns else "",
    }, n)


def load_alibaba_machines(path: str | Path) -> pd.DataFrame:
    """Alibaba cluster-trace-gpu-v2023 nodes (derived ``alibaba_gpu_v2023_machines.csv`` or upstream
    ``openb_node_list_all_node.csv``). Mapping: ``machine_id`` <- ``machine_id`` (``sn``), ``gpus`` <-
    ``num_gpus`` (``gpu``), ``cpus`` <- ``cpu_cores`` (``cpu_milli / 1000``), ``mem_gb`` <-
    ``memory_mib / 1024``, ``gpu_model`` <- ``gpu_model`` (``model``)."""
    field = "machines"
    df = _read_csv(path, field, [])
    n = len(df)
    if "sn" in df.columns:
        _require(df, path, field, ["sn", "cpu_milli", "memory_mib", "gpu"])
        return _machines({"machine_id": df["sn"].astype(str).to_numpy(),
                          "gpus": _numbers(df, "gpu", field, integer=True, hi=MAX_JOB_GPUS),
                          "cpus": _numbers(df, "cpu_milli", field, hi=MAX_CPUS * 1000) / 1000.0,
                          "mem_gb": _numbers(df, "memory_mib", field, hi=MAX_MEMORY_MIB) / 1024.0,
                          "gpu_model": df["model"].astype(str).to_numpy() if "model" in df.columns else ""}, n)
    _require(df, path, field, ["machine_id", "num_gpus", "cpu_cores", "memory_mib"])
    return _machines({"machine_id": df["machine_id"].astype(str).to_numpy(),
                      "gpus": _numbers(df, "num_gpus", field, integer=True, hi=MAX_JOB_GPUS),
                      "cpus": _numbers(df, "cpu_cores", field, hi=MAX_CPUS),
                      "mem_gb": _numbers(df, "memory_mib", field, hi=MAX_MEMORY_MIB) / 1024.0,
                      "gpu_model": df["gpu_model"].astype(str).to_numpy() if "gpu_model" in df.columns else ""}, n)


# ---- Philly ----------------------------------------------------------------------------------------

_PHILLY_TIME = "%Y-%m-%d %H:%M:%S"


def _philly_time(value: Any, where: str) -> float | None:
    if value is None or value == "None" or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(where, f"{value!r} is not a time 'YYYY-MM-DD HH:MM:SS'")
    try:
        # read as UTC whatever the machine's time zone: same seconds everywhere, no daylight-saving jumps
        return float(calendar.timegm(datetime.strptime(value.strip(), _PHILLY_TIME).timetuple()))
    except ValueError:
        raise InputError(where, f"{value!r} is not a time 'YYYY-MM-DD HH:MM:SS'") from None


def load_philly_jobs(path: str | Path) -> pd.DataFrame:
    """Microsoft Philly ``cluster_job_log``: a JSON list of jobs.

    Each job: ``{"jobid", "vc", "user", "status", "submitted_time", "attempts": [{"start_time",
    "end_time", "detail": [{"ip", "gpus": [...]}]}]}``, times as ``YYYY-MM-DD HH:MM:SS`` (or None).
    Mapping: ``job_id`` <- ``jobid``, ``cluster`` <- ``vc`` (the virtual cluster), ``submit_s`` <-
    ``submitted_time`` in seconds from the earliest submission in the file (the log has no origin of its
    own), ``duration_s`` <- end of the last attempt - start of the first (NaN when either is missing:
    a job that never ran or was still running), ``gpus`` <- GPUs listed in the first attempt's
    ``detail`` (summed over its machines; 0 when it never got any), ``status`` <- ``status``
    (Pass / Killed / Failed). No CPU or memory fields. Times are read as UTC (the log gives no zone;
    differences are then exact and the same on every machine).
    """
    field = "trace"
    text = _read_text(path, field)
    data = jsonio.loads(text, what=field, name=Path(path).name)  # depth checked: no RecursionError
    if not isinstance(data, list):
        raise InputError(field, f"{Path(path).name}: a Philly cluster_job_log holds a JSON list of jobs")
    ids, vcs, submit, dur, gpus, status = [], [], [], [], [], []
    for k, job in enumerate(data):
        where = f"{field}.{k}"
        if not isinstance(job, dict) or "submitted_time" not in job or "jobid" not in job:
            raise InputError(where, "a job must be an object with 'jobid' and 'submitted_time'")
        t = _philly_time(job["submitted_time"], f"{where}.submitted_time")
        if t is None:
            raise InputError(f"{where}.submitted_time", "is missing")
        attempts = job.get("attempts") or []
        if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
            raise InputError(f"{where}.attempts", "must be a list of objects")
        start = _philly_time(attempts[0].get("start_time"), f"{where}.attempts.0.start_time") if attempts else None
        end = _philly_time(attempts[-1].get("end_time"), f"{where}.attempts.{len(attempts) - 1}.end_time") \
            if attempts else None
        g = 0
        if attempts:
            detail = attempts[0].get("detail") or []
            if not isinstance(detail, list):
                raise InputError(f"{where}.attempts.0.detail", "must be a list")
            for d in detail:
                gl = d.get("gpus", []) if isinstance(d, dict) else None
                if not isinstance(gl, list):
                    raise InputError(f"{where}.attempts.0.detail", "each machine needs a 'gpus' list")
                g += len(gl)
        d = end - start if start is not None and end is not None and end >= start else math.nan
        if d > MAX_TRACE_DURATION_S:
            raise InputError(f"{where}.attempts.{len(attempts) - 1}.end_time",
                             f"{d:.6g} s after the first start, above the longest job a trace may hold "
                             f"({MAX_TRACE_DURATION_S:g} s)")
        ids.append(str(job["jobid"]))
        vcs.append(str(job.get("vc", "")))
        submit.append(t)
        dur.append(d)
        gpus.append(g)
        status.append(str(job.get("status", "")))
    sub = np.asarray(submit, dtype=np.float64)
    if len(sub):
        sub = sub - sub.min()
        if sub.max() > MAX_TRACE_SECONDS:
            k = int(np.argmax(sub))
            raise InputError(f"{field}.{k}.submitted_time", f"{data[k]['submitted_time']!r} is {sub[k]:.6g} s "
                             f"after the earliest submission, above the longest span a trace may hold "
                             f"({MAX_TRACE_SECONDS:g} s)")
    return _finish({"job_id": ids, "cluster": vcs, "submit_s": sub, "duration_s": np.asarray(dur, dtype=np.float64),
                    "gpus": np.asarray(gpus, dtype=np.int64), "status": status}, len(ids))


def load_philly_machines(path: str | Path) -> pd.DataFrame:
    """Philly ``cluster_machine_list``: CSV ``machineId, number of GPUs, single GPU mem`` (e.g.
    ``m0,2, 12GB``). Mapping: ``machine_id`` <- ``machineId``, ``gpus`` <- ``number of GPUs``,
    ``gpu_model`` <- ``"<mem> GPU"`` (the list names only the GPU memory). CPUs and memory are absent
    (NaN): the families draw them from their papers."""
    field = "machines"
    df = _read_csv(path, field, ["machineId", "number of GPUs"])
    mem = df["single GPU mem"].astype(str).str.strip() if "single GPU mem" in df.columns else pd.Series([""] * len(df))
    return _machines({"machine_id": df["machineId"].astype(str).str.strip().to_numpy(),
                      "gpus": _numbers(df, "number of GPUs", field, integer=True, hi=MAX_JOB_GPUS),
                      "gpu_model": [f"{m} GPU" if m else "" for m in mem]}, len(df))


# ---- Helios-style job CSVs --------------------------------------------------------------------------

def _seconds(df: pd.DataFrame, column: str, field: str, optional: bool = False) -> np.ndarray:
    """Numbers (seconds) or datetimes (``YYYY-MM-DD HH:MM:SS``) -> seconds (datetimes from the earliest)."""
    values = df[column].astype(str).str.strip()
    numeric = pd.to_numeric(values.where(values != "", None), errors="coerce")
    if numeric.notna().sum() == (values != "").sum():
        return _numbers(df, column, field, optional=optional, lo=-MAX_TRACE_SECONDS, hi=MAX_TRACE_SECONDS)
    parsed = pd.to_datetime(values.where(values != "", None), errors="coerce", format="mixed")
    bad = parsed.isna().to_numpy() & ((values != "").to_numpy() | (not optional))
    if bad.any():
        k = int(np.argmax(bad))
        raise InputError(f"{field}.row{k + 2}.{column}", f"{values.iloc[k]!r} is neither seconds nor a date-time")
    return (parsed - pd.Timestamp("1970-01-01")).dt.total_seconds().to_numpy(dtype=np.float64)


def load_helios(path: str | Path) -> pd.DataFrame:
    """Helios-style job logs (SenseTime Helios ``cluster_log.csv`` and the like).

    Columns (first one present wins): ``job_id`` <- ``job_id`` / ``jobid`` (``row<N>`` if absent),
    ``cluster`` <- ``vc`` / ``cluster``, ``submit_s`` <- ``submit_time`` (seconds, or date-times made
    relative to the earliest submission), ``duration_s`` <- ``duration`` / ``duration_s`` or
    ``end_time - start_time``, ``gpus`` <- ``gpu_num`` / ``num_gpus`` / ``gpus``, ``cpus`` <- ``cpu_num``
    / ``num_cpus`` / ``cpus`` (NaN if absent), ``mem_gb`` <- ``mem_gb`` (NaN if absent), ``status`` <-
    ``state`` / ``status``.
    """
    field = "trace"
    df = _read_csv(path, field, [])

    def pick(*names: str) -> str | None:
        return next((c for c in names if c in df.columns), None)

    n = len(df)
    c_submit = pick("submit_time", "submit_s", "submit")
    c_gpus = pick("gpu_num", "num_gpus", "gpus", "num_gpu")
    c_dur = pick("duration", "duration_s")
    if c_submit is None or c_gpus is None or (c_dur is None and not {"start_time", "end_time"} <= set(df.columns)):
        raise InputError(field, f"{Path(path).name} lacks a Helios column: needs submit_time, gpu_num and "
                                f"duration (or start_time and end_time) (has: {', '.join(df.columns) or 'none'})")
    submit = _seconds(df, c_submit, field)
    if len(submit) and (df[c_submit].astype(str).str.contains(":").any()):
        submit = submit - submit.min()
    if c_dur is not None:
        dur = _numbers(df, c_dur, field, optional=True, hi=MAX_TRACE_DURATION_S)
    else:
        dur = _durations(_seconds(df, "end_time", field, optional=True),
                         _seconds(df, "start_time", field, optional=True), df, "end_time", field)
        dur = np.where(dur >= 0, dur, np.nan)
    c_id, c_vc, c_cpu, c_st = pick("job_id", "jobid"), pick("vc", "cluster"), pick("cpu_num", "num_cpus", "cpus"), \
        pick("state", "status")
    return _finish({
        "job_id": df[c_id].astype(str).to_numpy() if c_id else [f"row{k}" for k in range(n)],
        "cluster": df[c_vc].astype(str).to_numpy() if c_vc else "",
        "submit_s": submit, "duration_s": dur,
        "gpus": _numbers(df, c_gpus, field, hi=MAX_JOB_GPUS, integer=True),
        "cpus": _numbers(df, c_cpu, field, optional=True, hi=MAX_CPUS) if c_cpu else math.nan,
        "mem_gb": _numbers(df, "mem_gb", field, optional=True, hi=MAX_MEMORY_MIB / 1024)
        if "mem_gb" in df.columns else math.nan,
        "status": df[c_st].astype(str).to_numpy() if c_st else "",
    }, n)


# ---- dispatch ----------------------------------------------------------------------------------------

JOB_LOADERS: dict[str, Callable[[str | Path], pd.DataFrame]] = {
    "itp": load_itp, "alibaba": load_alibaba_jobs, "philly": load_philly_jobs, "helios": load_helios,
}
MACHINE_LOADERS: dict[str, Callable[[str | Path], pd.DataFrame]] = {
    "alibaba": load_alibaba_machines, "philly": load_philly_machines,
}


def _sniff(path: str | Path, field: str) -> tuple[str, str]:
    """(format, first line) of a trace file, from its content."""
    text = _read_text(path, field)
    head = text.lstrip()[:1]
    first = text.splitlines()[0] if text else ""
    return ("json" if head in "[{" and head else "csv"), first


def detect_format(path: str | Path) -> str:
    """The job-trace format of ``path`` (``itp``, ``alibaba``, ``philly``, ``helios``), from its header."""
    kind, first = _sniff(path, "trace")
    if kind == "json":
        return "philly"
    cols = {c.strip() for c in first.split(",")}
    if {"num_gpus", "cluster", "duration_s"} <= cols or {"submission_time", "num_gpu"} <= cols:
        return "itp"
    if {"creation_time", "pod_phase"} <= cols or {"gpu_milli", "num_cpus"} <= cols:
        return "alibaba"
    if "gpu_num" in cols or "submit_time" in cols:
        return "helios"
    raise InputError("trace", f"{Path(path).name}: unknown trace format (header {first[:80]!r}); "
                              f"known: {', '.join(JOB_LOADERS)}")


def load_jobs(path: str | Path, fmt: str = "auto") -> pd.DataFrame:
    """The job table of a trace file; ``fmt`` is one of `JOB_LOADERS` or ``auto`` (from the header).
    ``path`` may be a short name of the shipped trace (`SHIPPED_NAMES`: ``itp``)."""
    path = resolve_trace(path)
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt not in JOB_LOADERS:
        raise InputError("format", f"unknown trace format {fmt!r} (known: auto, {', '.join(JOB_LOADERS)})")
    return JOB_LOADERS[fmt](path)


def load_machines(path: str | Path, fmt: str = "auto") -> pd.DataFrame:
    """The machine table of a machine-list file (Alibaba nodes or Philly ``cluster_machine_list``)."""
    if fmt == "auto":
        _, first = _sniff(path, "machines")
        cols = {c.strip() for c in first.split(",")}
        fmt = "philly" if "machineId" in cols else "alibaba" if cols & {"sn", "machine_id"} else ""
        if not fmt:
            raise InputError("machines", f"{Path(path).name}: unknown machine-list format (header {first[:80]!r})")
    if fmt not in MACHINE_LOADERS:
        raise InputError("format", f"unknown machine-list format {fmt!r} (known: auto, {', '.join(MACHINE_LOADERS)})")
    return MACHINE_LOADERS[fmt](path)
