"""tapfinger ``offline_fill`` (ours, an offline list scheduler). It is a heuristic, so the tests check what it
promises: valid complete schedules above the certified bound, each task at its earliest completion given the
tasks before it (against brute force over every cluster, allocation and start, judged by the validator),
sweeps that never delay a task, determinism and checked parameters."""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import InputError
from edgeopt.tapfinger import FAMILY, generate
from edgeopt.tapfinger.offline import Held, _order, fill, improve, to_schedule, total
from tests.reliability_helpers import PROOF_CLOCK


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_valid_complete_and_above_the_certified_bound(seed):
    inst = generate("small", seed=seed)
    r = api.run("offline_fill", inst)
    assert FAMILY.check_result(inst, r) == []
    assert r.status.value == "feasible"
    b = api.bound(inst, time_limit=PROOF_CLOCK)  # bounded by its iterations; the clock never cuts it short
    assert b.bound <= r.objective + 1e-9


def _brute_start(inst, placed, task, cluster, alloc, d):
    """Earliest start of ``task`` in the option (cluster, allocation) of duration ``d`` that the validator
    accepts beside ``placed`` (None: none)."""
    for s in range(task.arrival, inst.horizon - d + 1):
        if FAMILY.validate(inst, to_schedule(inst, {**placed, task.id: (cluster, s, s + d, alloc)})) == []:
            return s
    return None


def _brute_earliest(inst, placed, task):
    """Least completion of ``task`` over every reachable cluster, Pareto allocation and start that the
    validator accepts beside ``placed`` (None: none)."""
    ends = [s + d for n in task.reachable_clusters for alloc, d in inst.pareto_allocations(task.id, n)
            if (s := _brute_start(inst, placed, task, n, alloc, d)) is not None]
    return min(ends, default=None)


@pytest.mark.parametrize("seed", [3, 4])
def test_every_task_completes_as_early_as_brute_force_allows_given_the_tasks_before_it(seed):
    inst = generate("small", seed=seed, jobs=8, noise=0.1)
    held, placed = Held(inst), {}
    for task in _order(inst, "arrival"):
        run = held.earliest(task)
        want = _brute_earliest(inst, placed, task)
        assert (None if run is None else run[2]) == want
        if run is not None:
            held.change(run, 1)
            placed[task.id] = run
    assert FAMILY.validate(inst, to_schedule(inst, placed)) == []


@pytest.mark.parametrize("preset,seed", [("small", 5), ("paper", 6)])
def test_sweeps_never_delay_a_task(preset, seed):
    inst = generate(preset, seed=seed)
    runs, _ = fill(inst, _order(inst, "arrival"))
    swept, moves = improve(inst, runs, sweeps=3)
    assert set(swept) == set(runs)
    assert all(swept[k][2] <= runs[k][2] for k in runs)
    assert total(inst, swept) <= total(inst, runs)
    if moves:
        assert total(inst, swept) < total(inst, runs)
    assert FAMILY.validate(inst, to_schedule(inst, swept)) == []


def test_deterministic_and_checked_parameters():
    inst = generate("small", seed=6)
    a, b = api.run("offline_fill", inst), api.run("offline_fill", inst)
    assert a.schedule == b.schedule and a.objective == b.objective
    for bad in ({"repairs": -1}, {"sweeps": -1}):
        with pytest.raises(InputError):
            api.run("offline_fill", inst, **bad)


@pytest.mark.parametrize("seed", [3, 4])
def test_a_preferred_option_is_placed_at_its_earliest_start_else_the_earliest_completion(seed):
    """``fill(prefer=...)`` (the LP-guided pass): a task with a preferred (cluster, allocation) gets that
    option's earliest start, checked against brute force; when it fits nowhere, the earliest completion over
    every option, as without a preference."""
    inst = generate("small", seed=seed, jobs=8, noise=0.1)
    tasks = _order(inst, "arrival")
    # each task's slowest Pareto option on its last reachable cluster: rarely the earliest completion
    prefer = {t.id: (t.reachable_clusters[-1], tuple(int(x) for x in inst.pareto_allocations(
        t.id, t.reachable_clusters[-1])[-1][0])) for t in tasks}
    runs, rejected = fill(inst, tasks, prefer)
    placed = {}
    for task in tasks:
        n, alloc = prefer[task.id]
        d = {tuple(int(x) for x in a): d for a, d in inst.pareto_allocations(task.id, n)}[alloc]
        s = _brute_start(inst, placed, task, n, alloc, d)
        if s is not None:
            assert runs[task.id][:2] == (n, s) and runs[task.id][3] == alloc
        elif task.id in runs:
            assert runs[task.id][2] == _brute_earliest(inst, placed, task)
        if task.id in runs:
            placed[task.id] = runs[task.id]
    assert sorted(rejected) == sorted(t.id for t in tasks if t.id not in runs)
    assert FAMILY.validate(inst, to_schedule(inst, placed)) == []
    assert fill(inst, tasks, {}) == fill(inst, tasks)
