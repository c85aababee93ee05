"""The actor (Sec. IV-C): the pointer module for task selection (eq. 10) and the resource head.

* `PointerActor`: a transformer encoder over the agent's pending-task embeddings (padded slots are
  masked out of the attention), then the pointer of eq. (10):
  ``u_j = v^T tanh(W1 h_j + W2 h_bar)`` with ``h_bar`` the mean over the real entries, and
  ``z = softmax(u)`` with ``u_j = -inf`` for masked entries. We mask not only the padded (dummy)
  entries of eq. (10) but every entry without a valid allocation (the environment's ``task_mask``),
  since eq. (12) would leave such a task no allocation at all. The encoder's input is each task's
  HAN embedding concatenated with the agent's own cluster embedding, so that one set of actor
  weights serves every agent (parameter sharing, see `model`).
* `ResourceHead`: a 2-layer MLP from the selected task's encoding and the cluster embedding to one
  logit per cell of the (CPU, GPU) grid; eq. (12)'s mask (the environment's ``alloc_mask``: below
  the task's minimum or above the free capacity) sets invalid cells to -inf, so they are never
  sampled.
"""

from __future__ import annotations

import torch
from torch import nn

from edgeopt.tapfinger.policy.config import PolicyConfig

NEG = -1e9  # a finite -inf: keeps softmax and its gradient NaN-free on fully masked rows


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return logits.masked_fill(~mask, NEG)


class PointerActor(nn.Module):
    def __init__(self, cfg: PolicyConfig) -> None:
        super().__init__()
        H = cfg.hidden
        self.inp = nn.Linear(2 * H, H)
        layer = nn.TransformerEncoderLayer(H, cfg.pointer_heads, dim_feedforward=2 * H, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg.pointer_layers, enable_nested_tensor=False)
        self.W1 = nn.Linear(H, H, bias=False)
        self.W2 = nn.Linear(H, H, bias=False)
        self.v = nn.Linear(H, 1, bias=False)

    def forward(self, pend: torch.Tensor, real: torch.Tensor, cluster: torch.Tensor) -> torch.Tensor:
        """Encoded pending entries (B, P, H) from HAN embeddings ``pend`` (B, P, H), ``real`` (B, P)."""
        x = self.inp(torch.cat([pend, cluster[:, None, :].expand_as(pend)], dim=-1))
        # a row with no real entry would make attention NaN: let such rows attend to slot 0
        pad = ~real
        pad[:, 0] &= real.any(dim=1)
        return self.encoder(x, src_key_padding_mask=pad)

    def pointer(self, h: torch.Tensor, real: torch.Tensor, task_mask: torch.Tensor) -> torch.Tensor:
        """Eq. (10): masked logits u over the pending slots (B, P)."""
        w = real.float()[..., None]
        h_bar = (h * w).sum(1) / w.sum(1).clamp(min=1.0)
        u = self.v(torch.tanh(self.W1(h) + self.W2(h_bar)[:, None, :])).squeeze(-1)
        return masked_logits(u, task_mask)


class ResourceHead(nn.Module):
    def __init__(self, cfg: PolicyConfig, in_dim: int) -> None:
        super().__init__()
        cells = (cfg.max_cpu + 1) * (cfg.max_gpu + 1)
        self.mlp = nn.Sequential(nn.Linear(in_dim, cfg.mlp_hidden), nn.Tanh(), nn.Linear(cfg.mlp_hidden, cells))

    def forward(self, x: torch.Tensor, alloc_mask: torch.Tensor) -> torch.Tensor:
        """Eq. (12): logits over the flattened grid, invalid cells masked (B, cells)."""
        return masked_logits(self.mlp(x), alloc_mask)
