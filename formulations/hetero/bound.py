"""A certified lower bound for program (2) / (15) that scales to the paper presets.

Relaxation (``ti_lp``): servers pooled per resource, time-indexed, one column per (job, relaxed
mode, start), bound by the Lagrangian of the pooled capacity rows (`edgeopt.core.colgen`).

* A relaxed mode is (worker type m, colocated q, N workers). Its duration is the least d the
  validator could accept for ANY PS type: ``d = ceil(E D K * per_iter / N * (1 - 2e-9) - 1e-9)``
  with ``per_iter`` the smallest over PS types (eq. (1); eq. (14) for Ring-AllReduce), rounded so
  that it never exceeds the least duration (2f) admits (the validator's slack is ``WORK_RTOL`` = 1e-9).
* Its per-slot demand is ``N e_m`` plus, for the PS architecture, the componentwise minimum over PS
  types p of ``s_min(p) z_p``, where s_min = 1 when colocated and otherwise
  ``max(1, ceil((N - g_max(m, p)) b_m / B_p))``: by (2i) the servers holding PSs of the job must
  carry the bandwidth of every worker not on them, and at most g_max(m, p) type-m workers share one
  server with a type-p PS. Colocated modes need ``N e_m + z_p <= C_h`` for some server h and p;
  non-colocated Ring-AllReduce modes need N >= 2.
* Packing rows (`edgeopt.core.packing`): pooling lets any mix of worker types fill every GPU, while on
  the servers a 4-GPU, 11-CPU worker cannot use the GPUs of a server with fewer than 11 CPUs per 4 GPUs.
  On the resource r the jobs' least work crowds most (`packing.most_crowded`: the GPUs on the paper
  presets), for nested sets S of worker types (ordered by how much of each other resource they need per
  unit of r), per slot: sum over running jobs of type m in S of N e[m, r] <= sum_h beta_h(S), beta_h(S)
  the most of r that type-S workers alone can hold on server h (an exact integer knapsack per server
  shape, or a valid upper bound past its node limit). Every schedule meets them (its type-S workers fit
  on each server), PSs included since they only take room. On ``paper`` (seed 0) the GPUs of the
  4-GPU types can be filled to 84 % only, and the bound rose from 34,819,254 to 35,381,752.
* Every schedule of (2) maps each job to the relaxed mode of its (m, q, N): no longer, no more
  demand, so the pooled time-indexed program is a relaxation and its Lagrangian a lower bound on
  the total weighted completion time of every schedule of EVERY job (``partial`` rows are outside).

The bound is floored by the trivial bound sum_j w_j (a_j + shortest duration of j) and rounded up
to a multiple of the gcd of the weights when all weights are integers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from edgeopt.core.colgen import JobModes, TimeIndexedRelaxation, undominated
from edgeopt.core.limits import ModelSize
from edgeopt.core.lowerbound import BoundMethod
from edgeopt.core.packing import most_crowded, packing_rows
from formulations.hetero.data import duration_slots, most_copies, most_fitting_workers


def _least_duration(work: float, per_iter: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Durations never above the least one (2f) admits, whatever the float rounding of the rate."""
    return np.maximum(1, np.ceil(work * per_iter / n * (1 - 2e-9) - 1e-9)).astype(np.int64)


def relaxation(instance: Any) -> TimeIndexedRelaxation:
    """The pooled time-indexed relaxation (module docstring), deterministic in the instance."""
    every, cap, rows = relaxed_modes(instance)
    jobs = []
    for job, (Dk, Rk, _) in zip(instance.jobs, every, strict=True):
        keep = undominated(Dk, Rk)
        jobs.append(JobModes(weight=float(job.weight), offset=0.0, latest=int(instance.horizon), duration=Dk[keep],
                             earliest=np.full(int(keep.size), int(job.arrival)), run=Rk[keep]))
    return TimeIndexedRelaxation(jobs, cap, rows)


def relaxed_modes(instance: Any) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray, list[str]]:
    """Every relaxed mode of every job before dominated ones are dropped, and the relaxation's capacity rows.

    Returns ``(modes, capacity, row names)``: per job ``(duration [K], demand [K, rows], kind [K, 3])`` with
    ``kind[k] = (m, N, q)`` (worker type, workers, colocated), the demand on the pooled resources followed by
    the packing rows; ``capacity [rows, T]``. `relaxation` keeps the undominated modes of each job;
    ``fixing.py`` maps an exact model's configuration (m, p, q, N) to its relaxed mode through ``kind``.
    """
    C = instance.capacity
    e, T = instance.worker_demand, int(instance.horizon)
    M = len(e)
    ring = instance.architecture == "ring_allreduce"
    z = np.zeros((0, C.shape[1])) if ring else instance.ps_demand
    P = len(z)
    bw = np.array([t.bandwidth_mbps for t in instance.worker_types], dtype=float)
    Bp = np.array([t.bandwidth_mbps for t in instance.ps_types], dtype=float) if not ring else np.zeros(0)
    wcap = most_copies(C, e)  # [H, M]
    ntot = wcap.sum(axis=0)
    if ring:
        ncol = wcap.max(axis=0)
        gmax = np.zeros((M, 0))
    else:
        # gmax[m, p]: most type-m workers next to one type-p PS on one server (-1: the PS fits nowhere)
        gmax = np.full((M, P), -1, dtype=np.int64)
        for p in range(P):
            rest = C - z[p]
            ok = (rest >= -1e-9).all(axis=1)
            if ok.any():
                gmax[:, p] = most_copies(np.maximum(rest[ok], 0.0), e).max(axis=0)
        ncol = gmax.max(axis=1)
    modes = []
    for job in instance.jobs:
        W = float(job.work)
        c = 8.0 * job.gradient_size_mb / (bw * instance.slot_seconds)
        D, dem, kind = [], [], []
        for m in range(M):
            for q in (True, False):
                nmax = int(min(job.chunks, ncol[m] if q else ntot[m]))
                n = np.arange(1, nmax + 1, dtype=float)
                if ring:
                    if not q:
                        n = n[n >= 2]
                    per = job.minibatch_time_slots[m] + (job.allreduce_time_slots + (0.0 if q else 2.0 * c[m])) * (n - 1) / n
                    if n.size == 0:
                        continue
                    d = _least_duration(W, per, n)
                    demand = n[:, None] * e[m][None, :]
                else:
                    if P == 0 or n.size == 0:
                        continue
                    per = job.minibatch_time_slots[m] + min(job.ps_update_time_slots) + (0.0 if q else 2.0 * c[m])
                    d = _least_duration(W, np.full(n.size, per), n)
                    if q:
                        s = np.ones((n.size, P))
                    else:
                        short = np.maximum(0.0, n[:, None] - np.maximum(gmax[m], 0)[None, :])
                        s = np.maximum(1.0, np.ceil(short * bw[m] / Bp[None, :] - 1e-9))
                    s = np.where(gmax[m][None, :] >= 0, s, np.inf)  # a PS type that fits no server
                    # inf * 0 would be NaN, and a NaN minimum would drop the mode even when another PS type
                    # fits: a PS type that fits no server is infinite on every resource, whatever z_p is
                    with np.errstate(invalid="ignore"):
                        psd = np.min(np.where(np.isinf(s)[:, :, None], np.inf, s[:, :, None] * z[None, :, :]), axis=1)
                    demand = n[:, None] * e[m][None, :] + psd
                keep = np.isfinite(demand).all(axis=1) & (job.arrival + d <= T)
                D.append(d[keep])
                dem.append(demand[keep])
                kind.append(np.column_stack([np.full(int(keep.sum()), m), n[keep], np.full(int(keep.sum()), int(q))]))
        modes.append((np.concatenate(D) if D else np.zeros(0, np.int64),
                      np.concatenate(dem) if dem else np.zeros((0, C.shape[1])),
                      np.concatenate(kind).astype(np.int64) if kind else np.zeros((0, 3), np.int64)))
    # packing rows (edgeopt.core.packing) on the resource the jobs' work crowds most: per slot, the workers of a
    # set of types use at most what those types alone can hold server by server
    areas = np.array([(Rk * Dk[:, None]).min(axis=0) if Dk.size else np.zeros(C.shape[1]) for Dk, Rk, _ in modes])
    weights, limits, names = packing_rows(C, e, [most_crowded(areas, C.sum(axis=0), T)]) if modes else (
        np.zeros((0, M)), np.zeros(0), [])
    every = [(Dk, np.hstack([Rk, kind[:, 1:2] * weights.T[kind[:, 0]]]), kind)  # N type-m workers: N weights[:, m]
             for Dk, Rk, kind in modes]
    cap = np.repeat(np.concatenate([C.sum(axis=0), limits])[:, None], T, axis=1)
    return every, cap, [*instance.resources, *names]


def shortest_durations(instance: Any) -> list[float]:
    """Per job, its shortest duration over the configurations the exact models use (inf: none fits). The
    duration falls with N (eq. (1) and (14)), so the largest N that may fit (`most_fitting_workers`, at most the
    job's chunks) is the fastest."""
    C, e = instance.capacity, instance.worker_demand
    ring = instance.architecture == "ring_allreduce"
    wcap = most_copies(C, e)
    pcap = np.zeros((len(C), 0), np.int64) if ring else most_copies(C, instance.ps_demand)
    ps_types = [-1] if ring else range(len(instance.ps_types))
    limits = {(m, p, q): most_fitting_workers(q, m, p, wcap, pcap, ring)
              for m in range(len(e)) for p in ps_types for q in (True, False)}
    out = []
    for j, job in enumerate(instance.jobs):
        best = math.inf
        for (m, p, q), (top, least) in limits.items():
            n = min(int(job.chunks), top)
            if n >= least:
                best = min(best, duration_slots(instance, j, m, p, q, n))
        out.append(best)
    return out


def trivial_bound(instance: Any) -> float:
    """sum_j w_j (a_j + shortest duration of j over the configurations the exact models use)."""
    total = 0.0
    for job, best in zip(instance.jobs, shortest_durations(instance), strict=True):
        if job.arrival + best > instance.horizon:
            return -math.inf  # no complete schedule; the relaxation reports it
        total += float(job.weight) * (job.arrival + best)
    return total


def weight_step(instance: Any) -> float | None:
    """gcd of the weights when all are integers (completion times are integers), else None."""
    w = [float(job.weight) for job in instance.jobs]
    if not w or any(x != math.floor(x) for x in w):
        return None
    return float(math.gcd(*(int(x) for x in w)))


def size(instance: Any) -> ModelSize:
    """The starting master: a slack per capacity row and slot, and per job its shortest column (what column
    generation prices first at zero prices: the job's earliest completion), which touches every row in each
    slot it runs (a job that fits nowhere: the whole horizon). Column generation then adds columns only up to
    the size budget and stops there, keeping a valid bound."""
    J, T, R, M = len(instance.jobs), int(instance.horizon), len(instance.resources), len(instance.worker_types)
    cols = sum(2 * M * int(j.chunks) * max(0, T - int(j.arrival)) for j in instance.jobs)
    R += (R - 1) * M  # at most this many packing rows: one resource, a nested order of the types per other one
    first = sum(1 + R * int(min(d, T)) for d in shortest_durations(instance))
    return ModelSize(cols, J + R * T, J + R * T + first,
                     note="column generation: the master holds only generated columns")


TI_LP = BoundMethod(
    name="ti_lp",
    summary="servers pooled per resource, time-indexed relaxed modes (m, q, N), Lagrangian of the pooled "
            "capacity rows, prices by column generation",
    relax=relaxation,
    trivial=trivial_bound,
    step=weight_step,
    size=size,
    bound_of="total weighted completion time of program (2)/(15) over schedules of every job",
)
