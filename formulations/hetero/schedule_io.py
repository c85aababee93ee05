"""Placements read back from a solved model, turned into the family's `Schedule`."""

from __future__ import annotations

import dataclasses
from typing import Any

from edgeopt.core import FamilySpec, Result
from formulations.common import SolverOutcome, finish


@dataclasses.dataclass(frozen=True)
class Placement:
    """One scheduled job as a model chose it (absolute slots; ``ps_type`` -1 for Ring-AllReduce)."""

    job: int
    start: int
    duration: int
    worker_type: int
    ps_type: int
    colocated: bool
    workers: dict[int, int]
    ps: dict[int, int]


def to_schedule(instance: Any, placements: list[Placement], *, rejected: list[int] | None = None) -> Any:
    """The family's `Schedule` of ``placements`` (jobs not placed are listed as rejected when asked)."""
    from edgeopt.hetero.schedule import JobSchedule, Schedule

    jobs = [
        JobSchedule(
            job=int(instance.jobs[p.job].id),
            start=p.start,
            duration=p.duration,
            worker_type=p.worker_type,
            ps_type=None if p.ps_type is None or p.ps_type < 0 else p.ps_type,
            colocated=p.colocated,
            workers={int(h): int(n) for h, n in sorted(p.workers.items()) if n > 0},
            ps={int(h): int(n) for h, n in sorted(p.ps.items()) if n > 0},
        )
        for p in sorted(placements, key=lambda q: q.job)
    ]
    return Schedule(jobs=jobs, rejected=sorted(rejected or []))


def infeasible_result(family: FamilySpec, instance: Any, method: str, outcome: SolverOutcome, *,
                      extra: dict[str, Any], build_s: float) -> Result:
    """A result without a schedule: proven infeasible, or a time limit with no incumbent."""
    return finish(family, instance, method, outcome, None, extra=extra, build_s=build_s)
