"""The baselines of She et al. Sec. VI: FIFO, DRF and Preemptive (Tiresias-like); BatchSche is in `batchsche`.

All four are online (they run through `edgeopt.core.run_online` and see a job
only from its arrival on) and respect every constraint of (2), except that
`preemptive` is allowed to preempt (its own rules, see `schedule.py`).

* ``fifo`` (Hadoop/Spark default): jobs are taken in arrival order (ties: id);
  no job starts before an earlier-arrived one (starts are non-decreasing in
  that order); each job is dispatched, with its workers and its PS together,
  to the ONE server on which it can complete earliest (any worker count
  ``1..D_j``, at the colocated rate). Reading of "dispatched to the server that
  can schedule the job earliest": earliest completion, single server.
* ``drf`` (YARN/Mesos default, [7]): at every event (arrival, completion, a
  server becoming usable for a waiting job) the waiting jobs share the free
  workers and PSs by progressive filling: the job with the smallest dominant
  share ``max(w_j / W_{u_j}, 1 / P_{v_j})`` (W, P: total workers / PSs of the
  job's types in the system; ties: arrival, id) gets one more worker, until
  no waiting job can get one more. Then every job holding at least one worker
  starts with that allocation (non-preemptive: it keeps it to the end). The
  PS goes to the eligible server with the most free PSs of the type; workers go
  first to the PS's server, then to the servers with most free workers.
* ``batchsche`` (BatchSche [8]) lives in `edgeopt.edgecloud.batchsche`: the
  reference algorithm (Zhang et al., MobiHoc 2020) run on this model.
* ``preemptive`` (Tiresias [31], discretised 2D-LAS): time advances slot by
  slot. A job's attained service is the worker-slots it received so far (2D:
  workers x time). Jobs sit in priority queues by attained service, queue k
  holding jobs with ``threshold * factor**(k-1) <= service < threshold * factor**k``
  (defaults 8 worker-slots and x10; queue 0 below the first threshold), and
  first-come-first-served inside a queue (Tiresias discretises LAS this way so
  that jobs with similar service do not preempt each other every slot). At every
  slot, in that priority order, each active job is gang-scheduled with its full
  D_j workers and one PS if they fit on the servers it may use (2i); the others
  wait (preempted if they ran). A job that ran in the last slot keeps its
  placement when it still fits, else it is placed anew (colocated on one server
  if possible, else workers on the servers with most free workers). A job that
  arrives with less service than the running ones thus preempts them: "jobs
  with a shorter completion time preempt other jobs" (Sec. VI) without knowing
  durations, as in Tiresias. Parameter ``overhead_slots`` (default 0, Fig. 7-8;
  > 0 as in Fig. 9-10): every resumption after a preemption or a move costs
  that many slots in which the job holds its resources but trains nothing.
  Unlike the paper's Fig. 7-8 variant, ours respects the upload delays (2i).
  Tiresias' starvation guard (promotion after long waits) is not modelled.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from edgeopt.core import OnlinePolicy, Result, register, run_online, stopwatch
from edgeopt.edgecloud.instance import Instance, Job, durations, minibatch_slots
from edgeopt.edgecloud.online import finish
from edgeopt.edgecloud.schedule import JobRun, Segment
from edgeopt.edgecloud.state import make_ledger, reserve_run


# ---- FIFO --------------------------------------------------------------------------------
class FifoScheduler(OnlinePolicy[Job]):
    """Dispatch each job at its arrival, in order, to the single server finishing it earliest."""

    def __init__(self, instance: Instance) -> None:
        super().__init__()
        self.instance = instance
        self.ledger = make_ledger(instance)
        self.last_start = 0
        self.runs: dict[int, JobRun] = {}

    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        for job in sorted(jobs, key=lambda j: j.id):
            run = self._dispatch(job, max(t, self.last_start))
            if run is not None:
                reserve_run(self.ledger, self.instance, job, run)
                self.last_start = run.start
                self.commit(job.id, run)
                self.runs[job.id] = run

    def on_slot(self, t: int) -> None:
        pass

    def _dispatch(self, job: Job, t0: int) -> JobRun | None:
        inst, T = self.instance, self.instance.horizon
        U = inst.n_worker_types
        cap = self.ledger.capacity
        hosts = np.flatnonzero((cap[:, job.worker_type] > 0) & (cap[:, U + job.ps_type] > 0))
        d = durations(inst, job)[1]  # colocated durations for w = 1..D_j
        rel = inst.release(job.id)
        best: tuple[int, int, int, int] | None = None  # (end, start, server, w)
        for s in hosts:
            lo = int(max(t0, rel[s]))
            if lo >= T:
                continue
            fw = cap[s, job.worker_type] - self.ledger.usage[s, job.worker_type, lo:]
            fp = cap[s, U + job.ps_type] - self.ledger.usage[s, U + job.ps_type, lo:]
            # All reservations start at or before t0 (FIFO order), so free capacity
            # never decreases after t0: the first slot where w workers fit is the
            # earliest start, and the run keeps fitting until it ends.
            g = np.where(fp >= 1, fw, 0.0)
            w = np.arange(1, min(job.chunks, int(cap[s, job.worker_type])) + 1)
            first = np.searchsorted(g, w - 1e-9, side="left")
            for k, f in zip(w, first, strict=True):
                if f >= len(g):
                    continue
                start = lo + int(f)
                end = start + int(d[k - 1])
                if end <= T:
                    key = (end, start, int(s), int(k))
                    if best is None or key < best:
                        best = key
        if best is None:
            return None
        end, start, s, k = best
        return JobRun(job=job.id, start=start, end=end, workers={s: k}, ps_server=s, colocated=True)


@register("edgecloud", "fifo", kind="baseline",
          summary="FIFO: arrival order, each job on the one server that completes it earliest")
def fifo(instance: Instance, *, seed: int = 0) -> Result:
    with stopwatch() as el:
        policy = FifoScheduler(instance)
        run_online(policy, instance.jobs, instance.horizon)
    return finish(instance, "fifo", policy.runs, el[0])


# ---- DRF ---------------------------------------------------------------------------------
class DrfScheduler(OnlinePolicy[Job]):
    """Non-preemptive DRF: progressive filling of free workers/PSs among waiting jobs at each event."""

    def __init__(self, instance: Instance) -> None:
        super().__init__()
        self.instance = instance
        self.ledger = make_ledger(instance)
        self.waiting: list[Job] = []
        self.runs: dict[int, JobRun] = {}
        self.tot_w = instance.W().sum(axis=0).astype(float)
        self.tot_p = instance.P().sum(axis=0).astype(float)

    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        self.waiting.extend(jobs)

    def next_wakeup(self, t: int) -> int | None:
        cands = [r.end for r in self.runs.values() if r.end > t]
        for job in self.waiting:
            rel = self.instance.release(job.id)
            cands.extend(int(x) for x in rel[rel > t])
        cands = [c for c in cands if c < self.instance.horizon]
        return min(cands) if cands else None

    def on_slot(self, t: int) -> None:
        if not self.waiting:
            return
        inst, T = self.instance, self.instance.horizon
        U = inst.n_worker_types
        cap, usage = self.ledger.capacity, self.ledger.usage
        # Every reservation started at or before t, so what is free at t stays free.
        free = cap - usage[:, :, t]
        alloc: dict[int, dict[int, int]] = {}
        ps_of: dict[int, int] = {}
        heap = [(0.0, j.arrival, j.id) for j in self.waiting]
        heapq.heapify(heap)
        jobs = {j.id: j for j in self.waiting}
        while heap:
            share, _, jid = heapq.heappop(heap)
            job = jobs[jid]
            eligible = inst.release(jid) <= t
            u, r = job.worker_type, U + job.ps_type
            if jid not in ps_of:
                ps_free = np.where(eligible, free[:, r], 0)
                wk_free = np.where(eligible, free[:, u], 0)
                if ps_free.max() < 1 or wk_free.max() < 1:
                    continue  # cannot start now
                ps = int(np.argmax(ps_free))
                free[ps, r] -= 1
                ps_of[jid] = ps
                alloc[jid] = {}
            have = sum(alloc[jid].values())
            if have >= job.chunks:
                continue
            wk_free = np.where(eligible, free[:, u], 0)
            ps = ps_of[jid]
            s = ps if wk_free[ps] >= 1 else int(np.argmax(wk_free))
            if wk_free[s] < 1:
                continue
            free[s, u] -= 1
            alloc[jid][s] = alloc[jid].get(s, 0) + 1
            have += 1
            share = max(have / self.tot_w[u], 1.0 / self.tot_p[job.ps_type])
            heapq.heappush(heap, (share, job.arrival, jid))
        started = set()
        for jid, workers in alloc.items():
            job = jobs[jid]
            w = sum(workers.values())
            if w == 0:
                continue
            ps = ps_of[jid]
            coloc = set(workers) == {ps}
            end = t + int(durations(inst, job)[int(coloc), w - 1])
            if end > T:
                continue  # would not finish in the horizon: wait for more workers
            run = JobRun(job=jid, start=t, end=end, workers=dict(sorted(workers.items())),
                         ps_server=ps, colocated=coloc)
            reserve_run(self.ledger, inst, job, run)
            self.commit(jid, run)
            self.runs[jid] = run
            started.add(jid)
        self.waiting = [j for j in self.waiting if j.id not in started]


@register("edgecloud", "drf", kind="baseline",
          summary="DRF: max-min fair progressive filling of workers and PSs, non-preemptive")
def drf(instance: Instance, *, seed: int = 0) -> Result:
    with stopwatch() as el:
        policy = DrfScheduler(instance)
        run_online(policy, instance.jobs, instance.horizon)
    return finish(instance, "drf", policy.runs, el[0])


# ---- Preemptive (Tiresias-like 2D-LAS) -----------------------------------------------------
class PreemptiveScheduler(OnlinePolicy[Job]):
    """Slot-by-slot discretised least-attained-service gang scheduling with preemption."""

    def __init__(self, instance: Instance, overhead_slots: int, threshold: float = 8.0,
                 factor: float = 10.0) -> None:
        super().__init__()
        self.instance = instance
        self.overhead = overhead_slots
        self.threshold = threshold
        self.factor = factor
        self.active: list[Job] = []
        self.attained: dict[int, float] = {}
        self.work: dict[int, float] = {}  # steps done in closed segments
        self.segments: dict[int, list[Segment]] = {}
        self.current: dict[int, Segment] = {}  # open segment of a job that ran in the last slot
        self.done: dict[int, JobRun] = {}
        self.capacity = make_ledger(instance).capacity

    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        for job in jobs:
            self.active.append(job)
            self.attained[job.id] = 0.0
            self.work[job.id] = 0.0
            self.segments[job.id] = []

    def next_wakeup(self, t: int) -> int | None:
        return t + 1 if self.active and t + 1 < self.instance.horizon else None

    def queue(self, jid: int) -> int:
        """Priority queue of a job: 0 below ``threshold`` worker-slots, k below threshold * factor**k."""
        k, limit = 0, self.threshold
        while self.attained[jid] >= limit:
            k += 1
            limit *= self.factor
        return k

    def _fits(self, free: np.ndarray, job: Job, seg: Segment) -> bool:
        U = self.instance.n_worker_types
        if free[seg.ps_server, U + job.ps_type] < 1:
            return False
        return all(free[s, job.worker_type] >= c for s, c in seg.workers.items())

    def _place(self, free: np.ndarray, job: Job, eligible: np.ndarray, t: int) -> Segment | None:
        U = self.instance.n_worker_types
        u, r, D = job.worker_type, U + job.ps_type, job.chunks
        wk = np.where(eligible, free[:, u], 0)
        ps = np.where(eligible, free[:, r], 0)
        both = np.flatnonzero((wk >= D) & (ps >= 1))
        if len(both):
            s = int(both[0])
            return Segment(start=t, end=t + 1, workers={s: D}, ps_server=s, colocated=True)
        if wk.sum() < D or ps.max() < 1:
            return None
        order = np.lexsort((np.arange(len(wk)), -wk))
        workers: dict[int, int] = {}
        need = D
        for s in order:
            if need == 0:
                break
            k = int(min(wk[s], need))
            if k > 0:
                workers[int(s)] = k
                need -= k
        p = np.where(ps >= 1, ps, -1)
        if len(workers) == 1:
            p[next(iter(workers))] = -1  # all workers with the PS would be colocated (2f)
        if p.max() < 1:
            return None
        return Segment(start=t, end=t + 1, workers=dict(sorted(workers.items())), ps_server=int(np.argmax(p)),
                       colocated=False)

    def _close(self, jid: int, seg: Segment) -> None:
        job = self.instance.jobs[jid]
        k = len(self.segments[jid])
        eff = max(0, (seg.end - seg.start) - (self.overhead if k > 0 else 0))
        self.work[jid] += sum(seg.workers.values()) * eff / minibatch_slots(self.instance, job, seg.colocated)
        self.segments[jid].append(seg)

    def on_slot(self, t: int) -> None:
        inst = self.instance
        free = self.capacity.copy()
        order = sorted(self.active, key=lambda j: (self.queue(j.id), j.arrival, j.id))
        running: dict[int, Segment] = {}
        for job in order:
            jid = job.id
            prev = self.current.get(jid)
            eligible = inst.release(jid) <= t
            if prev is not None and self._fits(free, job, prev):
                seg = Segment(start=prev.start, end=t + 1, workers=prev.workers, ps_server=prev.ps_server,
                              colocated=prev.colocated)
            else:
                seg = self._place(free, job, eligible, t)
                if seg is None:
                    continue
            running[jid] = seg
            free[seg.ps_server, inst.n_worker_types + job.ps_type] -= 1
            for s, c in seg.workers.items():
                free[s, job.worker_type] -= c
        # close segments of jobs preempted or moved
        for jid, prev in list(self.current.items()):
            if jid not in running or running[jid].start != prev.start:
                self._close(jid, prev)
        self.current = {}
        finished = []
        for jid, seg in running.items():
            job = inst.jobs[jid]
            k = len(self.segments[jid])
            w = sum(seg.workers.values())
            self.attained[jid] += w
            eff = max(0, (seg.end - seg.start) - (self.overhead if k > 0 else 0))
            steps = self.work[jid] + w * eff / minibatch_slots(inst, job, seg.colocated)
            if steps >= job.steps * (1 - 1e-12):
                self._close(jid, seg)
                finished.append(jid)
            else:
                self.current[jid] = seg
        for jid in finished:
            segs = self.segments[jid]
            first = segs[0]
            run = JobRun(job=jid, start=first.start, end=segs[-1].end, workers=first.workers,
                         ps_server=first.ps_server, colocated=first.colocated,
                         segments=segs if len(segs) > 1 else None)
            self.commit(jid, run)
            self.done[jid] = run
        if finished:
            self.active = [j for j in self.active if j.id not in set(finished)]


@register("edgecloud", "preemptive", kind="baseline", relaxed=True,
          ranges={"overhead_slots": ">= 0", "threshold": "> 0", "factor": "> 1"},
          params={"overhead_slots": "slots lost at every resumption of a preempted job (Fig. 9-10)",
                  "threshold": "worker-slots of attained service before a job leaves the first LAS queue",
                  "factor": "ratio between successive LAS queue thresholds"},
          summary="Preemptive (Tiresias-like discretised 2D-LAS, gang); overhead_slots per resumption")
def preemptive(instance: Instance, *, seed: int = 0, overhead_slots: int = 0, threshold: float = 8.0,
               factor: float = 10.0) -> Result:
    """Tiresias-like baseline. ``overhead_slots`` > 0 charges each resumption (Fig. 9-10);
    ``threshold`` (worker-slots) and ``factor`` define the discretised LAS queues."""
    from edgeopt.core import InputError

    if overhead_slots < 0:
        raise InputError("overhead_slots", f"must be >= 0, got {overhead_slots}")
    if threshold <= 0:
        raise InputError("threshold", f"must be > 0, got {threshold}")
    if factor <= 1:
        raise InputError("factor", f"must be > 1, got {factor}")
    with stopwatch() as el:
        policy = PreemptiveScheduler(instance, overhead_slots, threshold, factor)
        run_online(policy, instance.jobs, instance.horizon)
    return finish(instance, "preemptive", policy.done, el[0],
                  extra={"overhead_slots": overhead_slots, "threshold": threshold, "factor": factor},
                  preemptive=True, preemption_overhead_slots=overhead_slots)
