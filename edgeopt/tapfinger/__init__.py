"""tapfinger: Li, Zeng, Zhang, Duan, Wu, "TapFinger: Task Placement and Fine-Grained Resource
Allocation for Edge Machine Learning" (IEEE INFOCOM 2023).

Total completion time of ML tasks placed on edge clusters with a fine-grained (CPU, GPU)
allocation, one start per cluster per timestep, allocations fixed once decided. Modules:
`instance` (data model + generators), `progress` (progress models), `schedule` (schedule model,
validator of (2)-(8), objective, plotting adapters), `env` (the PettingZoo multi-agent
environment), `loop` (runs any policy through it), `baselines` (the paper's baselines and a
greedy bar), `offline` (``offline_fill``, ours: an offline list scheduler, never a competitor). The learned policy of the paper (HAN + pointer network + MAPPO) lives in `policy`
and is registered as ``online`` (with the ablation ``vanilla_marl``) when the ``rl`` extra is
installed; without it ``ONLINE_PENDING`` says so.
"""

from __future__ import annotations

from edgeopt.tapfinger.instance import Instance, generate
from edgeopt.tapfinger.schedule import Schedule, objective, validate
from edgeopt.tapfinger.spec import FAMILY

#: Set when the paper's algorithm (the learned policy, ``online``) cannot be registered: the rl
#: extra (torch, torch-geometric, safetensors) is missing. None once ``online`` is registered.
ONLINE_PENDING: str | None = "the learned policy needs the rl extra: pip install -e '.[rl]'"


# Importing the algorithm modules registers the baselines and offline_fill (edgeopt.core.register).
from edgeopt.tapfinger import baselines, offline  # noqa: F401
from edgeopt.tapfinger.policy import registry as _policy_registry

if _policy_registry.register_all():
    ONLINE_PENDING = None

#: Algorithms whose results may be ``partial`` on the small preset (tests/test_conformance.py): the
#: shipped vanilla_marl ablation learned to give a task the whole CPU and one GPU, which blocks a
#: small cluster for 21 timesteps per sensitive task and can leave a task past the horizon of 64.
MAY_LEAVE_UNFINISHED = {"vanilla_marl": "learned ablation; see docs/reproduction/tapfinger_policy.md"}

__all__ = ["FAMILY", "ONLINE_PENDING", "Instance", "Schedule", "generate", "objective", "validate"]
