"""What a family hands the shared plotting and DataFrame code: small, family-free records.

A family's adapter turns its schedule into these rows; the drawing
(`edgeopt.viz`) and the tabular export (`Result.to_frame` through
`edgeopt.frames`) are written once for every family.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class GanttBar:
    """One bar of a Gantt chart: job ``job`` holds row ``row`` over slots [start, end).

    Attributes:
        row: resource row label, e.g. ``"server 3 / workers"`` or ``"site 2"``.
        job: the job (or task) id; bars are coloured by it.
        start: first slot (inclusive).
        end: end slot (exclusive).
        label: short text on the bar (e.g. ``"j3 x4"``).
        arrival: the job's arrival slot, marked on the chart.
    """

    row: str
    job: int
    start: float
    end: float
    label: str = ""
    arrival: float | None = None


@dataclasses.dataclass(frozen=True)
class UsageSeries:
    """Used capacity of one resource over time.

    Attributes:
        resource: e.g. ``"gpu"`` or ``"workers (edge)"``.
        used: used amount per slot (length = horizon shown).
        capacity: total capacity per slot (same length), or a constant.
    """

    resource: str
    used: list[float]
    capacity: list[float] | float


@dataclasses.dataclass(frozen=True)
class JobRow:
    """One scheduled job, for `Result.to_frame`.

    Attributes:
        job: id.
        arrival: arrival slot.
        start: first slot it runs (None if rejected).
        end: completion (exclusive end slot; None if rejected).
        placement: short summary (servers, sites or cluster).
        objective: its own contribution to the family's objective.
        extra: further family-specific columns.
    """

    job: int
    arrival: float
    start: float | None
    end: float | None
    placement: str
    objective: float | None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
