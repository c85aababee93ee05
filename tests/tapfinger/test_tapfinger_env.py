"""The PettingZoo environment: API conformance, determinism, masks, conflicts, rewards."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from edgeopt.tapfinger import FAMILY, generate
from edgeopt.tapfinger.env import TapFingerEnv, parallel_env


@pytest.mark.parametrize("preset", ["small", "paper"])
def test_parallel_api_test_passes(preset):
    env = parallel_env(preset=preset, seed=2, jobs=24 if preset == "paper" else None)
    parallel_api_test(env, num_cycles=300)


def _rollout(seed: int) -> list:
    env = parallel_env(preset="paper", seed=5, jobs=30)
    env.reset(seed=seed)
    trace = []
    while env.agents:
        acts = {a: env.action_space(a).sample() for a in env.agents}
        obs, rew, _term, _trunc, _infos = env.step(acts)
        trace.append((sorted(rew.items()), {a: o["free"].tolist() for a, o in obs.items()}))
    return trace + [env.schedule().model_dump()]


def test_seeded_rollouts_are_identical():
    assert _rollout(3) == _rollout(3)
    assert _rollout(3) != _rollout(4)


def test_observations_fit_their_spaces_and_masks_follow_eq12():
    env = parallel_env(preset="paper", seed=1, jobs=40)
    obs, infos = env.reset(seed=0)
    for _ in range(5):
        for a, o in obs.items():
            assert env.observation_space(a).contains(o)
            n = env._index[a]
            for k, j in enumerate(infos[a]["pending_tasks"]):
                cells = np.argwhere(o["alloc_mask"][k])
                b = env._mins[j]
                assert (cells >= b[:2]).all() and (cells <= env.free[n][:2]).all()
                assert len(cells) == max(0, env.free[n][0] - b[0] + 1) * max(0, env.free[n][1] - b[1] + 1)
            assert not o["alloc_mask"][len(infos[a]["pending_tasks"]):].any()
        acts = {}
        for a, o in obs.items():
            ks = np.flatnonzero(o["task_mask"][:-1])
            if len(ks):
                c, g = np.argwhere(o["alloc_mask"][ks[0]])[-1]
                acts[a] = np.array([ks[0], c, g])
        obs, _, _, _, infos = env.step(acts)
        assert not any(i["invalid_action"] for i in infos.values())


def test_invalid_action_is_ignored_and_flagged():
    env = parallel_env(preset="small", seed=0)
    _obs, infos = env.reset()
    a = env.agents[0]
    _, _, _, _, infos = env.step({a: np.array([0, 0, 0])})  # below the minimum
    assert infos[a]["invalid_action"]
    assert not env.runs


def _two_cluster_conflict():
    inst = FAMILY.parse_instance({
        "family": "tapfinger", "horizon": 20, "clusters": [{"capacity": [4, 4]}, {"capacity": [8, 8]}],
        "task_types": [{"name": "i", "progress": {"kind": "insensitive"}}],
        "tasks": [{"id": 0, "arrival": 0, "task_type": 0, "min_resources": [2, 1], "reachable_clusters": [0, 1]},
                  {"id": 1, "arrival": 0, "task_type": 0, "min_resources": [2, 1], "reachable_clusters": [0]}],
    })
    return TapFingerEnv(inst)


def test_bayes_rule_gives_conflicts_to_the_roomier_cluster_by_default():
    env = _two_cluster_conflict()
    env.reset()
    # uniform fallback: Pr(0|n) = 1/2 at cluster 0 (two pending), 1 at cluster 1; Pr(n) ~ 2 vs 4 copies
    _, _, _, _, infos = env.step({"cluster_0": np.array([0, 2, 1]), "cluster_1": np.array([0, 2, 1])})
    assert env.runs[0].cluster == 1
    assert infos["cluster_0"]["conflict_lost"] and infos["cluster_0"]["conflict_winner"] == "cluster_1"


def test_bayes_rule_uses_given_selection_probabilities():
    env = _two_cluster_conflict()
    env.reset()
    probs = {"cluster_0": np.array([0.99] + [0.0] * 9), "cluster_1": np.array([0.1] + [0.0] * 9)}
    env.step({"cluster_0": np.array([0, 2, 1]), "cluster_1": np.array([0, 2, 1])}, selection_probs=probs)
    assert env.runs[0].cluster == 0  # 0.99 * 2 copies > 0.1 * 4 copies


def test_rewards_sum_to_the_objective_without_shared_queues():
    inst = generate("paper", seed=4, jobs=30, reachability="uniform_k", clusters=1)
    env = TapFingerEnv(inst)
    obs, _infos = env.reset()
    total = 0.0
    while env.agents:
        a = env.agents[0]
        ks = np.flatnonzero(obs[a]["task_mask"][:-1])
        act = {a: np.array([ks[0], 2, 1])} if len(ks) else {}
        obs, rew, *_ = env.step(act)
        total += sum(rew.values())
    assert -total == FAMILY.objective(inst, env.schedule())


def test_idle_flag_and_entities():
    env = parallel_env(preset="paper", seed=1, jobs=40, entities_in_infos=True)
    _obs, infos = env.reset()
    ent = env.entities()
    assert ent["pending_edges"].shape[0] == 2
    assert set(ent["pending_task"]) == {j for i in infos.values() for j in i["pending_tasks"]}
    for i in infos.values():
        assert i["idle"] == (not i["pending_tasks"])
    _, _, _, _, infos = env.step({})
    assert "entities" in infos[env.agents[0]]


def test_reallocations_need_a_preemptive_env_and_pay_the_overhead():
    from edgeopt.core import InputError

    env = _two_cluster_conflict()
    env.reset()
    env.step({"cluster_0": np.array([1, 2, 1])})
    with pytest.raises(InputError, match="preemptive"):
        env.step({}, reallocations={"cluster_0": {1: (3, 2)}})
    env = TapFingerEnv(env.instance, preemptive=True)
    env.reset()
    env.step({"cluster_0": np.array([1, 2, 1])})  # task 1 starts at t=0, progress 0.25
    env.step({}, reallocations={"cluster_0": {1: None}})  # paused at t=1
    env.step({}, reallocations={"cluster_0": {1: (3, 2)}})  # resumed at t=2 with a new allocation: half gain
    while env.agents:
        env.step({})
    pl = env.done[1]
    assert [(s.start, s.end) for s in pl.segments] == [(0, 1), (2, 6)]  # 0.25 + 0.125 + 3 * 0.25 >= 1 at t=6
    assert not FAMILY.validate(env.instance, env.schedule())
