"""Sweeps over seeds and sizes, run on Dask (a LocalCluster by default, a real cluster given its address).

A sweep is a list of `SweepPoint`s; each point generates one instance, runs
the chosen algorithms on it, optionally solves it exactly, validates every
result, and returns one flat row per algorithm. Points are independent, so
they map onto Dask tasks one to one. Solver threads are kept at 1 inside
workers (shared/docs/SOLVERS.md: the scheduler shares the cores).

>>> from edgeopt.sweep import SweepPoint, run_sweep
>>> pts = [SweepPoint("hetero", "small", seed=s, optimal=True) for s in range(20)]  # doctest: +SKIP
>>> rows = run_sweep(pts)                  # LocalCluster(n_workers=2)          # doctest: +SKIP
>>> rows = run_sweep(pts, address="tcp://scheduler:8786")                      # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from edgeopt.core import InputError


@dataclasses.dataclass(frozen=True)
class SweepPoint:
    """One instance of a sweep and what to run on it.

    Attributes:
        family, preset, seed, jobs, servers, horizon: passed to `edgeopt.api.generate`.
        algorithms: names to run (None: every registered algorithm).
        optimal: also solve exactly with ``method`` and report ratios.
        method, time_limit: the exact model and its limit in seconds.
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


def evaluate_point(point: SweepPoint) -> list[dict[str, Any]]:
    """Run one sweep point; one row per algorithm (and one for the exact model)."""
    from edgeopt import api

    inst = api.generate(
        point.family, point.preset, seed=point.seed, jobs=point.jobs, servers=point.servers, horizon=point.horizon
    )
    table = api.compare(
        inst,
        list(point.algorithms) if point.algorithms is not None else None,
        optimal=point.optimal,
        method=point.method,
        time_limit=point.time_limit,
        seed=point.seed,
    )
    n_jobs = len(getattr(inst, "jobs", []))
    base = dataclasses.asdict(point)
    base.pop("algorithms")
    rows = []
    for row in table.rows:
        rows.append(
            {
                **base,
                "n_jobs": n_jobs,
                "algorithm": row.algorithm,
                "kind": row.kind,
                "status": row.status,
                "objective": row.objective,
                "bound": row.bound,
                "ratio": row.ratio,
                "rejected": row.rejected,
                "reference": table.reference_name,
                "valid": row.valid,
                "runtime_s": row.runtime_s,
            }
        )
    return rows


def run_sweep(
    points: Sequence[SweepPoint],
    *,
    address: str | None = None,
    n_workers: int = 2,
    scheduler: str = "dask",
    on_done: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Evaluate every point; rows come back in the order of ``points``.

    Args:
        address: a Dask scheduler address; None starts a ``LocalCluster``.
        n_workers: LocalCluster worker processes (one thread each).
        scheduler: ``"dask"`` or ``"sequential"`` (no Dask, for debugging).
        on_done: progress callback ``(finished, total)``.
    """
    if scheduler == "sequential":
        out: list[list[dict[str, Any]]] = []
        for k, p in enumerate(points):
            out.append(evaluate_point(p))
            if on_done:
                on_done(k + 1, len(points))
        return [row for rows in out for row in rows]
    if scheduler != "dask":
        raise InputError("scheduler", f"must be 'dask' or 'sequential', got {scheduler!r}")
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - dask is an optional extra
        raise InputError("scheduler", "dask is not installed: pip install 'edgeopt[dask]'") from None

    cluster = None
    if address is None:
        cluster = LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
            env={"OMP_NUM_THREADS": "1"},
        )
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        futures = client.map(evaluate_point, list(points), pure=False)
        index = {f.key: k for k, f in enumerate(futures)}
        results: list[list[dict[str, Any]] | None] = [None] * len(points)
        for done, fut in enumerate(as_completed(futures), start=1):
            results[index[fut.key]] = fut.result()
            if on_done:
                on_done(done, len(points))
        return [row for rows in results if rows is not None for row in rows]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def summarise(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per algorithm: count, mean and max ratio, share of valid results, mean runtime."""
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["family"], r["algorithm"]), []).append(r)
    out = []
    for (family, algo), rs in sorted(by.items()):
        ratios = [r["ratio"] for r in rs if r["ratio"] is not None]
        out.append(
            {
                "family": family,
                "algorithm": algo,
                "n": len(rs),
                "valid": sum(r["valid"] for r in rs) / len(rs),
                "mean_ratio": sum(ratios) / len(ratios) if ratios else None,
                "max_ratio": max(ratios) if ratios else None,
                "mean_runtime_s": sum(r["runtime_s"] for r in rs) / len(rs),
            }
        )
    return out
