"""What both exact models of MINLP (2) need from an edgecloud instance, as plain arrays.

MINLP (2) is nonlinear only through the per-worker rate p_j (eq. 1), which
depends on the binary xi_j (colocation, 2f), and through the fixed-allocation
window [h_j, c_j) (2c, 2d, 2j, 2k). Both exact models linearise it the same
way: a job picks one *mode* ``(w, xi)`` -- w workers in total, colocated or
not -- whose duration is fixed before the solve,

    d_j(w, xi) = ceil(E_j D_j M_j / (p_j(xi) * w))            (2e with eq. 1),

using the family's own duration function (the one the validator uses), so a
model and the validator can never round differently. A schedule that holds
its allocation longer than d_j(w, xi) is never better (it uses more capacity
and finishes later), so fixing the duration of a mode loses no optimum.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from edgeopt.edgecloud.instance import durations


@dataclasses.dataclass(frozen=True)
class Mode:
    """One way to run a job: ``workers`` in total, ``colocated`` or not, taking ``duration`` slots."""

    workers: int
    colocated: bool
    duration: int


@dataclasses.dataclass(frozen=True)
class JobData:
    """One job, reduced to what the exact models read.

    Attributes:
        index: position in ``instance.jobs`` (the models index jobs by it).
        arrival: a_j.
        worker_type, ps_type: u_j, v_j.
        release: ``[S]`` first slot a server may host the job: a_j + Delta_js (2i).
        worker_cap: ``[S]`` most workers of job j a server can ever hold: min(D_j, W_{s,u_j}).
        ps_ok: ``[S]`` whether server s has any type-v_j PS (P_{s,v_j} >= 1).
        modes: the modes (w, xi) that fit in the horizon somewhere.
    """

    index: int
    arrival: int
    worker_type: int
    ps_type: int
    release: np.ndarray
    worker_cap: np.ndarray
    ps_ok: np.ndarray
    modes: tuple[Mode, ...]

    earliest: int = 0
    deadline: int | None = None
    #: ``{mode: [T] bool}``: the starts reduced-cost fixing left to each mode (`formulations.edgecloud.fixing`);
    #: None: every start (no fixing). A mode it does not name has none left.
    allowed: dict[Mode, np.ndarray] | None = None

    def starts(self, mode: Mode, horizon: int) -> range | list[int]:
        """Start slots at which ``mode`` can run and finish by ``horizon`` (and by ``deadline``), among the
        ones reduced-cost fixing left (``allowed``)."""
        end = horizon if self.deadline is None else min(horizon, self.deadline)
        span = range(max(self.earliest, int(self.release.min())), end - mode.duration + 1)
        if self.allowed is None:
            return span
        ok = self.allowed.get(mode)
        return [] if ok is None else [h for h in span if ok[h]]


@dataclasses.dataclass(frozen=True)
class ModelData:
    """An instance as arrays: ``W [S, U]`` workers, ``P [S, V]`` PSs, ``T`` slots, the jobs.

    For a batch problem (3) of one round, ``horizon`` is the end of the
    round's window and every job's ``earliest`` its start.
    """

    horizon: int
    W: np.ndarray
    P: np.ndarray
    jobs: tuple[JobData, ...]

    @property
    def n_servers(self) -> int:
        return int(self.W.shape[0])

    def unschedulable(self) -> list[int]:
        """Jobs with no mode that fits in the horizon (the instance is infeasible if any)."""
        return [jd.index for jd in self.jobs if not jd.modes]


def prepare(instance: Any, *, jobs: list[int] | None = None, window: tuple[int, int] | None = None) -> ModelData:
    """Reduce ``instance`` to `ModelData`; modes that cannot fit anywhere are left out.

    Args:
        jobs: positions in ``instance.jobs`` to keep (default all).
        window: ``(lo, hi)``: runs must lie in slots [lo, hi) (a round of A_online); default [0, T).
    """
    lo, T = window if window is not None else (0, int(instance.horizon))
    if not 0 <= lo < T <= int(instance.horizon):
        raise ValueError(f"window {window} outside [0, {instance.horizon})")
    W = np.array([list(s.workers) for s in instance.servers], dtype=np.int64)
    P = np.array([list(s.ps) for s in instance.servers], dtype=np.int64)
    out = []
    for j in range(len(instance.jobs)) if jobs is None else jobs:
        job = instance.jobs[j]
        u, v = int(job.worker_type), int(job.ps_type)
        release = int(job.arrival) + np.asarray(job.upload_delay_slots, dtype=np.int64)
        ready = np.maximum(release, lo)
        cap = np.minimum(W[:, u], int(job.chunks))
        ps_ok = P[:, v] >= 1
        # The family's one duration rule (the validator's): d[xi, w - 1].
        dur = durations(instance, job)
        modes = []
        for w in range(1, int(job.chunks) + 1):
            for coloc in (True, False):
                d = int(dur[int(coloc), w - 1])
                if coloc:
                    hosts = (cap >= w) & ps_ok
                    earliest = ready[hosts].min() if hosts.any() else math.inf
                else:
                    # At least one worker off the PS server, so two distinct servers are used.
                    if cap.sum() < w or not ps_ok.any() or (cap > 0).sum() + ps_ok.sum() < 2:
                        continue
                    earliest = ready[(cap > 0) | ps_ok].min()
                if earliest + d <= T:
                    modes.append(Mode(w, coloc, d))
        out.append(
            JobData(
                index=j,
                arrival=int(job.arrival),
                worker_type=u,
                ps_type=v,
                release=release,
                worker_cap=cap,
                ps_ok=ps_ok,
                modes=tuple(modes),
                earliest=lo,
            )
        )
    return ModelData(horizon=T, W=W, P=P, jobs=tuple(out))


def _window_min(a: np.ndarray, d: int, starts: np.ndarray) -> np.ndarray:
    """``[S, len(starts)]``: min of ``a[S, T]`` over [h, h + d) for each start h."""
    from numpy.lib.stride_tricks import sliding_window_view

    return sliding_window_view(a, d, axis=1).min(axis=2)[:, starts]


def greedy_placements(data: ModelData) -> list[tuple[int, int, int, dict[int, int], int, bool]] | None:
    """A feasible schedule by list scheduling (arrival order, earliest completion), or None.

    Used only for an upper bound that shortens the MILP's time index
    (`with_deadlines`); the caller validates it before trusting it. Returns
    ``(job, start, end, workers, ps_server, colocated)`` per job.
    """
    T = data.horizon
    free_w = np.repeat(data.W[:, :, None], T, axis=2).astype(np.int64)
    free_p = np.repeat(data.P[:, :, None], T, axis=2).astype(np.int64)
    out = []
    for jd in sorted(data.jobs, key=lambda jd: (jd.arrival, jd.index)):
        best = None
        for md in jd.modes:
            starts = np.arange(max(jd.earliest, int(jd.release.min())), T - md.duration + 1)
            if starts.size == 0:
                continue
            released = starts[None, :] >= jd.release[:, None]
            capw = np.where(released, np.minimum(_window_min(free_w[:, jd.worker_type], md.duration, starts),
                                                 jd.worker_cap[:, None]), 0)
            psok = released & jd.ps_ok[:, None] & (_window_min(free_p[:, jd.ps_type], md.duration, starts) >= 1)
            w = md.workers
            if md.colocated:
                ok = (capw >= w) & psok
            else:
                # PS on p, at most w - 1 workers on p, the rest elsewhere.
                total = capw.sum(axis=0, keepdims=True)
                ok = psok & (total - capw + np.minimum(capw, w - 1) >= w) & (total - capw >= 1)
            hs = np.nonzero(ok.any(axis=0))[0]
            if hs.size == 0:
                continue
            hi = int(hs[0])
            end = int(starts[hi]) + md.duration
            if best is None or end < best[0]:
                best = (end, md, int(starts[hi]), int(np.argmax(ok[:, hi])), capw[:, hi])
        if best is None:
            return None
        end, md, h, p, capw = best
        workers: dict[int, int] = {}
        if md.colocated:
            workers[p] = md.workers
        else:
            need = md.workers
            for s in [s for s in range(len(capw)) if s != p] + [p]:
                take = int(min(capw[s], need, md.workers - 1 if s == p else need))
                if take > 0:
                    workers[s] = take
                    need -= take
        for s, c in workers.items():
            free_w[s, jd.worker_type, h:end] -= c
        free_p[p, jd.ps_type, h:end] -= 1
        out.append((jd.index, h, end, workers, p, md.colocated))
    return out


def with_deadlines(data: ModelData, upper_bound: float) -> ModelData:
    """Drop the runs no optimal schedule uses, given a feasible total JCT ``upper_bound``.

    In a schedule of total JCT <= UB, job j's JCT is at most UB minus the
    least JCT every other job k can have alone (LB_k: earliest start plus its
    fastest mode). Runs of j ending later can be removed without losing any
    optimum: ``c_j <= a_j + UB - sum_{k != j} LB_k``.
    """
    lb = {}
    for jd in data.jobs:
        first = max(jd.earliest, int(jd.release.min()))
        lb[jd.index] = min(first + md.duration for md in jd.modes) - jd.arrival
    total = sum(lb.values())
    jobs = []
    for jd in data.jobs:
        deadline = math.floor(jd.arrival + upper_bound - (total - lb[jd.index]) + 1e-9)
        modes = tuple(md for md in jd.modes if max(jd.earliest, int(jd.release.min())) + md.duration <= deadline)
        jobs.append(dataclasses.replace(jd, modes=modes, deadline=min(deadline, data.horizon)))
    return dataclasses.replace(data, jobs=tuple(jobs))
