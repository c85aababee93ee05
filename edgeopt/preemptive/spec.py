"""The preemptive family as the core sees it: its `FamilySpec` (``FAMILY``).

Kept apart from the package's ``__init__`` (which imports the algorithm modules to register them) so
that those modules can import ``FAMILY`` at their top without a cycle.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import FamilySpec
from edgeopt.core.family import ids_of_jobs_list, jobs_and_rejected, model_limits
from edgeopt.preemptive import views as _views
from edgeopt.preemptive.instance import PRESETS, Instance, generate
from edgeopt.preemptive.schedule import Schedule, objective, validate


def _from_trace(*args: Any, **kwargs: Any) -> Any:
    """`edgeopt.preemptive.trace.from_trace`, imported on first use (it loads pandas, which a plain run never needs)."""
    from edgeopt.preemptive.trace import from_trace

    return from_trace(*args, **kwargs)


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
    gantt_rows=_views.gantt_rows,
    usage=_views.usage,
    job_rows=_views.job_rows,
    job_ids=ids_of_jobs_list,
    listed_jobs=jobs_and_rejected,
    limits=model_limits(Instance, jobs="jobs", servers="servers", horizon="horizon"),
    from_trace=_from_trace,
)
