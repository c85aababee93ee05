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
        label: short text on the bar, written by `bar_label` (e.g. ``"j3 2w+1ps"``).
        arrival: the job's arrival slot, marked on the chart.
    """

    row: str
    job: int
    start: float
    end: float
    label: str = ""
    arrival: float | None = None


#: What a Gantt bar's text says, the same in every family (`bar_label`); charts show it as a legend.
BAR_LABEL_KEY = "bar text: j3 2w+1ps = job 3 holds 2 workers and 1 PS (or 2cpu+1gpu: resource units) on that row"


def bar_label(job: int, held: dict[str, float]) -> str:
    """The one labelling convention of Gantt bars: ``j3 2w+1ps``, ``j5 2cpu+1gpu``, ``j1 1ps``.

    ``held`` maps a unit (``w``, ``ps``, a resource name) to the amount the job holds on the bar's row;
    zero amounts are left out.
    """
    parts = [f"{v:g}{unit}" for unit, v in held.items() if v]
    return f"j{job} " + "+".join(parts) if parts else f"j{job}"


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
