"""Minibatches of stored timesteps, shared by MAPPO's update (`trainer`) and cloning (`imitation`): which rows
(one per deciding agent) belong to a set of timesteps, an epoch of them in a seeded random order, and their
encoding by the network."""

from __future__ import annotations

from collections.abc import Iterator

import torch


def rows_of(cols: dict[str, torch.Tensor], steps: torch.Tensor) -> dict[str, torch.Tensor]:
    """The rows of the columns ``cols`` whose timestep (``cols["step"]``) is one of ``steps``."""
    idx = torch.isin(cols["step"], steps).nonzero().squeeze(1)
    return {key: v[idx] for key, v in cols.items()}


def epoch(cols: dict[str, torch.Tensor], batch_size: int, gen: torch.Generator) -> Iterator[dict[str, torch.Tensor]]:
    """One pass over the columns: minibatches of ``batch_size`` timesteps, each with all its rows (a graph is
    encoded once and serves every agent that decided on it), in an order drawn from ``gen``."""
    decided = torch.unique(cols["step"])
    perm = decided[torch.randperm(len(decided), generator=gen).to(decided.device)]
    for i in range(0, len(perm), batch_size):
        yield rows_of(cols, perm[i:i + batch_size])


class MinibatchEncoder:
    """Encodes minibatches of an update's samples: the dense backend stacks the update's graphs once
    and selects each minibatch's graphs from them; other networks go through ``net.encode``."""

    def __init__(self, net: torch.nn.Module, steps: list, device: torch.device | str) -> None:
        self.net, self.steps, self.device = net, steps, device
        self.graphs = None
        if getattr(net, "backend", None) == "dense":
            from edgeopt.tapfinger.policy.dense import stack, to_device

            self.graphs = to_device(stack([s.graph for s in steps]), device)

    def __call__(self, step: torch.Tensor, agent: torch.Tensor) -> dict[str, torch.Tensor]:
        if self.graphs is None:
            return self.net.encode(self.steps, list(zip(step.tolist(), agent.tolist(), strict=True)))
        from edgeopt.tapfinger.policy.dense import select

        used, inv = torch.unique(step, return_inverse=True)
        return self.net.encode_dense(select(self.graphs, used), inv, agent)
