"""Behaviour cloning of the TapFinger policy from a non-learned expert, with DAgger relabelling.

Phase 1 of the ``bc`` recipe (``TrainConfig.init = "bc"``); phase 2 is MAPPO fine-tuning from the cloned
weights (`trainer.Trainer`), optionally held near the expert by a decaying cloning term (`bc_loss` on
`Demos`). The paper trains from scratch; this recipe is ours, named apart from it.

Experts (`EXPERTS`): ``greedy_ordered`` (default) and ``greedy`` of `edgeopt.tapfinger.baselines`. Both act
from any state, which DAgger needs. The expert's label of agent n in a state is its action there (pending
slot k, allocation cell (cpu, gpu)) when that is a valid start for an agent that decides now (the
learner's masks). An agent the expert leaves idle while the learner must start something gives no label:
the learner's pointer has no "none" entry (the environment skips idle agents, see `model.prepare`).

With ``greedy_ordered`` agents claim tasks in index order, so agent n's label depends on the labels of
agents 0..n-1 in the same state. That is still a function of the state the network sees (the HAN graph
holds every cluster's pending set, and each agent its own cluster embedding), so it can be learned, and a
policy that learns it loses no pick to eq. (11)'s conflicts.

Rounds (`clone`): round 0 rolls out the expert itself; round r >= 1 rolls out the learner as it is
deployed (argmax) and asks the expert what it would have done in every state the learner visits (DAgger,
Ross, Gordon and Bagnell, AISTATS 2011). After each round the network is fitted to the aggregate of all
rounds. Pure cloning (``rounds = 1``) never leaves the expert's own state distribution.

Twins: pending tasks of the same type, minimum demand and reachable clusters are interchangeable (the
expert tells them apart only by arrival, and the total completion time barely by which of them goes
first). A label is therefore the set of the expert's slot and its twins in the agent's pending set.

Loss (`bc_loss`): the cross-entropy of that set under the masked pointer (minus the log of its total
probability), plus that of the expert's cell under the resource head given the expert's slot (teacher
forcing), plus ``value_coef`` times the squared error of
the critic against the return-to-go of the policy that acted (the expert's in round 0). Returns fold the
idle timesteps' rewards into the previous decision and are scaled by ``reward_scale``, as in MAPPO's
rollouts, so the cloned critic starts on the scale fine-tuning uses.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from edgeopt.tapfinger.baselines import GreedyPolicy
from edgeopt.tapfinger.env import TapFingerEnv
from edgeopt.tapfinger.instance import Instance
from edgeopt.tapfinger.loop import Decision
from edgeopt.tapfinger.policy.config import PolicyConfig
from edgeopt.tapfinger.policy.minibatch import MinibatchEncoder, epoch, rows_of
from edgeopt.tapfinger.policy.model import StepInputs, check_env, decide_many, first_argmax, prepare
from edgeopt.tapfinger.policy.runner import to_decision

#: expert name -> a fresh policy object (the loop's `Policy` protocol)
EXPERTS: dict[str, Callable[[], Any]] = {
    "greedy_ordered": lambda: GreedyPolicy(share_cap=1, efficiency_slack=0.1, ordered=True),
    "greedy": lambda: GreedyPolicy(share_cap=1, efficiency_slack=0.1),
}


@dataclasses.dataclass
class Demos:
    """Labelled decisions: the timesteps' network inputs (``steps``) and one row per (timestep, agent)."""

    steps: list[StepInputs] = dataclasses.field(default_factory=list)
    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows)

    def columns(self, device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
        """The rows as tensors (``step, agent, k, cell, ret, task_mask, twins, alloc_mask``)."""
        def t(key: str, dtype: torch.dtype) -> torch.Tensor:
            return torch.tensor([r[key] for r in self.rows], dtype=dtype)

        cols = {"step": t("step", torch.long), "agent": t("agent", torch.long), "k": t("k", torch.long),
                "cell": t("cell", torch.long), "ret": t("ret", torch.float32),
                "task_mask": torch.as_tensor(np.stack([r["task_mask"] for r in self.rows])),
                "twins": torch.as_tensor(np.stack([r["twins"] for r in self.rows])),
                "alloc_mask": torch.as_tensor(np.stack([r["alloc_mask"] for r in self.rows]))}
        return {k: v.to(device) for k, v in cols.items()}


def labels(env: TapFingerEnv, step: StepInputs, decision: Decision, cfg: PolicyConfig) -> dict[int, tuple[int, int]]:
    """Agent -> (slot, cell) of the expert's ``decision`` for the agents that decide in ``step`` and whose
    expert action is a valid start under the learner's masks (see the module docstring)."""
    out = {}
    for n in step.agents:
        act = decision.actions.get(env.possible_agents[n])
        if act is None:
            continue
        k, c, g = (int(x) for x in np.asarray(act).reshape(-1)[:3])
        if k >= env.P or c > cfg.max_cpu or g > cfg.max_gpu or not step.task_mask[n, k]:
            continue
        cell = c * (cfg.max_gpu + 1) + g
        if step.alloc_mask[n, k, cell]:
            out[n] = (k, cell)
    return out


def twins(env: TapFingerEnv, n: int, k: int, task_mask: np.ndarray) -> np.ndarray:
    """(P,) bool: agent n's valid pending slots whose task is interchangeable with slot k's (same type,
    minimum demand and reachable clusters; slot k included)."""
    pend = env.queues[n][: env.P]
    j = pend[k]
    out = np.zeros(env.P, bool)
    for s, i in enumerate(pend):
        out[s] = bool(task_mask[s]) and (i == j or (
            env._types[i] == env._types[j] and (env._mins[i] == env._mins[j]).all()
            and (env._vis[i] == env._vis[j]).all()))
    return out


def collect(net: torch.nn.Module | None, cfg: PolicyConfig, instances: list[Instance], expert: str, demos: Demos, *,
            reward_scale: float, gamma: float = 1.0, deadline: float | None = None) -> list[dict[str, float]]:
    """Roll out ``instances`` (the expert acts when ``net`` is None, else the network's argmax) and add the
    expert's labels of every deciding agent to ``demos``; returns per-episode statistics. The episodes run
    in lockstep, so the network decides for all of them in one forward pass per timestep. Stops starting
    new timesteps once ``deadline`` (a `time.perf_counter` value) has passed; a cut episode keeps its rows,
    with the returns of its finished part."""
    envs = [TapFingerEnv(inst) for inst in instances]
    experts = [EXPERTS[expert]() for _ in instances]
    state = []
    for env, ex in zip(envs, experts, strict=True):
        check_env(env, cfg)
        obs, infos = env.reset(seed=0)
        ex.reset(env, np.random.default_rng(0))
        state.append((obs, infos))
    per_agent: list[list[list[dict]]] = [[[] for _ in range(env.N)] for env in envs]
    stats = [{"return": 0.0, "labelled": 0, "conflicts_lost": 0} for _ in envs]
    while True:
        live = [e for e, env in enumerate(envs) if env.agents]
        if not live or (deadline is not None and time.perf_counter() >= deadline):
            break
        now = [prepare(envs[e], *state[e], cfg) for e in live]
        wanted = [experts[e].act(envs[e], *state[e]) for e in live]
        outs = decide_many(net, now, sample=False) if net is not None else [None] * len(live)
        for e, step, want, out in zip(live, now, wanted, outs, strict=True):
            env = envs[e]
            idx = len(demos.steps)
            marks = labels(env, step, want, cfg)
            for n, (k, cell) in marks.items():
                per_agent[e][n].append({"step": idx, "agent": n, "k": k, "cell": cell, "reward": 0.0,
                                        "task_mask": step.task_mask[n].copy(),
                                        "twins": twins(env, n, k, step.task_mask[n]),
                                        "alloc_mask": step.alloc_mask[n, k].copy()})
            if marks:
                step.alloc_mask = None  # the rows keep their chosen slot's mask
                demos.steps.append(step)
            d = want if out is None else to_decision(env, out, cfg)
            obs, rewards, _, _, infos = env.step(d.actions, d.selection_probs)
            state[e] = (obs, infos)
            for n, a in enumerate(env.possible_agents):
                r = rewards.get(a, 0.0)
                stats[e]["return"] += r
                stats[e]["conflicts_lost"] += bool(infos.get(a, {}).get("conflict_lost"))
                if per_agent[e][n]:
                    per_agent[e][n][-1]["reward"] += r * reward_scale
    for e, inst in enumerate(instances):
        for seq in per_agent[e]:
            ret = 0.0
            for row in reversed(seq):
                ret = row["reward"] + gamma * ret
                row["ret"] = ret
            demos.rows.extend(seq)
            stats[e]["labelled"] += len(seq)
        stats[e]["mean_completion"] = -stats[e]["return"] / max(1, len(inst.tasks))
        stats[e]["unfinished"] = len(envs[e].unfinished())
    return stats


def bc_loss(net: torch.nn.Module, ctx: dict, mb: dict[str, torch.Tensor],
            value_coef: float) -> tuple[torch.Tensor, dict[str, float]]:
    """The cloning loss of one minibatch (see the module docstring) and its statistics, including the
    share of rows whose argmax slot is the expert's or a twin of it, and whose cell is also the expert's."""
    k, cell = mb["k"], mb["cell"]
    tl = net.task_logits(ctx, mb["task_mask"])
    al = net.alloc_logits(ctx, k, mb["alloc_mask"])
    ar = torch.arange(len(k), device=k.device)
    slot_nll = -torch.logsumexp(torch.log_softmax(tl, -1).masked_fill(~mb["twins"], float("-inf")), -1)
    ce = (slot_nll - torch.log_softmax(al, -1)[ar, cell]).mean()
    value_loss = ((net.value(ctx) - mb["ret"]) ** 2).mean()
    loss = ce + value_coef * value_loss
    with torch.no_grad():
        task_ok = mb["twins"][ar, first_argmax(tl)]
        both_ok = task_ok & (first_argmax(al) == cell)
        stats = {"bc_loss": ce.item(), "bc_value_loss": value_loss.item(),
                 "task_accuracy": task_ok.float().mean().item(), "accuracy": both_ok.float().mean().item()}
    return loss, stats


def fit(net: torch.nn.Module, opt: torch.optim.Optimizer, demos: Demos, *, epochs: int, batch_size: int,
        value_coef: float, max_grad_norm: float, gen: torch.Generator, device: torch.device | str = "cpu",
        deadline: float | None = None) -> dict[str, float]:
    """``epochs`` passes of minibatch cloning over ``demos`` (minibatches of ``batch_size`` timesteps with
    all their labelled agents); returns the last epoch's mean statistics. Stops between minibatches once
    ``deadline`` has passed."""
    if not len(demos):
        return {}
    cols = demos.columns(device)
    encode = MinibatchEncoder(net, demos.steps, device)
    net.train()
    stats: list[dict[str, float]] = []
    for _ in range(epochs):
        stats = []
        for mb in epoch(cols, batch_size, gen):
            if deadline is not None and time.perf_counter() >= deadline:
                break
            loss, st = bc_loss(net, encode(mb["step"], mb["agent"]), mb, value_coef)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)
            opt.step()
            stats.append(st)
    net.eval()
    return {k: float(np.mean([s[k] for s in stats])) for k in stats[0]} if stats else {}


@torch.no_grad()
def agreement(net: torch.nn.Module, demos: Demos, device: torch.device | str = "cpu",
              batch_size: int = 256) -> dict[str, float]:
    """Share of ``demos``' rows on which the network's argmax slot is the expert's or a twin of it
    (``task``), and on which its cell for the expert's slot is also the expert's (``both``): how well a cloned
    policy reproduces its expert on those states."""
    if not len(demos):
        return {"task": 0.0, "both": 0.0, "rows": 0}
    net.eval()
    cols = demos.columns(device)
    encode = MinibatchEncoder(net, demos.steps, device)
    decided = torch.unique(cols["step"])
    task_hits = both_hits = 0
    for i in range(0, len(decided), batch_size):
        mb = rows_of(cols, decided[i:i + batch_size])
        ctx = encode(mb["step"], mb["agent"])
        tl = net.task_logits(ctx, mb["task_mask"])
        ok = mb["twins"][torch.arange(len(tl), device=tl.device), first_argmax(tl)]
        al = net.alloc_logits(ctx, mb["k"], mb["alloc_mask"])
        task_hits += int(ok.sum())
        both_hits += int((ok & (first_argmax(al) == mb["cell"])).sum())
    n = len(demos)
    return {"task": task_hits / n, "both": both_hits / n, "rows": n}
