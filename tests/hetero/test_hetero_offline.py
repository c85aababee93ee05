"""``offline_fill`` (ours, an offline list scheduler): complete where the online algorithms reject jobs,
never made worse by its improvement sweeps, deterministic, validated like every algorithm."""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import InputError
from edgeopt.hetero import FAMILY, generate
from edgeopt.hetero.mincost import job_configs
from edgeopt.hetero.offline import _order, fill, improve, total
from edgeopt.hetero.schedule import Schedule
from tests.reliability_helpers import PROOF_CLOCK


def test_complete_where_every_online_algorithm_rejects_jobs():
    # a congested instance (arrivals over the first half of T, capacity scaled down) on which every online
    # algorithm and baseline rejects 2-6 jobs
    inst = generate("paper_congested", seed=0, jobs=40, servers=20)
    for name, algo in api.algorithms("hetero").items():
        if algo.relaxed or algo.kind == "offline":
            continue
        r = api.run(name, inst)
        assert r.status.value == "partial", name
    r = api.run("offline_fill", inst)
    assert FAMILY.check_result(inst, r) == []
    assert r.status.value == "feasible"
    assert sorted(js["job"] for js in r.schedule["jobs"]) == [j.id for j in inst.jobs]
    assert r.objective >= api.bound(inst, time_limit=PROOF_CLOCK).bound  # iteration-bounded, never cut by the clock


@pytest.mark.parametrize("preset,seed", [("small", 1), ("small_ra", 2), ("paper_congested", 3)])
def test_sweeps_never_delay_a_job(preset, seed):
    kw = {"jobs": 30, "servers": 15} if preset.startswith("paper") else {}
    inst = generate(preset, seed=seed, **kw)
    configs = {j.id: job_configs(inst, j) for j in inst.jobs}
    placed, _ = fill(inst, _order(inst, configs, "arrival"), "footprint", configs)
    swept, moves = improve(inst, placed, configs, sweeps=3)
    assert set(swept) == set(placed)
    assert all(swept[k].end <= placed[k].end for k in placed)
    assert total(inst, swept) <= total(inst, placed)
    if moves:
        assert total(inst, swept) < total(inst, placed)
    sched = Schedule(jobs=[swept[k].to_schedule() for k in sorted(swept)],
                     rejected=sorted(j.id for j in inst.jobs if j.id not in swept))
    assert FAMILY.validate(inst, sched) == []


def test_deterministic_and_its_parameters_are_checked():
    inst = generate("small_congested", seed=4)
    a, b = api.run("offline_fill", inst), api.run("offline_fill", inst)
    assert a.schedule == b.schedule and a.objective == b.objective
    assert FAMILY.check_result(inst, a) == []
    assert a.extra["chosen"].split("/")[0] in ("completion", "footprint")
    for bad in ({"repairs": -1}, {"sweeps": -2}):
        with pytest.raises(InputError):
            api.run("offline_fill", inst, **bad)


class _Never:
    def expired(self):
        return False


@pytest.mark.parametrize("preset,seed", [("small", 1), ("small_congested", 4)])
def test_ruin_and_recreate_gives_a_valid_complete_schedule_never_worse_than_its_start(preset, seed):
    from edgeopt.hetero.offline import recreate

    inst = generate(preset, seed=seed)
    configs = {j.id: job_configs(inst, j) for j in inst.jobs}
    # an unswept pass of the smallest-footprint rule in arrival order: a start the search can improve
    placed, rejected = fill(inst, _order(inst, configs, "arrival"), "footprint", configs)
    assert not rejected
    start = Schedule(jobs=[placed[k].to_schedule() for k in sorted(placed)], rejected=[])
    before = FAMILY.objective(inst, start)
    sched, log = recreate(inst, start, _Never(), max_iterations=60)
    assert log.iterations == 60 and log.accepted > 0 and sched is not None
    assert FAMILY.validate(inst, sched) == []
    assert sorted(js.job for js in sched.jobs) == [j.id for j in inst.jobs] and not sched.rejected
    assert FAMILY.objective(inst, sched) == pytest.approx(before + log.change) and log.change < 0
    again, _ = recreate(inst, start, _Never(), max_iterations=60)
    assert again == sched  # deterministic for a given number of iterations
    # nothing to do: a schedule that rejects jobs is not searched
    assert recreate(inst, Schedule(jobs=start.jobs[1:], rejected=[start.jobs[0].job]), _Never())[0] is None
