"""The exact models' answer as the family's `Schedule`, and the infeasible result."""

from __future__ import annotations

import dataclasses
from typing import Any

from edgeopt.core import Result, Status
from formulations.common import SolverOutcome, finish


@dataclasses.dataclass(frozen=True)
class Placement:
    """One job's run: slots [start, end), ``workers`` {server: count}, its PS server, colocation flag."""

    job: int
    start: int
    end: int
    workers: dict[int, int]
    ps_server: int
    colocated: bool


def to_schedule(instance: Any, placements: list[Placement]) -> Any:
    """Build the family's `Schedule` from per-job placements (indexed by position in ``instance.jobs``)."""
    from edgeopt.edgecloud.schedule import JobRun, Schedule

    runs = []
    for p in sorted(placements, key=lambda p: p.job):
        runs.append(
            JobRun(
                job=instance.jobs[p.job].id,
                start=p.start,
                end=p.end,
                workers={int(s): int(c) for s, c in sorted(p.workers.items())},
                ps_server=p.ps_server,
                colocated=p.colocated,
            )
        )
    return Schedule(jobs=runs)


def infeasible_result(instance: Any, method: str, jobs: list[int], runtime_s: float) -> Result:
    """The result for an instance where some job fits nowhere in the horizon (found before any solve)."""
    from edgeopt.edgecloud import FAMILY

    ids = [int(instance.jobs[j].id) for j in jobs]
    outcome = SolverOutcome(Status.INFEASIBLE, None, None, runtime_s, "no mode of these jobs fits the horizon", False)
    return finish(FAMILY, instance, method, outcome, None, extra={"reason": "jobs that fit nowhere", "jobs": ids})
