"""MAPPO training of the TapFinger policy (and of the vanilla_marl ablation) on the environment.

One update collects ``num_envs`` episodes, one environment each, stepped in lockstep: at every
timestep the deciding agents of all environments go through the network in one forward pass
(`model.decide_many`). The training instances are ``generate("paper", seed=train_seed_base + episode, clusters=N,
arrival_rate=rate, jobs=jobs_per_cluster * N, noise=noise)`` with (N, rate) cycling through
``settings``; actions are sampled; conflicts go through the environment's eq. (11) with the
pointer probabilities. Then ``epochs`` passes of minibatch MAPPO (`mappo.ppo_loss`, Adam, gradient
clipping, normalised advantages) over minibatches of ``batch_size`` timesteps with all their
agents' decisions; with the dense HAN backend the update's graphs are padded and
stacked once (`dense.stack`) and each minibatch encodes its graphs in one batched pass
(`dense.select`). Torch runs with ``threads`` CPU threads (restored after each update), on
``device`` (``cuda`` moves the network and the minibatches; sampling stays on the seeded CPU
generator). After every ``checkpoint_every`` updates the run writes its
checkpoint (weights, optimizer, RNG states, counters) atomically, and a row per update goes to
``metrics.csv``; ``resume`` continues a killed run from its last checkpoint and gives the same
weights as an uninterrupted run (same seed, same thread count). Whenever the validation evaluation
(argmax policy on ``eval_seeds``, first setting) improves, the weights also go to ``out/best``.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

import numpy as np
import torch

from edgeopt.core import InputError
from edgeopt.core.jsonio import refuse_non_regular
from edgeopt.tapfinger.instance import Instance, generate
from edgeopt.tapfinger.loop import run_episode
from edgeopt.tapfinger.policy import checkpoint, imitation
from edgeopt.tapfinger.policy.config import TrainConfig
from edgeopt.tapfinger.policy.conflict import allocation_kept
from edgeopt.tapfinger.policy.mappo import gae, ppo_loss
from edgeopt.tapfinger.policy.minibatch import MinibatchEncoder, epoch, rows_of
from edgeopt.tapfinger.policy.model import build_model, decide_many
from edgeopt.tapfinger.policy.runner import LearnedPolicy, torch_threads
from edgeopt.tapfinger.policy.vecenv import EnvPool, LocalEnvs, choices

METRICS = ["update", "steps", "episodes", "mean_return", "mean_completion", "loss", "policy_loss", "value_loss",
           "entropy", "clip_frac", "conflicts_lost", "invalid_actions", "eval_mean_completion", "wall_s", "cpu_s",
           "bc_coef"]
#: one row per cloning round of the ``bc`` recipe (``imitation.csv``)
IMITATION_METRICS = ["round", "steps", "episodes", "rows", "rollout_mean_completion", "bc_loss", "bc_value_loss",
                     "task_accuracy", "accuracy", "agreement_task", "agreement", "eval_mean_completion", "wall_s",
                     "cpu_s"]


#: gpu_scale of the sensitive task's tanh(g / gpu_scale) that gives the paper's 2-17 timesteps (16 GPUs: 2,
#: 1 GPU: 17, with the default offset 1.2 and 10 s timesteps); the authors' code uses 16 (2-21)
PAPER_GPU_SCALE = 13.0


def with_durations(inst: Instance, durations: str) -> Instance:
    """``inst`` with its ``sensitive`` task type set to the ``paper``'s 2-17 timesteps (``code``: unchanged)."""
    if durations == "code":
        return inst
    types = [t.model_copy(update={"progress": t.progress.model_copy(update={"gpu_scale": PAPER_GPU_SCALE})})
             if t.progress.kind == "sensitive" else t for t in inst.task_types]
    return inst.model_copy(update={"task_types": types})


def training_instance(cfg: TrainConfig, episode: int) -> Instance:
    N, rate = cfg.settings[episode % len(cfg.settings)]
    inst = generate("paper", seed=cfg.train_seed_base + episode, clusters=int(N), arrival_rate=float(rate),
                    jobs=cfg.jobs_per_cluster * int(N), noise=cfg.noise)
    return with_durations(inst, cfg.sensitive_durations)


def rollouts(net: torch.nn.Module, cfg: TrainConfig, instances: list[Instance], gen: torch.Generator,
             steps: list, samples: list, pool: EnvPool | None = None) -> list[dict[str, float]]:
    """Sampled episodes of ``instances`` in lockstep (one forward pass per timestep for all of them);
    appends their timesteps to ``steps`` and their decision samples to ``samples``. ``pool``: step the
    environments in its worker processes (the same episodes, see `vecenv`); None: in this process."""
    envs = pool.start(instances) if pool is not None else LocalEnvs(instances, cfg.policy)
    names = envs.agents
    state = envs.reset()
    per_agent: list[list[list[dict]]] = [[[] for _ in agents] for agents in names]
    stats = [{"return": 0.0, "conflicts_lost": 0, "invalid_actions": 0} for _ in instances]
    while True:
        live = [e for e, s in enumerate(state) if s is not None]
        if not live:
            break
        now = [state[e] for e in live]
        outs = decide_many(net, now, sample=True, generator=gen)
        first = len(steps)
        for step in now:
            step.alloc_mask = None  # kept per sample below (only the chosen slot's mask)
            steps.append(step)
        moves = envs.step({e: choices(out) for e, out in zip(live, outs, strict=True)})
        for i, (e, step, out) in enumerate(zip(live, now, outs, strict=True)):
            move, st, idx = moves[e], stats[e], first + i
            state[e] = move.next
            for j, n in enumerate(out.get("agents", [])):
                m = allocation_kept(move.flags[names[e][n]])
                per_agent[e][n].append({
                    "step": idx, "agent": n, "k": int(out["k"][j]), "cell": int(out["cell"][j]), "m": float(m),
                    "task_mask": step.task_mask[n].copy(), "alloc_mask": out["alloc_mask"][j].clone(),
                    "logp": float(out["logp_task"][j] + (out["logp_alloc"][j] if m else 0.0)),
                    "value": float(out["value"][j]), "reward": 0.0})
            for n, a in enumerate(names[e]):
                r = move.rewards.get(a, 0.0)
                st["return"] += r
                if per_agent[e][n]:  # idle timesteps fold into the last decision's reward
                    per_agent[e][n][-1]["reward"] += r * cfg.reward_scale
                st["conflicts_lost"] += move.flags[a]["conflict_lost"]
                st["invalid_actions"] += move.flags[a]["invalid_action"]
    for inst, agents, st, left in zip(instances, per_agent, stats, envs.unfinished(), strict=True):
        for seq in agents:
            if not seq:
                continue
            adv, ret = gae(np.array([s["reward"] for s in seq]), np.array([s["value"] for s in seq]),
                           cfg.gamma, cfg.gae_lambda)
            for s, a_, r_ in zip(seq, adv, ret, strict=True):
                s["adv"], s["ret"] = float(a_), float(r_)
            samples.extend(seq)
        st["mean_completion"] = -st["return"] / max(1, len(inst.tasks))
        st["unfinished"] = left
    return stats


def rollout(net: torch.nn.Module, cfg: TrainConfig, instance: Instance, gen: torch.Generator,
            steps: list, samples: list) -> dict[str, float]:
    """One sampled episode (`rollouts` of one instance)."""
    return rollouts(net, cfg, [instance], gen, steps, samples)[0]


def columns(samples: list[dict], device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """The samples' fields as tensors (one row per decision), for minibatch indexing."""
    def t(key: str, dtype: torch.dtype) -> torch.Tensor:
        return torch.tensor([s[key] for s in samples], dtype=dtype)

    cols = {"step": t("step", torch.long), "agent": t("agent", torch.long), "k": t("k", torch.long),
            "cell": t("cell", torch.long), "m": t("m", torch.float32), "logp": t("logp", torch.float32),
            "adv": t("adv", torch.float32), "ret": t("ret", torch.float32),
            "task_mask": torch.as_tensor(np.stack([s["task_mask"] for s in samples])),
            "alloc_mask": torch.stack([s["alloc_mask"] for s in samples])}
    return {k: v.to(device) for k, v in cols.items()}


def validation_instances(cfg: TrainConfig) -> list[tuple[int, Instance]]:
    """(seed, instance) of the validation seeds: the first setting (every setting with ``eval_all_settings``),
    the training tasks per cluster and noise."""
    settings = cfg.settings if cfg.eval_all_settings else cfg.settings[:1]
    return [(s, with_durations(generate("paper", seed=s, clusters=int(N), arrival_rate=float(rate),
                                        jobs=cfg.jobs_per_cluster * int(N), noise=cfg.noise), cfg.sensitive_durations))
            for N, rate in settings for s in cfg.eval_seeds]


def evaluate(net: torch.nn.Module, cfg: TrainConfig) -> float:
    """Mean completion time per task of the argmax policy on `validation_instances`; an unfinished task
    counts until the horizon."""
    vals = []
    for s, inst in validation_instances(cfg):
        env, _ = run_episode(inst, LearnedPolicy(net, cfg.policy), seed=s)
        alive = sum(p.end - inst.tasks[p.task].arrival for p in env.schedule().placements)
        alive += sum(inst.horizon - inst.tasks[j].arrival for j in env.unfinished())
        vals.append(alive / max(1, len(inst.tasks)))
    return float(np.mean(vals))


#: What a run writes into its directory (and into ``best/``): each must be a regular file or absent.
RUN_FILES = ("model.safetensors", "trainer.pt", "card.json", "metrics.csv", "imitation.csv")


def check_run_directory(out: Path) -> None:
    """Refuse, before any work, a run directory that is not a directory, or whose files (``RUN_FILES``,
    also under ``best/``) exist as a device, FIFO, socket or directory: the run would replace or unlink
    them (a FIFO would also block the metrics writer). `InputError` naming ``out``."""
    if out.exists() and not out.is_dir():
        raise InputError("out", f"{out} exists and is not a directory")
    for d in (out, out / "best"):
        if d.exists() and not d.is_dir():
            raise InputError("out", f"{d} exists and is not a directory")
        for name in RUN_FILES:
            refuse_non_regular(d / name, what="out")


class Trainer:
    """A training run writing into ``out`` (checkpoint files, metrics.csv)."""

    def __init__(self, cfg: TrainConfig, out: str | Path, *, resume: bool = False) -> None:
        self.cfg, self.out = cfg, Path(out)
        check_run_directory(self.out)
        self.device = torch.device(cfg.device)
        with torch_threads(cfg.threads):
            torch.manual_seed(cfg.seed)
            self.net = build_model(cfg.policy, cfg.backend).to(self.device)
        self.opt = torch.optim.Adam(self._param_groups(), lr=cfg.lr, eps=1e-5)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.update = self.steps = self.episodes = 0
        self.wall = 0.0
        self.cpu = 0.0  # CPU seconds of the training process's updates (all threads), validation included
        self.last_eval: float | None = None
        self.best_eval: float | None = None
        self.pool: EnvPool | None = None  # started at the first update when cfg.workers > 0
        self.cloned = False  # the bc recipe's cloning phase is done
        self._bc_data: tuple | None = None  # the fine-tuning cloning term's demonstrations, built on first use
        if resume and (self.out / "trainer.pt").exists():
            self._restore()
        else:
            for name in ("metrics.csv", "imitation.csv"):
                if (self.out / name).exists():
                    (self.out / name).unlink()

    def _param_groups(self) -> Any:
        """All parameters at ``lr``; with the bc recipe's ``actor_lr_scale`` below 1, the actors (pointer and
        resource heads) at that multiple of it (slower forgetting of what was cloned)."""
        scale = self.cfg.imitation.actor_lr_scale if self.cfg.init == "bc" else 1.0
        if scale == 1.0:
            return self.net.parameters()
        heads = ("actor.", "actors.", "resource.", "resources.")
        actor = [p for n, p in self.net.named_parameters() if n.startswith(heads)]
        rest = [p for n, p in self.net.named_parameters() if not n.startswith(heads)]
        return [{"params": rest, "lr": self.cfg.lr}, {"params": actor, "lr": self.cfg.lr * scale}]

    def _restore(self) -> None:
        net, _, card = checkpoint.load(self.out, self.cfg.policy)
        self.net.load_state_dict(net.state_dict())
        st = checkpoint.load_trainer_state(self.out)
        lrs = [g["lr"] for g in self.opt.param_groups]
        saved = st["optimizer"]
        if saved["state"]:  # an optimizer that never stepped (the cloning checkpoint's) has nothing to restore
            if len(saved["param_groups"]) != len(self.opt.param_groups):
                raise InputError("config.imitation.actor_lr_scale", "a run cannot change its optimizer's parameter "
                                 "groups after its first MAPPO update")
            self.opt.load_state_dict(saved)
        for g, lr in zip(self.opt.param_groups, lrs, strict=True):  # the configuration's rate, not the saved one:
            g["lr"] = lr  # the bc recipe's fine-tuning starts from the cloning checkpoint at its own lr
        self.gen.set_state(st["generator"])
        self.update, self.steps, self.episodes = int(st["update"]), int(st["steps"]), int(st["episodes"])
        self.wall = float(st["wall"])
        self.cpu = float(st.get("cpu", 0.0))  # absent in states written before it was recorded
        self.cloned = bool(st.get("cloned", False))
        self.last_eval = card.get("last_eval_mean_completion")
        if (self.out / "best" / "card.json").exists():
            self.best_eval = checkpoint.read_card(self.out / "best").get("last_eval_mean_completion")
        path = self.out / "metrics.csv"
        if path.exists():  # drop rows written after the checkpoint
            rows = list(csv.DictReader(path.open()))
            _rewrite(path, METRICS, [r for r in rows if int(r["update"]) <= self.update])
        path = self.out / "imitation.csv"
        if path.exists() and not self.cloned:  # a cloning phase cut short starts again
            path.unlink()

    def _save(self, where: Path | None = None) -> None:
        card = {"name": self.cfg.name, "train_config": self.cfg.model_dump(mode="json"), "seed": self.cfg.seed,
                "steps": self.steps, "episodes": self.episodes, "updates": self.update,
                "wall_time_s": round(self.wall, 1), "cpu_time_s": round(self.cpu, 1),
                "last_eval_mean_completion": self.last_eval}
        state = {"optimizer": self.opt.state_dict(), "generator": self.gen.get_state(), "update": self.update,
                 "steps": self.steps, "episodes": self.episodes, "wall": self.wall, "cpu": self.cpu,
                 "cloned": self.cloned}
        if where is not None:  # a model snapshot (weights and card), not a resumable state
            checkpoint.save(where, self.net, self.cfg.policy, card)
            return
        checkpoint.save(self.out, self.net, self.cfg.policy, card, state)

    def _log(self, row: dict[str, Any], name: str = "metrics.csv", fields: list[str] = METRICS) -> None:
        # the header is ours: a fresh run removed the file, and a resumed one rewrote it (`_restore`)
        path = self.out / name
        self.out.mkdir(parents=True, exist_ok=True)
        new = not path.exists()
        with path.open("a", newline="") as f:
            w = csv.DictWriter(f, fields, restval="")
            if new:
                w.writeheader()
            w.writerow(row)

    def clone(self, deadline: float | None = None) -> None:
        """Phase 1 of the bc recipe (`imitation`): ``rounds`` of collecting and fitting, one row each in
        ``imitation.csv``; then validation, a checkpoint (and ``best/``). Labelled decisions count as
        ``steps`` and the rounds' episodes as ``episodes``, so both recipes share the curves' axes."""
        cfg, im = self.cfg, self.cfg.imitation
        t0, c0 = time.perf_counter(), time.process_time()
        with torch_threads(cfg.threads):
            opt = torch.optim.Adam(self.net.parameters(), lr=im.lr)
            demos = imitation.Demos()
            for r in range(im.rounds):
                if deadline is not None and time.perf_counter() >= deadline:
                    break
                insts = [training_instance(cfg, self.episodes + e) for e in range(im.episodes_per_round)]
                self.net.eval()
                with torch_threads(cfg.rollout_thread_count):
                    eps = imitation.collect(None if r == 0 else self.net, cfg.policy, insts, im.expert, demos,
                                            reward_scale=cfg.reward_scale, gamma=cfg.gamma, deadline=deadline)
                self.episodes += len(insts)
                self.steps += sum(int(e["labelled"]) for e in eps)
                st = imitation.fit(self.net, opt, demos, epochs=im.epochs, batch_size=im.batch_size,
                                   value_coef=im.value_coef, max_grad_norm=cfg.max_grad_norm, gen=self.gen,
                                   device=self.device, deadline=deadline)
                agree = imitation.agreement(self.net, demos, self.device)
                self._log({"round": r, "steps": self.steps, "episodes": self.episodes, "rows": len(demos),
                           "rollout_mean_completion": float(np.mean([e["mean_completion"] for e in eps])), **st,
                           "agreement_task": agree["task"], "agreement": agree["both"],
                           "wall_s": round(self.wall + time.perf_counter() - t0, 2),
                           "cpu_s": round(self.cpu + time.process_time() - c0, 2)}, "imitation.csv", IMITATION_METRICS)
            self.last_eval = evaluate(self.net, cfg)
        self.cloned = True
        self.wall += time.perf_counter() - t0
        self.cpu += time.process_time() - c0
        self._log({"round": "eval", "steps": self.steps, "episodes": self.episodes,
                   "eval_mean_completion": self.last_eval, "wall_s": round(self.wall, 2), "cpu_s": round(self.cpu, 2)},
                  "imitation.csv", IMITATION_METRICS)
        if self.best_eval is None or self.last_eval < self.best_eval:
            self.best_eval = self.last_eval
            self._save(self.out / "best")
        self._save()

    def _bc_term(self) -> tuple[float, Any, dict, torch.Tensor] | None:
        """(weight, encoder, columns, labelled timesteps) of the fine-tuning cloning term now, or None when it
        is off or has decayed below 1e-4. Its demonstrations are the expert's own episodes of the cloning's
        round 0 (the same training instances), rebuilt after a resume."""
        im = self.cfg.imitation
        if self.cfg.init != "bc" or im.bc_coef <= 0:
            return None
        coef = im.bc_coef * im.bc_decay ** self.update
        if coef < 1e-4:
            return None
        if self._bc_data is None:
            demos = imitation.Demos()
            insts = [training_instance(self.cfg, e) for e in range(im.episodes_per_round)]
            imitation.collect(None, self.cfg.policy, insts, im.expert, demos, reward_scale=self.cfg.reward_scale,
                              gamma=self.cfg.gamma)
            cols = demos.columns(self.device)
            self._bc_data = (MinibatchEncoder(self.net, demos.steps, self.device), cols, torch.unique(cols["step"]))
        return (coef, *self._bc_data)

    def train_update(self) -> dict[str, Any]:
        """Collect ``num_envs`` episodes, then run the MAPPO epochs; returns the metrics row."""
        with torch_threads(self.cfg.threads):
            return self._train_update()

    def _train_update(self) -> dict[str, Any]:
        cfg = self.cfg
        t0, c0 = time.perf_counter(), time.process_time()
        self.net.eval()
        steps: list = []
        samples: list[dict] = []
        instances = [training_instance(cfg, self.episodes + e) for e in range(cfg.num_envs)]
        if cfg.workers and self.pool is None:
            self.pool = EnvPool(cfg.workers, cfg.policy)
        with torch_threads(cfg.rollout_thread_count):
            eps = rollouts(self.net, cfg, instances, self.gen, steps, samples, self.pool)
        self.episodes += cfg.num_envs
        self.steps += len(samples)
        c1, t1 = time.process_time(), time.perf_counter()
        cols = columns(samples, self.device)
        adv = cols["adv"].double()
        cols["adv"] = ((adv - adv.mean()) / (adv.std(unbiased=False) + 1e-8)).float()
        encode = MinibatchEncoder(self.net, steps, self.device)
        self.net.train()
        stats: list[dict] = []
        bc = self._bc_term()
        for _ in range(cfg.epochs):
            for mb in epoch(cols, cfg.batch_size, self.gen):
                ctx = encode(mb["step"], mb["agent"])
                loss, st = ppo_loss(self.net, ctx, mb, cfg.clip, cfg.value_coef, cfg.entropy_coef)
                if bc is not None:  # the decaying cloning term on the expert's demonstrations
                    coef, bc_encode, bc_cols, bc_steps = bc
                    pick = torch.randint(len(bc_steps), (cfg.imitation.bc_batch,), generator=self.gen)
                    bmb = rows_of(bc_cols, bc_steps[pick.to(bc_steps.device)])
                    bc_part, _ = imitation.bc_loss(self.net, bc_encode(bmb["step"], bmb["agent"]), bmb, 0.0)
                    loss = loss + coef * bc_part
                self.opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), cfg.max_grad_norm)
                self.opt.step()
                stats.append(st)
        self.net.eval()
        # CPU seconds of this process and wall seconds, for benchmarks
        self.last_cpu = {"rollout": c1 - c0, "update": time.process_time() - c1}
        self.last_wall = {"rollout": t1 - t0, "update": time.perf_counter() - t1}
        self.update += 1
        if self.update % cfg.eval_every == 0:
            self.last_eval = evaluate(self.net, cfg)
            if self.best_eval is None or self.last_eval < self.best_eval:
                # model selection on the validation seeds only (never the benchmark's held-out seeds)
                self.best_eval = self.last_eval
                self._save(self.out / "best")
        self.wall += time.perf_counter() - t0
        self.cpu += time.process_time() - c0
        row = {"update": self.update, "steps": self.steps, "episodes": self.episodes,
               "mean_return": float(np.mean([e["return"] for e in eps])),
               "mean_completion": float(np.mean([e["mean_completion"] for e in eps])),
               **{k: float(np.mean([s[k] for s in stats])) for k in stats[0]},
               "conflicts_lost": int(sum(e["conflicts_lost"] for e in eps)),
               "invalid_actions": int(sum(e["invalid_actions"] for e in eps)),
               "eval_mean_completion": self.last_eval if self.last_eval is not None else "",
               "wall_s": round(self.wall, 2), "cpu_s": round(self.cpu, 2),
               "bc_coef": bc[0] if bc is not None else 0.0}
        self._log(row)
        if self.update % cfg.checkpoint_every == 0:
            self._save()
        return row

    def close(self) -> None:
        """Stop the environment workers, if any (they are daemons: they also end with this process)."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, *, max_updates: int | None = None, max_seconds: float | None = None,
            on_update: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Train until ``total_steps`` (or the given update or wall-time budget); saves at the end."""
        t0 = time.perf_counter()
        done = 0
        if self.cfg.init == "bc" and not self.cloned:
            self.clone(None if max_seconds is None else t0 + max_seconds)
        while self.steps < self.cfg.total_steps:
            if max_updates is not None and done >= max_updates:
                break
            if max_seconds is not None and time.perf_counter() - t0 >= max_seconds:
                break
            row = self.train_update()
            done += 1
            if on_update:
                on_update(row)
        if self.update % self.cfg.checkpoint_every:
            self._save()


def _rewrite(path: Path, fields: list[str], rows: list[dict]) -> None:
    """Write ``rows`` to the CSV ``path`` under the header ``fields`` (missing columns empty)."""
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fields, restval="", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
