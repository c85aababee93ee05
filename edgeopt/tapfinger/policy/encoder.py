"""The HAN state encoder (Sec. IV-B): stacked PyTorch Geometric `HANConv` layers over G_t.

Each node type is first projected to the hidden size. Every layer is a `HANConv` (node-level
attention per relation, then semantic attention across the relations into a node type), added to
its input (a residual connection) and layer-normalised. The residual is ours: `HANConv` has no
self-loop, so without it a node's own features would be lost after one layer.
"""

from __future__ import annotations

import torch
from torch import nn
from torch_geometric.nn import HANConv

from edgeopt.tapfinger.policy.config import PolicyConfig
from edgeopt.tapfinger.policy.graph import METADATA, NODE_TYPES, StepGraph, feature_dims


class HANEncoder(nn.Module):
    def __init__(self, cfg: PolicyConfig) -> None:
        super().__init__()
        H = cfg.hidden
        if H % cfg.han_heads:
            raise ValueError(f"hidden {H} must be divisible by han_heads {cfg.han_heads}")
        self.proj = nn.ModuleDict({t: nn.Linear(d, H) for t, d in feature_dims().items()})
        self.layers = nn.ModuleList([HANConv(H, H, METADATA, heads=cfg.han_heads) for _ in range(cfg.han_layers)])
        self.norms = nn.ModuleList([nn.ModuleDict({t: nn.LayerNorm(H) for t in NODE_TYPES})
                                    for _ in range(cfg.han_layers)])

    def forward(self, g: StepGraph) -> dict[str, torch.Tensor]:
        h = {t: torch.relu(self.proj[t](g.x[t])) for t in NODE_TYPES}
        for conv, norm in zip(self.layers, self.norms, strict=True):
            out = conv(h, g.edges)
            h = {t: norm[t](h[t] + (out[t] if out.get(t) is not None else 0.0)) for t in NODE_TYPES}
        return h
