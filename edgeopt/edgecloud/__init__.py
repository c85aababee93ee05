"""edgecloud: She et al., "Online Scheduling of Machine Learning Jobs in Edge-Cloud Networks".

Importing the package registers its algorithms (``online``, the baselines).
"""

from edgeopt.core import FamilySpec
from edgeopt.core.family import ids_of_jobs_list, jobs_and_rejected, model_limits
from edgeopt.edgecloud import views as _views
from edgeopt.edgecloud.instance import PRESETS, Instance, generate
from edgeopt.edgecloud.schedule import Schedule, objective, validate

FAMILY = FamilySpec(
    name="edgecloud",
    paper="She, Wang, Zhou, Tian: Online Scheduling of Machine Learning Jobs in Edge-Cloud Networks",
    instance_type=Instance,
    schedule_type=Schedule,
    generate=generate,
    presets=PRESETS,
    validate=validate,
    objective=objective,
    objective_name="total job completion time sum_j (c_j - a_j) [slots]",
    gantt=_views.gantt,
    usage=_views.usage,
    job_rows=_views.job_rows,
    job_ids=ids_of_jobs_list,
    listed_jobs=jobs_and_rejected,
    limits=model_limits(Instance, jobs="jobs", servers="servers", horizon="horizon"),
)

__all__ = ["FAMILY", "Instance", "Schedule", "generate", "objective", "validate"]

# Imported for their side effect: they register `online` and the baselines.
from edgeopt.edgecloud import baselines as baselines
from edgeopt.edgecloud import batchsche as batchsche
from edgeopt.edgecloud import offline as offline
from edgeopt.edgecloud import online as online
