"""The dense HAN backend against PyG's HANConv, and the batched, thread-fixed inference path."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")
pytest.importorskip("safetensors")

from edgeopt.tapfinger import FAMILY, generate
from edgeopt.tapfinger.env import TapFingerEnv
from edgeopt.tapfinger.loop import none_action
from edgeopt.tapfinger.policy.config import PolicyConfig
from edgeopt.tapfinger.policy.dense import stack
from edgeopt.tapfinger.policy.model import build_model, decide, decide_many, first_argmax, prepare
from edgeopt.tapfinger.policy.registry import SHIPPED, available, run_learned
from edgeopt.tapfinger.policy.runner import torch_threads


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):  # the machine is shared: more threads only wait on each other
        yield


CFG = PolicyConfig(hidden=16, han_layers=2, han_heads=2, pointer_layers=1, pointer_heads=2, mlp_hidden=32)


PAPER = CFG.model_copy(update={"actor_per_agent": True, "critic": "central"})
#: the reduced_bc recipe's inputs: type profiles and the agent's index as a sixth cluster feature
BC = CFG.model_copy(update={"task_features": "profile", "agent_index": True})


def _pair(seed: int, cfg: PolicyConfig = CFG):
    torch.manual_seed(seed)
    pyg = build_model(cfg, "pyg")
    dense = build_model(cfg, "dense")
    dense.load_state_dict(pyg.state_dict())  # the same weights: the parameter names and shapes agree
    return pyg.eval(), dense.eval()


def _steps(seed: int, clusters: int, n: int, cfg: PolicyConfig = CFG) -> list:
    """``n`` timesteps of a random-action episode (a mix of empty, small and crowded graphs)."""
    env = TapFingerEnv(generate("paper", seed=seed, clusters=clusters, jobs=12 * clusters, arrival_rate=3.0))
    obs, infos = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    while env.agents and len(out) < n:
        step = prepare(env, obs, infos, cfg)
        out.append(step)
        acts = {a: none_action(env) for a in env.agents}
        for a in env.agents:
            m = obs[a]["alloc_mask"]
            cells = np.argwhere(m)
            if len(cells) and rng.random() < 0.7:
                k, c, g = cells[rng.integers(len(cells))]
                acts[a] = np.array([k, c, g])
        obs, _, _, _, infos = env.step(acts)
    return out


@pytest.mark.parametrize("seed,clusters,cfg", [(0, 3, CFG), (1, 6, CFG), (2, 2, CFG), (3, 6, PAPER), (4, 6, BC)])
def test_dense_han_equals_pyg_han_on_the_same_weights(seed, clusters, cfg):
    pyg, dense = _pair(seed, cfg)
    for step in _steps(seed, clusters, 25, cfg):
        refs = [(0, n) for n in range(len(step.graph.cluster))]
        with torch.no_grad():
            a, b = pyg.encode([step], refs), dense.encode([step], refs)
        for key in ("han", "enc", "cluster"):
            assert torch.allclose(a[key], b[key], atol=1e-5), key
        assert torch.equal(a["real"], b["real"])
        tm = torch.as_tensor(step.task_mask)
        with torch.no_grad():
            assert torch.allclose(pyg.task_logits(a, tm), dense.task_logits(b, tm), atol=1e-5)
            assert torch.allclose(pyg.value(a), dense.value(b), atol=1e-5)


def test_dense_gradients_equal_pyg_gradients_on_one_graph():
    pyg, dense = _pair(3)
    step = _steps(3, 3, 12)[-1]
    refs = [(0, n) for n in range(3)]
    for net in (pyg, dense):
        net.zero_grad()
        ctx = net.encode([step], refs)
        (net.value(ctx).sum() + net.task_logits(ctx, torch.as_tensor(step.task_mask)).clamp(min=-10).sum()).backward()
    gp = dict(pyg.named_parameters())
    checked = 0
    for name, p in dense.named_parameters():
        assert (p.grad is None) == (gp[name].grad is None), name
        if p.grad is not None:
            assert torch.allclose(p.grad, gp[name].grad, atol=1e-4), name
            checked += name.startswith("encoder.layers")
    assert checked > 20  # every HAN layer's parameters got a gradient


def test_a_padded_batch_encodes_each_graph_as_alone():
    _, dense = _pair(4)
    steps = _steps(4, 6, 30)[::3]
    refs = [(i, n) for i, s in enumerate(steps) for n in range(len(s.graph.cluster))]
    with torch.no_grad():
        together = dense.encode(steps, refs)["enc"]
        alone = torch.cat([dense.encode([s], [(0, n) for n in range(len(s.graph.cluster))])["enc"] for s in steps])
    assert torch.allclose(together, alone, atol=1e-5)
    g = stack([s.graph for s in steps])
    assert g.adj[("running", "runs_on", "cluster")].shape[0] == len(steps)


def test_decide_many_equals_decide_per_step():
    _, dense = _pair(5)
    steps = [s for s in _steps(5, 3, 20) if s.agents][:6]
    many = decide_many(dense, steps, sample=False)
    for step, m in zip(steps, many, strict=True):
        one = decide(dense, step, sample=False)
        assert torch.equal(one["k"], m["k"]) and torch.equal(one["cell"], m["cell"])
        assert np.allclose(one["probs"], m["probs"], atol=1e-6)


def test_first_argmax_breaks_float_ties_towards_the_first_entry():
    x = torch.tensor([[0.5, 0.5 + 1e-7, 0.1], [0.2, 0.9, 0.9 - 1e-6], [3.0, -1.0, 2.0]])
    assert first_argmax(x).tolist() == [0, 1, 0]


def test_torch_threads_is_restored():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


@pytest.mark.skipif(not available(), reason="no shipped checkpoint")
@pytest.mark.parametrize("seed", [0, 4])
def test_shipped_policy_schedules_equal_on_both_backends(seed):
    inst = generate("paper", seed=seed, jobs=96)
    ref = run_learned(inst, "online", "tapfinger", str(SHIPPED["online"]), seed=seed, sample=False, backend="pyg")
    got = run_learned(inst, "online", "tapfinger", str(SHIPPED["online"]), seed=seed, sample=False)
    assert got.schedule == ref.schedule and got.objective == ref.objective
    assert not FAMILY.check_result(inst, ref) and not FAMILY.check_result(inst, got)


def test_conflict_scores_within_float_noise_go_to_the_lowest_agent():
    env = TapFingerEnv(generate("paper", seed=3, clusters=3, jobs=6).model_copy(deep=True))
    inst = env.instance.model_copy(update={"tasks": [t.model_copy(update={"reachable_clusters": [0, 1, 2]})
                                                     for t in env.instance.tasks]})
    env = TapFingerEnv(inst)
    obs, infos = env.reset(seed=0)
    while not all(infos[a]["pending_tasks"] for a in env.agents) or any(infos[a]["idle"] for a in env.agents):
        obs, _, _, _, infos = env.step({a: none_action(env) for a in env.agents})
    m = obs["cluster_0"]["alloc_mask"][0]
    c, g = np.argwhere(m)[0]
    acts = {a: np.array([0, c, g]) for a in env.agents}
    p = np.zeros(env.P)
    p[0] = 0.34133643
    q = p.copy()
    q[0] = 0.34133646  # agent 2 is higher only by float noise
    _, _, _, _, infos = env.step(acts, {"cluster_0": p, "cluster_1": p * 0.5, "cluster_2": q})
    assert infos["cluster_2"]["conflict_winner"] == "cluster_0"


def _tiny_train(**kw):
    from edgeopt.tapfinger.policy.config import TrainConfig

    base = {"policy": CFG, "settings": [(3, 2.0), (2, 2.0)], "jobs_per_cluster": 5, "num_envs": 3,
            "total_steps": 10_000, "batch_size": 16, "epochs": 2, "eval_every": 100, "seed": 11}
    return TrainConfig(**{**base, **kw})


def test_batched_training_with_equal_seeds_gives_equal_weights(tmp_path):
    from edgeopt.tapfinger.policy.trainer import Trainer

    runs = []
    for name in ("a", "b"):
        tr = Trainer(_tiny_train(), tmp_path / name)
        rows = []
        tr.run(max_updates=2, on_update=rows.append)
        runs.append((tr.net.state_dict(), [r["loss"] for r in rows], tr.steps))
    (sa, la, na), (sb, lb, nb) = runs
    assert na == nb > 0 and la == lb and all(np.isfinite(la))
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    other = Trainer(_tiny_train(seed=12), tmp_path / "c")
    other.run(max_updates=2)
    assert any(not torch.equal(sa[k], other.net.state_dict()[k]) for k in sa)


def test_rollout_and_update_run_at_their_own_thread_counts(tmp_path, monkeypatch):
    from edgeopt.tapfinger.policy import trainer

    seen = {}
    real_rollouts, real_loss = trainer.rollouts, trainer.ppo_loss

    def rollouts(*args, **kw):
        seen["rollout"] = torch.get_num_threads()
        return real_rollouts(*args, **kw)

    def ppo_loss(*args, **kw):
        seen["update"] = torch.get_num_threads()
        return real_loss(*args, **kw)

    monkeypatch.setattr(trainer, "rollouts", rollouts)
    monkeypatch.setattr(trainer, "ppo_loss", ppo_loss)
    before = torch.get_num_threads()
    trainer.Trainer(_tiny_train(threads=2, rollout_threads=1), tmp_path / "split").run(max_updates=1)
    assert seen == {"rollout": 1, "update": 2}
    trainer.Trainer(_tiny_train(threads=2), tmp_path / "same").run(max_updates=1)  # unset: the update's count
    assert seen == {"rollout": 2, "update": 2} and torch.get_num_threads() == before


def test_lockstep_rollouts_keep_every_episode_valid():
    from edgeopt.tapfinger.policy.trainer import rollouts, training_instance

    cfg = _tiny_train()
    net = build_model(cfg.policy)
    steps, samples = [], []
    stats = rollouts(net, cfg, [training_instance(cfg, e) for e in range(3)], torch.Generator().manual_seed(0),
                     steps, samples)
    assert len(stats) == 3 and all(s["unfinished"] == 0 and s["invalid_actions"] == 0 for s in stats)
    assert sum(s["conflicts_lost"] for s in stats) == sum(s["m"] == 0.0 for s in samples)
    assert {s["step"] for s in samples} <= set(range(len(steps)))


def test_paper_architecture_trains_and_its_parts_are_separate(tmp_path):
    from edgeopt.tapfinger.policy.trainer import Trainer

    tr = Trainer(_tiny_train(policy=PAPER), tmp_path)
    rows = []
    tr.run(max_updates=2, on_update=rows.append)
    assert all(np.isfinite(r["loss"]) and r["invalid_actions"] == 0 for r in rows)
    names = dict(tr.net.named_parameters())
    assert "actors.5.v.weight" in names and "actor.v.weight" not in names  # one actor per agent (max 6)
    assert names["critic.mlp.0.weight"].shape[1] == (6 * CFG.pending_size + 1) * CFG.hidden  # all pending sets
    # agent 0 and agent 1 decide with different weights after training on both
    assert not torch.equal(names["actors.0.v.weight"], names["actors.1.v.weight"])


def test_paper_durations_option_gives_2_to_17_timesteps():
    from edgeopt.tapfinger.policy.trainer import training_instance
    from edgeopt.tapfinger.speedup import run_duration

    for durations, slow in (("code", 21), ("paper", 17)):
        inst = training_instance(_tiny_train(sensitive_durations=durations), 0)
        model = next(t.progress for t in inst.task_types if t.progress.kind == "sensitive")
        assert [run_duration(model, 1, g, inst.timestep_seconds) for g in (1, 16)] == [slow, 2]


def test_worker_processes_give_the_same_rollouts_and_training_as_one_process(tmp_path):
    from edgeopt.tapfinger.policy.trainer import Trainer, rollouts, training_instance
    from edgeopt.tapfinger.policy.vecenv import EnvPool

    cfg = _tiny_train(num_envs=3)
    net = build_model(cfg.policy)
    instances = [training_instance(cfg, e) for e in range(3)]
    pool = EnvPool(2, cfg.policy)
    try:
        got = []
        for p in (None, pool, pool):  # the pool twice: a second rollout reuses the same workers
            steps, samples = [], []
            stats = rollouts(net, cfg, instances, torch.Generator().manual_seed(5), steps, samples, p)
            got.append((stats, [(s["step"], s["agent"], s["k"], s["cell"], s["m"], s["logp"], s["reward"])
                                for s in samples], len(steps)))
    finally:
        pool.close()
    assert got[0] == got[1] == got[2] and got[0][2] > 0
    weights = []
    for name, workers in (("local", 0), ("pool", 2)):
        with Trainer(_tiny_train(workers=workers), tmp_path / name) as tr:
            tr.run(max_updates=2)
            weights.append(tr.net.state_dict())
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_a_worker_error_reaches_the_main_process_and_the_pool_stays_usable():
    from edgeopt.core import InputError
    from edgeopt.tapfinger.policy.trainer import training_instance
    from edgeopt.tapfinger.policy.vecenv import EnvPool

    cfg = _tiny_train()
    pool = EnvPool(2, cfg.policy)
    try:
        too_big = generate("hetero_clusters", seed=0, jobs=12)  # clusters beyond the policy's 16 x 16 grid
        with pytest.raises(InputError, match="grid"):
            pool.start([training_instance(cfg, 0), too_big])
        assert all(s is not None for s in pool.start([training_instance(cfg, e) for e in range(3)]).reset())
        assert pool.start([]).reset() == [] and pool.unfinished() == []  # no instances: nothing to step
    finally:
        pool.close()
