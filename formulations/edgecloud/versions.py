"""The versions of an edgecloud job's modes that the ``ti_lp`` relaxation (``bound.py``) has columns for.

A job run in mode (w, xi) maps to the *edge* version when it uses no cloud server and to the *any* version
otherwise; ``bound.py`` builds its columns from them and ``fixing.py`` maps the exact models' runs onto those
columns through them (one module, so that both read the same numbers).

A version's earliest start is the first slot at which a run it stands for can start, by (2i) (a run uses
only servers released to it, a_j + Delta_js <= start, on every server it uses) and the capacities (2g)/(2h)
of the servers it may use:

* colocated: the least release of a server of the version's tier that holds the w workers and a PS (for the
  *any* version, a cloud server: the run's one server is the cloud server it uses);
* distributed: no earlier than the least release of a server of its tier that holds a PS, than the first
  release by which the servers of its tier released so far hold w workers of the job's type (its w workers
  are on servers released by its start), and, for the *any* version, than the least release of a cloud
  server that could hold one of its workers or its PS (it uses one).

The first version of ``ti_lp`` started every version at the least release over the servers that could host
it, with the whole pooled capacity available then: a run using the cloud could start at an edge server's
release (1-4 slots after arrival on the ITP weeks, where the cloud's is 15-35) with the cloud's workers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from edgeopt.edgecloud.instance import durations


def _earliest(release: np.ndarray, cap: np.ndarray, ps_ok: np.ndarray, w: int, coloc: bool,
              cloud: np.ndarray | None = None) -> float:
    """The earliest start of a run in mode (w, coloc) on these servers (module docstring; inf: none can
    host it). ``cap``: the job's workers each server can hold (at most its chunks); ``cloud``: the servers a
    run of the *any* version must use one of (None: the *edge* version, no such server)."""
    if coloc:
        hosts = (cap >= w) & ps_ok
        if cloud is not None:
            hosts &= cloud
        return float(release[hosts].min()) if hosts.any() else math.inf
    if cap.sum() < w or not ps_ok.any() or (cap > 0).sum() + ps_ok.sum() < 2:
        return math.inf
    order = np.argsort(release, kind="stable")
    held = np.cumsum(cap[order])
    enough = float(release[order][int(np.searchsorted(held, w))])  # released servers hold w workers by then
    start = max(float(release[ps_ok].min()), enough)
    if cloud is not None:
        usable = cloud & ((cap > 0) | ps_ok)
        if not usable.any():
            return math.inf
        start = max(start, float(release[usable].min()))
    return start


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
    cloud = ~edge
    out = []
    for w in range(1, int(job.chunks) + 1):
        for coloc in (True, False):
            d = int(dur[int(coloc), w - 1])
            for edge_only in (True, False):
                if edge_only:
                    e = _earliest(release[edge], wcap[edge], ps_ok[edge], w, coloc)
                else:
                    e = _earliest(release, wcap, ps_ok, w, coloc, cloud)
                if not e + d <= T:
                    continue
                row = np.zeros(2 * U + 2 * V)
                row[U + u], row[2 * U + V + v] = w, 1.0
                if edge_only:
                    row[u], row[2 * U + v] = w, 1.0
                out.append((w, coloc, edge_only, d, int(e), row))
    return out
