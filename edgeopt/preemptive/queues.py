"""Per-worker preemptive priority queues (HAPRF) in whole slots.

A worker trains at most one chunk per slot. Its pending chunks are ordered by
a priority key (smaller first); in every slot the worker trains the
highest-priority chunk that is released (uploaded) and unfinished. With
deterministic keys this rule is *consistent*: the plan computed at slot
``t0`` for the pending set, cut at any later slot ``t1``, equals what
slot-by-slot execution does in ``[t0, t1)``, and replanning at ``t1`` gives
the same future. So a worker is replanned only when a chunk is added, and
slots before the current slot are never changed (online discipline).

Planning is event-driven: in priority order, each chunk takes the earliest
free slots at or after ``max(now, release)`` (`Timeline.take`), which is what
preemptive-resume priority scheduling does slot by slot.
"""

from __future__ import annotations

import bisect
import dataclasses

Interval = tuple[int, int]


class Timeline:
    """Busy slots of one worker as sorted, disjoint, merged half-open intervals."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def take(self, start: int, need: int) -> list[Interval]:
        """Reserve the ``need`` earliest free slots at or after ``start``; return them as intervals."""
        got: list[Interval] = []
        starts, ends = self.starts, self.ends
        i = bisect.bisect_right(ends, start)  # first interval ending after `start`
        cur = start
        while need > 0:
            if i < len(starts) and starts[i] <= cur:
                cur = max(cur, ends[i])
                i += 1
                continue
            gap_end = starts[i] if i < len(starts) else cur + need
            take = min(need, gap_end - cur)
            got.append((cur, cur + take))
            need -= take
            cur += take
        for a, b in got:
            self._add(a, b)
        return got

    def _add(self, a: int, b: int) -> None:
        starts, ends = self.starts, self.ends
        i = bisect.bisect_left(starts, a)
        # merge with the previous interval when touching
        if i > 0 and ends[i - 1] == a:
            i -= 1
            a = starts[i]
            del starts[i], ends[i]
        if i < len(starts) and starts[i] == b:
            b = ends[i]
            del starts[i], ends[i]
        starts.insert(i, a)
        ends.insert(i, b)


@dataclasses.dataclass
class QChunk:
    """A chunk dispatched to a worker.

    Attributes:
        key: priority (smaller trains first): ``(D_j * P_j, seq)``, i.e. highest
            average processing rate gamma = 1/(D_j P_j) first, FIFO on ties.
        job, chunk: ids.
        arrival: r_j (cost clock starts here, Alg. 4 line 8).
        release: r_j + Delta_js, first slot it may train.
        remaining: slots still to train.
        weight: mu_jd = 1 / D_j.
        done: executed intervals (slots < the worker's clock).
        plan: planned intervals from the worker's clock on.
    """

    key: tuple[int, int]
    job: int
    chunk: int
    arrival: int
    release: int
    remaining: int
    weight: float
    done: list[Interval] = dataclasses.field(default_factory=list)
    plan: list[Interval] = dataclasses.field(default_factory=list)

    @property
    def planned_end(self) -> int:
        if self.plan:
            return self.plan[-1][1]
        return self.done[-1][1] if self.done else self.release


def plan_queue(chunks: list[QChunk], now: int) -> list[list[Interval]]:
    """HAPRF plan from slot ``now`` of ``chunks`` (sorted by key): intervals per chunk."""
    tl = Timeline()
    return [tl.take(max(now, c.release), c.remaining) for c in chunks]


class WorkerQueue:
    """One edge worker: its pending chunks, their plan, and the slot up to which it was executed."""

    __slots__ = ("clock", "finished", "pending", "server", "worker")

    def __init__(self, server: int, worker: int) -> None:
        self.server = server
        self.worker = worker
        self.clock = 0
        self.pending: list[QChunk] = []  # sorted by key
        self.finished: list[QChunk] = []

    def advance(self, t: int) -> list[QChunk]:
        """Execute the plan up to slot ``t`` (exclusive); return chunks that finished."""
        if t <= self.clock:
            return []
        done_now: list[QChunk] = []
        keep: list[QChunk] = []
        for c in self.pending:
            rest: list[Interval] = []
            for a, b in c.plan:
                if b <= t:
                    c.done.append((a, b))
                    c.remaining -= b - a
                elif a < t:
                    c.done.append((a, t))
                    c.remaining -= t - a
                    rest.append((t, b))
                else:
                    rest.append((a, b))
            c.plan = rest
            if c.remaining == 0:
                done_now.append(c)
            else:
                keep.append(c)
        self.pending = keep
        self.finished.extend(done_now)
        self.clock = t
        return done_now

    def cost_of(self, chunks: list[QChunk], plans: list[list[Interval]]) -> float:
        return sum(c.weight * (p[-1][1] - c.arrival) for c, p in zip(chunks, plans, strict=True))

    def insertion(self, new: QChunk) -> tuple[float, int, list[QChunk]]:
        """Exact increase of sum_pending mu (c - r) if ``new`` joins, its completion, and the chunks it delays.

        Q_jdsw of eq. (5), computed by simulation: chunks of higher priority
        keep their plan (terms 1-3 of (5): upload, waiting, processing of
        ``new``), lower-priority ones are replanned (term 4: their delay).
        """
        pos = bisect.bisect_left([c.key for c in self.pending], new.key)
        tl = Timeline()
        for c in self.pending[:pos]:
            for a, b in c.plan:
                tl._add(a, b)
        now = self.clock
        own = tl.take(max(now, new.release), new.remaining)
        inc = new.weight * (own[-1][1] - new.arrival)
        delayed: list[QChunk] = []
        for c in self.pending[pos:]:
            p = tl.take(max(now, c.release), c.remaining)
            shift = p[-1][1] - c.planned_end
            if shift:
                inc += c.weight * shift
                delayed.append(c)
        return inc, own[-1][1], delayed

    def insert(self, new: QChunk) -> None:
        """Add ``new`` and replan from the clock."""
        pos = bisect.bisect_left([c.key for c in self.pending], new.key)
        self.pending.insert(pos, new)
        tl = Timeline()
        for c in self.pending[:pos]:
            for a, b in c.plan:
                tl._add(a, b)
        for c in self.pending[pos:]:
            c.plan = tl.take(max(self.clock, c.release), c.remaining)

    def next_completion(self) -> int | None:
        return min((c.planned_end for c in self.pending), default=None)
