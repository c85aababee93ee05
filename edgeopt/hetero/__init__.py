"""hetero: Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed Machine Learning Jobs".

Total weighted completion time of ML training jobs that choose their worker and
PS types, their numbers, their placement (colocated or distributed) and their
execution window; PS and Ring-AllReduce architectures. Modules:
`instance` (data model + generators), `schedule` (schedule model, validator of
program (2)/(15), objective), `online` (A_online and its subroutines),
`baselines` (FIFO, DRF of Sec. 7; non-preemptive AntMan and Tiresias),
`preemptive` (AntMan and Tiresias of Sec. 7 with preemption: relaxed), `offline` (``offline_fill``,
ours: an offline list scheduler that gives complete schedules where the online algorithms reject jobs).
"""

from __future__ import annotations

from edgeopt.core import FamilySpec
from edgeopt.core.family import ids_of_jobs_list, jobs_and_rejected, model_limits
from edgeopt.hetero import views as _views
from edgeopt.hetero.instance import PRESETS, Instance, generate
from edgeopt.hetero.schedule import Schedule, objective, validate

FAMILY = FamilySpec(
    name="hetero",
    paper="Zhou et al., Online Scheduling Algorithm for Heterogeneous Distributed Machine Learning Jobs (IEEE TCC)",
    instance_type=Instance,
    schedule_type=Schedule,
    generate=generate,
    presets=PRESETS,
    validate=validate,
    objective=objective,
    objective_name="total weighted completion time sum_j w_j (t_j + d_j)",
    gantt=_views.gantt,
    usage=_views.usage,
    job_rows=_views.job_rows,
    job_ids=ids_of_jobs_list,
    listed_jobs=jobs_and_rejected,
    limits=model_limits(Instance, jobs="jobs", servers="servers", horizon="horizon"),
)

# Importing the algorithm modules registers them (edgeopt.core.register).
from edgeopt.hetero import baselines, offline, online, preemptive  # noqa: F401

__all__ = ["FAMILY", "Instance", "Schedule", "generate", "objective", "validate"]
