"""Sweeps over seeds and sizes, run on Dask, stored cell by cell so that nothing finished is ever lost.

A sweep is a list of `SweepPoint`s; each point generates one instance, runs
the chosen algorithms on it, optionally solves it exactly, validates every
result, and returns one flat row per algorithm (a *cell*: point x algorithm).
Points are independent, so they map onto Dask tasks one to one. Solver
threads are kept at 1 inside workers (the scheduler shares the cores).

Storage and resuming. With ``store=DIR`` every point's rows are written, as
soon as the point finishes, to ``DIR/part-<cell>.parquet`` (pyarrow; written
to a temporary name and renamed, so a part file is whole or absent). The
directory is one Parquet dataset with a fixed schema (`SCHEMA`): read it with
`read_sweep` into a pandas DataFrame. Ctrl-C, SIGTERM, a killed driver or a
killed Dask worker loses only the points in flight: a rerun with the same
``store`` computes only the points that have no part file. A point (or one
algorithm of it) that raises is recorded with its error in the ``error``
column and does not stop the sweep; ``retry_errors=True`` recomputes those.
A Dask worker that dies mid-task has its task rescheduled by Dask on another
worker; a point the cluster itself fails on (a task that kills every worker it
lands on, a lost connection) is not stored, with a warning, so a rerun computes it.
A damaged part file (truncated, overwritten) is named in a warning and moved
aside into ``DIR/quarantine/`` by `run_sweep`, which then computes its point again;
`read_sweep` reads the healthy parts and warns about the others.

Where it runs. ``address=None`` starts a ``LocalCluster`` (``n_workers``
processes, one thread each; by default one per core, at most `WORKERS_PER_CORE` per core);
``address="tcp://host:8786"`` uses a running scheduler, which must answer within
`CONNECT_TIMEOUT_S` seconds (an `InputError` naming ``address`` otherwise). On a SLURM cluster, start the workers as batch jobs with
dask-jobqueue and hand the scheduler's address to the sweep (or the CLI's
``--address``); the store must be on a file system the driver sees (only the
driver writes it):

```python
from dask_jobqueue import SLURMCluster
cluster = SLURMCluster(cores=1, processes=1, memory="4GB", walltime="02:00:00",
                       job_extra_directives=["--cpus-per-task=1"])
cluster.scale(jobs=32)                      # 32 single-core workers
rows = run_sweep(points, address=cluster.scheduler_address, store="runs/hetero_sweep")
```

``docs/sweeps.md`` has the same recipe for the command line.

Examples:
    >>> from edgeopt.sweep import SweepPoint, run_sweep, read_sweep
    >>> pts = [SweepPoint("hetero", "small", seed=s, optimal=True) for s in range(20)]  # doctest: +SKIP
    >>> rows = run_sweep(pts, store="out/sweep")   # LocalCluster, one worker per core  # doctest: +SKIP
    >>> df = read_sweep("out/sweep")               # one row per (point, algorithm)   # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import signal
import stat
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgeopt.core import InputError
from edgeopt.core.jsonio import atomic_file

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

    from edgeopt.plugins import PluginFile


#: Most points (instances) one sweep may hold: each one is a Dask task and a part file in the store, and
#: a directory of 100,000 part files is already slow to list. Larger studies are several sweeps.
MAX_POINTS = 100_000
#: Most cells (points x algorithms) one sweep may hold: every row stays in the driver's memory until the
#: sweep ends (about 1.3 KB each in Python: 0.65 GB at the cap) and goes into ``--json`` too.
MAX_CELLS = 500_000
#: LocalCluster workers per core at most: a worker runs one single-threaded task at a time, so more
#: workers than cores only share the cores and add a process (and its memory) each.
WORKERS_PER_CORE = 4
#: Seconds to wait for the Dask scheduler at ``address`` before giving up: a scheduler that is up
#: answers in well under a second, and a wrong address should not hold the command (Dask waits 30 s).
CONNECT_TIMEOUT_S = 5.0
#: The store's integer columns (seed, jobs, servers, horizon) are int64.
_INT64 = (-(2**63), 2**63 - 1)


def default_workers() -> int:
    """LocalCluster workers when none are asked for: one per core (``os.cpu_count()``)."""
    return os.cpu_count() or 1


def max_workers() -> int:
    """The most LocalCluster workers a sweep starts (`WORKERS_PER_CORE` per core)."""
    return WORKERS_PER_CORE * default_workers()


def check_workers(n: Any, field: str = "n_workers") -> int:
    """``n`` if it is a worker count this machine can run (1 .. `max_workers`), InputError naming ``field``
    otherwise. Zero or a negative count left the LocalCluster waiting for workers forever, and 1000
    started processes until the machine ran out of memory: both are refused before any process starts."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise InputError(field, f"expected a number of worker processes, got {n!r}")
    top = max_workers()
    if not 1 <= n <= top:
        raise InputError(field, f"must be between 1 and {top} ({WORKERS_PER_CORE} per core on this "
                                f"{default_workers()}-core machine), got {n}")
    return n


def check_size(n_points: int, n_algorithms: int, field: str = "points") -> None:
    """Refuse a sweep of more than `MAX_POINTS` points or `MAX_CELLS` cells (InputError naming ``field``);
    the CLI calls it with the counts of its options, before any list is expanded."""
    if n_points > MAX_POINTS:
        raise InputError(field, f"{n_points:,} instances, at most {MAX_POINTS:,} per sweep (split it into "
                                "several sweeps, e.g. over seed ranges, into one --store)")
    if n_points * n_algorithms > MAX_CELLS:
        raise InputError(field, f"{n_points:,} instances x {n_algorithms:,} algorithms = "
                                f"{n_points * n_algorithms:,} cells, at most {MAX_CELLS:,} per sweep")


@dataclasses.dataclass(frozen=True)
class SweepPoint:
    """One instance of a sweep and what to run on it.

    Attributes:
        family, preset, seed, jobs, servers, horizon: passed to `edgeopt.api.generate`.
        algorithms: names or variant labels (``online[F=64]``, `edgeopt.services.variants`) to run (None: every
            registered algorithm).
        optimal: also solve exactly with ``method`` and report ratios.
        method, time_limit: the exact model and its limit in seconds.
        work_limit: also a limit on the exact model's deterministic work (`edgeopt.core.limits.work_limit`;
            None: the clock alone). It goes into the exact row's ``params``, and into ``key`` only when set,
            so the stores of sweeps without it keep their cells.
        bound, bound_method: also compute a certified lower bound (`edgeopt.api.bound`, within
            ``time_limit``): ratios are to it unless the exact model proved an optimum, and an exact model
            above the size budget gives way to it (as in `edgeopt.api.compare`). Its row has kind
            ``bound``; like ``work_limit`` they enter ``key`` only when set.
    """

    family: str
    preset: str | None = None
    seed: int = 0
    jobs: int | None = None
    servers: int | None = None
    horizon: int | None = None
    algorithms: tuple[str, ...] | None = None
    optimal: bool = False
    method: str = "milp"
    time_limit: float = 60.0
    work_limit: float | None = None
    bound: bool = False
    bound_method: str = "auto"

    @property
    def key(self) -> str:
        """A stable name of this point (its part file is ``part-<key>.parquet``)."""
        fields = dataclasses.asdict(self)
        for name, default in (("work_limit", None), ("bound", False), ("bound_method", "auto")):
            if fields[name] == default:
                del fields[name]
        text = json.dumps(fields, sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:20]


def _schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([
        ("cell", pa.string()), ("family", pa.string()), ("preset", pa.string()), ("seed", pa.int64()),
        ("jobs", pa.int64()), ("servers", pa.int64()), ("horizon", pa.int64()), ("n_jobs", pa.int64()),
        ("optimal", pa.bool_()), ("method", pa.string()), ("time_limit", pa.float64()),
        ("algorithm", pa.string()), ("params", pa.string()), ("kind", pa.string()), ("status", pa.string()),
        ("objective", pa.float64()), ("bound", pa.float64()), ("ratio", pa.float64()), ("reference", pa.string()),
        ("rejected", pa.int64()), ("valid", pa.bool_()), ("runtime_s", pa.float64()),
        ("instance_sha256", pa.string()), ("error", pa.string()),
    ])


#: Column names of a stored sweep, in order (`_schema` gives their Arrow types).
COLUMNS = (
    "cell", "family", "preset", "seed", "jobs", "servers", "horizon", "n_jobs", "optimal", "method", "time_limit",
    "algorithm", "params", "kind", "status", "objective", "bound", "ratio", "reference", "rejected", "valid",
    "runtime_s", "instance_sha256", "error",
)


def _base(point: SweepPoint) -> dict[str, Any]:
    base = dataclasses.asdict(point)
    base.pop("algorithms")
    for name in ("work_limit", "bound", "bound_method"):  # in the exact and bound rows' params
        base.pop(name)
    return {"cell": point.key, **base}


def _error_text(exc: BaseException) -> str:
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" (at {Path(last[0].filename).name}:{last[0].lineno})" if last else ""
    return f"{exc.__class__.__name__}: {exc}{where}"[:2000]


def _blank(point: SweepPoint, algorithm: str, error: str) -> dict[str, Any]:
    return {**_base(point), "n_jobs": None, "algorithm": algorithm, "params": None, "kind": None, "status": None,
            "objective": None, "bound": None, "ratio": None, "reference": None, "rejected": None, "valid": None,
            "runtime_s": None, "instance_sha256": None, "error": error}


def evaluate_point(point: SweepPoint, plugins: Sequence[PluginFile] = ()) -> list[dict[str, Any]]:
    """Run one sweep point; one row per algorithm (and one for the exact model).

    ``plugins`` are the plugin files the driver loaded (`edgeopt.plugins.PluginFile`, with their text):
    a Dask worker executes each once, before its first point, so that their algorithms are registered
    there as on the driver (a worker on another machine need not see the driver's files).

    Never raises for a failure of the point itself: an instance that cannot be generated (or a plugin
    that does not load here) gives one row with algorithm ``*`` and the error; an algorithm (or exact
    model) that raises gives its row with the error, and the others still run.
    """
    from edgeopt.core import lookup
    from edgeopt.services.comparison import _rank_and_ratio, _row, plan_reference, reference_rows
    from edgeopt.services.instances import generate
    from edgeopt.services.lookup import algorithms, family_of
    from edgeopt.services.variants import resolve

    if plugins:
        from edgeopt.plugins import load_plugin_files

        try:
            load_plugin_files(plugins)  # once per process: a file already executed with this text is skipped
        except Exception as exc:  # noqa: BLE001 - e.g. it imports a package this worker lacks: recorded
            return [_blank(point, "*", _error_text(exc))]
    try:
        inst = generate(point.family, point.preset, seed=point.seed, jobs=point.jobs, servers=point.servers,
                            horizon=point.horizon)
        spec = family_of(inst)
        names = list(point.algorithms) if point.algorithms is not None else list(algorithms(spec.name))
    except Exception as exc:  # noqa: BLE001 - recorded, the sweep goes on
        return [_blank(point, "*", _error_text(exc))]
    sha = None
    rows: list[tuple[Any, dict[str, Any]]] = []  # (api.Row or None, fixed columns)
    for name in names:
        try:
            # a name may be a variant label, online[F=64] (edgeopt.services.variants): the row keeps the label
            (variant,) = resolve(spec.name, [name])
            algo = lookup(spec.name, variant.name)
            res = algo(inst, seed=point.seed, **variant.kwargs)
            row = _row(spec, inst, res, algo.kind, algo.relaxed)
            row.algorithm = variant.label
            sha = res.instance_sha256
            rows.append((row, {"params": variant.params_json(algo.defaults()), "error": None}))
        except Exception as exc:  # noqa: BLE001
            rows.append((None, {**_blank(point, name, _error_text(exc))}))
    reference, reference_name = None, "-"
    if point.optimal or point.bound:
        try:
            plan = plan_reference(spec, inst, optimal=point.optimal, bound=point.bound, method=point.method,
                                  bound_method=point.bound_method, time_limit=point.time_limit,
                                  work_limit=point.work_limit, max_model_size=None)
            extra, reference, reference_name, _ = reference_rows(
                spec, inst, plan, method=point.method, bound_method=point.bound_method,
                time_limit=point.time_limit, work_limit=point.work_limit, max_model_size=None)
            rows += [(row, {"params": row.params, "error": None}) for row in extra]
        except Exception as exc:  # noqa: BLE001 - a refused (too big) or failing model is recorded
            name = point.method if point.optimal else f"bound {point.bound_method}"
            rows.append((None, _blank(point, name, _error_text(exc))))
    _rank_and_ratio([r for r, _ in rows if r is not None], reference, reference_name)
    n_jobs = len(getattr(inst, "jobs", []))
    if sha is None:
        from edgeopt.core.family import instance_sha256

        sha = instance_sha256(inst)
    out = []
    for row, fixed in rows:
        if row is None:
            out.append({**fixed, "n_jobs": n_jobs, "instance_sha256": sha})
            continue
        out.append({
            **_base(point), "n_jobs": n_jobs, "algorithm": row.algorithm, "params": fixed["params"],
            "kind": row.kind, "status": row.status, "objective": row.objective, "bound": row.bound,
            "ratio": row.ratio, "reference": reference_name, "rejected": row.rejected, "valid": row.valid,
            "runtime_s": row.runtime_s, "instance_sha256": sha, "error": None,
        })
    return out


# ---- storage --------------------------------------------------------------------------------------


def _part(store: Path, key: str) -> Path:
    return store / f"part-{key}.parquet"


#: Where `run_sweep` moves damaged part files (inside the store; `read_sweep` never reads it).
QUARANTINE = "quarantine"


def check_store_path(store: str | os.PathLike[str]) -> None:
    """Refuse a ``--store`` that cannot hold a sweep (InputError naming ``store``): an empty path, a file,
    a device or FIFO, a place that cannot be written, a directory holding something other than a
    regular file under a part file's name (`check_store_entries`)."""
    from edgeopt.core.jsonio import check_output_path

    text = os.fspath(store)
    root = Path(text)
    if text in ("", "."):  # the CLI reads --store "" as "."; either way, not a place of its own
        raise InputError("store", "empty path or '.': give the store a directory of its own")
    if root.exists() and not root.is_dir():
        raise InputError("store", f"{root} exists and is not a directory")
    if root.is_dir():
        if not os.access(root, os.W_OK | os.X_OK):
            raise InputError("store", f"cannot write into {root}")
        check_store_entries(root)
    else:
        check_output_path(root, what="store")


def check_store_entries(store: str | os.PathLike[str]) -> None:
    """Refuse a store holding a directory, FIFO, device or socket under a part file's name (InputError
    naming ``store``). Such an entry is not a damaged part to move aside but something of the user's:
    writing the part would replace it (`atomic_file` refuses that, but only once the point is computed),
    and a FIFO counted as a stored point would leave that point out of the sweep."""
    root = Path(store)
    for f in sorted(root.glob("part-*.parquet")):
        kind = _odd_kind(f)
        if kind is not None:
            raise InputError("store", f"{f} is {kind}, not a part file: refusing to replace it (move it away)")


def _odd_kind(path: Path) -> str | None:
    """What ``path`` is when it exists and is not a regular file (a symbolic link is judged by its target);
    None for a regular file or nothing. ``os.stat`` never opens it, so a FIFO cannot block here."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # gone, or a dangling link: a write creates a regular file
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _read_part(path: Path) -> pa.Table:
    import pyarrow.parquet as pq

    return pq.read_table(path, schema=_schema())


def _damaged_parts(root: Path) -> list[tuple[Path, str]]:
    """The part files of ``root`` that cannot be read back whole, with why."""
    out = []
    for f in sorted(root.glob("part-*.parquet")):
        if _odd_kind(f) is not None:  # never opened (a FIFO would block): `check_store_entries` refuses it
            continue
        try:
            _read_part(f)
        except Exception as exc:  # noqa: BLE001 - any failure to read a part means it is damaged
            out.append((f, f"{exc.__class__.__name__}: {str(exc)[:200]}"))
    return out


def quarantine_damaged(store: str | os.PathLike[str]) -> list[Path]:
    """Move the damaged part files of ``store`` into ``store/quarantine/`` (a warning names each); their
    points then count as not stored, so a rerun computes them again. Returns the new paths."""
    root = Path(store)
    if not root.is_dir():
        return []
    from edgeopt.core.jsonio import refuse_non_regular

    moved = []
    for f, why in _damaged_parts(root):
        target = root / QUARANTINE / f.name
        if target.parent.exists() and not target.parent.is_dir():
            raise InputError("store", f"{target.parent} is not a directory: damaged parts are moved there")
        target.parent.mkdir(exist_ok=True)
        refuse_non_regular(target, what="store")  # a device or FIFO of that name is not replaced
        os.replace(f, target)
        moved.append(target)
        warnings.warn(f"damaged sweep part {f.name} ({why}) moved to {target}; its cells will be computed again",
                      RuntimeWarning, stacklevel=2)
    return moved


def write_rows(store: str | os.PathLike[str], key: str, rows: Sequence[dict[str, Any]]) -> Path:
    """Write one point's rows as ``part-<key>.parquet``, atomically (whole or absent)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(store)
    schema = _schema()
    table = pa.Table.from_pylist([{c: r.get(c) for c in COLUMNS} for r in rows], schema=schema)
    target = _part(root, key)
    with atomic_file(target, what="store") as tmp:  # whole or absent, with the user's umask
        pq.write_table(table, tmp)
    return target


def stored_cells(store: str | os.PathLike[str], *, with_errors: bool = True) -> set[str]:
    """Keys of the points already stored in ``store`` (those with an error only if ``with_errors``)."""
    root = Path(store)
    if not root.is_dir():
        return set()
    keys = {p.name[len("part-"):-len(".parquet")] for p in root.glob("part-*.parquet")}
    if with_errors or not keys:
        return keys
    df = read_sweep(root)
    failed = set(df.loc[df["error"].notna(), "cell"])
    return keys - failed


def read_sweep(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A stored sweep as a pandas DataFrame: one row per cell (point x algorithm), columns `COLUMNS`,
    sorted by family, preset, grid parameters, seed and algorithm.

    A part file that cannot be read (damaged) is left out, with a warning that names it.
    """
    import pandas as pd

    root = Path(path)
    files = sorted(root.glob("part-*.parquet")) if root.is_dir() else []
    tables, damaged, odd = [], [], []
    for f in files:
        kind = _odd_kind(f)
        if kind is not None:  # never opened: reading a FIFO would block
            odd.append(f"{f.name} ({kind})")
            continue
        try:
            tables.append(_read_part(f))
        except Exception as exc:  # noqa: BLE001 - a damaged part: read the others
            damaged.append(f"{f.name} ({exc.__class__.__name__})")
    if damaged:
        warnings.warn(f"{len(damaged)} damaged sweep part(s) left out: {', '.join(damaged[:5])}; a rerun of the "
                      "sweep with this store moves them aside and computes their cells again",
                      RuntimeWarning, stacklevel=2)
    if odd:
        warnings.warn(f"{len(odd)} entries named like sweep parts are not regular files and were left out: "
                      f"{', '.join(odd[:5])}", RuntimeWarning, stacklevel=2)
    if not tables:
        if not root.exists():
            raise InputError("sweep", f"no stored sweep at {root}")
        return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})
    import pyarrow as pa

    table = pa.concat_tables(tables)
    df = table.to_pandas()
    order = ["family", "preset", "jobs", "servers", "horizon", "seed", "algorithm"]
    return df.sort_values(order, na_position="first", kind="stable").reset_index(drop=True)


# ---- running --------------------------------------------------------------------------------------


def run_sweep(
    points: Sequence[SweepPoint],
    *,
    address: str | None = None,
    n_workers: int | None = None,
    scheduler: str = "dask",
    store: str | os.PathLike[str] | None = None,
    retry_errors: bool = False,
    on_done: Callable[[int, int], None] | None = None,
    plugins: Sequence[str | os.PathLike[str]] = (),
    dashboard: bool = False,
) -> list[dict[str, Any]]:
    """Evaluate every point not yet stored; rows come back in the order of ``points``.

    Args:
        address: a Dask scheduler address; None starts a ``LocalCluster``. One that does not answer
            within `CONNECT_TIMEOUT_S` seconds is an InputError naming ``address``.
        n_workers: LocalCluster worker processes (one thread each): 1 to `max_workers`, None for
            one per core.
        scheduler: ``"dask"`` or ``"sequential"`` (no Dask, for debugging).
        store: a directory holding the sweep as a Parquet dataset, written point by point as
            they finish; points already there are not computed again (their stored rows are
            returned). None keeps the rows in memory only.
        retry_errors: recompute stored points that recorded an error.
        on_done: progress callback ``(finished, to_compute)`` over the points computed now.
        plugins: Python files registering algorithms (`edgeopt.plugins.load_plugin_file`, at most
            `edgeopt.plugins.MAX_PLUGIN_FILES`): loaded here first (an InputError naming ``plugin``
            if one does not load), and their text is sent to the Dask workers, which load them too.
        dashboard: start the LocalCluster's Dask dashboard on localhost:8787 (needs bokeh) and print
            its address on stderr. Without it no dashboard runs, and no port 8787 is taken.

    At most `MAX_POINTS` points; everything above is checked before any point runs.

    With the LocalCluster, Dask starts its workers by re-running the script that called
    ``run_sweep`` (multiprocessing's spawn), so a script must make the call under
    ``if __name__ == "__main__":`` (docs/sweeps.md); a call outside it is an InputError naming
    ``script`` before any worker starts.
    """
    if scheduler not in ("dask", "sequential"):
        raise InputError("scheduler", f"must be 'dask' or 'sequential', got {scheduler!r}")
    if not isinstance(dashboard, bool):
        raise InputError("dashboard", f"expected True or False, got {dashboard!r}")
    if dashboard and scheduler == "dask" and address is None:
        _check_dashboard()
    from edgeopt.plugins import load_plugin_files

    files = load_plugin_files(list(plugins)) if plugins else []
    n_workers = default_workers() if n_workers is None else check_workers(n_workers)
    points = list(points)
    check_size(len(points), 1)
    for p in points:  # a number the int64 columns cannot hold would fail the write of its part, mid-sweep
        for name in ("seed", "jobs", "servers", "horizon"):
            value = getattr(p, name)
            if isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
                raise InputError(name, f"{value} does not fit the sweep's 64-bit integer column")
    if store is not None:
        if Path(store).is_dir():
            check_store_entries(store)
        quarantine_damaged(store)
    done_keys = stored_cells(store, with_errors=not retry_errors) if store is not None else set()
    todo = [p for p in points if p.key not in done_keys]
    fresh: dict[str, list[dict[str, Any]]] = {}

    def record(point: SweepPoint, rows: list[dict[str, Any]], k: int) -> None:
        if store is not None:
            write_rows(store, point.key, rows)
        fresh[point.key] = rows
        if on_done:
            on_done(k, len(todo))

    if scheduler == "sequential" or not todo:
        # a signal is held until the point in hand is evaluated and written (a part file is never left
        # half-written), then acted on as it would have been
        with _signals_held() as stop:
            for k, p in enumerate(todo, start=1):
                if stop:
                    break
                record(p, evaluate_point(p), k)
    else:
        _run_dask(todo, address=address, n_workers=n_workers, record=record, plugins=files, dashboard=dashboard)
    return _collect(points, fresh, store)


@contextlib.contextmanager
def _signals_held() -> Iterator[list[int]]:
    """Inside the block SIGINT and SIGTERM are only recorded (in the list it yields), so that they never
    land inside Dask's machinery (which printed tracebacks and left processes behind); the block polls
    the list and winds down. On leaving, the first recorded signal is delivered to the handler that was
    there before (KeyboardInterrupt for Ctrl-C; the CLI's exit 143 for SIGTERM). Outside the main thread
    (no signals there) it does nothing."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(s, lambda signum, frame: got.append(signum))
    try:
        yield got
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if got:
        handler = previous[got[0]]
        if callable(handler):
            handler(got[0], None)
        elif handler == signal.SIG_DFL:
            signal.raise_signal(got[0])
        raise KeyboardInterrupt


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while the LocalCluster starts its worker processes, which inherit that: Ctrl-C in a
    terminal signals the whole process group, and only the driver shall act on it (it closes the cluster)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


_QUIET_TRACKER = "ignore:resource_tracker:UserWarning"


def _check_dashboard() -> None:
    """Refuse ``dashboard=True`` without bokeh (InputError naming ``dashboard``): Dask would serve a page
    saying it is missing."""
    try:
        import distributed.dashboard.scheduler  # noqa: F401 - the import is the check
    except ImportError:
        raise InputError("dashboard", "Dask's dashboard needs bokeh: pip install 'bokeh>=3.1'") from None


def _guard_hint(where: str) -> str:
    return (f"{where}: Dask starts each worker process by importing the script again, which would call "
            "run_sweep again there; put the call under `if __name__ == \"__main__\":` (docs/sweeps.md), or "
            "pass scheduler=\"sequential\"")


def _unguarded_call() -> str | None:
    """``script:line`` when run_sweep is being called from the top level of the ``__main__`` script,
    outside ``if __name__ == "__main__":``; None otherwise (or when that cannot be told).

    Dask starts each LocalCluster worker with multiprocessing's spawn (its default), which imports the
    main script again in the new process; a call at the top level then starts a cluster inside a worker
    that is still starting, and every worker dies ("Nanny failed to start", 400 lines of tracebacks).
    Reading the script's syntax tree tells this before any process starts."""
    import ast

    import dask

    if dask.config.get("distributed.worker.multiprocessing-method", "spawn") == "fork":
        return None  # a forked worker does not import the script
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not path:  # an interactive session, python -c, a notebook: nothing is re-imported
        return None
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_name == "<module>" and frame.f_globals is vars(main)):
        frame = frame.f_back
    if frame is None:  # called later than the script's top level (a thread, a callback)
        return None
    line = frame.f_lineno
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test.values[0] if isinstance(node.test, ast.BoolOp) and isinstance(
                node.test.op, ast.And) else node.test
            sense = _main_test(test)
            block = node.body if sense == "==" else node.orelse if sense == "!=" else []
            if block and block[0].lineno <= line <= (block[-1].end_lineno or block[-1].lineno):
                return None
    return f"{path}:{line}"


def _main_test(test: Any) -> str | None:
    """``"=="`` for ``__name__ == "__main__"`` (either side), ``"!="`` for its negation, None otherwise."""
    import ast

    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return None
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    if not (names and consts):
        return None
    return "==" if isinstance(test.ops[0], ast.Eq) else "!="


def _run_dask(todo: list[SweepPoint], *, address: str | None, n_workers: int,
              record: Callable[[SweepPoint, list[dict[str, Any]], int], None],
              plugins: Sequence[PluginFile] = (), dashboard: bool = False) -> None:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - dask is a dependency
        raise InputError("scheduler", "dask is not installed: pip install 'dask[distributed]'") from None
    import multiprocessing

    if address is None:
        if getattr(multiprocessing.current_process(), "_inheriting", False):
            # this process is a worker being started, which imported the script that calls run_sweep
            raise InputError("script", _guard_hint("run_sweep called while a worker process starts"))
        where = _unguarded_call()
        if where is not None:
            raise InputError("script", _guard_hint(f"run_sweep called at the top level of {where}"))

    cluster = client = None
    with _signals_held() as stop:
        try:
            if address is None:
                # Workers stopped in a hurry (Ctrl-C) leave named semaphores registered; multiprocessing's
                # resource tracker removes them at exit, and says so in a warning that would read like
                # an error: filter it in the tracker (it takes its -W options from sys.warnoptions).
                if _QUIET_TRACKER not in sys.warnoptions:
                    sys.warnoptions.append(_QUIET_TRACKER)
                with _sigint_ignored():
                    cluster = _local_cluster(LocalCluster, n_workers, dashboard)
                client = Client(cluster)
            else:
                client = _connect(Client, address)
            if dashboard:
                sys.stderr.write(f"Dask dashboard: {client.dashboard_link}\n")
            if not stop:
                _gather(client, todo, record, stop, plugins)
        finally:
            _shut_down(client, cluster, hurry=bool(stop))


def _local_cluster(cluster_type: Any, n_workers: int, dashboard: bool) -> Any:
    """The sweep's LocalCluster: ``n_workers`` processes of one thread.

    Its scheduler always serves HTTP (health checks, metrics), on port 8787 unless told otherwise, even
    with the dashboard off: every sweep next to another Dask cluster printed "Port 8787 is already in
    use". Without ``dashboard`` it listens on a free port of localhost instead; with it, the dashboard
    is on localhost:8787 (Dask moves it to a free port, with its warning, when that one is taken)."""
    options: dict[str, Any] = {"dashboard_address": "localhost:8787"} if dashboard else {
        "dashboard_address": None, "scheduler_kwargs": {"dashboard_address": "127.0.0.1:0"}}
    try:
        return cluster_type(n_workers=n_workers, threads_per_worker=1, processes=True,
                            env={"OMP_NUM_THREADS": "1"}, **options)
    except RuntimeError as exc:
        if "failed to start" not in str(exc):
            raise
        # the check of the caller's script found nothing, yet the workers died as they started
        raise InputError("script", _guard_hint(f"the Dask workers failed to start ({exc}); if a script "
                                               "calls run_sweep at its top level")) from None


def _connect(client_type: Any, address: str) -> Any:
    """A client of the scheduler at ``address``; InputError naming ``address`` when it is malformed or
    does not answer within `CONNECT_TIMEOUT_S` (Dask's own error is a traceback after 30 s)."""
    try:
        return client_type(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, ValueError, TypeError) as exc:  # TimeoutError is an OSError
        reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise InputError("address", f"cannot reach the Dask scheduler at {address} ({reason})") from None


def _gather(client: Any, todo: list[SweepPoint], record: Callable[[SweepPoint, list[dict[str, Any]], int], None],
            stop: list[int], plugins: Sequence[PluginFile] = ()) -> None:
    """Submit every point and record each as it finishes (polling, so that a held signal is seen at once).

    The plugin files' text goes to the workers once (scattered), not inside each of the tasks."""
    extra: dict[str, Any] = {}
    if plugins:
        [extra["plugins"]] = client.scatter([tuple(plugins)], broadcast=True, hash=False)
    futures = client.map(evaluate_point, todo, pure=False, **extra)
    pending = dict(enumerate(futures))
    lost: list[str] = []
    done = 0
    while pending and not stop:
        finished = [k for k, f in pending.items() if f.done()]
        if not finished:
            time.sleep(0.05)
            continue
        for k in finished:
            fut = pending.pop(k)
            point = todo[k]
            done += 1
            try:
                rows = fut.result()
            except Exception as exc:  # noqa: BLE001
                # evaluate_point never raises, so this is the cluster's failure (KilledWorker: a task that
                # kept killing workers, a lost connection): not stored, so that a rerun computes it
                lost.append(f"seed {point.seed}: {_error_text(exc)}")
                continue
            record(point, rows, done)
            if stop:
                break
    if stop:
        client.cancel(list(pending.values()))
    if lost:
        warnings.warn(f"{len(lost)} sweep point(s) failed on the cluster and were not stored (rerun to compute "
                      f"them): {'; '.join(lost[:3])}", RuntimeWarning, stacklevel=4)


def _shut_down(client: Any, cluster: Any, *, hurry: bool = False) -> None:
    """Close the client and the LocalCluster, and make sure no worker process outlives the sweep.

    ``hurry`` (the sweep was interrupted): the LocalCluster's workers are terminated first, since a
    worker inside a long solver call would otherwise hold the shutdown for the call's whole time limit.
    """
    import logging
    import multiprocessing

    quiet = [logging.getLogger(n) for n in ("distributed", "tornado")]
    levels = [lg.level for lg in quiet]
    for lg in quiet:  # a cancelled task's "Couldn't gather keys" and similar shutdown chatter
        lg.setLevel(logging.CRITICAL)
    try:
        if hurry and cluster is not None:
            for nanny in list(getattr(cluster, "workers", {}).values()):
                with contextlib.suppress(Exception):
                    nanny.close_gracefully()  # no restart of the worker it is about to lose
                    if nanny.pid is not None:
                        os.kill(nanny.pid, signal.SIGTERM)
        if client is not None:
            with contextlib.suppress(Exception):
                client.close(timeout=10)
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=20)
        for child in multiprocessing.active_children():  # a worker that did not stop when asked
            child.join(timeout=5)
            if child.is_alive():
                child.kill()
                child.join(timeout=5)
    finally:
        for lg, level in zip(quiet, levels, strict=True):
            lg.setLevel(level)


def _collect(points: list[SweepPoint], fresh: dict[str, list[dict[str, Any]]],
             store: str | os.PathLike[str] | None) -> list[dict[str, Any]]:
    stored: dict[str, list[dict[str, Any]]] = {}
    missing = [p.key for p in points if p.key not in fresh]
    if store is not None and missing:
        for key in missing:
            part = _part(Path(store), key)
            if part.exists():  # rows in the order they were computed
                stored[key] = [_plain(rec) for rec in _read_part(part).to_pylist()]
    out = []
    for p in points:
        out.extend(fresh.get(p.key) or stored.get(p.key, []))
    return out


def _plain(rec: dict[str, Any]) -> dict[str, Any]:
    """A DataFrame record as plain Python values (NaN/NA of a missing number -> None)."""
    import math

    out = {}
    for k, v in rec.items():
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out[k] = None
        elif hasattr(v, "item"):
            out[k] = v.item()
        else:
            try:
                import pandas as pd

                out[k] = None if v is pd.NA else v
            except ImportError:  # pragma: no cover
                out[k] = v
    return out


def summarise(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per algorithm: count, share of valid results, mean runtime, errors, and the mean and max ratio
    to a proven optimum and, separately, to the exact model's bound (``n_optimum``/``n_bound`` rows
    each): a mean never mixes the two. ``mean_ratio``/``max_ratio`` are the ratios to the optimum."""
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["family"], r["algorithm"]), []).append(r)
    out = []
    for (family, algo), rs in sorted(by.items()):
        ok = [r for r in rs if not r.get("error")]
        to_opt = [r["ratio"] for r in ok if r["ratio"] is not None and r.get("reference") == "optimum"]
        to_bound = [r["ratio"] for r in ok if r["ratio"] is not None and r.get("reference") == "bound"]
        out.append(
            {
                "family": family,
                "algorithm": algo,
                "n": len(rs),
                "errors": len(rs) - len(ok),
                "valid": sum(bool(r["valid"]) for r in ok) / len(rs),
                "n_optimum": len(to_opt),
                "mean_ratio": sum(to_opt) / len(to_opt) if to_opt else None,
                "max_ratio": max(to_opt) if to_opt else None,
                "n_bound": len(to_bound),
                "mean_ratio_to_bound": sum(to_bound) / len(to_bound) if to_bound else None,
                "max_ratio_to_bound": max(to_bound) if to_bound else None,
                "mean_runtime_s": sum(r["runtime_s"] for r in ok) / len(ok) if ok else 0.0,
            }
        )
    return out


def limit_notes(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per exact method whose solves stopped at a limit: how many of how many, and whether they
    left a bound (ratios to it) or nothing (no ratio at all), e.g. ``5 of 5 milp solves stopped at the 20 s
    limit without a bound``. A summary never leaves a limit that bit unsaid."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("kind") == "exact" and not r.get("error"):
            by.setdefault(r["algorithm"], []).append(r)
    notes = []
    for method, rs in sorted(by.items()):
        stopped = [r for r in rs if r["status"] == "time_limit"]
        if not stopped:
            continue
        params = [json.loads(r.get("params") or "{}") for r in stopped]
        limits = sorted({f"work limit of {p['work_limit']:g}" if "work_limit" in p else
                         f"{p.get('time_limit', 0):g} s limit" for p in params})
        bare = sum(r.get("bound") is None for r in stopped)
        what = "without a bound" if bare == len(stopped) else (
            "with a bound (ratios to it)" if bare == 0 else f"({bare} without a bound, the rest with one)")
        notes.append(f"{len(stopped)} of {len(rs)} {method} solves stopped at the {' or '.join(limits)} {what}")
    return notes


_WHERE = re.compile(r" \(at [^()]*:\d+\)$")


def error_kinds(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The errors of a sweep's cells, one entry per distinct message (the ``(at file:line)`` suffix left
    out), in order of first appearance: ``message``, ``count`` (cells), and the ``seed`` and
    ``algorithm`` of its first cell. The CLI prints them under its table, since a summary row only
    counts errors and the reason was otherwise in ``--json`` or the store alone."""
    kinds: dict[str, dict[str, Any]] = {}
    for r in rows:
        text = r.get("error")
        if not text:
            continue
        message = _WHERE.sub("", text)
        message = message.removeprefix("InputError: ")  # its field already says what is wrong
        kind = kinds.setdefault(message, {"message": message, "count": 0, "seed": r.get("seed"),
                                          "algorithm": r.get("algorithm")})
        kind["count"] += 1
    return list(kinds.values())
