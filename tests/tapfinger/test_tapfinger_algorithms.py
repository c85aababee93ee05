"""Baselines through the shared loop, exact models against each other, the bound, certified instances."""

from __future__ import annotations

import functools

import pytest

from edgeopt import api
from edgeopt.core import Status, registered
from edgeopt.core.limits import work_limit
from edgeopt.tapfinger import FAMILY, generate
from formulations.tapfinger import METHODS, SIZES, start_rate_bound
from tests.reliability_helpers import PROOF_WORK, certified_names, load_certified, prove

ALGOS = ["random", "minimum", "optimus", "optimus_np", "tiresias", "tiresias_np", "greedy"]
ORDERED = [f"{a}_ordered" for a in ALGOS]
NAMES = certified_names("tapfinger")


def test_registry_lists_every_baseline_with_honest_flags():
    algos = registered("tapfinger") or api.algorithms("tapfinger")
    assert set(ALGOS) <= set(algos) and set(ORDERED) <= set(algos)
    import edgeopt.tapfinger as family

    # the learned policy is registered exactly when the rl extra and its checkpoints are present
    assert ("online" in algos) == (family.ONLINE_PENDING is None)
    assert algos["optimus"].relaxed and algos["tiresias"].relaxed
    assert not any(algos[a].relaxed for a in ("optimus_np", "tiresias_np", "greedy", "random", "minimum"))
    for a in ALGOS:
        assert (algos[a].relaxed, algos[a].randomized) == (algos[f"{a}_ordered"].relaxed,
                                                           algos[f"{a}_ordered"].randomized)


@functools.cache
def _paper_with_noise():
    """The noisy paper instance and its start-rate bound, computed once for the 14 baselines (the bound takes
    about 2 s; algorithms do not mutate their instance, `tests/test_conformance.py` checks)."""
    inst = generate("paper", seed=0, noise=0.1)
    return inst, start_rate_bound(inst)


@pytest.mark.parametrize("name", ALGOS + ORDERED)
def test_baselines_validate_on_the_paper_preset_with_noise(name):
    inst, bound = _paper_with_noise()
    res = api.run(name, inst, seed=1)
    assert res.status == Status.FEASIBLE
    assert not FAMILY.check_result(inst, res)
    assert res.objective >= bound


@pytest.mark.parametrize("name", ALGOS)
def test_baselines_lose_conflicts_as_agents_do_and_ordered_variants_never(name):
    # 6 clusters at rate 4: tasks are visible to several clusters, so agents pick the same task
    inst = generate("paper", seed=3, clusters=6, arrival_rate=4.0, jobs=120, noise=0.1)
    agents = api.run(name, inst, seed=2)
    ordered = api.run(f"{name}_ordered", inst, seed=2)
    for res in (agents, ordered):
        assert res.status == Status.FEASIBLE and not FAMILY.check_result(inst, res)
    assert ordered.extra["conflicts_lost"] == 0
    assert agents.extra["conflicts_lost"] > 0, name


@pytest.mark.parametrize("ordered", [False, True])
def test_agents_rule_means_each_agent_chooses_as_if_alone(ordered):
    # under the agents' rule an agent's action does not depend on the other agents' observations;
    # under the ordered rule it does (an earlier agent's claim removes a task)
    from edgeopt.tapfinger.baselines import GreedyPolicy, TiresiasPolicy
    from edgeopt.tapfinger.env import TapFingerEnv

    inst = generate("paper", seed=5, clusters=6, arrival_rate=4.0, jobs=90)
    differs = 0
    for make in (lambda: GreedyPolicy(1, 0.1, ordered=ordered), lambda: TiresiasPolicy(False, ordered=ordered)):
        env = TapFingerEnv(inst)
        obs, infos = env.reset(seed=0)
        pol, alone = make(), make()
        pol.reset(env, None)
        alone.reset(env, None)
        while env.agents:
            d = pol.act(env, obs, infos)
            for a in obs:
                solo = alone.act(env, {a: obs[a]}, infos).actions[a]
                differs += not (d.actions[a] == solo).all()
            obs, _, _, _, infos = env.step(d.actions)
    assert (differs > 0) == ordered


def test_preemptive_baselines_pay_switch_overheads():
    inst = generate("paper", seed=0)
    res = api.run("tiresias", inst)
    segs = [p for p in res.schedule["placements"] if p["segments"]]
    assert segs, "tiresias never preempted on the paper preset"


@pytest.mark.parametrize("seed", range(30))
def test_exact_models_agree_and_no_baseline_beats_them(seed):
    # horizon 40 (not the preset's 64) keeps the time-indexed MILP at about a second
    inst = generate("small", seed=seed, horizon=40)
    with work_limit(PROOF_WORK):  # stopped by deterministic work, never by the clock: the same at any load
        milp = METHODS["milp"](inst, time_limit=3600)
        cp = METHODS["cpsat"](inst, time_limit=3600)
    assert milp.status == cp.status == Status.OPTIMAL
    assert milp.objective == pytest.approx(cp.objective)
    assert not FAMILY.check_result(inst, milp) and not FAMILY.check_result(inst, cp)
    assert start_rate_bound(inst) <= cp.objective
    if seed < 5:
        for name, spec in registered("tapfinger").items():
            res = api.run(name, inst, seed=seed)
            if res.status == Status.FEASIBLE and not spec.relaxed:
                assert res.objective >= cp.objective - 1e-9, name


def test_noisy_small_instance_is_solved_exactly_too():
    inst = generate("small", seed=1, noise=0.1)
    cp = prove(METHODS["cpsat"], inst)  # by work, not by the clock
    assert cp.status == Status.OPTIMAL and not FAMILY.check_result(inst, cp)


def test_time_limit_covers_building_and_sizes_are_estimated():
    inst = generate("paper", seed=0)
    res = METHODS["milp"](inst, time_limit=0.05)
    assert res.status == Status.TIME_LIMIT and res.schedule is None
    assert SIZES["milp"](inst).nonzeros > SIZES["milp"](generate("small", seed=0)).nonzeros


def test_at_least_five_certified_instances():
    assert len(NAMES) >= 5


@pytest.mark.parametrize("name", NAMES)
def test_golden_optimum_is_reproduced(name):
    inst, rec = load_certified("tapfinger", name)
    assert set(rec["certified_by"]) == {"milp", "cpsat"}
    res = prove(METHODS["cpsat"], inst)
    assert res.status == Status.OPTIMAL
    assert res.instance_sha256 == rec["instance_sha256"]
    assert res.objective == pytest.approx(rec["objective"])


def test_plot_and_frame_adapters_follow_the_schedule():
    inst = generate("paper", seed=2, jobs=40)
    res = api.run("tiresias", inst)
    sched = FAMILY.parse_schedule(res.schedule)
    bars = FAMILY.gantt(inst, sched)
    assert len(bars) == sum(len(p.runs()) for p in sched.placements)
    for series in FAMILY.usage(inst, sched):
        assert max(series.used) <= series.capacity
    rows = FAMILY.job_rows(inst, sched)
    assert sum(r.objective for r in rows if r.objective is not None) == res.objective
