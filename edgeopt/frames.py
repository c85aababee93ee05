"""Results as pandas DataFrames, written once for every family.

A family's `FamilySpec.job_rows` adapter turns a schedule into `JobRow`
records; this module turns those, comparisons and sweep rows into frames.
pandas is imported here only, so ``import edgeopt`` stays cheap.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

# The job frames are built in the core (`Result.to_frame` needs them and the core imports nothing above it).
from edgeopt.core.tables import JOB_COLUMNS, job_frame, result_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["JOB_COLUMNS", "comparison_frame", "job_frame", "records_frame", "result_frame"]


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
