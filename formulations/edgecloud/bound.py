"""A certified lower bound for MINLP (2) that scales to the paper presets.

Relaxation (``ti_lp``): workers and PSs pooled per type, time-indexed, one column per (job, mode,
start), bound by the Lagrangian of the pooled count rows (`edgeopt.core.colgen`).

* A job runs in one mode (w workers, colocated xi) for ``d_j(w, xi)`` slots (the family's own
  duration table, the validator's rule) on servers that are released to it (2i).
* Rows per slot: type-u workers on the EDGE servers <= sum over edge servers of W_su, type-u workers
  anywhere <= sum over all servers; the same two rows for type-v PSs ((2g)/(2h) summed over servers).
* Every mode has two versions: *edge* (all its workers and its PS on edge servers: demand on the
  edge rows and the total rows) and *any* (it uses a cloud server: demand on the total rows only),
  each with the earliest start a run it stands for can have by (2i) and the capacities of the
  servers it may use (``versions.py`` says how: a run using the cloud starts no earlier than the
  cloud's release, which is where the cloud's long upload delay enters). A schedule maps each job
  to the edge version if it uses no cloud server, else to the any version: no longer, no more
  demand, no earlier; so the program is a relaxation and its Lagrangian a lower bound on
  sum_j (c_j - a_j) over schedules of EVERY job.

The bound is an integer (rounded up), floored by the trivial bound of ``milp.trivial_bound``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from edgeopt.core.colgen import JobModes, TimeIndexedRelaxation, undominated
from edgeopt.core.limits import ModelSize
from edgeopt.core.lowerbound import BoundMethod
from edgeopt.edgecloud.instance import durations
from formulations.edgecloud.data import prepare
from formulations.edgecloud.milp import trivial_bound as _trivial
from formulations.edgecloud.versions import pools as _pools
from formulations.edgecloud.versions import versions


def relaxation(instance: Any) -> TimeIndexedRelaxation:
    """The pooled two-tier relaxation (module docstring), deterministic in the instance."""
    T = int(instance.horizon)
    W, P, edge = servers = _pools(instance)
    U, V = W.shape[1], P.shape[1]
    # rows: edge workers [U], all workers [U], edge PSs [V], all PSs [V]
    cap = np.concatenate([W[edge].sum(axis=0), W.sum(axis=0), P[edge].sum(axis=0), P.sum(axis=0)]).astype(float)
    jobs = []
    for job in instance.jobs:
        vs = versions(instance, job, servers)
        Dk = np.array([x[3] for x in vs], dtype=np.int64)
        Ek = np.array([x[4] for x in vs], dtype=np.int64)
        Rk = np.array([x[5] for x in vs]).reshape(len(vs), 2 * U + 2 * V)
        keep = undominated(Dk, Rk, Ek) if vs else np.zeros(0, np.int64)
        jobs.append(JobModes(weight=1.0, offset=-float(job.arrival), latest=T, duration=Dk[keep],
                             earliest=Ek[keep], run=Rk[keep]))
    names = ([f"edge_workers_{u}" for u in range(U)] + [f"workers_{u}" for u in range(U)]
             + [f"edge_ps_{v}" for v in range(V)] + [f"ps_{v}" for v in range(V)])
    return TimeIndexedRelaxation(jobs, np.repeat(cap[:, None], T, axis=1), names)


def trivial_bound(instance: Any) -> float:
    """sum_j (earliest release + fastest mode - a_j): each job alone (``milp.trivial_bound``)."""
    data = prepare(instance)
    if data.unschedulable():
        return -math.inf  # no complete schedule; the relaxation reports it
    return _trivial(data)


def size(instance: Any) -> ModelSize:
    """The starting master (one column per job and a slack per capacity row); column generation then
    adds columns only up to the size budget and stops there, keeping a valid bound."""
    J, T = len(instance.jobs), int(instance.horizon)
    rows = 2 * (len(instance.servers[0].workers) + len(instance.servers[0].ps)) * T if instance.servers else 0
    cols = sum(4 * int(j.chunks) * max(0, T - int(j.arrival)) for j in instance.jobs)
    first = sum(1 + 4 * int(np.asarray(durations(instance, j)).min()) for j in instance.jobs)  # shortest columns
    return ModelSize(cols, J + rows, J + rows + first,
                     note="column generation: the master holds only generated columns")


TI_LP = BoundMethod(
    name="ti_lp",
    summary="workers and PSs pooled per type (edge tier and all servers), time-indexed modes (w, xi), "
            "Lagrangian of the pooled count rows, prices by column generation",
    relax=relaxation,
    trivial=trivial_bound,
    step=lambda instance: 1.0,
    size=size,
    bound_of="total JCT sum_j (c_j - a_j) of MINLP (2) over schedules of every job",
)
