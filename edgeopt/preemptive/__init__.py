"""preemptive: Wang et al., "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud Networks".

Total job completion time of data-parallel ML jobs whose data chunks are
dispatched once to workers on edge servers or the cloud and then trained with
worker-level preemption (MINLP (2)); the fractional flow time ILP (4) is its
lower bound (Lemma 1). Modules: `instance` (data model + generators),
`schedule` (schedule model, validator of (2)/(4), both objectives, preemption
counts), `online` (A_online = A_greedy + A_ps, with its dual values),
`baselines` (A_online-E, SRTF, Tiresias-L, BatchSche of Sec. V, and the
elastic SRTF / Tiresias-L variants that are not the paper's).
"""

from __future__ import annotations

from edgeopt.core import FamilySpec
from edgeopt.core.family import ids_of_jobs_list, jobs_and_rejected, model_limits
from edgeopt.preemptive import views as _views
from edgeopt.preemptive.instance import PRESETS, Instance, generate
from edgeopt.preemptive.schedule import Schedule, fractional_flow_time, objective, validate

FAMILY = FamilySpec(
    name="preemptive",
    paper="Wang et al., Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud Networks (IEEE JSAC 2022)",
    instance_type=Instance,
    schedule_type=Schedule,
    generate=generate,
    presets=PRESETS,
    validate=validate,
    objective=objective,
    objective_name="total JCT sum_j (c_j - r_j)",
    gantt=_views.gantt,
    usage=_views.usage,
    job_rows=_views.job_rows,
    job_ids=ids_of_jobs_list,
    listed_jobs=jobs_and_rejected,
    limits=model_limits(Instance, jobs="jobs", servers="servers", horizon="horizon"),
)

# Importing the algorithm modules registers them.
from edgeopt.preemptive import baselines, online  # noqa: F401

__all__ = ["FAMILY", "Instance", "Schedule", "fractional_flow_time", "generate", "objective", "validate"]
