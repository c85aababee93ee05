"""The learned TapFinger policy: a short MAPPO run, masks, conflicts, resume, checkpoints, registry."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")
pytest.importorskip("safetensors")

from edgeopt.core import InputError
from edgeopt.tapfinger import FAMILY, generate
from edgeopt.tapfinger.env import TapFingerEnv
from edgeopt.tapfinger.policy import checkpoint, conflict
from edgeopt.tapfinger.policy.config import PolicyConfig, TrainConfig, load_config
from edgeopt.tapfinger.policy.model import build_model, decide, prepare
from edgeopt.tapfinger.policy.registry import available, run_learned
from edgeopt.tapfinger.policy.runner import cell_to_alloc
from edgeopt.tapfinger.policy.trainer import Trainer, rollout, training_instance

TINY = {"hidden": 16, "han_layers": 1, "han_heads": 2, "pointer_layers": 1, "pointer_heads": 2, "mlp_hidden": 32}


def tiny(arch: str = "tapfinger", **kw) -> TrainConfig:
    base = {"policy": PolicyConfig(architecture=arch, **(TINY if arch == "tapfinger" else {"mlp_hidden": 32})),
            "settings": [(3, 2.0), (2, 2.0)], "jobs_per_cluster": 6, "num_envs": 1, "total_steps": 300,
            "batch_size": 32, "epochs": 2, "eval_every": 3, "eval_seeds": [900_000], "seed": 7}
    return TrainConfig(**{**base, **kw})


@pytest.mark.parametrize("arch", ["tapfinger", "vanilla_marl"])
def test_short_training_run_has_finite_losses_and_no_invalid_action(arch, tmp_path):
    tr = Trainer(tiny(arch), tmp_path)
    rows = []
    tr.run(on_update=rows.append)
    assert tr.steps >= 300
    for r in rows:
        for key in ("loss", "policy_loss", "value_loss", "entropy"):
            assert np.isfinite(r[key]), (key, r)
        assert r["invalid_actions"] == 0
    assert (tmp_path / "metrics.csv").read_text().count("\n") == len(rows) + 1
    assert any(r["eval_mean_completion"] != "" for r in rows)


def test_sampled_allocations_always_lie_in_the_eq12_mask_and_losers_drop_allocation_term():
    cfg = tiny()
    net = build_model(cfg.policy)
    gen = torch.Generator().manual_seed(0)
    steps, samples = [], []
    stats = rollout(net, cfg, training_instance(cfg, 0), gen, steps, samples)
    assert samples and stats["invalid_actions"] == 0 and stats["unfinished"] == 0
    for s in samples:
        assert s["task_mask"][s["k"]], "a slot without a valid allocation was selected"
        assert bool(s["alloc_mask"][s["cell"]]), "an allocation outside eq. (12)'s mask was sampled"
        assert np.isfinite(s["adv"]) and np.isfinite(s["ret"])
    # a lost conflict keeps m = 0 (eq. 14); this instance (every task visible to several clusters) has some
    assert stats["conflicts_lost"] == sum(s["m"] == 0.0 for s in samples) > 0


def _shared_task_env() -> TapFingerEnv:
    inst = generate("paper", seed=3, clusters=3, jobs=6)
    inst = inst.model_copy(update={"tasks": [t.model_copy(update={"reachable_clusters": [0, 1, 2]})
                                             for t in inst.tasks]})
    return TapFingerEnv(inst)


def test_conflict_rule_gives_each_task_to_at_most_one_agent_by_eq11():
    cfg = tiny().policy
    net = build_model(cfg)
    env = _shared_task_env()
    obs, infos = env.reset(seed=0)
    for t in range(6):
        step = prepare(env, obs, infos, cfg)
        out = decide(net, step, sample=True, generator=torch.Generator().manual_seed(t))
        picks = {}
        for i, n in enumerate(out.get("agents", [])):
            j = infos[env.possible_agents[n]]["pending_tasks"][int(out["k"][i])]
            picks.setdefault(j, []).append((n, float(out["probs"][i][int(out["k"][i])])))
        expected = {}
        for j, cands in picks.items():
            fits = [conflict.fits(env.free[n], env._mins[j]) for n, _ in cands]
            expected[j] = cands[conflict.winner([p for _, p in cands], fits)][0]
        actions = {a: np.array([env.P, 0, 0]) for a in env.agents}
        probs = {}
        for i, n in enumerate(out.get("agents", [])):
            a = env.possible_agents[n]
            c, g = cell_to_alloc(int(out["cell"][i]), cfg)
            actions[a] = np.array([int(out["k"][i]), c, g])
            probs[a] = out["probs"][i]
        before = set(env.runs)
        obs, _, _, _, infos = env.step(actions, probs)
        started = {j: r.cluster for j, r in env.runs.items() if j not in before}
        started.update({j: p.cluster for j, p in env.done.items() if p.start == t and j not in before})
        assert started == expected  # one winner per task, the eq. (11) argmax
        if not env.agents:
            break
    assert not FAMILY.validate(env.instance, env.schedule())


def test_posterior_is_bayes_rule():
    post = conflict.posterior([0.5, 0.25], [2, 8])
    assert np.allclose(post, [1 / 3, 2 / 3])
    assert conflict.winner([0.5, 0.25], [2, 8]) == 1


def test_resumed_run_equals_uninterrupted_run(tmp_path):
    cfg = tiny(total_steps=10_000, eval_every=100, num_envs=2)  # two environments in lockstep
    a = Trainer(cfg, tmp_path / "a")
    a.run(max_updates=3)
    b = Trainer(cfg, tmp_path / "b")
    b.run(max_updates=2)
    del b  # "killed" after its checkpoint
    b2 = Trainer(cfg, tmp_path / "b", resume=True)
    assert b2.update == 2
    b2.run(max_updates=1)
    sa, sb = a.net.state_dict(), b2.net.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert (tmp_path / "a" / "metrics.csv").read_text() .count("\n") == 4
    assert (tmp_path / "b" / "metrics.csv").read_text().count("\n") == 4


def test_checkpoint_refuses_a_mismatched_configuration(tmp_path):
    cfg = tiny().policy
    checkpoint.save(tmp_path, build_model(cfg), cfg, {"steps": 0})
    _net, got, card = checkpoint.load(tmp_path, cfg)
    assert got == cfg and card["steps"] == 0 and "hardware" in card
    with pytest.raises(InputError, match="configuration mismatch.*hidden"):
        checkpoint.load(tmp_path, cfg.model_copy(update={"hidden": 32}))


def test_policy_refuses_an_instance_beyond_its_grid(tmp_path):
    cfg = tiny().policy
    checkpoint.save(tmp_path, build_model(cfg), cfg, {"steps": 0})
    inst = generate("hetero_clusters", seed=0, jobs=12)  # clusters up to 32 x 32 > the 16 x 16 grid
    with pytest.raises(InputError, match="grid"):
        run_learned(inst, "online", "tapfinger", str(tmp_path), seed=0, sample=False)


@pytest.mark.parametrize("arch", ["tapfinger", "vanilla_marl"])
def test_policy_schedules_pass_the_validator(arch, tmp_path):
    cfg = tiny(arch)
    checkpoint.save(tmp_path, build_model(cfg.policy), cfg.policy, {"steps": 0})
    for seed in range(3):
        for inst in (generate("small", seed=seed), generate("paper", seed=seed, jobs=24, noise=0.1)):
            for sample in (False, True):
                res = run_learned(inst, arch, arch, str(tmp_path), seed=seed, sample=sample)
                assert not FAMILY.check_result(inst, res), res.algorithm
                assert res.extra["invalid_actions"] == 0
                assert res.status.value == "feasible"


@pytest.mark.skipif(not available(), reason="no shipped checkpoint")
def test_shipped_policies_are_registered_and_validated():
    from edgeopt import api

    algos = api.algorithms("tapfinger")
    assert algos["online"].kind == "online" and "vanilla_marl" in algos
    for name in ("online", "vanilla_marl"):
        inst = generate("paper", seed=1, jobs=30)
        res = api.run(name, inst, seed=0)
        assert not FAMILY.check_result(inst, res)


def test_shipped_configurations_parse():
    assert load_config("reduced").policy.hidden == 64
    full = load_config("full")
    assert (full.policy.han_layers, full.policy.han_heads, full.policy.hidden) == (6, 4, 256)
    assert (full.policy.pointer_layers, full.policy.pointer_heads, full.num_envs) == (2, 4, 32)
    mid = load_config("mid")  # the CPU run's: the paper's architecture variants at a smaller width
    assert (mid.policy.actor_per_agent, mid.policy.critic, mid.jobs_per_cluster) == (True, "central", 64)
    assert 0 < mid.policy.hidden < full.policy.hidden
    with pytest.raises(InputError, match="config"):
        load_config("/nonexistent.toml")


def test_cli_trains_and_resumes(tmp_path):
    from edgeopt.cli import main

    cfg = tmp_path / "c.json"
    cfg.write_text(tiny(total_steps=60).model_dump_json())
    out = tmp_path / "run"
    for extra in ([], ["--resume"]):
        with pytest.raises(SystemExit) as exc:
            main(["train", "tapfinger", "--config", str(cfg), "--out", str(out), *extra])
        assert exc.value.code == 0
    assert (out / "model.safetensors").exists() and (out / "card.json").exists()
    with pytest.raises(SystemExit) as exc:  # a finished run directory is not overwritten silently
        main(["train", "tapfinger", "--config", str(cfg), "--out", str(out)])
    assert exc.value.code == 2


@pytest.mark.parametrize("where", ["metrics.csv", "card.json", "best/model.safetensors", "."])
def test_train_refuses_a_run_directory_holding_a_device_or_fifo(where, tmp_path, capsys):
    """Training would unlink or rename over such a node (metrics.csv is removed at a fresh start); it is
    refused before the network is built, and the node is kept."""
    import os
    import stat

    from edgeopt.cli import main

    cfg = tmp_path / "c.json"
    cfg.write_text(tiny(total_steps=60).model_dump_json())
    out = tmp_path / "run"
    node = out / where if where != "." else out
    node.parent.mkdir(parents=True, exist_ok=True)
    if where == "card.json":
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    else:
        os.mkfifo(node)
    mode = os.lstat(node).st_mode
    with pytest.raises(SystemExit) as exc:
        main(["train", "tapfinger", "--config", str(cfg), "--out", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: out:") and len(err.strip().splitlines()) == 1, err
    assert os.lstat(node).st_mode == mode


def test_checkpoint_save_refuses_to_replace_a_node(tmp_path):
    import os

    os.mkfifo(tmp_path / "card.json")
    net = build_model(tiny().policy)
    with pytest.raises(InputError, match="FIFO"):
        checkpoint.save(tmp_path, net, tiny().policy, {"name": "x"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card.json", "model.safetensors"]
