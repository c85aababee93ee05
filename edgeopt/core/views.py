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
        used: used amount per slot (length = horizon shown); with ``edges``, one amount per step.
        capacity: total capacity per entry of ``used`` (same length), or a constant.
        edges: None, or a step function: ``used[i]`` holds over slots ``[edges[i], edges[i + 1])``
            (``len(edges) == len(used) + 1``). Families whose horizon runs to millions of slots give
            this (`step_usage`): a series then costs its number of changes, not the horizon's length.
    """

    resource: str
    used: list[float]
    capacity: list[float] | float
    edges: list[float] | None = None

    def per_slot(self) -> list[float]:
        """``used`` slot by slot from slot 0 (a step series expanded: for small horizons and tests only)."""
        if self.edges is None:
            return list(self.used)
        out = [0.0] * int(self.edges[-1]) if self.edges else []
        for lo, hi, v in zip(self.edges[:-1], self.edges[1:], self.used, strict=True):
            out[int(lo):int(hi)] = [float(v)] * (int(hi) - int(lo))
        return out


def step_usage(start: Any, end: Any, amount: Any, horizon: int) -> tuple[list[float], list[float]]:
    """The total amount held over slots [0, horizon) by intervals ``[start[i], end[i])`` holding ``amount[i]``.

    Returns ``(edges, used)`` for a step `UsageSeries`: an event sweep over the interval ends, so the
    memory is that of the intervals, never of the horizon. Where no interval is active the amount is
    exactly 0 (float sums of +a and -a could leave a residue, which a chart would draw as use).
    Intervals are clipped to [0, horizon); empty ones are left out.
    """
    import numpy as np

    s = np.clip(np.asarray(start, dtype=float), 0, horizon)
    e = np.clip(np.asarray(end, dtype=float), 0, horizon)
    a = np.broadcast_to(np.asarray(amount, dtype=float), s.shape)
    keep = (e > s) & (a != 0)
    s, e, a = s[keep], e[keep], a[keep]
    edges, where = np.unique(np.concatenate([[0.0, float(horizon)], s, e]), return_inverse=True)
    n = s.size
    delta = np.zeros(edges.size)
    active = np.zeros(edges.size, dtype=np.int64)
    np.add.at(delta, where[2:2 + n], a)
    np.add.at(delta, where[2 + n:], -a)
    np.add.at(active, where[2:2 + n], 1)
    np.add.at(active, where[2 + n:], -1)
    used = np.cumsum(delta)[:-1]
    used[np.cumsum(active)[:-1] == 0] = 0.0
    if used.size == 0:  # horizon 0
        return [0.0, 0.0], [0.0]
    change = np.concatenate([[True], used[1:] != used[:-1]])  # one step per change of value
    return np.concatenate([edges[:-1][change], edges[-1:]]).tolist(), used[change].tolist()


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
