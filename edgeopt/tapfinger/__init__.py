"""tapfinger: Li, Zeng, Zhang, Duan, Wu, "TapFinger: Task Placement and Fine-Grained Resource
Allocation for Edge Machine Learning" (IEEE INFOCOM 2023).

Total completion time of ML tasks placed on edge clusters with a fine-grained (CPU, GPU)
allocation, one start per cluster per timestep, allocations fixed once decided. Modules:
`instance` (data model + generators), `progress` (progress models), `schedule` (schedule model,
validator of (2)-(8), objective, plotting adapters), `env` (the PettingZoo multi-agent
environment), `loop` (runs any policy through it), `baselines` (the paper's baselines and a
greedy bar). The learned policy of the paper (HAN + pointer network + MAPPO) lives in `policy`
and is registered as ``online`` (with the ablation ``vanilla_marl``) when the ``rl`` extra is
installed; without it ``ONLINE_PENDING`` says so.
"""

from __future__ import annotations

from edgeopt.core import FamilySpec
from edgeopt.core.family import model_limits
from edgeopt.tapfinger.instance import PRESETS, Instance, generate
from edgeopt.tapfinger.schedule import Schedule, gantt, job_rows, objective, usage, validate

#: Set when the paper's algorithm (the learned policy, ``online``) cannot be registered: the rl
#: extra (torch, torch-geometric, safetensors) is missing. None once ``online`` is registered.
ONLINE_PENDING: str | None = "the learned policy needs the rl extra: pip install -e '.[rl]'"

def task_ids(instance: Instance) -> list[int]:
    """Every task id (ids equal positions in ``tasks``)."""
    return [int(t.id) for t in instance.tasks]


def listed_tasks(schedule: Schedule) -> tuple[list[int], None]:
    """The placed tasks; a tapfinger schedule has no rejected list (a partial result's ``extra`` holds it)."""
    return [int(p.task) for p in schedule.placements], None


FAMILY = FamilySpec(
    name="tapfinger",
    paper="Li, Zeng, Zhang, Duan, Wu, TapFinger: Task Placement and Fine-Grained Resource Allocation "
          "for Edge Machine Learning (IEEE INFOCOM 2023)",
    instance_type=Instance,
    schedule_type=Schedule,
    generate=generate,
    presets=PRESETS,
    validate=validate,
    objective=objective,
    objective_name="total completion time sum_j (end_j - arrival_j)",
    gantt=gantt,
    usage=usage,
    job_rows=job_rows,
    job_ids=task_ids,
    listed_jobs=listed_tasks,
    limits=model_limits(Instance, jobs="tasks", servers="clusters", clusters="clusters", horizon="horizon"),
)

# Importing the algorithm module registers the baselines (edgeopt.core.register).
from edgeopt.tapfinger import baselines  # noqa: F401
from edgeopt.tapfinger.policy import registry as _policy_registry

if _policy_registry.register_all():
    ONLINE_PENDING = None

#: Algorithms whose results may be ``partial`` on the small preset (tests/test_conformance.py): the
#: shipped vanilla_marl ablation learned to give a task the whole CPU and one GPU, which blocks a
#: small cluster for 21 timesteps per sensitive task and can leave a task past the horizon of 64.
MAY_LEAVE_UNFINISHED = {"vanilla_marl": "learned ablation; see docs/reproduction/tapfinger_policy.md"}

__all__ = ["FAMILY", "ONLINE_PENDING", "Instance", "Schedule", "generate", "objective", "validate"]
