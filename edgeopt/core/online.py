"""The online driver: an online algorithm sees a job only from its arrival slot on.

An online algorithm is an `OnlinePolicy`. The driver `run_online` walks
through the slots at which something happens (an arrival, or a wake-up the
policy asked for), hands the policy the jobs that arrive at that slot, and
lets it act. The policy never receives the job list itself, so it cannot read
a future job by construction. Every decision is recorded with the slot it was
taken at (`OnlinePolicy.commit`); a decision about a job can only be taken
once the job has arrived, and the log lets tests check that decisions up to
slot ``t`` do not depend on jobs arriving after ``t``.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

from edgeopt.core import progress

J = TypeVar("J")


@dataclasses.dataclass(frozen=True)
class Decision:
    """One irrevocable decision: taken at ``slot`` about ``job``."""

    slot: int
    job: Hashable
    payload: Any


class OnlinePolicy(abc.ABC, Generic[J]):
    """Base class of online algorithms.

    Subclasses get static data (servers, horizon, ...) in their constructor,
    never the jobs. The driver calls, at each event slot ``t`` in increasing
    order, `on_arrival` with the jobs whose arrival is ``t`` (possibly none)
    and then `on_slot`. `next_wakeup` says when the policy wants to be called
    again although no job arrives (a batch boundary, the next slot of a
    preemptive scheduler).
    """

    def __init__(self) -> None:
        self.now: int = -1
        self.decisions: list[Decision] = []
        self._seen: set[Hashable] = set()

    @abc.abstractmethod
    def on_arrival(self, t: int, jobs: Sequence[J]) -> None:
        """Jobs arriving at slot ``t`` become known."""

    @abc.abstractmethod
    def on_slot(self, t: int) -> None:
        """Act at slot ``t`` (after the arrivals of ``t`` were revealed)."""

    def next_wakeup(self, t: int) -> int | None:
        """The next slot > ``t`` at which to call `on_slot` even if no job arrives."""
        return None

    def commit(self, job: Hashable, payload: Any) -> None:
        """Record an irrevocable decision about an arrived job at the current slot."""
        if job not in self._seen:
            raise RuntimeError(f"online discipline violated: decision about job {job!r} before its arrival")
        self.decisions.append(Decision(self.now, job, payload))

    def decisions_until(self, t: int) -> list[Decision]:
        """Decisions taken at slots <= ``t``, in order."""
        return [d for d in self.decisions if d.slot <= t]


def run_online(
    policy: OnlinePolicy[J],
    jobs: Sequence[J],
    horizon: int,
    *,
    arrival: Callable[[J], int] = lambda j: j.arrival,  # type: ignore[attr-defined]
    job_id: Callable[[J], Hashable] = lambda j: j.id,  # type: ignore[attr-defined]
) -> list[Hashable]:
    """Run ``policy`` over ``jobs``, revealing each at its arrival slot.

    Returns the ids of jobs never revealed because they arrive at or after
    ``horizon`` (the caller reports them as rejected).
    """
    order = sorted(range(len(jobs)), key=lambda k: (arrival(jobs[k]), k))
    late = [job_id(jobs[k]) for k in order if arrival(jobs[k]) >= horizon]
    order = [k for k in order if arrival(jobs[k]) < horizon]
    pos = 0
    t = arrival(jobs[order[0]]) if order else None
    wake = policy.next_wakeup(-1)
    if wake is not None and (t is None or wake < t):
        t = wake
    while t is not None and t < horizon:
        batch: list[J] = []
        while pos < len(order) and arrival(jobs[order[pos]]) <= t:
            batch.append(jobs[order[pos]])
            pos += 1
        policy.now = t
        policy._seen.update(job_id(j) for j in batch)
        policy.on_arrival(t, batch)
        policy.on_slot(t)
        progress.report(t + 1, horizon)  # slots simulated
        candidates = []
        if pos < len(order):
            candidates.append(arrival(jobs[order[pos]]))
        wake = policy.next_wakeup(t)
        if wake is not None:
            if wake <= t:
                raise RuntimeError(f"next_wakeup({t}) returned {wake}, must be > {t}")
            candidates.append(wake)
        t = min(candidates) if candidates else None
    progress.report(horizon, horizon)
    return late
