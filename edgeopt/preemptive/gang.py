"""Job-level (all-or-nothing) preemptive schedulers: the engine of the SRTF and
Tiresias-L baselines of Sec. V-A.

Both are cluster schedulers with a fixed, non-elastic worker requirement
(``requested_workers``, the trace's GPU count) and job-level preemption: a
job runs in a slot on all its workers or not at all (Tiresias's
"all-or-nothing"). Since this family forbids moving data chunks between
workers (a validator constraint), a job's chunks are pinned at arrival:
chunk d to the (d mod k)-th of its k workers, each worker training its
chunks one after another. Placement at arrival: the k eligible edge workers
with the least remaining work of jobs that the scheduler's own priority rule
puts before the newcomer (ties: least total pinned work, then index); the
job goes to the cloud instead (k cloud workers, colocated rate, no waiting
and no preemption there) when that finishes earlier by the same estimate
(r_j + Delta + that work ahead + ceil(D_j/k) P_j). ``gang="chunks"`` (the ``*_elastic`` baselines) sets
k = D_j (one worker per chunk) instead of the trace's requirement.

Each slot the released, unfinished edge jobs are taken in priority order
(``priority(job_state, t)``, smaller first); a job runs iff every worker it
still needs is free in that slot (lower-priority jobs backfill free workers).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from edgeopt.core import OnlinePolicy
from edgeopt.preemptive.instance import Instance, Job
from edgeopt.preemptive.storage import StorageBook


@dataclasses.dataclass
class GangJob:
    """State of one edge job under a gang scheduler."""

    job: int
    arrival: int
    start_ok: int  # first slot all its servers have the data (2i)
    workers: list[tuple[int, int]]
    chunk_of: list[list[int]]  # per worker: its chunks in order
    p: int  # slots per chunk
    pos: list[int]  # per worker: index of the current chunk in chunk_of
    left: list[int]  # per worker: remaining slots of the current chunk
    attained: int = 0  # worker-slots received (Tiresias's 2D attained service)

    def needed(self) -> list[int]:
        return [k for k in range(len(self.workers)) if self.pos[k] < len(self.chunk_of[k])]

    def remaining_time(self) -> int:
        """Slots to finish if it ran without pause: the slowest of its workers."""
        return max(
            (self.left[k] + (len(self.chunk_of[k]) - self.pos[k] - 1) * self.p for k in self.needed()), default=0
        )


Priority = Callable[[GangJob, int], tuple]


class GangPolicy(OnlinePolicy[Job]):
    """Slot-by-slot gang scheduler (woken every slot while edge jobs are pending)."""

    def __init__(self, instance: Instance, priority: Priority, gang: str = "requested") -> None:
        super().__init__()
        if gang not in ("requested", "chunks"):
            raise ValueError(f"gang must be 'requested' or 'chunks', got {gang!r}")
        self.inst = instance
        self.priority = priority
        self.gang = gang
        self.cloud = instance.cloud
        self.active: list[GangJob] = []
        self.backlog: dict[tuple[int, int], int] = {}
        self.slots: dict[tuple[int, int], list[int]] = {}  # (job, chunk) -> slots
        self.where: dict[tuple[int, int], tuple[int, int]] = {}  # (job, chunk) -> (server, worker)
        self.cloud_label = 0
        self.rejected: list[int] = []
        self.storage = StorageBook(instance)
        self.stored: dict[tuple[int, int], list[float]] = {}
        self.by_type: dict[int, list[tuple[int, int]]] = {}
        for s, sv in enumerate(instance.servers):
            if not sv.is_cloud:
                for w, typ in enumerate(sv.workers):
                    self.by_type.setdefault(typ, []).append((s, w))
                    self.backlog[(s, w)] = 0

    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        for job in jobs:
            self._place(t, job)

    def gang_size(self, job: Job) -> int:
        """k: the trace's worker requirement (default), or one worker per chunk (``gang="chunks"``)."""
        return job.requested_workers if self.gang == "requested" else job.chunks

    def _work_ahead(self, newcomer: GangJob, t: int) -> dict[tuple[int, int], int]:
        """Per worker: remaining slots of active jobs that the scheduler's own rule puts before ``newcomer``."""
        mine = self.priority(newcomer, t)
        ahead: dict[tuple[int, int], int] = {}
        for g in self.active:
            if self.priority(g, t) < mine:
                for k in g.needed():
                    rest = g.left[k] + (len(g.chunk_of[k]) - g.pos[k] - 1) * g.p
                    ahead[g.workers[k]] = ahead.get(g.workers[k], 0) + rest
        return ahead

    def _place(self, t: int, job: Job) -> None:
        inst = self.inst
        j = job.id
        elig = self.by_type.get(job.worker_type, [])
        p_edge = inst.chunk_slots(j, False)
        p_colo = inst.chunk_slots(j, True)
        size = self.gang_size(job)
        edge_est = cloud_est = None
        chosen: list[tuple[int, int]] = []
        while elig:
            k = min(size, len(elig))
            probe = GangJob(j, job.arrival, job.arrival, [(-1, -1)] * k,
                            [[d for d in range(job.chunks) if d % k == i] for i in range(k)],
                            p_edge, [0] * k, [p_edge] * k)
            ahead = self._work_ahead(probe, t)
            chosen = sorted(elig, key=lambda sw: (ahead.get(sw, 0), self.backlog[sw], sw))[:k]
            # Sec. VI: drop servers whose storage cannot hold the chunks they would get, and choose again
            full = [s for s in {sw[0] for sw in chosen}
                    if not self.storage.fits(s, job.arrival, (job.chunk_size_mb or 0.0) * sum(
                        len(probe.chunk_of[i]) for i, sw in enumerate(chosen) if sw[0] == s))]
            if full:
                elig = [sw for sw in elig if sw[0] not in full]
                continue
            edge_est = (max(inst.release(j, s) for s, _ in chosen) + max(ahead.get(sw, 0) for sw in chosen)
                        + -(-job.chunks // k) * p_edge)
            break
        if self.cloud is not None:
            k = size
            cloud_est = inst.release(j, self.cloud) + -(-job.chunks // k) * p_colo
            if cloud_est > inst.horizon:
                cloud_est = None
        if edge_est is None and cloud_est is None:
            self.rejected.append(j)
            self.commit(j, {"rejected": True})
            return
        if edge_est is None or (cloud_est is not None and cloud_est < edge_est):
            assert self.cloud is not None
            k = size
            start = inst.release(j, self.cloud)
            labels = list(range(self.cloud_label, self.cloud_label + k))
            self.cloud_label += k
            for d in range(job.chunks):
                a = start + (d // k) * p_colo
                self.slots[(j, d)] = list(range(a, a + p_colo))
                self.where[(j, d)] = (self.cloud, labels[d % k])
            self.commit(j, {"cloud": labels})
            return
        k = len(chosen)
        chunk_of = [[d for d in range(job.chunks) if d % k == i] for i in range(k)]
        for i, sw in enumerate(chosen):
            self.backlog[sw] += len(chunk_of[i]) * p_edge
            for d in chunk_of[i]:
                self.where[(j, d)] = sw
                self.slots[(j, d)] = []
                if job.chunk_size_mb is not None:
                    self.stored[(j, d)] = self.storage.open(sw[0], job.arrival, job.chunk_size_mb)
        start_ok = max(inst.release(j, s) for s, _ in chosen)
        self.active.append(GangJob(j, job.arrival, start_ok, chosen, chunk_of, p_edge, [0] * k, [p_edge] * k))
        self.commit(j, {"edge": [list(sw) for sw in chosen]})

    def on_slot(self, t: int) -> None:
        busy: set[tuple[int, int]] = set()
        ready = [g for g in self.active if g.start_ok <= t]
        ready.sort(key=lambda g: self.priority(g, t))
        finished: list[GangJob] = []
        for g in ready:
            need = g.needed()
            if any(g.workers[k] in busy for k in need):
                continue  # all-or-nothing: wait for every worker
            for k in need:
                sw = g.workers[k]
                busy.add(sw)
                d = g.chunk_of[k][g.pos[k]]
                self.slots[(g.job, d)].append(t)
                g.left[k] -= 1
                self.backlog[sw] -= 1
                g.attained += 1
                if g.left[k] == 0:
                    if (g.job, d) in self.stored:
                        StorageBook.close(self.stored.pop((g.job, d)), t + 1)
                    g.pos[k] += 1
                    g.left[k] = g.p
            if not g.needed():
                finished.append(g)
        for g in finished:
            self.active.remove(g)
            self.commit(g.job, {"finished": t + 1})

    def next_wakeup(self, t: int) -> int | None:
        if not self.active:
            return None
        soonest = min(g.start_ok for g in self.active)
        return max(t + 1, soonest)

    def unfinished(self) -> list[int]:
        return [g.job for g in self.active]
