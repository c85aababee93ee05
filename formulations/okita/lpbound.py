"""A certified lower bound on program (2) that scales to the paper presets (method ``worker_lp``).

Relaxation. Sites are pooled per resource k (capacity sum_r C_r^k per slot). Job i needs
W_i = ceil(E_i D_i / rho_i) worker-slots in total ((2a)+(2b) summed over sites) and can have at
most A_i workers in one slot (the most that fit all sites with its PS at the best site:
``bounds.worker_limits``). Every slot with workers also holds a PS (2c); since y_i(t) <= A_i, the
PS's demand n_i in that slot is at least n_i y_i(t) / A_i. So each worker-slot of job i demands at
least ``e_i = m_i + n_i / A_i`` of the pooled resources. The latency cost is f_i(c - a_i + 1) for
the job's last slot with workers c, and the bandwidth cost is >= 0 (dropped).

A schedule therefore gives, per job, a completion c and integer worker counts 0 <= y(t) <= A_i on
[a_i, c] summing to >= W_i, with sum_i e_i y_i(t) <= pooled capacity in every slot: a relaxation.
Its Lagrangian (prices pi[k, t] >= 0 on the pooled rows, `edgeopt.core.colgen.lagrangian`) is

    L(pi) = sum_i min_c [ f_i(c - a_i + 1) + cheapest W_i worker-slots in [a_i, c] at price e_i . pi_t,
                          at most A_i per slot ] - sum_{k, t} cap_k pi[k, t],

evaluated exactly by sorting (filling the cheapest slots first is optimal for unit-size items),
for every c (no monotonicity of f_i needed: c is the schedule's own last slot). L(0) is the
latency bound ``bounds.latency_bound``, which also floors the result.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from edgeopt.core.colgen import _gamma
from edgeopt.core.limits import ModelSize
from edgeopt.core.lowerbound import BoundMethod
from formulations.okita.bounds import latency_bound, worker_limits


class WorkerRelaxation:
    """The pooled worker-slot relaxation (module docstring) with the pricing interface of `colgen`."""

    def __init__(self, instance: Any) -> None:
        T = int(instance.horizon)
        C = instance.capacity  # [sites, resources]
        self.capacity = np.repeat(C.sum(axis=0)[:, None], T, axis=1)
        self.limits = worker_limits(instance)
        self.arrival = np.array([int(j.arrival) for j in instance.jobs], dtype=np.int64)
        self.demand = []  # e_i per resource
        self.latency = []  # f_i(c - a_i + 1) for c = a_i .. T-1
        for job, (_, A) in zip(instance.jobs, self.limits, strict=True):
            m, n = np.asarray(job.worker_demand, float), np.asarray(job.ps_demand, float)
            self.demand.append(m + n / A if A > 0 else m + n)
            self.latency.append(np.asarray(job.cost(np.arange(1, T - int(job.arrival) + 1)), dtype=float))

    @property
    def n_rows(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def horizon(self) -> int:
        return int(self.capacity.shape[1])

    @property
    def n_jobs(self) -> int:
        return len(self.limits)

    def empty_jobs(self) -> list[int]:
        """Jobs that can never run, or not within the horizon even alone."""
        return [i for i, (W, A) in enumerate(self.limits)
                if A == 0 or self.arrival[i] + math.ceil(W / A) > self.horizon]

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.capacity).tobytes())
        h.update(np.array(self.limits, dtype=np.int64).tobytes())
        h.update(self.arrival.tobytes())
        for e, f in zip(self.demand, self.latency, strict=True):
            h.update(e.tobytes())
            h.update(f.tobytes())
        return h.hexdigest()

    def _best(self, i: int, unit: np.ndarray) -> tuple[Any, float]:
        """Job i's cheapest (c, slots, counts) at unit prices ``unit[t]`` and its value, lowered by a bound
        on its own float rounding error (so the minimum over c is a safe lower bound)."""
        W, A = self.limits[i]
        a, T = int(self.arrival[i]), self.horizon
        full, rem = divmod(W, A)
        need = full + (1 if rem else 0)
        counts = np.full(need, A, dtype=np.int64)
        if rem:
            counts[-1] = rem
        gamma = 4.0 * _gamma(need + self.n_rows + 8)
        best_v, best_key = math.inf, None
        for c in range(a + need - 1, T):
            window = unit[a:c + 1]
            order = np.argsort(window, kind="stable")[:need]
            fill = float(counts @ window[order])
            lat = float(self.latency[i][c - a])
            v = lat + fill - gamma * (abs(lat) + abs(fill))
            if v < best_v:
                best_v, best_key = v, (c, tuple(int(a + s) for s in order), tuple(int(x) for x in counts))
        return best_key, best_v

    def price(self, pi: np.ndarray, buckets: np.ndarray | None = None) -> tuple[list[tuple[Any, float]], float]:
        """Per job its cheapest column and safe value; the unit prices e_i . pi_t carry a relative error of
        at most gamma_K, covered by lowering each job's value by that much of its fill cost."""
        best, margin = [], 0.0
        for i in range(self.n_jobs):
            unit = self.demand[i] @ pi
            key, v = self._best(i, unit)
            if key is None:
                raise ValueError(f"job {i} has no column")
            best.append((key, v))
            W = self.limits[i][0]
            margin += 2.0 * _gamma(self.n_rows + 2) * W * float(unit.max(initial=0.0))
        return best, margin

    def column(self, i: int, key: Any) -> tuple[float, np.ndarray, np.ndarray]:
        c, slots, counts = key
        T, K = self.horizon, self.n_rows
        slots_a, counts_a = np.array(slots, dtype=np.int64), np.array(counts, dtype=float)
        idx = (np.arange(K)[:, None] * T + slots_a[None, :]).ravel()
        val = (self.demand[i][:, None] * counts_a[None, :]).ravel()
        nz = val > 0
        return float(self.latency[i][c - int(self.arrival[i])]), idx[nz], val[nz]


def size(instance: Any) -> ModelSize:
    """The starting master (one column per job and a slack per pooled row); column generation then
    adds columns only up to the size budget and stops there, keeping a valid bound."""
    J, T, K = len(instance.jobs), int(instance.horizon), len(instance.resources)
    return ModelSize(J * T, J + K * T, J + K * T + J * (1 + K * T),
                     note="column generation: the master holds only generated columns")


WORKER_LP = BoundMethod(
    name="worker_lp",
    summary="sites pooled per resource, per job W_i worker-slots of demand m_i + n_i / A_i, at most A_i per "
            "slot, latency cost at the last slot; Lagrangian of the pooled rows, prices by column generation",
    relax=WorkerRelaxation,
    trivial=latency_bound,
    step=None,
    size=size,
    bound_of="latency + bandwidth cost of program (2) over schedules of every job",
)
