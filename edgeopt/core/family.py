"""What a family package exposes, so the CLI and the test suites can treat all alike."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import pydantic

from edgeopt.core.errors import InputError
from edgeopt.core.jsonio import sha256_of
from edgeopt.core.result import Result, Status
from edgeopt.core.validation import Violation
from edgeopt.core.views import GanttBar, JobRow, UsageSeries


@dataclasses.dataclass(frozen=True)
class FamilySpec:
    """A problem family: its data models, generators, validator and objective.

    Attributes:
        name: ``hetero``, ``edgecloud``, ...
        paper: short citation.
        instance_type: pydantic model of an instance (validated on load).
        schedule_type: pydantic model of a schedule.
        generate: ``generate(preset, *, seed, jobs=None, servers=None, horizon=None) -> instance``.
        presets: the generator presets; the first is the default.
        validate: ``validate(instance, schedule) -> list[Violation]`` (empty when valid).
        objective: ``objective(instance, schedule) -> float`` (the paper's, minimised).
        objective_name: what the objective is, for tables.
        gantt: adapter ``gantt(instance, schedule) -> list[GanttBar]`` for the shared Gantt chart.
        usage: adapter ``usage(instance, schedule) -> list[UsageSeries]`` for the utilisation plot.
        job_rows: adapter ``job_rows(instance, schedule) -> list[JobRow]`` for `Result.to_frame`.
    """

    name: str
    paper: str
    instance_type: type[pydantic.BaseModel]
    schedule_type: type[pydantic.BaseModel]
    generate: Callable[..., pydantic.BaseModel]
    presets: Sequence[str]
    validate: Callable[[Any, Any], list[Violation]]
    objective: Callable[[Any, Any], float]
    objective_name: str
    gantt: Callable[[Any, Any], list[GanttBar]] | None = None
    usage: Callable[[Any, Any], list[UsageSeries]] | None = None
    job_rows: Callable[[Any, Any], list[JobRow]] | None = None

    def parse_instance(self, data: Any) -> pydantic.BaseModel:
        return parse_model(self.instance_type, data, root="instance")

    def parse_schedule(self, data: Any) -> pydantic.BaseModel:
        return parse_model(self.schedule_type, data, root="schedule")

    def algorithm_result(
        self,
        instance: pydantic.BaseModel,
        algorithm: str,
        schedule: pydantic.BaseModel,
        runtime_s: float,
        *,
        rejected: Sequence[int] = (),
        extra: dict[str, Any] | None = None,
    ) -> Result:
        """The `Result` of a heuristic or online algorithm.

        Status is ``feasible`` when every job is scheduled and ``partial`` when
        some were rejected: they are listed in ``extra["rejected"]`` with their
        count in ``extra["rejected_count"]``; the objective then covers the
        scheduled jobs only and is never ranked or compared with an optimum.
        Algorithms never claim a bound.
        """
        extra = dict(extra or {})
        rejected = sorted(int(j) for j in rejected)
        if rejected:
            extra["rejected"] = rejected
            extra["rejected_count"] = len(rejected)
        return Result(
            family=self.name,
            algorithm=algorithm,
            status=Status.PARTIAL if rejected else Status.FEASIBLE,
            objective=float(self.objective(instance, schedule)),
            bound=None,
            runtime_s=runtime_s,
            schedule=schedule.model_dump(mode="json"),
            instance_sha256=instance_sha256(instance),
            extra=extra,
        )

    def check_result(self, instance: pydantic.BaseModel, result: Result) -> list[Violation]:
        """Every way ``result`` disagrees with ``instance``: its schedule's violations,
        a stated objective that is not the schedule's, a result of another instance."""
        out: list[Violation] = []
        if result.family != self.name:
            out.append(Violation("result", f"result of family {result.family!r}, instance of {self.name!r}"))
            return out
        if result.instance_sha256 != instance_sha256(instance):
            out.append(Violation("result", "instance_sha256 does not match this instance"))
        if result.schedule is None:
            if result.status in (Status.OPTIMAL, Status.FEASIBLE):
                out.append(Violation("result", f"status {result.status.value} but no schedule"))
            return out
        schedule = self.parse_schedule(result.schedule)
        out.extend(self.validate(instance, schedule))
        actual = float(self.objective(instance, schedule))
        if result.objective is None or abs(result.objective - actual) > 1e-6 * max(1.0, abs(actual)):
            out.append(Violation("objective", f"stated {result.objective}, schedule gives {actual}"))
        return out


def instance_sha256(instance: pydantic.BaseModel) -> str:
    """Hash of an instance's canonical JSON (what `Result.instance_sha256` holds)."""
    return sha256_of(instance.model_dump(mode="json"))


def parse_model(cls: type[pydantic.BaseModel], data: Any, *, root: str) -> Any:
    """Validate ``data`` into ``cls``; the first error becomes an `InputError` naming its field."""
    try:
        return cls.model_validate(data)
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in (root, *err["loc"]))
        msg = err["msg"]
        msg = msg.removeprefix("Value error, ")
        raise InputError(loc, msg) from None
