"""The okita family as the core sees it: its `FamilySpec` (``FAMILY``).

Kept apart from the package's ``__init__`` (which imports the algorithm modules to register them) so
that those modules can import ``FAMILY`` at their top without a cycle.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import FamilySpec
from edgeopt.core.family import ids_of_jobs_list, jobs_and_rejected, model_limits
from edgeopt.okita.instance import PRESETS, Instance, generate
from edgeopt.okita.schedule import Schedule, objective, validate
from edgeopt.okita.views import gantt, gantt_rows, job_rows, usage


def _from_trace(*args: Any, **kwargs: Any) -> Any:
    """`edgeopt.okita.trace.from_trace`, imported on first use (it loads pandas, which a plain run never needs)."""
    from edgeopt.okita.trace import from_trace

    return from_trace(*args, **kwargs)


FAMILY = FamilySpec(
    name="okita",
    paper="Han et al., Online Scheduling Unbiased Distributed Learning over Wireless Edge Networks",
    instance_type=Instance,
    schedule_type=Schedule,
    generate=generate,
    presets=PRESETS,
    validate=validate,
    objective=objective,
    objective_name="latency cost + bandwidth cost sum_i f_i(t_i - a_i + 1) + B_i",
    gantt=gantt,
    gantt_rows=gantt_rows,
    usage=usage,
    job_rows=job_rows,
    job_ids=ids_of_jobs_list,
    listed_jobs=jobs_and_rejected,
    limits=model_limits(Instance, jobs="jobs", servers="sites", sites="sites", horizon="horizon"),
    from_trace=_from_trace,
)
