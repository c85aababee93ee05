"""The tapfinger family as the core sees it: its `FamilySpec` (``FAMILY``).

Kept apart from the package's ``__init__`` (which imports the algorithm modules to register them) so
that those modules can import ``FAMILY`` at their top without a cycle.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import FamilySpec
from edgeopt.core.family import model_limits
from edgeopt.tapfinger.instance import PRESETS, Instance, generate
from edgeopt.tapfinger.schedule import Schedule, gantt, gantt_rows, job_rows, objective, usage, validate


def _from_trace(*args: Any, **kwargs: Any) -> Any:
    """`edgeopt.tapfinger.trace.from_trace`, imported on first use (it loads pandas, which a plain run never needs)."""
    from edgeopt.tapfinger.trace import from_trace

    return from_trace(*args, **kwargs)


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
    gantt_rows=gantt_rows,
    usage=usage,
    job_rows=job_rows,
    job_ids=task_ids,
    listed_jobs=listed_tasks,
    limits=model_limits(Instance, jobs="tasks", servers="clusters", clusters="clusters", horizon="horizon"),
    from_trace=_from_trace,
    trace_options=("task_types",),
)
