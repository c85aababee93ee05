"""Job frames: one row per scheduled job of a result, as a pandas DataFrame (pandas imported lazily).

Here, in the core, because `Result.to_frame` builds them and the core imports nothing above it;
`edgeopt.frames` re-exports them next to the comparison and sweep frames.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from edgeopt.core.errors import InputError
from edgeopt.core.views import JobRow

if TYPE_CHECKING:
    import pandas as pd

#: The columns every job frame has, in this order (family-specific columns follow).
JOB_COLUMNS = ("job", "arrival", "start", "end", "placement", "objective")


def job_frame(rows: Iterable[JobRow]) -> pd.DataFrame:
    """One row per `JobRow`: the common columns, then each row's ``extra`` keys, indexed by job."""
    import pandas as pd

    records = []
    for r in rows:
        rec: dict[str, Any] = {c: getattr(r, c) for c in JOB_COLUMNS}
        clash = set(r.extra) & set(JOB_COLUMNS)
        if clash:
            raise ValueError(f"JobRow.extra may not reuse a common column: {sorted(clash)}")
        rec.update(r.extra)
        records.append(rec)
    frame = pd.DataFrame.from_records(records, columns=None if records else list(JOB_COLUMNS))
    return frame.set_index("job", drop=False).rename_axis(None).sort_index()


def result_frame(spec: Any, instance: Any, result: Any) -> pd.DataFrame:
    """One row per scheduled job of ``result``: start, end, placement, its own share of the objective.

    Jobs the result gave up on have no row; their ids are in
    ``frame.attrs["rejected"]``. ``frame.attrs`` also holds the family,
    algorithm, status and objective of the whole result.

    Raises:
        InputError: the result has no schedule, belongs to another family, or
            the family has no ``job_rows`` adapter.
    """
    if result.family != spec.name:
        raise InputError("result.family", f"result of family {result.family!r}, instance of {spec.name!r}")
    if result.schedule is None:
        raise InputError("result.schedule", f"{result.algorithm} returned no schedule ({result.status.value})")
    if spec.job_rows is None:
        raise InputError("family", f"family {spec.name!r} has no job_rows adapter (FamilySpec.job_rows)")
    schedule = spec.parse_schedule(result.schedule)
    frame = job_frame(spec.job_rows(instance, schedule))
    frame.attrs.update(family=result.family, algorithm=result.algorithm, status=result.status.value,
                       objective=result.objective, rejected=list(result.rejected))
    return frame
