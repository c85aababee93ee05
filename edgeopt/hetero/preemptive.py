"""Preemptive Tiresias and AntMan of Sec. 7 of Zhou et al., as the paper describes them.

Sec. 7 calls Tiresias "a preemptive scheduler" and AntMan runs opportunistic
jobs on free resources that resource-guarantee jobs take back; the paper
blames both baselines' poor results on "frequent preemption". Program (2)
excludes preemption, so these baselines schedule a relaxation of the model:
their schedules are ``preemptive`` (`edgeopt.hetero.schedule`: a job may have
several segments, each with its own placement), they are validated under the
relaxation's rules (`schedule.validate` with ``preemptive = True``), and they
are registered ``relaxed=True``. The non-preemptive variants of earlier
releases are ``tiresias_np`` and ``antman_np`` (`edgeopt.hetero.baselines`).

Shared model (both schedulers decide at every slot while jobs wait or run; a slot in which nothing can
change is skipped, with the same schedule: `_PreemptiveScheduler.next_wakeup`):

* Types and size as in every baseline of the paper: the job's ideal worker and
  PS types (`instance.ideal_config`) and, for guarantee/gang allocations, its
  ideal worker count capped at what fits the idle cluster.
* A running job keeps its placement from slot to slot (one segment). It is
  suspended when the policy gives its resources to another job; a suspended
  job holds nothing. When it runs again (possibly elsewhere, possibly with
  another worker count for AntMan's opportunistic jobs) a new segment opens.
* Preemption overhead (parameter ``overhead_s``): storing and restoring the
  job's image (the reason the paper gives for not preempting, Sec. 3) costs
  ``overhead_s`` seconds at every resumption, i.e. ``overhead_s /
  slot_seconds`` slots at the start of every segment after the first in which
  the job holds its resources and trains nothing. The paper gives no value;
  the default, 60 s, is our choice (a checkpoint of a GPU job to storage and
  its restore take seconds to minutes); the benchmarks also run 0 s and one
  slot. On the small presets (10 s slots) 60 s is 6 slots; on the paper
  preset (1 h slots) it is 1/60 of a slot.
* Progress: a segment of N workers with rate rho (eq. 1 / 14 for its
  placement) trains N rho mini-batches per slot once its overhead has passed;
  the job completes at the end of the first slot in which its trained work
  reaches E D K (the validator's rule, `schedule._check_preemptive_job`).
* A job not completed by T is rejected (the result is then ``partial``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from edgeopt.core import CapacityLedger, InputError, OnlinePolicy, Result, register, run_online, stopwatch
from edgeopt.hetero.baselines import EPS, _copies, colocated_server, distributed_placement, place
from edgeopt.hetero.instance import WORK_RTOL, Instance, Job, ideal_config, rate
from edgeopt.hetero.schedule import JobSchedule, Schedule, Segment
from edgeopt.hetero.spec import FAMILY


@dataclasses.dataclass
class _Alloc:
    """A placement held in one slot: colocated flag, {server: workers}, {server: PSs}."""

    colocated: bool
    workers: dict[int, int]
    ps: dict[int, int]

    @property
    def n(self) -> int:
        return sum(self.workers.values())


@dataclasses.dataclass
class _Open:
    """The segment a job is running now."""

    start: int
    alloc: _Alloc
    overhead: float
    rho: float


class _PreemptiveScheduler(OnlinePolicy[Job]):
    """Slot-by-slot simulation of a preemptive policy; subclasses choose the allocations (`plan`)."""

    def __init__(self, instance: Instance, overhead_slots: float) -> None:
        super().__init__()
        self.inst = instance
        self.T = instance.horizon
        self.overhead = overhead_slots
        self.active: list[Job] = []
        self.ideal: dict[int, tuple[int, int | None, int]] = {}
        self.trained: dict[int, float] = {}
        self.closed: dict[int, list[Segment]] = {}
        self.running: dict[int, _Open] = {}
        self.done: dict[int, JobSchedule] = {}
        self.preemptions = 0
        self.idle = False  # the last slot ran nothing and nothing was running (see `next_wakeup`)

    # ---- arrivals -------------------------------------------------------------------------------
    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        empty = CapacityLedger(self.inst.capacity, self.T, self.inst.resources)
        for j in jobs:
            m, p, n, _ = ideal_config(self.inst, j)
            # the ideal count may exceed what the idle cluster holds: the most that fit (as in the
            # non-preemptive baselines, `_SlotScheduler._fit_idle`)
            k = n
            while k > 1 and place(self.inst, empty, j, m, p, k, j.arrival) is None:
                k -= 1
            self.ideal[j.id] = (m, p, k)
            self.trained[j.id] = 0.0
            self.closed[j.id] = []
            self.active.append(j)

    #: skip the slots in which nothing can change (`next_wakeup`); False steps every slot (the reference,
    #: which tests compare against)
    SKIP_IDLE = True

    def next_wakeup(self, t: int) -> int | None:
        """The next slot to simulate: the next one, except after a slot that ran nothing with nothing
        running. Then the state (waiting jobs, their trained work, no segment open, the whole cluster free)
        gives the same empty plan at every later slot until an arrival (which the runner wakes for) or a
        time-dependent rule changes it (`idle_until`); those slots are skipped. Without this, a job that
        never fits was re-planned at every slot until T (10^5 plans for a horizon of 10^5)."""
        if not self.active or t + 1 >= self.T:
            return None
        if self.idle and self.SKIP_IDLE:
            wake = self.idle_until(t)
            return wake if wake is not None and wake < self.T else None
        return t + 1

    def idle_until(self, t: int) -> int | None:
        """After an idle slot t: the first later slot at which the plan may differ without an arrival."""
        return None

    # ---- helpers for subclasses -------------------------------------------------------------------
    def remaining(self, j: Job) -> float:
        """Mini-batches still to train (work of the open segment up to now included)."""
        left = j.work - self.trained[j.id]
        op = self.running.get(j.id)
        if op is not None:
            left -= max(0.0, (self.now - op.start) - op.overhead) * op.alloc.n * op.rho
        return max(0.0, left)

    def demand(self, j: Job, a: _Alloc) -> np.ndarray:
        """[H, R] resources ``a`` holds for job ``j``."""
        m, p, _ = self.ideal[j.id]
        use = np.zeros_like(self.inst.capacity)
        for h, c in a.workers.items():
            use[h] += c * self.inst.worker_demand[m]
        if p is not None:
            for h, c in a.ps.items():
                use[h] += c * self.inst.ps_demand[p]
        return use

    def fits(self, j: Job, a: _Alloc, free: np.ndarray) -> bool:
        return bool(np.all(self.demand(j, a) <= free + EPS))

    def new_alloc(self, j: Job, n: int, free: np.ndarray) -> _Alloc | None:
        """N workers of the job's ideal type (and its PSs) in ``free`` [H, R]: colocated if possible."""
        m, p, _ = self.ideal[j.id]
        h = colocated_server(self.inst, free, m, p, n)
        if h is not None:
            return _Alloc(True, {h: n}, {h: 1} if p is not None else {})
        got = distributed_placement(self.inst, free, m, p, n)
        if got is None:
            return None
        return _Alloc(False, got[0], got[1])

    def room(self, j: Job, free: np.ndarray) -> int:
        """Type-m workers that fit in ``free`` summed over servers: no allocation holds more."""
        m, _, _ = self.ideal[j.id]
        return int(_copies(free, self.inst.worker_demand[m]).sum())

    def plan(self, t: int) -> dict[int, _Alloc]:  # pragma: no cover - abstract
        """Who runs in slot ``t`` and where; a running job keeps its allocation by returning it unchanged."""
        raise NotImplementedError

    # ---- the slot -------------------------------------------------------------------------------
    def on_slot(self, t: int) -> None:
        if not self.active:
            return
        plan = self.plan(t)
        self.idle = not plan and not self.running
        byid = {j.id: j for j in self.active}
        for jid, op in list(self.running.items()):
            if plan.get(jid) is not op.alloc:  # suspended (or moved): close the segment at t
                self._close(byid[jid], op, t)
                del self.running[jid]
                self.preemptions += 1
        for jid, a in plan.items():
            if jid in self.running:
                continue
            j = byid[jid]
            m, p, _ = self.ideal[jid]
            o = self.overhead if self.closed[jid] else 0.0
            self.running[jid] = _Open(t, a, o, rate(self.inst, j, m, p, a.colocated, a.n))
        finished = []
        for jid, op in self.running.items():
            j = byid[jid]
            got = self.trained[jid] + max(0.0, (t + 1 - op.start) - op.overhead) * op.alloc.n * op.rho
            if got >= j.work * (1 - WORK_RTOL / 10):
                finished.append(jid)
        for jid in finished:
            op = self.running.pop(jid)
            j = byid[jid]
            self._close(j, op, t + 1)
            segs = self.closed[jid]
            m, p, _ = self.ideal[jid]
            first = segs[0]
            js = JobSchedule(job=jid, start=first.start, duration=segs[-1].end - first.start, worker_type=m,
                             ps_type=p, colocated=first.colocated, workers=first.workers, ps=first.ps,
                             segments=segs if len(segs) > 1 else None)
            self.done[jid] = js
            self.commit(jid, js.model_dump(mode="json"))
        if finished:
            gone = set(finished)
            self.active = [j for j in self.active if j.id not in gone]

    def _close(self, j: Job, op: _Open, end: int) -> None:
        if end <= op.start:
            return
        self.trained[j.id] += max(0.0, (end - op.start) - op.overhead) * op.alloc.n * op.rho
        self.closed[j.id].append(Segment(start=op.start, duration=end - op.start, colocated=op.alloc.colocated,
                                         workers=dict(op.alloc.workers), ps=dict(op.alloc.ps)))


class TiresiasPreemptive(_PreemptiveScheduler):
    """At every slot, jobs in increasing priority = remaining work x GPUs of the job's allocation (the
    paper's description of Tiresias); each gets its full (ideal) gang or nothing. A running job keeps its
    servers if they are still free after the jobs of higher priority took theirs; a waiting job is first
    placed around every running job (no preemption) and, only if that fails, on the capacity left by the
    higher-priority jobs, suspending the lower-priority running jobs it collides with. Backfilling: a job
    that does not fit does not block the others."""

    def priority(self, j: Job) -> float:
        m, _, n = self.ideal[j.id]
        gpus = n * float(self.inst.worker_demand[m][0])
        return self.remaining(j) * max(gpus, 1.0)

    def plan(self, t: int) -> dict[int, _Alloc]:
        cap = self.inst.capacity
        order = sorted(self.active, key=lambda j: (self.priority(j), j.arrival, j.id))
        held = np.zeros_like(cap)  # what running jobs not yet processed hold
        for j in order:
            if j.id in self.running:
                held += self.demand(j, self.running[j.id].alloc)
        taken = np.zeros_like(cap)  # what processed jobs were given
        plan: dict[int, _Alloc] = {}
        for j in order:
            op = self.running.get(j.id)
            if op is not None:
                d = self.demand(j, op.alloc)
                held -= d
                if np.all(d <= cap - taken + EPS):
                    plan[j.id] = op.alloc
                    taken += d
                    continue
            _, _, n = self.ideal[j.id]
            free = cap - taken
            if self.room(j, free) < n:
                continue
            a = self.new_alloc(j, n, free - held)  # around every running job first
            if a is None:
                a = self.new_alloc(j, n, free)  # else suspend lower-priority ones
            if a is not None:
                plan[j.id] = a
                taken += self.demand(j, a)
        return plan


class AntmanPreemptive(_PreemptiveScheduler):
    """Resource-guarantee jobs (waited < ``patience`` slots, not yet started) start in arrival order with
    their full ideal configuration, taking resources from running opportunistic jobs when the free capacity
    does not hold them (those are suspended); once started they are never preempted. A job that waited
    ``patience`` slots becomes opportunistic for good: it runs on whatever is free after the guarantee jobs
    (as many workers as fit, >= 1, up to its ideal count), keeps its allocation while nothing claims it,
    and is suspended when a guarantee job needs its resources; a suspended opportunistic job resumes (with
    as many workers as then fit) when resources free up."""

    def __init__(self, instance: Instance, overhead_slots: float, patience: int) -> None:
        super().__init__(instance, overhead_slots)
        self.patience = patience
        self.kind: dict[int, str] = {}

    def idle_until(self, t: int) -> int | None:
        """A waiting job becomes opportunistic (and is tried with fewer workers) once it waited ``patience``
        slots: the first such slot after t."""
        later = [j.arrival + self.patience for j in self.active if j.arrival + self.patience > t]
        return min(later, default=None)

    def plan(self, t: int) -> dict[int, _Alloc]:
        cap = self.inst.capacity
        jobs = sorted(self.active, key=lambda j: (j.arrival, j.id))
        plan: dict[int, _Alloc] = {}
        taken = np.zeros_like(cap)
        for j in jobs:  # running guarantee jobs keep everything
            if self.kind.get(j.id) == "guarantee" and j.id in self.running:
                a = self.running[j.id].alloc
                plan[j.id] = a
                taken += self.demand(j, a)
        opp_held = np.zeros_like(cap)
        for j in jobs:
            if self.kind.get(j.id) == "opportunistic" and j.id in self.running:
                opp_held += self.demand(j, self.running[j.id].alloc)
        for j in jobs:  # waiting guarantee jobs, full ideal configuration
            if j.id in self.kind or t - j.arrival >= self.patience:
                continue
            _, _, n = self.ideal[j.id]
            a = self.new_alloc(j, n, cap - taken - opp_held)
            if a is None:
                a = self.new_alloc(j, n, cap - taken)  # preempt opportunistic jobs
            if a is not None:
                plan[j.id] = a
                taken += self.demand(j, a)
                self.kind[j.id] = "guarantee"
        for j in jobs:  # opportunistic jobs: keep their allocation if it still fits, else best effort
            if self.kind.get(j.id) == "guarantee" or t - j.arrival < self.patience:
                continue
            self.kind[j.id] = "opportunistic"
            op = self.running.get(j.id)
            if op is not None and self.fits(j, op.alloc, cap - taken):
                plan[j.id] = op.alloc
                taken += self.demand(j, op.alloc)
        for j in jobs:
            if self.kind.get(j.id) != "opportunistic" or j.id in plan:
                continue
            _, _, n = self.ideal[j.id]
            free = cap - taken
            n = min(n, self.room(j, free))
            while n >= 1:
                a = self.new_alloc(j, n, free)
                if a is not None:
                    plan[j.id] = a
                    taken += self.demand(j, a)
                    break
                n -= 1
        return plan


def _overhead_slots(instance: Instance, overhead_s: float) -> float:
    if not overhead_s >= 0:
        raise InputError("overhead_s", f"must be >= 0 seconds, got {overhead_s}")
    return float(overhead_s) / instance.slot_seconds


def _run(instance: Instance, name: str, policy: _PreemptiveScheduler, extra: dict) -> Result:
    with stopwatch() as el:
        late = run_online(policy, instance.jobs, instance.horizon)
        rejected = sorted({int(x) for x in late} | {j.id for j in policy.active})
        sched = Schedule(jobs=[policy.done[k] for k in sorted(policy.done)], rejected=rejected, preemptive=True,
                         preemption_overhead_slots=policy.overhead)
    extra = {**extra, "preemptions": policy.preemptions,
             "preempted_jobs": sum(1 for js in policy.done.values() if js.segments)}
    return FAMILY.algorithm_result(instance, name, sched, el[0], rejected=rejected, extra=extra)


@register("hetero", "tiresias", kind="baseline", relaxed=True, ranges={"overhead_s": ">= 0"},
          summary="Tiresias (preemptive, Sec. 7): smallest remaining work x GPUs first, gang, resumption overhead")
def tiresias(instance: Instance, *, seed: int = 0, overhead_s: float = 60.0) -> Result:
    """Preemptive Tiresias as Sec. 7 describes it (`TiresiasPreemptive`); a schedule of the preemptive
    relaxation of program (2) (registered relaxed). Deterministic.

    Args:
        overhead_s: seconds lost at every resumption of a suspended job (image store + restore); default 60.
    """
    o = _overhead_slots(instance, overhead_s)
    return _run(instance, "tiresias", TiresiasPreemptive(instance, o), {"overhead_s": overhead_s})


@register("hetero", "antman", kind="baseline", relaxed=True,
          ranges={"patience": ">= 0", "overhead_s": ">= 0"},
          summary="AntMan (preemptive, Sec. 7): guarantee jobs first; opportunistic jobs preempted for them")
def antman(instance: Instance, *, seed: int = 0, patience: int = 3, overhead_s: float = 60.0) -> Result:
    """Preemptive AntMan as Sec. 7 describes it (`AntmanPreemptive`); a schedule of the preemptive
    relaxation of program (2) (registered relaxed). Deterministic.

    Args:
        patience: slots a job waits as a resource-guarantee job before it becomes opportunistic.
        overhead_s: seconds lost at every resumption of a suspended job (image store + restore); default 60.
    """
    if patience < 0:
        raise InputError("patience", f"must be >= 0, got {patience}")
    o = _overhead_slots(instance, overhead_s)
    pol = AntmanPreemptive(instance, o, patience)
    res = _run(instance, "antman", pol, {"patience": patience, "overhead_s": overhead_s})
    res.extra["kinds"] = {str(k): v for k, v in sorted(pol.kind.items())}
    return res
