"""The ``bc`` recipe of the learned TapFinger policy: expert labels, cloning with DAgger, fine-tuning and
resuming, type-profile features on instances with many task types."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")
pytest.importorskip("safetensors")

from edgeopt.core import InputError
from edgeopt.tapfinger import FAMILY, generate
from edgeopt.tapfinger.env import TapFingerEnv, type_profile
from edgeopt.tapfinger.instance import Instance
from edgeopt.tapfinger.policy import checkpoint, imitation
from edgeopt.tapfinger.policy.config import ImitationConfig, PolicyConfig, TrainConfig, load_config
from edgeopt.tapfinger.policy.model import build_model, prepare
from edgeopt.tapfinger.policy.registry import run_learned
from edgeopt.tapfinger.policy.trainer import Trainer, training_instance

TINY = {"hidden": 16, "han_layers": 1, "han_heads": 2, "pointer_layers": 1, "pointer_heads": 2, "mlp_hidden": 32}


def tiny_bc(**kw) -> TrainConfig:
    im = ImitationConfig(rounds=2, episodes_per_round=2, epochs=2, batch_size=32, bc_coef=1.0, bc_decay=0.5,
                         bc_batch=8)
    base = {"policy": PolicyConfig(task_features="profile", agent_index=True, **TINY), "settings": [(3, 2.0), (2, 2.0)],
            "jobs_per_cluster": 6, "num_envs": 2, "total_steps": 10_000, "batch_size": 32, "epochs": 2,
            "eval_every": 100, "eval_seeds": [900_000], "seed": 3, "init": "bc", "imitation": im}
    return TrainConfig(**{**base, **kw})


def many_types(inst: Instance, k: int = 5) -> Instance:
    """``inst`` with ``k`` task types, type i a copy of the paper's type i % 2; a task of type t moves to
    t + 2 (id % 2), so each keeps its progress model (type 4 stays unused)."""
    types = [inst.task_types[i % 2].model_copy(update={"name": f"t{i}"}) for i in range(k)]
    tasks = [t.model_copy(update={"task_type": t.task_type + 2 * (t.id % 2)}) for t in inst.tasks]
    return Instance.model_validate({**inst.model_dump(), "task_types": [t.model_dump() for t in types],
                                    "tasks": [t.model_dump() for t in tasks]})


def test_type_profile_gives_the_paper_types_their_model_durations():
    # insensitive: 0.25 a timestep, 4 timesteps; sensitive (the authors' code): 21 timesteps at 1 GPU,
    # 2 at the 16 GPUs of a paper cluster (edgeopt.tapfinger.speedup's docstring)
    prof = type_profile(generate("paper", seed=0))
    assert prof.tolist() == [[4.0, 4.0], [21.0, 2.0]]


def test_expert_labels_are_valid_starts_of_deciding_agents():
    cfg = tiny_bc()
    demos = imitation.Demos()
    stats = imitation.collect(None, cfg.policy, [training_instance(cfg, 0), training_instance(cfg, 1)],
                              "greedy_ordered", demos, reward_scale=cfg.reward_scale)
    assert len(demos) == sum(s["labelled"] for s in stats) > 0
    assert all(s["unfinished"] == 0 for s in stats)
    for row in demos.rows:
        assert row["task_mask"][row["k"]] and row["twins"][row["k"]]
        assert not (row["twins"] & ~row["task_mask"]).any()
        assert row["alloc_mask"][row["cell"]]
        assert np.isfinite(row["ret"]) and row["ret"] <= 0  # rewards are minus the alive tasks


def test_labels_are_the_ordered_experts_actions():
    inst = generate("paper", seed=4, jobs=24)
    env = TapFingerEnv(inst)
    cfg = tiny_bc().policy
    obs, infos = env.reset(seed=0)
    expert = imitation.EXPERTS["greedy_ordered"]()
    expert.reset(env, np.random.default_rng(0))
    checked = 0
    while env.agents:
        step = prepare(env, obs, infos, cfg)
        d = expert.act(env, obs, infos)
        for n, (k, cell) in imitation.labels(env, step, d, cfg).items():
            act = d.actions[env.possible_agents[n]]
            assert (k, divmod(cell, cfg.max_gpu + 1)) == (int(act[0]), (int(act[1]), int(act[2])))
            checked += 1
        obs, _, _, _, infos = env.step(d.actions)
    assert checked > 0
    # under the ordered rule no two agents take the same task: nothing is lost to eq. (11)
    assert not FAMILY.validate(inst, env.schedule()) and not env.unfinished()


def test_cloned_policy_reproduces_its_expert_on_the_training_states():
    """The stated rate: after cloning, the argmax slot is the expert's (or a twin of it), and so is the cell,
    on at least 85 % of the tiny run's 120 training states (measured: 92.5 % for both; before cloning 77.5 % of
    the slots, many states having one valid slot, and no cell)."""
    cfg = tiny_bc(imitation=ImitationConfig(rounds=2, episodes_per_round=3, epochs=40, batch_size=32))
    torch.manual_seed(0)
    net = build_model(cfg.policy)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(0)
    demos = imitation.Demos()
    insts = [training_instance(cfg, e) for e in range(8)]
    imitation.collect(None, cfg.policy, insts, "greedy_ordered", demos, reward_scale=cfg.reward_scale)
    before = imitation.agreement(net, demos)
    imitation.fit(net, opt, demos, epochs=40, batch_size=32, value_coef=0.5, max_grad_norm=0.5, gen=gen)
    after = imitation.agreement(net, demos)
    assert after["rows"] == len(demos) > 100
    assert after["task"] >= 0.85 and after["both"] >= 0.85, (before, after)
    assert after["both"] > before["both"] + 0.5


def test_bc_recipe_clones_fine_tunes_and_resumes_to_the_same_weights(tmp_path):
    cfg = tiny_bc()
    a = Trainer(cfg, tmp_path / "a")
    rows: list[dict] = []
    a.run(max_updates=2, on_update=rows.append)
    assert a.cloned and a.update == 2
    assert [r["bc_coef"] for r in rows] == [1.0, 0.5]  # the cloning term decays per update
    lines = (tmp_path / "a" / "imitation.csv").read_text().splitlines()
    assert len(lines) == 1 + cfg.imitation.rounds + 1  # header, one row per round, the validation row
    b = Trainer(cfg, tmp_path / "b")
    b.run(max_updates=1)
    del b  # "killed" after its checkpoint
    b2 = Trainer(cfg, tmp_path / "b", resume=True)
    assert b2.cloned and b2.update == 1
    b2.run(max_updates=1)
    sa, sb = a.net.state_dict(), b2.net.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert (tmp_path / "b" / "imitation.csv").read_text() == (tmp_path / "a" / "imitation.csv").read_text() or \
        len((tmp_path / "b" / "imitation.csv").read_text().splitlines()) == len(lines)


def test_cloned_checkpoint_loads_and_schedules_validate(tmp_path):
    cfg = tiny_bc()
    tr = Trainer(cfg, tmp_path)
    tr.run(max_updates=0)
    assert tr.cloned and (tmp_path / "best" / "model.safetensors").exists()
    _net, got, _ = checkpoint.load(tmp_path, cfg.policy)
    assert got.task_features == "profile"
    for seed in range(2):
        for inst in (generate("small", seed=seed), generate("paper", seed=seed, jobs=24, noise=0.1)):
            res = run_learned(inst, "online", "tapfinger", str(tmp_path), seed=seed, sample=False)
            assert not FAMILY.check_result(inst, res)
            assert res.status.value == "feasible" and res.extra["invalid_actions"] == 0


def test_profile_policy_runs_on_many_task_types_and_onehot_refuses_with_advice(tmp_path):
    inst = many_types(generate("paper", seed=2, jobs=30))
    assert len(inst.task_types) == 5
    prof = PolicyConfig(task_features="profile", **TINY)
    checkpoint.save(tmp_path / "p", build_model(prof), prof, {"steps": 0})
    res = run_learned(inst, "online", "tapfinger", str(tmp_path / "p"), seed=0, sample=False)
    assert not FAMILY.check_result(inst, res) and res.status.value == "feasible"
    hot = PolicyConfig(**TINY)
    checkpoint.save(tmp_path / "h", build_model(hot), hot, {"steps": 0})
    with pytest.raises(InputError, match="at most 2 task types, got 5.*profile"):
        run_learned(inst, "online", "tapfinger", str(tmp_path / "h"), seed=0, sample=False)


def test_bc_configuration_parses_and_profile_needs_the_tapfinger_architecture():
    cfg = load_config("reduced_bc")
    assert cfg.init == "bc" and cfg.imitation.expert == "greedy_ordered"
    assert cfg.policy.task_features == "profile"
    assert load_config("reduced").init == "scratch"
    assert cfg.policy.agent_index
    for option in ({"task_features": "profile"}, {"agent_index": True}):
        with pytest.raises(ValueError, match="tapfinger architecture"):
            PolicyConfig(architecture="vanilla_marl", **option)


def test_fine_tuning_takes_the_configured_rates_and_validates_on_every_setting_when_asked(tmp_path):
    cfg = tiny_bc()
    Trainer(cfg, tmp_path).run(max_updates=0)  # the cloning checkpoint
    tuned = tiny_bc(lr=5e-4, eval_all_settings=True,
                    imitation=cfg.imitation.model_copy(update={"actor_lr_scale": 0.1}))
    tr = Trainer(tuned, tmp_path, resume=True)
    assert tr.cloned
    rates = sorted(g["lr"] for g in tr.opt.param_groups)  # not the 1e-4 the checkpoint's optimizer was saved with
    assert rates == pytest.approx([5e-5, 5e-4])
    actor = {id(p) for n, p in tr.net.named_parameters() if n.startswith(("actor.", "resource."))}
    slow = next(g for g in tr.opt.param_groups if g["lr"] < 1e-4)
    assert {id(p) for p in slow["params"]} == actor
    from edgeopt.tapfinger.policy.trainer import validation_instances

    assert len(validation_instances(tuned)) == 2 * len(validation_instances(cfg)) == 2
    assert {len(i.clusters) for _, i in validation_instances(tuned)} == {3, 2}
