"""The two networks (TapFinger and the vanilla MARL ablation) and their inputs from the environment.

Both expose the same four steps, so one rollout and one MAPPO update serve both:
``encode`` (per-agent context), ``task_logits`` (masked selection logits), ``alloc_logits`` (masked
logits over the (CPU, GPU) grid for the chosen slot), ``value``.

* `TapFingerNet`: HAN encoder over G_t (eq. 9) -> pointer actor (eq. 10) -> resource head (eq. 12);
  critic on the pending embeddings. The actor's weights are shared by all agents (the paper trains
  one actor per agent); each agent's own cluster embedding conditions it. Sharing lets one
  checkpoint run on 3 or 6 clusters and gives each agent's weights N times the samples.
* `VanillaNet` (Fig. 7's ablation): no HAN and no pointer. Each agent stacks its own observation
  into one vector (free resources, queue length, the pending set's features and visibility, the
  running tasks' features), takes the first pending task that has a valid allocation (FIFO), and an
  MLP gives its allocation logits under the same eq. (12) mask; the critic is an MLP on the same
  vector.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
from torch import nn

from edgeopt.core import InputError
from edgeopt.tapfinger.env import TapFingerEnv
from edgeopt.tapfinger.policy.actor import NEG, PointerActor, ResourceHead, masked_logits
from edgeopt.tapfinger.policy.config import PolicyConfig
from edgeopt.tapfinger.policy.critic import Critic
from edgeopt.tapfinger.policy.encoder import HANEncoder
from edgeopt.tapfinger.policy.encoder import Backend
from edgeopt.tapfinger.policy.graph import TASK_TYPES, GraphArrays, batch, graph_arrays, to_step_graph


@dataclasses.dataclass
class StepInputs:
    """What the network needs about one timestep, for every agent."""

    agents: list[int]  # agents that decide now (not idle)
    task_mask: np.ndarray  # (N, P) bool
    alloc_mask: np.ndarray  # (N, P, cells) bool
    graph: GraphArrays | None = None  # tapfinger
    flat: np.ndarray | None = None  # vanilla_marl, (N, D)


def grid_cells(cfg: PolicyConfig) -> int:
    return (cfg.max_cpu + 1) * (cfg.max_gpu + 1)


def check_env(env: TapFingerEnv, cfg: PolicyConfig) -> None:
    """Refuse an environment the network's shapes cannot express (InputError naming the field)."""
    if env.P != cfg.pending_size:
        raise InputError("instance.pending_size", f"the policy was built for {cfg.pending_size}, got {env.P}")
    if env.cmax > cfg.max_cpu or env.gmax > cfg.max_gpu:
        raise InputError("instance.clusters", f"capacity ({env.cmax}, {env.gmax}) exceeds the policy's "
                         f"allocation grid ({cfg.max_cpu}, {cfg.max_gpu})")
    if env.K > TASK_TYPES:
        raise InputError("instance.task_types", f"the policy encodes at most {TASK_TYPES} task types, got {env.K}")


def prepare(env: TapFingerEnv, obs: dict[str, Any], infos: dict[str, Any], cfg: PolicyConfig) -> StepInputs:
    """The network inputs of the current timestep."""
    N, P = env.N, env.P
    task_mask = np.zeros((N, P), bool)
    alloc = np.zeros((N, P, cfg.max_cpu + 1, cfg.max_gpu + 1), bool)
    agents = []
    pending = [[] for _ in range(N)]
    for n, a in enumerate(env.possible_agents):
        if a not in obs:
            continue
        o = obs[a]
        pending[n] = infos[a]["pending_tasks"]
        task_mask[n] = o["task_mask"][:P].astype(bool)
        am = o["alloc_mask"].astype(bool)
        alloc[n, :, : am.shape[1], : am.shape[2]] = am
        if task_mask[n].any() and not infos[a].get("idle", False):
            agents.append(n)
    inputs = StepInputs(agents, task_mask, alloc.reshape(N, P, -1))
    if cfg.architecture == "tapfinger":
        inputs.graph = graph_arrays(env.entities(), pending, cfg)
    else:
        inputs.flat = np.stack([flat_observation(env, obs.get(a), cfg) for a in env.possible_agents])
    return inputs


def flat_observation(env: TapFingerEnv, o: dict[str, np.ndarray] | None, cfg: PolicyConfig) -> np.ndarray:
    """vanilla_marl's stacked state of one agent (zeros when the agent has no observation)."""
    s, ts, P, M, C = cfg.feature_scale, cfg.time_scale, cfg.pending_size, cfg.max_running, cfg.max_clusters
    dim = 3 + P * (2 + TASK_TYPES + 1 + C + 1) + M * (2 + TASK_TYPES + 3)
    if o is None:
        return np.zeros(dim, np.float32)

    def pad(a: np.ndarray, rows: int, cols: int) -> np.ndarray:
        out = np.zeros((rows, cols), np.float32)
        a = a.reshape(a.shape[0], -1)[:rows, :cols]
        out[: a.shape[0], : a.shape[1]] = a
        return out

    parts = [o["free"][:2] / s, o["queue"] / P,
             pad(o["pending_min"][:, :2] / s, P, 2), pad(o["pending_type"], P, TASK_TYPES),
             pad(o["pending_wait"][:, None] / ts, P, 1), pad(o["pending_visible"], P, C),
             pad(o["pending_mask"][:, None], P, 1),
             pad(o["running_alloc"][:, :2] / s, M, 2), pad(o["running_type"], M, TASK_TYPES),
             pad(o["running_elapsed"][:, None] / ts, M, 1), pad(o["running_progress"][:, None], M, 1),
             pad(o["running_mask"][:, None], M, 1)]
    out = np.concatenate([np.asarray(p, np.float32).reshape(-1) for p in parts])
    assert out.shape == (dim,)
    return out


class TapFingerNet(nn.Module):
    def __init__(self, cfg: PolicyConfig, backend: Backend = "dense") -> None:
        super().__init__()
        self.cfg = cfg
        H = cfg.hidden
        self.encoder = HANEncoder(cfg, backend)
        self.actor = PointerActor(cfg)
        self.resource = ResourceHead(cfg, 2 * H)
        self.critic = Critic(cfg)

    @property
    def backend(self) -> str:
        return self.encoder.backend

    @property
    def proj_device(self) -> torch.device:
        return self.critic.mlp[0].weight.device

    def encode(self, steps: list[StepInputs], refs: list[tuple[int, int]]) -> dict[str, torch.Tensor]:
        """Per-sample context for samples ``refs`` = (index into ``steps``, agent)."""
        used = sorted({i for i, _ in refs})
        where = {i: u for u, i in enumerate(used)}
        if self.backend == "dense":
            from edgeopt.tapfinger.policy.dense import stack

            from edgeopt.tapfinger.policy.dense import to_device

            dev = self.proj_device
            g = to_device(stack([steps[i].graph for i in used]), dev)
            b = torch.tensor([where[i] for i, _ in refs], dtype=torch.long, device=dev)
            n = torch.tensor([n for _, n in refs], dtype=torch.long, device=dev)
            return self.encode_dense(g, b, n)
        g = batch([to_step_graph(steps[i].graph) for i in used])
        offs = np.cumsum([0] + [len(steps[i].graph.cluster) for i in used])
        rows = torch.tensor([offs[where[i]] + n for i, n in refs], dtype=torch.long)
        h = self.encoder(g)
        idx = g.agent_pending[rows]  # (B, P)
        real = idx >= 0
        pend = torch.cat([h["pending"], h["pending"].new_zeros(1, self.cfg.hidden)])[idx.clamp(min=-1)]
        pend = pend * real[..., None]
        cluster = h["cluster"][g.agent_cluster[rows]]
        return self._context(pend, real, cluster)

    def encode_dense(self, g, b: torch.Tensor, n: torch.Tensor) -> dict[str, torch.Tensor]:
        """Context of samples (graph ``b[i]`` of the `dense.DenseBatch` ``g``, agent ``n[i]``)."""
        h = self.encoder(g)
        idx = g.agent_pending[b, n]  # (S, P)
        real = idx >= 0
        pend = h["pending"][b[:, None], idx.clamp(min=0)] * real[..., None]
        cluster = h["cluster"][b, n]
        return self._context(pend, real, cluster)

    def _context(self, pend: torch.Tensor, real: torch.Tensor, cluster: torch.Tensor) -> dict[str, torch.Tensor]:
        enc = self.actor(pend, real, cluster)
        return {"han": pend, "enc": enc, "real": real, "cluster": cluster}

    def task_logits(self, ctx: dict, task_mask: torch.Tensor) -> torch.Tensor:
        return self.actor.pointer(ctx["enc"], ctx["real"], task_mask)

    def alloc_logits(self, ctx: dict, k: torch.Tensor, alloc_mask: torch.Tensor) -> torch.Tensor:
        hk = ctx["enc"][torch.arange(len(k)), k]
        return self.resource(torch.cat([hk, ctx["cluster"]], -1), alloc_mask)

    def value(self, ctx: dict) -> torch.Tensor:
        return self.critic(torch.cat([ctx["han"].flatten(1), ctx["cluster"]], -1))


class VanillaNet(nn.Module):
    def __init__(self, cfg: PolicyConfig) -> None:
        super().__init__()
        self.cfg = cfg
        P, M, C = cfg.pending_size, cfg.max_running, cfg.max_clusters
        dim = 3 + P * (2 + TASK_TYPES + 1 + C + 1) + M * (2 + TASK_TYPES + 3)
        self.body = nn.Sequential(nn.Linear(dim + P, cfg.mlp_hidden), nn.Tanh())
        self.resource = ResourceHead(cfg, cfg.mlp_hidden)
        self.critic = Critic(cfg, dim)

    def encode(self, steps: list[StepInputs], refs: list[tuple[int, int]]) -> dict[str, torch.Tensor]:
        dev = self.critic.mlp[0].weight.device
        return {"flat": torch.as_tensor(np.stack([steps[i].flat[n] for i, n in refs])).to(dev)}

    def task_logits(self, ctx: dict, task_mask: torch.Tensor) -> torch.Tensor:
        first = task_mask.float().argmax(dim=1)  # FIFO: the earliest pending task with a valid allocation
        out = torch.full(task_mask.shape, NEG, device=task_mask.device)
        out[torch.arange(len(first)), first] = 0.0
        return masked_logits(out, task_mask)

    def alloc_logits(self, ctx: dict, k: torch.Tensor, alloc_mask: torch.Tensor) -> torch.Tensor:
        onehot = nn.functional.one_hot(k, self.cfg.pending_size).float()
        return self.resource(self.body(torch.cat([ctx["flat"], onehot], -1)), alloc_mask)

    def value(self, ctx: dict) -> torch.Tensor:
        return self.critic(ctx["flat"])


def build_model(cfg: PolicyConfig, backend: Backend = "dense") -> nn.Module:
    """The network of ``cfg`` (``backend`` picks the HAN implementation; the weights are the same)."""
    return TapFingerNet(cfg, backend) if cfg.architecture == "tapfinger" else VanillaNet(cfg)


#: logits within this of the maximum count as tied; the argmax takes the first of them (lowest slot or
#: cell). Identical pending tasks get logits equal up to float rounding, whose last bits depend on the
#: order of sums (PyG's scatter, the dense batch, the thread count); without a tolerance that noise
#: alone would decide between them.
TIE_TOL = 1e-4


def first_argmax(logits: torch.Tensor, tol: float = TIE_TOL) -> torch.Tensor:
    """Index of the first entry within ``tol`` of each row's maximum."""
    top = logits.max(-1, keepdim=True).values
    return (logits >= top - tol).to(torch.uint8).argmax(-1)


@torch.no_grad()
def decide_many(net: nn.Module, steps: list[StepInputs], *, sample: bool,
                generator: torch.Generator | None = None) -> list[dict]:
    """`decide` for several timesteps (of different environments) in one forward pass."""
    refs = [(i, n) for i, s in enumerate(steps) for n in s.agents]
    if not refs:
        return [{} for _ in steps]
    dev = next(net.parameters()).device
    ctx = net.encode(steps, refs)
    tmask = torch.as_tensor(np.stack([steps[i].task_mask[n] for i, n in refs])).to(dev)
    tl = net.task_logits(ctx, tmask)
    tprobs = torch.softmax(tl, -1)
    # sampling draws on the CPU generator (the rollout's seeded stream), whatever the device
    k = torch.multinomial(tprobs.cpu(), 1, generator=generator).squeeze(1) if sample else first_argmax(tl).cpu()
    kk = k.numpy()
    amask = torch.as_tensor(np.stack([steps[i].alloc_mask[n, kk[r]] for r, (i, n) in enumerate(refs)]))
    al = net.alloc_logits(ctx, k.to(dev), amask.to(dev))
    cell = (torch.multinomial(torch.softmax(al, -1).cpu(), 1, generator=generator).squeeze(1) if sample
            else first_argmax(al).cpu())
    ar = torch.arange(len(k))
    logp_task = torch.log_softmax(tl, -1).cpu()[ar, k]
    logp_alloc = torch.log_softmax(al, -1).cpu()[ar, cell]
    value, probs = net.value(ctx).cpu(), tprobs.cpu().numpy()
    outs, lo = [], 0
    for s in steps:
        hi = lo + len(s.agents)
        outs.append({} if hi == lo else {
            "agents": list(s.agents), "k": k[lo:hi], "cell": cell[lo:hi], "logp_task": logp_task[lo:hi],
            "logp_alloc": logp_alloc[lo:hi], "value": value[lo:hi], "probs": probs[lo:hi],
            "alloc_mask": amask[lo:hi]})
        lo = hi
    return outs


def decide(net: nn.Module, step: StepInputs, *, sample: bool, generator: torch.Generator | None = None) -> dict:
    """Actions of the deciding agents: slot, grid cell, log-probabilities, value, selection probs."""
    return decide_many(net, [step], sample=sample, generator=generator)[0]
