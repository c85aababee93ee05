"""The baselines of Sec. V-A: A_online-E, SRTF, Tiresias-L, BatchSche.

* ``online_edge`` (A_online-E): A_online restricted to the edge servers.
* ``srtf`` (Schrage & Miller): job-level preemptive, shortest remaining
  training time first (remaining = slots to finish if run without pause),
  gang of ``requested_workers`` (the paper's non-elastic reading, see `gang`).
* ``tiresias_l`` (Gu et al., Tiresias-L, the discretised 2D-LAS variant with
  known-nothing priorities): jobs in priority queues by attained service
  (worker-slots received), queue thresholds ``4 P~`` and ``40 P~`` worker-slots
  (P~ = median chunk time of the instance), FIFO by arrival inside a queue,
  all-or-nothing job preemption, gang of ``requested_workers``. Starvation
  promotion is left out.
* ``srtf_elastic`` / ``tiresias_l_elastic``: the same rules with one worker per
  chunk (k = D_j); not the paper's baselines, reported next to them.
* ``batchsche`` (Zhang et al. [11], non-preemptive, batched, price-driven): at
  the start of each geometric round tau_i = 2^(i-1) (`edgeopt.core.geometric_rounds`)
  the arrived, unscheduled jobs form a batch, taken smallest total work first.
  Each job books, without preemption, either (a) the cloud with one worker per
  chunk at the colocated rate, at unit price ``cloud_price`` per worker-slot
  (default 0: the reference price function at unlimited capacity), or
  (b) w edge workers of its type (the w with the earliest free time, w =
  number of eligible workers free at the round start, at least 1), each
  training its ceil(D_j/w)-share of chunks back to back from its free time,
  at unit price ``exponential_price(share of the server's workers booked
  beyond the round start, before this job, lambda)`` with lambda = 2 T H R F + 1
  (`batchsche_lambda`); it takes the cheaper total ``worker-slots x unit price``
  (ties: the earlier completion, then the edge). This is the "minimise the overall resource
  cost" rule of Sec. V-A with [11]'s exponential prices; the cloud's zero price
  makes it go to the cloud unless an idle edge server finishes earlier, as the
  paper observes ("the low resource price of the cloud").

All run online through `edgeopt.core.run_online` and use A_ps (`online.assign_ps`)
for PSs (PS placement never changes the JCT here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from edgeopt.core import (
    InputError,
    OnlinePolicy,
    exponential_price,
    geometric_rounds,
    price_base,
    register,
    run_online,
    stopwatch,
)
from edgeopt.preemptive.gang import GangJob, GangPolicy
from edgeopt.preemptive.instance import Instance, Job
from edgeopt.preemptive.online import FAMILY_NAME, assign_ps, run_greedy
from edgeopt.preemptive.schedule import ChunkRun, JobSchedule, Schedule, count_preemptions, job_preemptions
from edgeopt.preemptive.spec import FAMILY
from edgeopt.preemptive.storage import StorageBook


@register(FAMILY_NAME, "online_edge", kind="baseline", ranges={"speed": "> 0"},
          params={"speed": "1 + eps: work per slot relative to the optimum's (as A_online's speed)"},
          summary="A_online-E: A_online on the edge servers only (no cloud)", randomized=True)
def online_edge(instance: Instance, *, seed: int = 0, speed: float = 1.0) -> Any:
    """A_online-E of Sec. V-A."""
    return run_greedy(instance, seed=seed, speed=speed, use_cloud=False, name="online_edge")


def _finish(instance: Instance, name: str, policy: Any, late: list[Any], seed: int, runtime: list[float],
            extra: dict[str, Any] | None = None) -> Any:
    rejected = sorted(set(policy.rejected) | {int(j) for j in late} | set(getattr(policy, "unfinished", list)()))
    runs: dict[int, list[ChunkRun]] = {}
    for (j, d), slots in sorted(policy.slots.items()):
        if j in rejected:
            continue
        s, w = policy.where[(j, d)]
        runs.setdefault(j, []).append(ChunkRun(chunk=d, server=s, worker=w, slots=sorted(slots)))
    ps, no_ps = assign_ps(instance, runs, np.random.default_rng(seed))
    if no_ps:
        rejected = sorted(set(rejected) | set(no_ps))
        runs = {j: r for j, r in runs.items() if j not in no_ps}
    sched = Schedule(jobs=[JobSchedule(job=j, chunks=runs[j], ps=ps[j]) for j in sorted(runs)], rejected=rejected)
    extra = dict(extra or {})
    extra.update(preemptions=count_preemptions(instance, sched), job_preemptions=job_preemptions(instance, sched),
                 cloud_chunks=sum(1 for js in sched.jobs for c in js.chunks if c.server == instance.cloud))
    return FAMILY.algorithm_result(instance, name, sched, runtime[0], rejected=rejected, extra=extra)


def _gang(instance: Instance, name: str, seed: int, priority: Any, gang: str,
          extra: dict[str, Any] | None = None) -> Any:
    with stopwatch() as el:
        policy = GangPolicy(instance, priority, gang)
        late = run_online(policy, instance.jobs, instance.horizon)
    return _finish(instance, name, policy, late, seed, el, extra)


def _tiresias_thresholds(instance: Instance, thresholds: str | Sequence[float] | None) -> tuple[float, ...]:
    """Queue thresholds: default 4 and 40 x the median P_j; else ``"a,b"`` (the CLI's form) or a sequence."""
    if thresholds is None:
        med = float(np.median(instance.chunk_slots_array())) if instance.jobs else 1.0
        return (4 * med, 40 * med)
    items = thresholds.strip("[]() ").split(",") if isinstance(thresholds, str) else list(thresholds)
    try:
        out = tuple(float(x) for x in items if str(x).strip())
    except ValueError:
        raise InputError("thresholds", f"expected comma-separated numbers, got {thresholds!r}") from None
    if not out or any(not math.isfinite(x) or x <= 0 for x in out):
        raise InputError("thresholds", f"expected positive finite numbers, got {thresholds!r}")
    return tuple(sorted(out))


def _srtf_priority(g: GangJob, t: int) -> tuple:
    return (g.remaining_time(), g.arrival, g.job)


def _las_priority(thresholds: tuple[float, ...]) -> Any:
    def prio(g: GangJob, t: int) -> tuple:
        queue = sum(1 for th in thresholds if g.attained >= th)
        return (queue, g.arrival, g.job)

    return prio


@register(FAMILY_NAME, "srtf", kind="baseline",
          summary="SRTF [16] as in the paper: job-level preemptive gang of the trace's requested workers, "
                  "shortest remaining training time first")
def srtf(instance: Instance, *, seed: int = 0) -> Any:
    """Shortest remaining training time first, the paper's non-elastic reading.

    Each job runs on exactly ``requested_workers`` workers (the trace's GPU count, 1-8), on the
    edge or on the cloud, all-or-nothing (job-level preemption). Sec. V-A computes "the worker
    requirement of each job ... according to the number of GPUs of the real trace" and Sec. V-B
    blames SRTF's and Tiresias-L's under-utilisation on "the non-elastic job requirement", so the
    gang is fixed even on the unlimited cloud. `srtf_elastic` is the one-worker-per-chunk variant.

    Args:
        seed: seed of A_ps's PS draws (the schedule of workers is deterministic).
    """
    return _gang(instance, "srtf", seed, _srtf_priority, "requested", {"gang": "requested"})


@register(FAMILY_NAME, "srtf_elastic", kind="baseline",
          summary="SRTF with one worker per chunk (not the paper's reading): job-level preemptive gang of D_j "
                  "workers, shortest remaining training time first")
def srtf_elastic(instance: Instance, *, seed: int = 0) -> Any:
    """SRTF with an elastic gang: k = D_j workers, one per chunk (fewer only when the edge has fewer).

    Not the paper's baseline (see `srtf`): it gives SRTF the same per-chunk parallelism as
    A_online, so only the scheduling rule differs (job-level all-or-nothing preemption and SRTF
    order against A_greedy's worker-level HAPRF). A job on the cloud then finishes in
    Delta_{j,c} + P_j (colocated), as under A_online.

    Args:
        seed: seed of A_ps's PS draws (the schedule of workers is deterministic).
    """
    return _gang(instance, "srtf_elastic", seed, _srtf_priority, "chunks", {"gang": "chunks"})


@register(FAMILY_NAME, "tiresias_l", kind="baseline",
          summary="Tiresias-L [13] as in the paper: 2D-LAS priority queues on attained worker-slots, "
                  "all-or-nothing gang of the trace's requested workers")
def tiresias_l(instance: Instance, *, seed: int = 0, thresholds: str | None = None) -> Any:
    """Discretised least-attained-service (Tiresias-L), the paper's non-elastic reading.

    Gang of ``requested_workers`` as in `srtf`; `tiresias_l_elastic` is the one-worker-per-chunk
    variant.

    Args:
        seed: seed of A_ps's PS draws (the schedule of workers is deterministic).
        thresholds: queue thresholds in attained worker-slots, "a,b" (default 4 and 40 x median P_j).
    """
    th = _tiresias_thresholds(instance, thresholds)
    return _gang(instance, "tiresias_l", seed, _las_priority(th), "requested",
                 {"queue_thresholds": list(th), "gang": "requested"})


@register(FAMILY_NAME, "tiresias_l_elastic", kind="baseline",
          summary="Tiresias-L with one worker per chunk (not the paper's reading): 2D-LAS queues, "
                  "all-or-nothing gang of D_j workers")
def tiresias_l_elastic(instance: Instance, *, seed: int = 0, thresholds: str | None = None) -> Any:
    """Tiresias-L with an elastic gang of k = D_j workers (see `srtf_elastic` for why it exists).

    Args:
        seed: seed of A_ps's PS draws (the schedule of workers is deterministic).
        thresholds: queue thresholds in attained worker-slots, "a,b" (default 4 and 40 x median P_j).
    """
    th = _tiresias_thresholds(instance, thresholds)
    return _gang(instance, "tiresias_l_elastic", seed, _las_priority(th), "chunks",
                 {"queue_thresholds": list(th), "gang": "chunks"})


class BatchPolicy(OnlinePolicy[Job]):
    """BatchSche: batches at geometric round starts, non-preemptive bookings priced by utilisation."""

    def __init__(self, instance: Instance, *, cloud_price: float, base: float) -> None:
        super().__init__()
        self.inst = instance
        self.cloud = instance.cloud
        self.cloud_price = cloud_price
        self.base = base
        self.starts = [r.start for r in geometric_rounds(instance.horizon)]
        self.waiting: list[Job] = []
        self.free_at: dict[tuple[int, int], int] = {}
        self.by_type: dict[int, list[tuple[int, int]]] = {}
        self.size = {s: len(sv.workers) for s, sv in enumerate(instance.servers) if not sv.is_cloud}
        for s, sv in enumerate(instance.servers):
            if not sv.is_cloud:
                for w, typ in enumerate(sv.workers):
                    self.by_type.setdefault(typ, []).append((s, w))
                    self.free_at[(s, w)] = 0
        self.slots: dict[tuple[int, int], list[int]] = {}
        self.where: dict[tuple[int, int], tuple[int, int]] = {}
        self.rejected: list[int] = []
        self.cloud_label = 0
        self.storage = StorageBook(instance)

    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        self.waiting.extend(jobs)

    def next_wakeup(self, t: int) -> int | None:
        for s in self.starts:
            if s > t:
                return s
        return None

    def on_slot(self, t: int) -> None:
        if t not in self.starts and t != 0:
            return
        if t == 0 and 0 not in self.starts:
            return  # round 1 starts at slot 1 (tau_1 = 1)
        inst = self.inst
        batch = sorted(self.waiting, key=lambda jb: (jb.chunks * inst.chunk_slots(jb.id, False), jb.id))
        self.waiting = []
        for job in batch:
            self._book(t, job)

    def _book(self, t: int, job: Job) -> None:
        inst = self.inst
        j = job.id
        options: list[tuple[float, int, str, Any]] = []
        if self.cloud is not None:
            p = inst.chunk_slots(j, True)
            start = max(t, inst.release(j, self.cloud))
            if start + p <= inst.horizon:
                options.append((self.cloud_price * job.chunks * p, start + p, "cloud", start))
        elig = self.by_type.get(job.worker_type, [])
        while elig:  # drop servers whose storage (Sec. VI) cannot hold the chunks they would get
            p = inst.chunk_slots(j, False)
            free_now = sum(1 for sw in elig if self.free_at[sw] <= t)
            w = max(1, min(job.chunks, free_now))
            chosen = sorted(elig, key=lambda sw: (max(self.free_at[sw], t, inst.release(j, sw[0])), sw))[:w]
            w = len(chosen)
            per = [[d for d in range(job.chunks) if d % w == i] for i in range(w)]
            full = [s for s in {sw[0] for sw in chosen}
                    if not self.storage.fits(s, job.arrival, (job.chunk_size_mb or 0.0)
                                             * sum(len(ch) for sw, ch in zip(chosen, per, strict=True) if sw[0] == s))]
            if not full:
                break
            elig = [sw for sw in elig if sw[0] not in full]
        if elig:
            begin = [max(self.free_at[sw], t, inst.release(j, sw[0])) for sw in chosen]
            end = max(b + len(ch) * p for b, ch in zip(begin, per, strict=True))
            if end <= inst.horizon:
                cost = 0.0
                for s in {sw[0] for sw in chosen}:
                    busy = sum(1 for (s2, w2), f in self.free_at.items() if s2 == s and f > t)
                    mine = sum(1 for sw in chosen if sw[0] == s)
                    share = busy / self.size[s]  # price at the utilisation before this booking
                    unit = float(exponential_price(np.array(share), np.array(1.0), self.base))
                    cost += unit * mine * (-(-job.chunks // w)) * p
                options.append((cost, end, "edge", (chosen, per, begin, p)))
        if not options:
            self.rejected.append(j)
            self.commit(j, {"rejected": True})
            return
        # cheaper first, then the earlier completion, then the edge (the data's side) on a full tie
        cost, _end, kind, plan = min(options, key=lambda o: (o[0], o[1], o[2] != "edge"))
        if kind == "cloud":
            assert self.cloud is not None
            p = inst.chunk_slots(j, True)
            for d in range(job.chunks):
                self.slots[(j, d)] = list(range(plan, plan + p))
                self.where[(j, d)] = (self.cloud, self.cloud_label)
                self.cloud_label += 1
        else:
            chosen, per, begin, p = plan
            for sw, ch, b in zip(chosen, per, begin, strict=True):
                for k, d in enumerate(ch):
                    a = b + k * p
                    self.slots[(j, d)] = list(range(a, a + p))
                    self.where[(j, d)] = sw
                    if job.chunk_size_mb is not None:
                        self.storage.open(sw[0], job.arrival, job.chunk_size_mb, end=a + p)
                self.free_at[sw] = b + len(ch) * p
        self.commit(j, {"booked": kind, "cost": cost})

    def unfinished(self) -> list[int]:
        return [jb.id for jb in self.waiting]


def batchsche_lambda(instance: Instance) -> float:
    """lambda = 2 T H R F + 1 of the reference price function (Zhang et al.; eq. (11) of the journal version).

    Mapping to this family: T = the instance horizon, H = number of edge servers, R = 1 (the priced
    resource is a server's pool of W_s workers; PSs are not priced, as A_ps places them), F = an upper
    bound of a job's weight per unit of normalised resource consumption: every job weighs 1 (total JCT)
    and a job consumes at least D_j P_j / max_s W_s (all its chunk-slots on the largest edge server),
    so F = max_j max_s W_s / (D_j P_j).
    """
    sizes = [len(sv.workers) for sv in instance.servers if not sv.is_cloud and sv.workers]
    if not sizes or not instance.jobs:
        return math.e ** 2  # no edge worker or no job: the price is never used
    f_ratio = max(max(sizes) / (job.chunks * instance.chunk_slots(j, False)) for j, job in enumerate(instance.jobs))
    return price_base(instance.horizon, len(sizes), 1, f_ratio)


@register(FAMILY_NAME, "batchsche", kind="baseline", ranges={"cloud_price": ">= 0"},
          summary="BatchSche [11]: geometric batches, non-preemptive bookings on the cheapest priced resources")
def batchsche(instance: Instance, *, seed: int = 0, cloud_price: float = 0.0, base: float | None = None) -> Any:
    """BatchSche of Sec. V-A (see the module docstring).

    Prices follow the reference algorithm (Zhang et al., MobiHoc 2020, the conference version of
    Zhou et al.'s heterogeneous-cluster scheduler): a resource's unit price is
    ``lambda ** (used / capacity) - 1``. The cloud has unlimited capacity, so its price is
    ``lambda ** 0 - 1 = 0`` at any use: ``cloud_price = 0`` is derived, not chosen. An edge
    booking is then cheaper only on a server with no worker booked beyond the round start (price
    0, a tie broken by the earlier completion). ``base`` defaults to `batchsche_lambda`
    (lambda = 2 T H R F + 1); with ``cloud_price = 0`` it decides nothing (an edge price is 0 or
    positive whatever lambda is) and matters only when ``cloud_price > 0``. The earlier defaults
    (``cloud_price = 1``, ``base = e**2``) are available as parameters and reported in
    docs/reproduction/preemptive.md.

    Args:
        seed: seed of A_ps's PS draws.
        cloud_price: unit price of a cloud worker-slot (derived default 0: unlimited capacity).
        base: lambda of the edge price function (default: 2 T H R F + 1, see batchsche_lambda).
    """
    if not cloud_price >= 0 or not math.isfinite(cloud_price):
        raise InputError("cloud_price", f"must be a finite number >= 0, got {cloud_price}")
    lam = batchsche_lambda(instance) if base is None else float(base)
    if not lam > 1 or not math.isfinite(lam):
        raise InputError("base", f"must be a finite number > 1, got {base}")
    with stopwatch() as el:
        policy = BatchPolicy(instance, cloud_price=cloud_price, base=lam)
        late = run_online(policy, instance.jobs, instance.horizon)
    return _finish(instance, "batchsche", policy, late, seed, el,
                   {"cloud_price": cloud_price, "price_base": lam})
