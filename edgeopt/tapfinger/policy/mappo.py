"""MAPPO pieces: GAE over each agent's decision sequence, and the masked clipped surrogate (eqs. 13-14).

Idle timesteps are skipped (Sec. IV-C): an agent's transitions are its decision timesteps only, and
the rewards of the skipped timesteps in between are added to the preceding decision's reward, so
with discount 1 every return is still the sum of all later rewards -R_{n,t}.

The policy of agent n is ``pi = Pr(j|n) * Pr*(x|j,n)^m`` (eq. 13): ``log pi = log Pr(j|n) + m log
Pr*(x|j,n)``, where ``m = 0`` when n lost the task's conflict (eq. 14), so a loser keeps its selection
term and drops its allocation term. The same m weighs the allocation entropy.
"""

from __future__ import annotations

import numpy as np
import torch


def gae(rewards: np.ndarray, values: np.ndarray, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns of one terminated sequence (the value after the last step is 0)."""
    T = len(rewards)
    adv = np.zeros(T, np.float64)
    last = 0.0
    for t in range(T - 1, -1, -1):
        nxt = values[t + 1] if t + 1 < T else 0.0
        delta = rewards[t] + gamma * nxt - values[t]
        last = delta + gamma * lam * last
        adv[t] = last
    return adv, adv + values


def entropy(logits: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(logits, -1)
    return -(logp.exp() * logp).sum(-1)


def ppo_loss(net: torch.nn.Module, ctx: dict, mb: dict[str, torch.Tensor], clip: float, value_coef: float,
             entropy_coef: float) -> tuple[torch.Tensor, dict[str, float]]:
    """The MAPPO loss of one minibatch: ``ctx`` is the network's context of its samples (`encode`),
    ``mb`` holds their columns ``k, cell, m, task_mask, alloc_mask, logp, adv, ret``."""
    k, cell, m, adv, ret = mb["k"], mb["cell"], mb["m"], mb["adv"], mb["ret"]
    tl = net.task_logits(ctx, mb["task_mask"])
    al = net.alloc_logits(ctx, k, mb["alloc_mask"])
    ar = torch.arange(len(k), device=k.device)
    logp = torch.log_softmax(tl, -1)[ar, k] + m * torch.log_softmax(al, -1)[ar, cell]
    ratio = torch.exp(logp - mb["logp"])
    surrogate = torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv).mean()
    v = net.value(ctx)
    value_loss = ((v - ret) ** 2).mean()
    ent = (entropy(tl) + m * entropy(al)).mean()
    loss = -surrogate + value_coef * value_loss - entropy_coef * ent
    with torch.no_grad():
        stats = {"loss": loss.item(), "policy_loss": -surrogate.item(), "value_loss": value_loss.item(),
                 "entropy": ent.item(), "clip_frac": ((ratio - 1).abs() > clip).float().mean().item()}
    return loss, stats
