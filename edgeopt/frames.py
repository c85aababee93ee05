"""Results as pandas DataFrames, written once for every family.

A family's `FamilySpec.job_rows` adapter turns a schedule into `JobRow`
records; this module turns those, comparisons and sweep rows into frames.
pandas is imported here only, so ``import edgeopt`` stays cheap.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
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


def comparison_frame(comparison: Any) -> pd.DataFrame:
    """One row per algorithm of a `Comparison`, indexed by algorithm name; violations joined by ``; ``."""
    import pandas as pd

    records = []
    for row in comparison.rows:
        rec = dataclasses.asdict(row)
        rec["violations"] = "; ".join(rec["violations"])
        records.append(rec)
    frame = pd.DataFrame.from_records(records)
    if not frame.empty:
        frame = frame.set_index("algorithm", drop=False).rename_axis(None)
    frame.attrs.update(family=comparison.family, objective_name=comparison.objective_name,
                       reference=comparison.reference, reference_name=comparison.reference_name)
    return frame


def records_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A frame of flat JSON records (e.g. the rows of a sweep), nested objects flattened with dots.

    Rows with ``ratio`` and ``reference`` (a sweep's) also get `split_ratios`'s two columns.
    """
    import pandas as pd

    return split_ratios(pd.json_normalize(list(rows)))


def split_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``ratio_to_optimum`` and ``ratio_to_bound``: a sweep row's ``ratio`` under the column of what it
    is against (its ``reference``), so that a mean over a column never mixes the two. Returns ``frame``."""
    if {"ratio", "reference"} <= set(frame.columns) and "ratio_to_optimum" not in frame.columns:
        ratio = frame["ratio"].astype(float)
        frame["ratio_to_optimum"] = ratio.where(frame["reference"] == "optimum")
        frame["ratio_to_bound"] = ratio.where(frame["reference"] == "bound")
    return frame
