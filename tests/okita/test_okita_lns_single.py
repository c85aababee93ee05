"""okita's large-neighbourhood search with the single-job solver (``formulations/okita/lns.py``): a job
re-planned over what the others leave keeps the schedule valid and never makes it worse."""

from __future__ import annotations

import itertools

import pytest

from edgeopt.core.limits import Deadline
from edgeopt.core.lns import search
from edgeopt.okita import FAMILY
from edgeopt.okita.baselines import oasis_latency
from edgeopt.okita.instance import generate
from edgeopt.okita.schedule import Schedule, job_parts, objective, validate
from formulations.okita.lns import neighbourhood, reoptimise_single

#: The instances of the exact single-job tests: 6 jobs on 5 sites, where each pass of tiny MILPs moves jobs and
#: takes a few seconds (8 jobs on 6 sites took 3-5 times as long for the same checks).
SMALL = {"jobs": 6, "servers": 5, "horizon": 24}


@pytest.mark.parametrize("seed", [0, 1])
def test_each_single_job_move_is_valid_and_strictly_better(seed: int) -> None:
    inst = generate("paper", seed=seed, **SMALL)
    sched = Schedule.model_validate(oasis_latency(inst).schedule)
    start = objective(inst, sched)
    moved = 0
    for i in range(len(inst.jobs)):
        before = {js.job: js for js in sched.jobs}
        new = reoptimise_single(inst, sched, i, deadline=Deadline(60))
        if new is None:
            continue
        moved += 1
        assert validate(inst, new) == []
        assert objective(inst, new) < objective(inst, sched)
        after = {js.job: js for js in new.jobs}
        assert all(after[j] == before[j] for j in before if j != i)  # only job i changed
        assert sum(job_parts(inst, after[i]).values()) < sum(job_parts(inst, before[i]).values())
        sched = new
    assert moved > 0 and objective(inst, sched) < start


def _no_heuristic(monkeypatch) -> None:
    """`singlejob.best_plan` finds nothing: only the exact single-job MILP can move a job."""
    from formulations.okita import singlejob

    monkeypatch.setattr(singlejob, "best_plan", lambda *a, **k: (None, float("inf"), None, None))


def test_the_exact_single_job_milp_alone_moves_jobs_validly(monkeypatch) -> None:
    from formulations.okita import lns, singlejob

    _no_heuristic(monkeypatch)
    monkeypatch.setattr(lns, "EXACT_LIMIT", 3600.0)  # only the work bounds the tiny MILPs, not the clock
    found = []
    real = singlejob.exact
    monkeypatch.setattr(singlejob, "exact", lambda *a, **k: found.append(real(*a, **k)) or found[-1])
    inst = generate("paper", seed=0, **SMALL)
    sched = Schedule.model_validate(oasis_latency(inst).schedule)
    start, moved = objective(inst, sched), 0
    for i in range(len(inst.jobs)):
        new = reoptimise_single(inst, sched, i, deadline=Deadline(3600))
        assert found[-1].optimal  # tiny: proven
        if new is None:
            continue
        moved += 1
        assert validate(inst, new) == [] and objective(inst, new) < objective(inst, sched)
        # the job's entries cost what the MILP said its plan costs (nothing lost in the entries' transfers)
        mine = next(js for js in new.jobs if js.job == i)
        assert sum(job_parts(inst, mine).values()) == pytest.approx(found[-1].value, rel=1e-9)
        sched = new
    assert moved > 0 and objective(inst, sched) < start
    assert len(found) == len(inst.jobs)


@pytest.mark.parametrize("gate", ["exact=False", "sites", "workers", "no time left to build it"])
def test_the_exact_single_job_milp_runs_only_where_allowed(monkeypatch, gate: str) -> None:
    from formulations.okita import lns, singlejob

    _no_heuristic(monkeypatch)
    calls = []
    monkeypatch.setattr(singlejob, "exact", lambda *a, **k: calls.append(1))
    if gate == "sites":
        monkeypatch.setattr(lns, "EXACT_MAX_SITES", 5)
    elif gate == "workers":
        monkeypatch.setattr(lns, "EXACT_MAX_WORKERS", 6 * 6 * 5)  # below every job's slots x R^2 here
    inst = generate("paper", seed=0, jobs=8, servers=6, horizon=30)
    sched = Schedule.model_validate(oasis_latency(inst).schedule)
    deadline = _Expired() if gate == "no time left to build it" else Deadline(3600)
    assert all(reoptimise_single(inst, sched, i, deadline=deadline, exact=gate != "exact=False") is None
               for i in range(len(inst.jobs)))
    assert calls == []


def test_the_exact_pass_replans_the_costliest_jobs_first_and_keeps_the_schedule_valid(monkeypatch) -> None:
    from formulations.okita import lns

    monkeypatch.setattr(lns, "EXACT_LIMIT", 3600.0)  # only the work bounds the tiny MILPs, not the clock
    seen = []
    real = lns.reoptimise_single
    monkeypatch.setattr(lns, "reoptimise_single", lambda inst, sched, i, **k: seen.append(i) or real(inst, sched, i, **k))
    inst = generate("paper", seed=1, **SMALL)
    start = Schedule.model_validate(oasis_latency(inst).schedule)
    cost = {js.job: sum(job_parts(inst, js).values()) for js in start.jobs}
    out = lns.exact_pass(inst, start, Deadline(3600))
    assert out is not None and validate(inst, out) == [] and objective(inst, out) < objective(inst, start)
    assert seen[:len(cost)] == sorted(cost, key=lambda k: (-cost[k], k))
    # it stops after a pass that moves no job: the last len(jobs) calls moved nothing
    assert all(real(inst, out, i, heuristic=False, deadline=Deadline(3600)) is None for i in range(len(inst.jobs)))
    monkeypatch.setattr(lns, "EXACT_MAX_SITES", len(inst.sites) - 1)
    assert lns.exact_pass(inst, start, Deadline(3600)) is None  # above its sites: not run


def test_a_move_that_fails_in_the_exact_pass_leaves_the_rest_of_the_pass_running(monkeypatch) -> None:
    from formulations.okita import lns

    monkeypatch.setattr(lns, "EXACT_LIMIT", 3600.0)
    real = lns.reoptimise_single

    def flaky(inst, sched, i, **k):
        if i == 0:
            raise RuntimeError("a solver failure")
        return real(inst, sched, i, **k)

    monkeypatch.setattr(lns, "reoptimise_single", flaky)
    inst = generate("paper", seed=1, **SMALL)
    start = Schedule.model_validate(oasis_latency(inst).schedule)
    out = lns.exact_pass(inst, start, Deadline(3600))
    assert out is not None and validate(inst, out) == [] and objective(inst, out) < objective(inst, start)
    assert next(js for js in out.jobs if js.job == 0) == next(js for js in start.jobs if js.job == 0)


def test_the_search_offers_the_sequential_insertion_first_and_never_returns_worse_than_its_start() -> None:
    inst = generate("paper", seed=2, jobs=6, servers=5, horizon=24)
    start = Schedule.model_validate(oasis_latency(inst).schedule)
    best, value, log = search(FAMILY, inst, start, neighbourhood(), deadline=Deadline(3600), sub_limit=1.0,
                              max_passes=1)
    assert log.rebuild in ("kept", "not better")
    assert validate(inst, best) == []
    assert value == pytest.approx(objective(inst, best))
    assert value <= objective(inst, start)
    assert log.improvements > 0


@pytest.mark.parametrize(("seed", "exact_workers", "priority"),
                         [(0, None, "ratio"), (3, None, "ratio"), (0, False, "ratio"), (0, None, "arrival")])
def test_sequential_insertion_schedules_every_job_validly(seed: int, exact_workers, priority: str) -> None:
    from formulations.okita.lns import sequential_insertion

    inst = generate("paper", seed=seed, jobs=8, servers=6, horizon=30)
    # only the work bounds it
    built = sequential_insertion(inst, Deadline(3600), exact_workers=exact_workers, priority=priority)
    assert built is not None and validate(inst, built) == []
    assert sorted(js.job for js in built.jobs) == list(range(len(inst.jobs)))
    assert all(js.completion is not None for js in built.jobs)
    assert sequential_insertion(inst, _Expired()) is None  # no time: nothing half-built
    assert sequential_insertion(inst, Deadline(3600), max_nonzeros=10) is None  # above the size budget


def _two_jobs():
    """Two jobs on three sites: job 0 arrives first with 30 worker-slots of work at 1 per slot of latency, job 1
    a slot later with 8 at 100 per slot."""
    from edgeopt.okita.instance import Instance

    base = generate("paper_linear", seed=0, jobs=2, servers=3, horizon=12).model_dump(mode="json")
    j0, j1 = base["jobs"]
    j0.update(arrival=0, data_chunks=[120, 120, 120], latency_cost={"kind": "linear", "tau": 1.0, "b": 0.0})
    j1.update(arrival=1, data_chunks=[12, 12, 12], latency_cost={"kind": "linear", "tau": 100.0, "b": 0.0})
    return Instance.model_validate(base)


def test_insertion_order_is_smiths_ratio_rule_or_arrival() -> None:
    from formulations.okita.bounds import worker_limits
    from formulations.okita.lns import insertion_order

    inst = _two_jobs()
    assert [W for W, _ in worker_limits(inst)] == [30, 8]
    # 1 per slot over 30 worker-slots against 100 over 8: job 1 first, though it arrives later
    assert insertion_order(inst) == [1, 0] and insertion_order(inst, "arrival") == [0, 1]
    many = generate("paper_linear", seed=4, jobs=12, servers=4, horizon=40)
    ratio = [(float(job.cost(-(-W // A) + 1)) - float(job.cost(-(-W // A)))) / W
             for job, (W, A) in zip(many.jobs, worker_limits(many), strict=True)]
    got = insertion_order(many)
    assert sorted(got) == list(range(12))
    assert all(ratio[a] >= ratio[b] for a, b in itertools.pairwise(got))
    assert insertion_order(many, "arrival") == sorted(range(12), key=lambda k: (many.jobs[k].arrival, k))
    with pytest.raises(ValueError, match="priority"):
        insertion_order(many, "deadline")


def test_the_ratio_order_lets_the_costlier_late_job_go_first() -> None:
    from formulations.okita.lns import sequential_insertion

    inst = _two_jobs()
    by = {p: sequential_insertion(inst, Deadline(3600), exact_workers=True, priority=p) for p in ("arrival", "ratio")}
    for built in by.values():
        assert built is not None and validate(inst, built) == []
    done = {p: {js.job: js.completion for js in built.jobs} for p, built in by.items()}
    # in arrival order job 0 holds the capacity job 1 needs at its arrival; by ratio job 1 finishes first
    assert done["ratio"][1] < done["arrival"][1]
    assert objective(inst, by["ratio"]) < objective(inst, by["arrival"])


class _Expired:
    """A deadline already passed (no clock involved)."""

    def expired(self) -> bool:
        return True

    def remaining(self, *, floor: float = 0.05) -> float:
        return floor

    def check(self, what: str = "") -> None:
        from edgeopt.core.limits import BuildTimeLimit

        raise BuildTimeLimit(what)


class _Remaining(Deadline):
    """A deadline that never passes and always has ``left`` seconds to go (0.1: every pace check fails)."""

    def __init__(self, left: float) -> None:
        super().__init__(3600)
        self.left = left

    def remaining(self, *, floor: float = 0.05) -> float:
        return self.left


def _ticks():
    """A clock that advances one second per reading."""
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0
        return now[0]

    return clock


@pytest.mark.parametrize(("jobs", "exact_workers", "planned", "built"), [
    (8, None, [True] * 5 + [False] * 3, True),  # the MILP's pace fails after 5 jobs: the faster planner ends it
    (12, None, [True] * 5 + [False] * 5, False),  # and when its pace fails too, nothing is built
    (8, True, [True] * 5, False),  # one planner only: the pace failing stops it
])
def test_sequential_insertion_switches_to_the_faster_planner_when_its_pace_says_so(
        monkeypatch, jobs: int, exact_workers, planned: list[bool], built: bool) -> None:
    from formulations.okita import singlejob
    from formulations.okita.lns import PACE_JOBS, sequential_insertion

    assert PACE_JOBS == 5
    flags = []
    real = singlejob.best_plan

    def spy(job, *args, **kwargs):
        flags.append(kwargs["exact_workers"])
        return real(job, *args, **kwargs)

    monkeypatch.setattr(singlejob, "best_plan", spy)
    inst = generate("paper", seed=0, jobs=jobs, servers=6, horizon=30)
    out = sequential_insertion(inst, _Remaining(0.1), exact_workers=exact_workers, clock=_ticks())
    assert flags == planned
    assert (out is not None) == built
    if built:
        assert validate(inst, out) == [] and sorted(js.job for js in out.jobs) == list(range(jobs))


def test_the_insertions_pace_is_per_unit_of_work(monkeypatch) -> None:
    """Five small jobs took 1 s (the clock ticks once per reading) and three jobs of 1000 times their work are
    left: per job the rest would take 0.6 s, per unit of work 600 s, above the 10 s left, so the faster planner
    takes over after the fifth job."""
    from formulations.okita import bounds, singlejob
    from formulations.okita.lns import sequential_insertion

    inst = generate("paper_linear", seed=0, jobs=8, servers=6, horizon=30)
    real_limits = bounds.worker_limits(inst)
    # jobs 5-7 count 1000 times their work for the pace (and so come last in ratio order)
    monkeypatch.setattr(bounds, "worker_limits", lambda _inst: [(W * (1000 if i >= 5 else 1), A)
                                                                for i, (W, A) in enumerate(real_limits)])
    flags = []
    real = singlejob.best_plan

    def spy(job, *args, **kwargs):
        flags.append((job.index, kwargs["exact_workers"]))
        return real(job, *args, **kwargs)

    monkeypatch.setattr(singlejob, "best_plan", spy)
    out = sequential_insertion(inst, _Remaining(10.0), clock=_ticks())
    assert [e for _, e in flags] == [True] * 5 + [False] * 3
    assert sorted(i for i, _ in flags[5:]) == [5, 6, 7]
    assert out is not None and validate(inst, out) == []


def _spy_insertions(monkeypatch, built: dict):
    """`lns.sequential_insertion` replaced by the schedules in ``built`` (per priority); returns the priorities asked."""
    from formulations.okita import lns

    asked = []

    def fake(instance, deadline, *, priority="ratio", **kwargs):
        asked.append(priority)
        return built[priority]

    monkeypatch.setattr(lns, "sequential_insertion", fake)
    return asked


def test_the_rebuild_adds_arrival_order_only_for_non_linear_costs_and_when_time_allows(monkeypatch) -> None:
    from formulations.okita import lns

    # exponential costs (the `paper` generator), where arrival order is the cheaper here: 8 jobs on 12 slots
    inst = generate("paper", seed=8, jobs=8, servers=3, horizon=12)
    built = {p: lns.sequential_insertion(inst, Deadline(3600), priority=p) for p in ("ratio", "arrival")}
    assert all(validate(inst, s) == [] for s in built.values())
    cheaper = min(built, key=lambda p: objective(inst, built[p]))
    assert objective(inst, built["arrival"]) != objective(inst, built["ratio"])

    asked = _spy_insertions(monkeypatch, built)
    assert lns.rebuild(inst, _Remaining(100.0), clock=_ticks()) is built[cheaper]  # 1 s each: time for both
    assert asked == ["ratio", "arrival"]
    asked.clear()
    assert lns.rebuild(inst, _Remaining(1.5), clock=_ticks()) is built["ratio"]  # less than twice the first
    assert asked == ["ratio"]
    asked.clear()
    linear = _two_jobs()
    # Smith's rule: ratio alone (1.4 s left: no time for a negotiated round, `negotiate`'s test)
    assert lns.rebuild(linear, _Remaining(1.4), clock=_ticks()) is built["ratio"]
    assert asked == ["ratio"]
    asked.clear()
    built["ratio"] = None  # the ratio order did not finish: arrival order whatever the time
    assert lns.rebuild(linear, _Remaining(1.5), clock=_ticks()) is built["arrival"]
    assert asked == ["ratio", "arrival"]


def test_the_rebuild_keeps_the_cheaper_of_the_two_orders() -> None:
    from formulations.okita import lns

    inst = generate("paper", seed=8, jobs=8, servers=3, horizon=12)
    got = lns.rebuild(inst, Deadline(3600))
    assert got is not None and validate(inst, got) == []
    each = [objective(inst, lns.sequential_insertion(inst, Deadline(3600), priority=p)) for p in ("ratio", "arrival")]
    assert objective(inst, got) == pytest.approx(min(each))


def _saturated(inst, sched):
    """Cells (slot, site, resource) a schedule uses to 95 % of a positive capacity, recomputed here."""
    import numpy as np

    from edgeopt.okita.schedule import usage_per_slot

    C = np.asarray(inst.capacity, dtype=float)
    return (usage_per_slot(inst, sched) >= 0.95 * C[None]) & (C[None] > 0)


def test_congestion_prices_are_the_counts_times_a_third_of_the_median_latency_step_per_unit() -> None:
    import numpy as np

    from formulations.okita.bounds import worker_limits
    from formulations.okita.lns import NEGOTIATION_WEIGHT, congestion_prices

    inst = _two_jobs()
    steps = [float(job.cost(-(-W // A) + 1)) - float(job.cost(-(-W // A)))
             for job, (W, A) in zip(inst.jobs, worker_limits(inst), strict=True)]
    assert steps == [1.0, 100.0] and NEGOTIATION_WEIGHT == pytest.approx(1 / 3)
    C = np.asarray(inst.capacity, dtype=float)
    history = np.zeros((inst.horizon,) + C.shape)
    history[3, 1, 0], history[5, 2, 1] = 1, 2
    got = congestion_prices(inst, history)
    want = np.zeros_like(history)
    want[3, 1, 0] = 50.5 / 3 / C[1, 0]  # median of 1 and 100
    want[5, 2, 1] = 2 * 50.5 / 3 / C[2, 1]
    assert np.allclose(got, want)


def test_priced_cells_are_left_to_the_jobs_that_need_them() -> None:
    """At zero prices the insertion is the plain one; with a high price on every cell of one site, no job puts a
    worker or its PS there (the other sites can train everything), and the schedule is still valid and complete."""
    import numpy as np

    from formulations.okita.lns import sequential_insertion

    inst = generate("paper_linear", seed=1, jobs=5, servers=4, horizon=20)
    plain = sequential_insertion(inst, Deadline(3600))
    C = np.asarray(inst.capacity, dtype=float)
    zero = sequential_insertion(inst, Deadline(3600), prices=np.zeros((inst.horizon,) + C.shape))
    assert zero == plain
    used = {site for js in plain.jobs for e in js.slots for site in [*e.workers, e.ps_site] if site is not None}
    assert 0 in used  # the price below changes something
    prices = np.zeros((inst.horizon,) + C.shape)
    prices[:, 0, :] = 1e6
    priced = sequential_insertion(inst, Deadline(3600), prices=prices)
    assert priced is not None and validate(inst, priced) == [] and len(priced.jobs) == len(inst.jobs)
    assert all(e.workers.get(0, 0) == 0 and e.ps_site != 0 for js in priced.jobs for e in js.slots)


def test_negotiate_prices_what_each_schedule_saturated_and_keeps_the_cheapest(monkeypatch) -> None:
    import numpy as np

    from formulations.okita import lns

    inst = generate("paper_linear", seed=0, jobs=10, servers=3, horizon=14)
    # three real schedules, the cheapest offered in the first round (2,454 against 2,641 and 2,489)
    first = lns.sequential_insertion(inst, Deadline(3600), priority="arrival")
    others = [lns.sequential_insertion(inst, Deadline(3600)),
              lns.sequential_insertion(inst, Deadline(3600), exact_workers=False)]
    assert all(s is not None and validate(inst, s) == [] for s in [first, *others])
    assert objective(inst, others[0]) < min(objective(inst, first), objective(inst, others[1]))
    assert _saturated(inst, first).any()
    asked = []

    def fake(instance, deadline, *, prices=None, priority="ratio", **kwargs):
        asked.append(prices)
        return others[len(asked) - 1]

    monkeypatch.setattr(lns, "sequential_insertion", fake)
    got = lns.negotiate(inst, _Remaining(100.0), first, 1.0, clock=_ticks())
    assert len(asked) == lns.NEGOTIATION_ROUNDS == 2
    count = _saturated(inst, first).astype(float)
    assert np.allclose(asked[0], lns.congestion_prices(inst, count))
    count += _saturated(inst, others[0])
    assert np.allclose(asked[1], lns.congestion_prices(inst, count))
    assert got is others[0]
    asked.clear()
    # 1.4 s left, less than ROUND_ROOM (1.5) times the first's 1 s: no round
    assert lns.ROUND_ROOM == 1.5
    assert lns.negotiate(inst, _Remaining(1.4), first, 1.0, clock=_ticks()) is first and asked == []


def test_latency_steps_and_a_job_that_fits_nowhere() -> None:
    import math

    from edgeopt.okita.instance import Instance
    from formulations.okita.lns import insertion_order, latency_steps, smith_ratios

    assert latency_steps(_two_jobs()) == [(1.0, 30), (100.0, 8)]
    base = _two_jobs().model_dump(mode="json")
    base["jobs"][1]["worker_demand"] = [1000.0] + base["jobs"][1]["worker_demand"][1:]  # no site holds a worker
    inst = Instance.model_validate(base)
    (step0, _), (step1, _) = latency_steps(inst)
    assert step0 == 1.0 and step1 is None
    assert smith_ratios(inst)[1] == -math.inf and insertion_order(inst) == [0, 1]
