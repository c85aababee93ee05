"""The online driver reveals a job only at its arrival, and decisions never depend on the future."""

import dataclasses

import pytest

from edgeopt.core import OnlinePolicy, run_online


@dataclasses.dataclass(frozen=True)
class Job:
    id: int
    arrival: int
    size: int


class GreedyBatches(OnlinePolicy[Job]):
    """Toy policy: every 3 slots, start all waiting jobs, largest first, one per slot after t."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting: list[Job] = []
        self.revealed: list[tuple[int, int]] = []

    def on_arrival(self, t, jobs):
        self.revealed.extend((t, j.id) for j in jobs)
        self.waiting.extend(jobs)

    def on_slot(self, t):
        if t % 3:
            return
        for k, job in enumerate(sorted(self.waiting, key=lambda j: (-j.size, j.id))):
            self.commit(job.id, {"start": t + k})
        self.waiting.clear()

    def next_wakeup(self, t):
        return (t // 3 + 1) * 3


def _run(jobs, horizon=30):
    policy = GreedyBatches()
    late = run_online(policy, jobs, horizon)
    return policy, late


def test_jobs_are_revealed_exactly_at_arrival():
    jobs = [Job(0, 4, 1), Job(1, 0, 2), Job(2, 4, 5), Job(3, 31, 1)]
    policy, late = _run(jobs)
    assert policy.revealed == [(0, 1), (4, 0), (4, 2)]
    assert late == [3]  # arrives after the horizon: never revealed, reported
    assert all(d.slot >= next(j.arrival for j in jobs if j.id == d.job) for d in policy.decisions)


def test_decisions_up_to_t_do_not_depend_on_later_jobs():
    base = [Job(i, a, s) for i, (a, s) in enumerate([(0, 3), (1, 1), (2, 7), (5, 2), (7, 9), (8, 1), (13, 4)])]
    cut = 6
    changed = [j if j.arrival <= cut else Job(j.id, j.arrival + 3, j.size * 10) for j in base]
    removed = [j for j in base if j.arrival <= cut]
    p0, _ = _run(base)
    for variant in (changed, removed):
        p1, _ = _run(variant)
        assert p1.decisions_until(cut) == p0.decisions_until(cut)
    assert p0.decisions_until(cut)  # the comparison is not vacuous


def test_commit_before_arrival_is_refused():
    class Cheater(GreedyBatches):
        def on_slot(self, t):
            self.commit(99, "peek")

    with pytest.raises(RuntimeError, match="before its arrival"):
        run_online(Cheater(), [Job(0, 0, 1), Job(99, 10, 1)], 20)


def test_wakeup_must_move_forward():
    class Stuck(GreedyBatches):
        def next_wakeup(self, t):
            return t

    with pytest.raises(RuntimeError, match="must be >"):
        run_online(Stuck(), [Job(0, 0, 1)], 10)
