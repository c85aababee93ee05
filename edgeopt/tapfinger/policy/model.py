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
import torch.nn.functional as F
from torch import nn

from edgeopt.core import InputError
from edgeopt.tapfinger.env import TapFingerEnv
from edgeopt.tapfinger.policy.actor import NEG, PointerActor, ResourceHead, masked_logits
from edgeopt.tapfinger.policy.config import PolicyConfig
from edgeopt.tapfinger.policy.critic import Critic
from edgeopt.tapfinger.policy.encoder import Backend, HANEncoder
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
    if (cfg.actor_per_agent or cfg.critic == "central") and env.N > cfg.max_clusters:
        raise InputError("instance.clusters", f"the policy has actors or a critic for at most {cfg.max_clusters} "
                         f"clusters, got {env.N}")
    if env.K > TASK_TYPES and cfg.task_features == "onehot":
        raise InputError("instance.task_types", f"the policy encodes at most {TASK_TYPES} task types, got {env.K}: "
                         "use a policy trained with task_features = 'profile' (the 'reduced_bc' recipe), or build "
                         "the instance with two types (generate --trace ... --task-types two)")


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
        if cfg.actor_per_agent:  # the paper's: agent n's own pointer and resource head
            self.actors = nn.ModuleList([PointerActor(cfg) for _ in range(cfg.max_clusters)])
            self.resources = nn.ModuleList([ResourceHead(cfg, 2 * H) for _ in range(cfg.max_clusters)])
        else:
            self.actor = PointerActor(cfg)
            self.resource = ResourceHead(cfg, 2 * H)
        sets = cfg.max_clusters if cfg.critic == "central" else 1
        self.critic = Critic(cfg, (sets * cfg.pending_size + 1) * H)

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
            from edgeopt.tapfinger.policy.dense import stack, to_device

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
        agent = torch.tensor([n for _, n in refs], dtype=torch.long)
        every = None
        if self.cfg.critic == "central":  # every agent's pending set of the sample's graph
            M = self.cfg.max_clusters
            sizes = [len(steps[i].graph.cluster) for i, _ in refs]
            all_rows = torch.tensor([[offs[where[i]] + m if m < sz else -1 for m in range(M)]
                                     for (i, _), sz in zip(refs, sizes, strict=True)], dtype=torch.long)
            ia = torch.where(all_rows[..., None] >= 0, g.agent_pending[all_rows.clamp(min=0)], -1)  # (S, M, P)
            every = torch.cat([h["pending"], h["pending"].new_zeros(1, self.cfg.hidden)])[ia]
        return self._context(pend, real, cluster, agent, every)

    def encode_dense(self, g, b: torch.Tensor, n: torch.Tensor) -> dict[str, torch.Tensor]:
        """Context of samples (graph ``b[i]`` of the `dense.DenseBatch` ``g``, agent ``n[i]``)."""
        from edgeopt.tapfinger.policy.dense import packing

        pk = packing(g)
        h = self.encoder(g, pk)
        idx = g.agent_pending[b, n]  # (S, P), node index within the graph
        real = idx >= 0
        # padded slots read an appended zero row (as the PyG path does)
        hp = torch.cat([h["pending"], h["pending"].new_zeros(1, h["pending"].shape[1])])
        pend = hp[torch.where(real, pk.offset["pending"][b][:, None] + idx, len(hp) - 1)]
        cluster = h["cluster"][pk.offset["cluster"][b] + n]
        every = None
        if self.cfg.critic == "central":  # every agent's pending set of the sample's graph, padded to max_clusters
            ia = g.agent_pending[b]  # (S, C, P)
            every = hp[torch.where(ia >= 0, pk.offset["pending"][b][:, None, None] + ia, len(hp) - 1)]
            every = F.pad(every, (0, 0, 0, 0, 0, self.cfg.max_clusters - every.shape[1]))
        return self._context(pend, real, cluster, n, every)

    def _context(self, pend: torch.Tensor, real: torch.Tensor, cluster: torch.Tensor, agent: torch.Tensor,
                 every: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        ctx = {"han": pend, "real": real, "cluster": cluster, "agent": agent, "every": every}
        if self.cfg.actor_per_agent:
            ctx["enc"] = self._per_agent(self.actors, agent, lambda m, i: m(pend[i], real[i], cluster[i]))
        else:
            ctx["enc"] = self.actor(pend, real, cluster)
        return ctx

    @staticmethod
    def _per_agent(mods: nn.ModuleList, agent: torch.Tensor, fn) -> torch.Tensor:
        """Rows of ``fn(mods[a], rows of agent a)`` for every agent a present, in sample order."""
        out = None
        for a in torch.unique(agent).tolist():
            rows = (agent == a).nonzero().squeeze(1)
            y = fn(mods[a], rows)
            out = y.new_zeros((len(agent), *y.shape[1:])) if out is None else out
            out = out.index_copy(0, rows, y)
        return out

    def task_logits(self, ctx: dict, task_mask: torch.Tensor) -> torch.Tensor:
        if self.cfg.actor_per_agent:
            return self._per_agent(self.actors, ctx["agent"],
                                   lambda m, i: m.pointer(ctx["enc"][i], ctx["real"][i], task_mask[i]))
        return self.actor.pointer(ctx["enc"], ctx["real"], task_mask)

    def alloc_logits(self, ctx: dict, k: torch.Tensor, alloc_mask: torch.Tensor) -> torch.Tensor:
        x = torch.cat([ctx["enc"][torch.arange(len(k), device=k.device), k], ctx["cluster"]], -1)
        if self.cfg.actor_per_agent:
            return self._per_agent(self.resources, ctx["agent"], lambda m, i: m(x[i], alloc_mask[i]))
        return self.resource(x, alloc_mask)

    def value(self, ctx: dict) -> torch.Tensor:
        sets = ctx["every"] if self.cfg.critic == "central" else ctx["han"]
        return self.critic(torch.cat([sets.flatten(1), ctx["cluster"]], -1))


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
