"""The versions of an edgecloud job's modes that the ``ti_lp`` relaxation (``bound.py``) has columns for.

A job run in mode (w, xi) maps to the *edge* version when it uses no cloud server and to the *any* version
otherwise; ``bound.py`` builds its columns from them and ``fixing.py`` maps the exact models' runs onto those
columns through them (one module, so that both read the same numbers).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from edgeopt.edgecloud.instance import durations


def _earliest(release: np.ndarray, cap: np.ndarray, ps_ok: np.ndarray, w: int, coloc: bool) -> float:
    """Least release over the servers that can host mode (w, coloc) (inf: none can), as `data.prepare`."""
    if coloc:
        hosts = (cap >= w) & ps_ok
        return float(release[hosts].min()) if hosts.any() else math.inf
    if cap.sum() < w or not ps_ok.any() or (cap > 0).sum() + ps_ok.sum() < 2:
        return math.inf
    return float(release[(cap > 0) | ps_ok].min())


def pools(instance: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Workers ``W [S, U]``, PSs ``P [S, V]`` and the edge servers' mask ``[S]``."""
    W = np.array([list(s.workers) for s in instance.servers], dtype=np.int64)
    P = np.array([list(s.ps) for s in instance.servers], dtype=np.int64)
    edge = np.array([not s.is_cloud for s in instance.servers])
    return W, P, edge


def versions(instance: Any, job: Any, servers: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
             ) -> list[tuple[int, bool, bool, int, int, np.ndarray]]:
    """Every version (w, colocated, edge_only, duration, earliest start, demand row) of the job's modes that
    fits the horizon, before dominated ones are dropped: what a schedule running the job in mode (w, xi) is
    mapped to (the edge version when it uses no cloud server). ``servers``: `pools` of the instance."""
    T = int(instance.horizon)
    W, P, edge = servers if servers is not None else pools(instance)
    U, V = W.shape[1], P.shape[1]
    u, v = int(job.worker_type), int(job.ps_type)
    release = int(job.arrival) + np.asarray(job.upload_delay_slots, dtype=np.int64)
    wcap = np.minimum(W[:, u], int(job.chunks))
    ps_ok = P[:, v] >= 1
    dur = durations(instance, job)
    out = []
    for w in range(1, int(job.chunks) + 1):
        for coloc in (True, False):
            d = int(dur[int(coloc), w - 1])
            for edge_only in (True, False):
                mask = edge if edge_only else np.ones_like(edge)
                e = _earliest(release[mask], wcap[mask], ps_ok[mask], w, coloc)
                if not e + d <= T:
                    continue
                row = np.zeros(2 * U + 2 * V)
                row[U + u], row[2 * U + V + v] = w, 1.0
                if edge_only:
                    row[u], row[2 * U + v] = w, 1.0
                out.append((w, coloc, edge_only, d, int(e), row))
    return out
