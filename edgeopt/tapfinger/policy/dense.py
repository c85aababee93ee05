"""A padded dense implementation of the HAN layer (`HANConv` of PyTorch Geometric) for batches of G_t.

The graphs of eq. (9) are small and bounded (at most ``max_clusters`` cluster nodes, the running
tasks that fit, ``N * P`` pending nodes, one shortcut node), so a batch of B graphs is padded to
the largest node count of each type and every relation becomes a boolean adjacency mask
``(B, dst nodes, src nodes)``. One layer then runs as a few batched tensor operations instead of
PyG's gather/scatter per relation, and needs no PyG at all.

`DenseHANConv` computes what `torch_geometric.nn.HANConv` computes, with the same parameter names
and shapes (a checkpoint loads into either), for each graph of the batch:

* node level, per relation r (src -> dst): ``x = proj[type](h)`` split into heads;
  ``e_ij = LeakyReLU_0.2(a_src_r . x_j + a_dst_r . x_i)``; ``alpha = softmax_j(e_ij)`` over the
  in-neighbours j of i (a node with none gets 0); ``z_r,i = ReLU(sum_j alpha_ij x_j)``;
* semantic level, per destination type: ``w_r = q . mean_i tanh(k_lin(z_r,i))``, ``beta =
  softmax_r(w_r)``, ``out_i = sum_r beta_r z_r,i``.

One difference, on purpose: the mean of the semantic level runs over the nodes of **one graph**.
PyG's `HANConv` takes it over every node of the type in its input, so on a batch of several
graphs (the PPO minibatches of the PyG backend) each graph's semantic weights depend on the other
graphs in the batch, and a graph encodes differently in a minibatch than in the rollout that
chose its action. On a single graph the two are the same (a test checks both backends on the
same weights); the dense form is what HAN defines per graph.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from edgeopt.tapfinger.policy.graph import EDGE_TYPES, NODE_TYPES, GraphArrays


@dataclasses.dataclass
class DenseBatch:
    """B graphs padded per node type: features, real-node masks, one adjacency mask per relation."""

    x: dict[str, torch.Tensor]  # type -> (B, n_type, features)
    mask: dict[str, torch.Tensor]  # type -> (B, n_type) bool
    adj: dict[tuple[str, str, str], torch.Tensor]  # relation -> (B, n_dst, n_src) bool
    agent_pending: torch.Tensor  # (B, n_cluster, P) long, -1 = padded slot


@dataclasses.dataclass
class Packing:
    """Where the real nodes of a `DenseBatch` sit: per type, their flat padded positions (graph-major,
    the packed order), their graph, each graph's node count and first packed index. Per-node layers
    (projections, layer norms) run on the packed rows only, so padding costs nothing there."""

    pos: dict[str, torch.Tensor]  # (N_t,) index into the flattened (B * n_t) padded rows
    graph: dict[str, torch.Tensor]  # (N_t,) graph of each packed node
    count: dict[str, torch.Tensor]  # (B,) real nodes per graph
    offset: dict[str, torch.Tensor]  # (B,) packed index of each graph's first node


def packing(g: DenseBatch) -> Packing:
    pos, graph, count, offset = {}, {}, {}, {}
    for t, m in g.mask.items():
        pos[t] = m.reshape(-1).nonzero().squeeze(1)
        graph[t] = torch.div(pos[t], m.shape[1], rounding_mode="floor")
        count[t] = m.sum(1)
        offset[t] = torch.cumsum(count[t], 0) - count[t]
    return Packing(pos, graph, count, offset)


def packed(g: DenseBatch, pk: Packing) -> dict[str, torch.Tensor]:
    """Each type's node features as packed rows (N_t, features)."""
    return {t: v.reshape(-1, v.shape[-1])[pk.pos[t]] for t, v in g.x.items()}


def stack(graphs: list[GraphArrays]) -> DenseBatch:
    """Pad and stack graphs (every type padded to at least one node, masked)."""
    B = len(graphs)
    first = graphs[0]  # feature widths as the graphs were built (`graph.feature_dims` of their configuration)
    dims = {"cluster": first.cluster.shape[1], "running": first.running.shape[1], "pending": first.pending.shape[1]}
    C = max(len(g.cluster) for g in graphs)
    R = max(1, max(len(g.running) for g in graphs))
    Q = max(1, max(len(g.pending) for g in graphs))
    P = graphs[0].agent_pending.shape[1]
    xc = np.zeros((B, C, dims["cluster"]), np.float32)
    xr = np.zeros((B, R, dims["running"]), np.float32)
    xp = np.zeros((B, Q, dims["pending"]), np.float32)
    mc = np.zeros((B, C), bool)
    mr = np.zeros((B, R), bool)
    mp = np.zeros((B, Q), bool)
    run_adj = np.zeros((B, C, R), bool)  # running -> cluster
    pend_adj = np.zeros((B, C, Q), bool)  # pending -> cluster
    ap = np.full((B, C, P), -1, np.int64)
    for b, g in enumerate(graphs):
        n, r, q = len(g.cluster), len(g.running), len(g.pending)
        xc[b, :n], xr[b, :r], xp[b, :q] = g.cluster, g.running, g.pending
        mc[b, :n], mr[b, :r], mp[b, :q] = True, True, True
        run_adj[b, g.run_cluster, np.arange(r)] = True
        pend_adj[b, g.pend_edges[1], g.pend_edges[0]] = True
        ap[b, :n] = g.agent_pending
    short_adj = mc[:, :, None]  # shortcut -> every real cluster
    t = torch.from_numpy
    adj = {
        EDGE_TYPES[0]: t(run_adj), EDGE_TYPES[1]: t(np.ascontiguousarray(run_adj.transpose(0, 2, 1))),
        EDGE_TYPES[2]: t(pend_adj), EDGE_TYPES[3]: t(np.ascontiguousarray(pend_adj.transpose(0, 2, 1))),
        EDGE_TYPES[4]: t(np.ascontiguousarray(short_adj)),
        EDGE_TYPES[5]: t(np.ascontiguousarray(short_adj.transpose(0, 2, 1))),
    }
    x = {"cluster": t(xc), "running": t(xr), "pending": t(xp), "shortcut": torch.zeros(B, 1, 1)}
    mask = {"cluster": t(mc), "running": t(mr), "pending": t(mp), "shortcut": torch.ones(B, 1, dtype=torch.bool)}
    return DenseBatch(x, mask, adj, t(ap))


def _glorot(p: torch.Tensor) -> None:
    bound = math.sqrt(6.0 / (p.size(-2) + p.size(-1)))
    with torch.no_grad():
        p.uniform_(-bound, bound)


class DenseHANConv(nn.Module):
    """`HANConv(hidden, hidden, METADATA, heads)` on a `DenseBatch` (see the module docstring)."""

    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads, self.out_channels = heads, hidden
        self.k_lin = nn.Linear(hidden, hidden)
        self.q = nn.Parameter(torch.empty(1, hidden))
        self.proj = nn.ModuleDict({t: nn.Linear(hidden, hidden) for t in NODE_TYPES})
        dim = hidden // heads
        self.lin_src = nn.ParameterDict({"__".join(et): nn.Parameter(torch.empty(1, heads, dim)) for et in EDGE_TYPES})
        self.lin_dst = nn.ParameterDict({"__".join(et): nn.Parameter(torch.empty(1, heads, dim)) for et in EDGE_TYPES})
        for p in (*self.lin_src.values(), *self.lin_dst.values()):
            _glorot(p)
        _glorot(self.q)

    @staticmethod
    def _pad(v: torch.Tensor, g: DenseBatch, pk: Packing, t: str) -> torch.Tensor:
        """Packed rows (N_t, ...) laid out padded (B, n_t, ...), zeros in the padding."""
        B, n = g.mask[t].shape
        return v.new_zeros(B * n, *v.shape[1:]).index_copy(0, pk.pos[t], v).view(B, n, *v.shape[1:])

    def forward(self, h: dict[str, torch.Tensor], g: DenseBatch, pk: Packing) -> dict[str, torch.Tensor]:
        """``h``: packed node embeddings per type (N_t, hidden); returns the same layout."""
        Hh, C = self.heads, self.out_channels
        xp, xs = {}, {}
        for t, v in h.items():  # project the real nodes, then lay them out padded for the attention
            xp[t] = self.proj[t](v).view(-1, Hh, C // Hh)
            xs[t] = self._pad(xp[t], g, pk, t)

        outs: dict[str, list[torch.Tensor]] = {t: [] for t in NODE_TYPES}
        for et in EDGE_TYPES:
            src, _, dst = et
            key = "__".join(et)
            # attention scores of the real nodes, then padded (B, n, heads)
            a_src = self._pad((xp[src] * self.lin_src[key]).sum(-1), g, pk, src)
            a_dst = self._pad((xp[dst] * self.lin_dst[key]).sum(-1), g, pk, dst)
            e = F.leaky_relu(a_dst[:, :, None, :] + a_src[:, None, :, :], 0.2)  # (B, n_dst, n_src, heads)
            adj = g.adj[et][..., None]
            e = e.masked_fill(~adj, float("-inf"))
            m = e.detach().amax(2, keepdim=True)
            m = m.masked_fill(torch.isinf(m), 0.0)  # a node without in-neighbours: all weights 0
            p = torch.exp(e - m)
            p = p / (p.sum(2, keepdim=True) + 1e-16)  # PyG's softmax adds the same 1e-16
            z = torch.einsum("bdsh,bshk->bdhk", p, xs[src]).reshape(-1, C)[pk.pos[dst]]
            outs[dst].append(F.relu(z))
        result = {}
        for t, zs in outs.items():
            if len(zs) == 1:  # softmax over one relation is exactly 1
                result[t] = zs[0]
                continue
            z = torch.stack(zs)  # (rel, N_t, C)
            B = g.mask[t].shape[0]
            total = z.new_zeros(len(zs), B, C).index_add_(1, pk.graph[t], torch.tanh(self.k_lin(z)))
            mean = total / pk.count[t].clamp(min=1).to(z.dtype)[None, :, None]  # per graph (rel, B, C)
            beta = torch.softmax((self.q * mean).sum(-1), dim=0)  # (rel, B)
            result[t] = (beta[:, pk.graph[t], None] * z).sum(0)
        return result


def select(g: DenseBatch, idx: torch.Tensor) -> DenseBatch:
    """The sub-batch of graphs ``idx``, its padding trimmed to its own largest graph (real nodes come first)."""
    mask = {t: v[idx] for t, v in g.mask.items()}
    size = {t: max(1, int(m.sum(1).max())) for t, m in mask.items()}
    x = {t: v[idx, : size[t]] for t, v in g.x.items()}
    mask = {t: m[:, : size[t]] for t, m in mask.items()}
    adj = {et: a[idx, : size[et[2]], : size[et[0]]] for et, a in g.adj.items()}
    return DenseBatch(x, mask, adj, g.agent_pending[idx, : size["cluster"]])


def to_device(g: DenseBatch, device: torch.device | str) -> DenseBatch:
    if str(device) == "cpu":
        return g
    return DenseBatch({t: v.to(device) for t, v in g.x.items()}, {t: v.to(device) for t, v in g.mask.items()},
                      {et: a.to(device) for et, a in g.adj.items()}, g.agent_pending.to(device))
