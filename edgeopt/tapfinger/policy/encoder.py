"""The HAN state encoder (Sec. IV-B): stacked HAN layers over G_t, in one of two backends.

Each node type is first projected to the hidden size. Every layer is a HAN layer (node-level
attention per relation, then semantic attention across the relations into a node type), added to
its input (a residual connection) and layer-normalised. The residual is ours: HAN has no
self-loop, so without it a node's own features would be lost after one layer.

Backends (same parameters, so either loads any checkpoint):

* ``dense`` (default): `edgeopt.tapfinger.policy.dense.DenseHANConv` on padded batches
  (`dense.stack`); needs no PyTorch Geometric. Faster on CPU at these graph sizes (see
  ``benchmarks/tapfinger_train_speed.py``).
* ``pyg``: PyTorch Geometric's sparse `HANConv` on concatenated graphs (`graph.batch`), the
  reference the dense one is tested against.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from edgeopt.tapfinger.policy.config import PolicyConfig
from edgeopt.tapfinger.policy.graph import METADATA, NODE_TYPES, feature_dims

Backend = Literal["dense", "pyg"]
BACKENDS = ("dense", "pyg")


class HANEncoder(nn.Module):
    def __init__(self, cfg: PolicyConfig, backend: Backend = "dense") -> None:
        super().__init__()
        H = cfg.hidden
        if H % cfg.han_heads:
            raise ValueError(f"hidden {H} must be divisible by han_heads {cfg.han_heads}")
        if backend not in BACKENDS:
            raise ValueError(f"unknown HAN backend {backend!r} (one of {BACKENDS})")
        self.backend = backend
        self.proj = nn.ModuleDict({t: nn.Linear(d, H) for t, d in feature_dims(cfg).items()})
        if backend == "pyg":
            from torch_geometric.nn import HANConv

            self.layers = nn.ModuleList([HANConv(H, H, METADATA, heads=cfg.han_heads) for _ in range(cfg.han_layers)])
        else:
            from edgeopt.tapfinger.policy.dense import DenseHANConv

            self.layers = nn.ModuleList([DenseHANConv(H, cfg.han_heads) for _ in range(cfg.han_layers)])
        self.norms = nn.ModuleList([nn.ModuleDict({t: nn.LayerNorm(H) for t in NODE_TYPES})
                                    for _ in range(cfg.han_layers)])

    def forward(self, g, pk=None) -> dict[str, torch.Tensor]:
        """Node embeddings per type (nodes, H): of a PyG `StepGraph`, or the packed real nodes of a
        `DenseBatch` (``pk``: its `dense.Packing`)."""
        if self.backend == "pyg":
            h = {t: torch.relu(self.proj[t](g.x[t])) for t in NODE_TYPES}
        else:
            from edgeopt.tapfinger.policy.dense import packed

            h = {t: torch.relu(self.proj[t](v)) for t, v in packed(g, pk).items()}
        for conv, norm in zip(self.layers, self.norms, strict=True):
            out = conv(h, g.edges) if self.backend == "pyg" else conv(h, g, pk)
            h = {t: norm[t](h[t] + (out[t] if out.get(t) is not None else 0.0)) for t in NODE_TYPES}
        return h
