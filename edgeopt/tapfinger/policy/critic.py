"""The critic (Sec. V-A): a 2-layer MLP on the flattened pending-task embeddings.

Per agent n it reads the HAN embeddings of n's pending set (padded slots zero), flattened, and n's
cluster embedding, and returns V_n. Reading one agent's set (rather than all agents' sets stacked)
keeps the critic independent of the number of clusters; the HAN embeddings already carry the other
clusters' state through the cluster, pending and shortcut nodes.
"""

from __future__ import annotations

import torch
from torch import nn

from edgeopt.tapfinger.policy.config import PolicyConfig


class Critic(nn.Module):
    def __init__(self, cfg: PolicyConfig, in_dim: int | None = None) -> None:
        super().__init__()
        in_dim = in_dim or (cfg.pending_size + 1) * cfg.hidden
        self.mlp = nn.Sequential(nn.Linear(in_dim, cfg.mlp_hidden), nn.Tanh(), nn.Linear(cfg.mlp_hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp(x).squeeze(-1)
