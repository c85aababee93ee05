"""Baselines of Sec. 7 of Zhou et al.: FIFO, DRF, and the non-preemptive variants
``antman_np`` and ``tiresias_np`` (the paper's AntMan and Tiresias preempt; they live
in `edgeopt.hetero.preemptive` under the names ``antman`` and ``tiresias``).

All four here are slot-driven online schedulers run through `run_online` (a job is
seen from its arrival slot on), all use the job's "ideal" worker and PS types
(`instance.ideal_config`: most expedited single-job training), and all produce
non-preemptive schedules of the family's model, validated by the same
validator as every other algorithm. What differs is who starts when, with how
many workers:

* ``fifo``: jobs start in arrival order with head-of-line blocking; every job
  asks for the same number K of workers (parameter ``workers``, default 15,
  the middle of the paper's "fixed to a number within [1, 30]"; capped at D_j).
* ``drf``: Dominant Resource Fairness (Ghodsi et al.): at each slot the free
  capacity is shared among the waiting jobs by progressive filling, one worker
  at a time to the job with the smallest dominant share (its share of the
  cluster's total capacity of its most demanded resource), up to D_j.
* ``antman_np``: every job arrives as a resource-guarantee job and starts (in
  arrival order) only with its full ideal configuration (D_j workers); a job
  that has waited ``patience`` slots (default 3) becomes opportunistic and
  starts with as many workers as fit in the free capacity (>= 1).
  Guarantee jobs go first at every slot.
* ``tiresias_np``: priority = remaining work x GPUs of its configuration (the
  paper's description of Tiresias: "remaining workload times number of
  resources"), smallest first, with backfilling (a lower-priority job may start
  when a higher-priority one does not fit). Tiresias is preemptive; this
  variant (ours, a schedule of program (2) itself) applies its priority at
  every start decision and never preempts; a not-yet-started job's remaining
  work is its whole work. Without preemption overhead it is stronger than the
  paper's baseline.

Placement of a chosen (types, N) at slot t: colocated on one server if it fits
(best fit: the fitting server with the least free GPU... first resource), else
distributed: the PS server with the most room, ``s = max(1, ceil((N - g) b /
B))`` PSs there, workers on the other servers with the most room first and, if
needed, g workers on the PS server. A job that can no longer complete by T
with its configuration is rejected (reported).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from edgeopt.core import CapacityLedger, OnlinePolicy, Result, register, run_online, stopwatch
from edgeopt.hetero.instance import Instance, Job, ideal_config, min_duration
from edgeopt.hetero.schedule import JobSchedule, Schedule
from edgeopt.hetero.spec import FAMILY

EPS = 1e-9


def _copies(free: np.ndarray, unit: np.ndarray) -> np.ndarray:
    pos = unit > 0
    return np.floor((free[:, pos] + EPS) / unit[pos]).min(axis=1).clip(min=0).astype(np.int64)


def place(instance: Instance, ledger: CapacityLedger, job: Job, m: int, p: int | None, n: int, t: int
          ) -> JobSchedule | None:
    """A placement of N type-m workers (+ type-p PSs) starting at slot t, or None if it does not fit."""
    T = instance.horizon
    # colocated: one server, the fast rate of eq. (1)/(14)
    d = min_duration(instance, job, m, p, True, n)
    if t + d <= T:
        free = ledger.capacity - ledger.usage[:, :, t:t + d].max(axis=2)
        h = colocated_server(instance, free, m, p, n)
        if h is not None:
            return JobSchedule(job=job.id, start=t, duration=d, worker_type=m, ps_type=p, colocated=True,
                               workers={h: n}, ps={h: 1} if p is not None else {})
    if n < 2 and p is None:
        return None
    d = min_duration(instance, job, m, p, False, n)
    if t + d > T:
        return None
    free = ledger.capacity - ledger.usage[:, :, t:t + d].max(axis=2)
    got = distributed_placement(instance, free, m, p, n)
    if got is None:
        return None
    workers, ps = got
    return JobSchedule(job=job.id, start=t, duration=d, worker_type=m, ps_type=p, colocated=False,
                       workers=workers, ps=ps)


def colocated_server(instance: Instance, free: np.ndarray, m: int, p: int | None, n: int) -> int | None:
    """Best fit for N type-m workers and one type-p PS on one server of ``free`` [H, R] (None if none)."""
    e = instance.worker_demand[m]
    z = instance.ps_demand[p] if p is not None else None
    need = n * e + (z if z is not None else 0.0)
    ok = np.all(need[None, :] <= free + EPS, axis=1)
    if not ok.any():
        return None
    # best fit: the fitting server with the least free first resource
    return int(np.flatnonzero(ok)[np.argmin(free[ok, 0] - need[0])])


def distributed_placement(instance: Instance, free: np.ndarray, m: int, p: int | None, n: int
                          ) -> tuple[dict[int, int], dict[int, int]] | None:
    """(workers, ps) of a distributed placement of N type-m workers (+ PSs) in ``free`` [H, R], or None."""
    e = instance.worker_demand[m]
    z = instance.ps_demand[p] if p is not None else None
    cw = np.minimum(_copies(free, e), n)
    if p is None:
        if n < 2:
            return None
        order = np.argsort(-cw, kind="stable")
        workers: dict[int, int] = {}
        left = n
        for h in order:
            if left == 0 or cw[h] == 0:
                break
            k = int(min(cw[h], left))
            if not workers and k == n:
                k = n - 1  # distributed means >= 2 servers (15a)
            workers[int(h)] = k
            left -= k
        if left > 0 or len(workers) < 2:
            return None
        return workers, {}
    assert z is not None
    b = instance.worker_types[m].bandwidth_mbps
    B = instance.ps_types[p].bandwidth_mbps
    cz = _copies(free, z)
    for nps in np.argsort(-cz, kind="stable")[:5]:
        nps = int(nps)
        if cz[nps] < 1:
            break
        others = [int(h) for h in np.argsort(-cw, kind="stable") if int(h) != nps and cw[h] > 0]
        workers = {}
        left = n
        for h in others:
            if left == 0:
                break
            k = int(min(cw[h], left))
            workers[h] = k
            left -= k
        g = left  # the rest goes on the PS server
        if g >= n:
            continue  # nothing elsewhere: that would be colocated
        s = max(1, math.ceil((n - g) * b / B - EPS))
        if np.all(g * e + s * z <= free[nps] + EPS):
            if g > 0:
                workers[nps] = g
            return workers, {nps: s}
    return None


class _SlotScheduler(OnlinePolicy[Job]):
    """Wakes at every slot while jobs wait; subclasses choose whom to start (`decide`)."""

    def __init__(self, instance: Instance) -> None:
        super().__init__()
        self.inst = instance
        self.T = instance.horizon
        self.ledger = CapacityLedger(instance.capacity, self.T, instance.resources)
        self.queue: list[Job] = []
        self.started: dict[int, JobSchedule] = {}
        self.rejected: list[int] = []
        self.ideal: dict[int, tuple[int, int | None, int, int]] = {}

    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        for j in jobs:
            m, p, n, s = ideal_config(self.inst, j)
            # the ideal count may exceed what the cluster can ever hold: the most that fit when idle
            n = self._fit_idle(j, m, p, n)
            self.ideal[j.id] = (m, p, n, s)
            self.queue.append(j)

    def _fit_idle(self, j: Job, m: int, p: int | None, n: int) -> int:
        """The largest k <= n whose placement fits the idle cluster at the job's arrival and finishes by T
        (1 if none). A downward scan, not a bisection: "fits and finishes by T" is not monotone in k (fewer
        workers fit more easily but run longer), and a bisection could stop at 1 although n fits."""
        empty = CapacityLedger(self.inst.capacity, self.T, self.inst.resources)
        for k in range(n, 0, -1):
            if place(self.inst, empty, j, m, p, k, j.arrival) is not None:
                return k
        return 1

    def cap_workers(self, j: Job) -> int:
        """The ideal worker count of ``j``, capped at what fits on the idle cluster."""
        return self.ideal[j.id][2]

    def next_wakeup(self, t: int) -> int | None:
        return t + 1 if self.queue and t + 1 < self.T else None

    def on_slot(self, t: int) -> None:
        if not self.queue:
            return
        self.decide(t)
        # a job that can no longer finish by T with even one worker... its configuration is rejected
        keep = []
        for j in self.queue:
            if self._hopeless(j, t):
                self.rejected.append(j.id)
                self.commit(j.id, {"rejected": True})
            else:
                keep.append(j)
        self.queue = keep

    def _hopeless(self, j: Job, t: int) -> bool:
        m, p, _, _ = self.ideal[j.id]
        n = self.max_workers(j)
        return t + 1 + min_duration(self.inst, j, m, p, True, n) > self.T

    def max_workers(self, j: Job) -> int:
        """The most workers this policy would ever give ``j``."""
        return self.cap_workers(j)

    def start(self, js: JobSchedule) -> None:
        e = self.inst.worker_demand[js.worker_type]
        for h, c in js.workers.items():
            self.ledger.reserve(h, c * e, js.start, js.end)
        if js.ps_type is not None:
            z = self.inst.ps_demand[js.ps_type]
            for h, c in js.ps.items():
                self.ledger.reserve(h, c * z, js.start, js.end)
        self.started[js.job] = js
        self.queue = [j for j in self.queue if j.id != js.job]
        self.commit(js.job, js.model_dump(mode="json"))

    def room_now(self, m: int, t: int) -> int:
        """Type-m workers that fit in slot t, summed over servers: no window from t holds more."""
        free = self.ledger.capacity - self.ledger.usage[:, :, t]
        return int(_copies(free, self.inst.worker_demand[m]).sum())

    def try_start(self, j: Job, n: int, t: int) -> bool:
        m, p, _, _ = self.ideal[j.id]
        if n > self.room_now(m, t):
            return False
        js = place(self.inst, self.ledger, j, m, p, n, t)
        if js is None:
            return False
        self.start(js)
        return True

    def decide(self, t: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class FifoScheduler(_SlotScheduler):
    def __init__(self, instance: Instance, workers: int) -> None:
        super().__init__(instance)
        self.k = workers

    def cap_workers(self, j: Job) -> int:
        # the fixed count, capped at D_j and at what the idle cluster can hold
        return min(self.k, self.ideal[j.id][2])

    def decide(self, t: int) -> None:
        # strict arrival order: the head blocks everyone behind it
        for j in sorted(self.queue, key=lambda j: (j.arrival, j.id)):
            if not self.try_start(j, self.cap_workers(j), t):
                break


class DrfScheduler(_SlotScheduler):
    def decide(self, t: int) -> None:
        inst = self.inst
        total = inst.capacity.sum(axis=0)
        free = (inst.capacity - self.ledger.usage[:, :, t]).sum(axis=0)
        jobs = sorted(self.queue, key=lambda j: (j.arrival, j.id))
        alloc = {j.id: 0 for j in jobs}
        share = {j.id: 0.0 for j in jobs}
        held = {j.id: np.zeros_like(total) for j in jobs}
        growing = [j for j in jobs]
        # progressive filling: one worker to the waiting job with the smallest dominant share
        # (a job's first worker comes with its first PS)
        while growing:
            j = min(growing, key=lambda j: (share[j.id], j.arrival, j.id))
            m, p, _, _ = self.ideal[j.id]
            u = inst.worker_demand[m] + (inst.ps_demand[p] if p is not None and alloc[j.id] == 0 else 0.0)
            if alloc[j.id] >= self.cap_workers(j) or np.any(u > free + EPS):
                growing.remove(j)
                continue
            alloc[j.id] += 1
            free = free - u
            held[j.id] = held[j.id] + u
            share[j.id] = float(np.max(np.where(total > 0, held[j.id] / np.where(total > 0, total, 1), 0)))
        self.last_alloc = dict(alloc)
        for j in sorted(jobs, key=lambda j: (share[j.id], j.arrival, j.id)):
            n = alloc[j.id]
            # fragmentation: fewer workers if the aggregate share does not pack onto the servers
            while n >= 1 and not self.try_start(j, n, t):
                n -= 1


class AntmanScheduler(_SlotScheduler):
    def __init__(self, instance: Instance, patience: int) -> None:
        super().__init__(instance)
        self.patience = patience
        self.kind: dict[int, str] = {}

    def decide(self, t: int) -> None:
        jobs = sorted(self.queue, key=lambda j: (j.arrival, j.id))
        # resource-guarantee jobs first, each with its full ideal configuration
        for j in jobs:
            if t - j.arrival < self.patience:
                _, _, n, _ = self.ideal[j.id]
                if self.try_start(j, n, t):
                    self.kind[j.id] = "guarantee"
        # jobs that waited too long run opportunistically on whatever is free
        for j in jobs:
            if j.id in self.started or t - j.arrival < self.patience:
                continue
            m, _, n, _ = self.ideal[j.id]
            n = min(n, self.room_now(m, t))
            while n >= 1 and not self.try_start(j, n, t):
                n -= 1
            if j.id in self.started:
                self.kind[j.id] = "opportunistic"


class TiresiasScheduler(_SlotScheduler):
    def priority(self, j: Job) -> float:
        m, _, n, _ = self.ideal[j.id]
        gpus = n * float(self.inst.worker_demand[m][0])
        return j.work * max(gpus, 1.0)

    def decide(self, t: int) -> None:
        for j in sorted(self.queue, key=lambda j: (self.priority(j), j.arrival, j.id)):
            _, _, n, _ = self.ideal[j.id]
            self.try_start(j, n, t)  # backfilling: a job that does not fit does not block the others


def _run(instance: Instance, name: str, policy: _SlotScheduler, extra: dict) -> Result:
    with stopwatch() as el:
        late = run_online(policy, instance.jobs, instance.horizon)
        started = policy.started
        rejected = sorted(set(policy.rejected) | {int(x) for x in late} | {j.id for j in policy.queue})
        sched = Schedule(jobs=[started[k] for k in sorted(started)], rejected=rejected)
    return FAMILY.algorithm_result(instance, name, sched, el[0], rejected=rejected, extra=extra)


#: FIFO's default fixed worker count: the middle of the paper's range [1, 30] (Sec. 7 gives no value).
FIFO_WORKERS = 15


@register("hetero", "fifo", kind="baseline", ranges={"workers": ">= 1"},
          summary="FIFO: arrival order, head-of-line blocking, a fixed worker count K (default 15, paper: [1, 30])")
def fifo(instance: Instance, *, seed: int = 0, workers: int = FIFO_WORKERS) -> Result:
    """FIFO of Sec. 7: jobs start in arrival order with head-of-line blocking, each with K workers.

    Args:
        workers: K, the fixed worker count of every job (capped at D_j and at what the idle cluster holds); the paper fixes it "within [1, 30]" without a value, default 15.
    """
    from edgeopt.core import InputError

    if workers < 1:
        raise InputError("workers", f"must be >= 1, got {workers}")
    return _run(instance, "fifo", FifoScheduler(instance, int(workers)), {"workers": int(workers)})


@register("hetero", "drf", kind="baseline",
          summary="DRF: workers by progressive filling on dominant shares (max-min fairness)")
def drf(instance: Instance, *, seed: int = 0) -> Result:
    return _run(instance, "drf", DrfScheduler(instance), {})


@register("hetero", "antman_np", kind="baseline", ranges={"patience": ">= 0"},
          summary="AntMan without preemption (ours): guarantee jobs first; late ones start opportunistically")
def antman_np(instance: Instance, *, seed: int = 0, patience: int = 3) -> Result:
    """Non-preemptive AntMan (`AntmanScheduler`): stronger than the paper's, whose opportunistic jobs are
    preempted (see `edgeopt.hetero.preemptive.antman`).

    Args:
        patience: slots a job waits as a resource-guarantee job before it becomes opportunistic.
    """
    pol = AntmanScheduler(instance, patience)
    res = _run(instance, "antman_np", pol, {"patience": patience})
    res.extra["kinds"] = {str(k): v for k, v in sorted(pol.kind.items())}
    return res


@register("hetero", "tiresias_np", kind="baseline",
          summary="Tiresias without preemption (ours): smallest remaining work x GPUs first, with backfilling")
def tiresias_np(instance: Instance, *, seed: int = 0) -> Result:
    """Non-preemptive Tiresias (`TiresiasScheduler`): stronger than the paper's preemptive one (see
    `edgeopt.hetero.preemptive.tiresias`)."""
    return _run(instance, "tiresias_np", TiresiasScheduler(instance), {})
