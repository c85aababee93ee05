"""Encoding minibatches of stored timesteps, shared by MAPPO's update (`trainer`) and cloning (`imitation`)."""

from __future__ import annotations

import torch


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
