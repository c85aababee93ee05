"""What a family package exposes, so the CLI and the test suites can treat all alike."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pydantic

from edgeopt.core.errors import InputError
from edgeopt.core.jsonio import sha256_of, to_json_text
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
        limits: the largest value `generate` may be asked for, per argument (``jobs``, ``servers``,
            ``horizon``, a family option such as ``clusters``), read from the instance model by
            `model_limits` so that a generated and a loaded instance are held to the same caps;
            `check_limits` refuses a larger value before anything is drawn.
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
    limits: Mapping[str, int] = dataclasses.field(default_factory=dict)

    def check_limits(self, **values: Any) -> None:
        """InputError naming the argument when one of ``values`` is above the family's limit (`limits`)."""
        for name, value in values.items():
            cap = self.limits.get(name)
            if cap is not None and isinstance(value, int) and not isinstance(value, bool) and value > cap:
                raise InputError(name, f"must be <= {cap:,} for {self.name}, got {value:,}")

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
        """Every way ``result`` disagrees with ``instance``, i.e. every claim in it that does not hold.

        Checked: the family and instance hash; the schedule against the family's validator; the
        stated objective against the schedule's; the bound (never above the objective, and no
        bound at all from a registered algorithm, which proves nothing); the status (an algorithm
        returns ``feasible`` or ``partial``, ``partial`` lists its rejected jobs, every listed id
        is a job of the instance); an ``infeasible`` claim carries a reason, and it is refuted
        when a rejected job is scheduled alone on the idle cluster by one of the family's
        algorithms, or when an algorithm schedules every job (`refute_infeasible`).
        A validator or objective that cannot even read the schedule (a job id that does not exist)
        is reported as a violation, never a traceback.
        """
        out: list[Violation] = []
        if result.family != self.name:
            out.append(Violation("result", f"result of family {result.family!r}, instance of {self.name!r}"))
            return out
        if result.instance_sha256 != instance_sha256(instance):
            out.append(Violation("result", "instance_sha256 does not match this instance"))
        out.extend(self._check_claims(instance, result))
        if result.schedule is None:
            if result.status in (Status.OPTIMAL, Status.FEASIBLE, Status.PARTIAL):
                out.append(Violation("result", f"status {result.status.value} but no schedule"))
            if result.objective is not None:
                out.append(Violation("objective", f"stated {result.objective} without a schedule"))
            return out
        if result.status == Status.INFEASIBLE:
            out.append(Violation("result", "status infeasible but a schedule is given"))
        schedule = self.parse_schedule(result.schedule)
        try:
            violations = list(self.validate(instance, schedule))
        except Exception as exc:  # noqa: BLE001 - a schedule the validator cannot read is invalid
            return [*out, Violation("schedule", f"cannot be checked: {exc.__class__.__name__}: {exc}")]
        out.extend(violations)
        if violations:
            return out  # the objective of an invalid schedule may not even be defined
        try:
            actual = float(self.objective(instance, schedule))
        except Exception as exc:  # noqa: BLE001
            return [*out, Violation("objective", f"cannot be computed: {exc.__class__.__name__}: {exc}")]
        if result.objective is None or abs(result.objective - actual) > 1e-6 * max(1.0, abs(actual)):
            out.append(Violation("objective", f"stated {result.objective}, schedule gives {actual}"))
        return out

    def _check_claims(self, instance: pydantic.BaseModel, result: Result) -> list[Violation]:
        from edgeopt.core.registry import registered

        out: list[Violation] = []
        n_jobs = len(getattr(instance, "jobs", []) or [])
        obj, bound = result.objective, result.bound
        if bound is not None and obj is not None and bound > obj + 1e-6 * max(1.0, abs(obj)):
            out.append(Violation("bound", f"bound {bound} is above the objective {obj}: a lower bound cannot be"))
        algo = registered(self.name).get(result.algorithm)
        if algo is not None:
            if bound is not None:
                out.append(Violation("bound", f"algorithm {result.algorithm!r} proves no bound, yet states {bound}"))
            if result.status not in (Status.FEASIBLE, Status.PARTIAL):
                out.append(Violation("status", f"algorithm {result.algorithm!r} cannot claim "
                                               f"{result.status.value} (only feasible or partial)"))
        rejected = result.rejected
        unknown = [j for j in rejected if not 0 <= j < n_jobs]
        if unknown:
            out.append(Violation("rejected", f"names jobs that do not exist: {unknown[:5]}"))
        if result.status == Status.PARTIAL and not rejected:
            out.append(Violation("status", "partial but extra.rejected lists no job"))
        if result.status.complete and rejected:
            out.append(Violation("status", f"{result.status.value} but jobs {rejected[:5]} are rejected"))
        if result.status == Status.INFEASIBLE:
            reason = result.extra.get("reason")
            if not (isinstance(reason, str) and reason.strip()) and not rejected:
                out.append(Violation("status", "infeasible without a reason (extra.reason) or rejected jobs"))
            elif n_jobs == 0:
                out.append(Violation("status", "infeasible, but an instance without jobs is trivially feasible"))
            else:
                out.extend(refute_infeasible(self, instance, [j for j in rejected if j not in unknown]))
        return out

def model_limits(model: type[pydantic.BaseModel], **fields: str) -> dict[str, int]:
    """``{argument: cap}`` from the model: a list field's ``max_length``, a number's ``le``.

    ``model_limits(Instance, jobs="tasks", horizon="horizon")`` gives the caps of ``jobs`` (the
    length of ``tasks``) and ``horizon``. A field without such a cap is a defect of the model.
    """
    out = {}
    for arg, name in fields.items():
        meta = model.model_fields[name].metadata
        caps = [int(m.max_length) for m in meta if getattr(m, "max_length", None) is not None]
        caps += [int(m.le) for m in meta if getattr(m, "le", None) is not None]
        if not caps:
            raise TypeError(f"{model.__name__}.{name} declares no cap (max_length or le)")
        out[arg] = min(caps)
    return out


def instance_sha256(instance: pydantic.BaseModel) -> str:
    """Hash of an instance's canonical JSON (what `Result.instance_sha256` holds)."""
    return sha256_of(instance.model_dump(mode="json"))


_FIELD_PREFIX = re.compile(r"^([A-Za-z_][\w]*(?:\.\w+)+): ")


def parse_model(cls: type[pydantic.BaseModel], data: Any, *, root: str) -> Any:
    """Validate ``data`` into ``cls``; errors become one `InputError` naming the first field and listing all.

    Types are strict, as JSON writes them (pydantic's strict JSON mode, whatever the models' own
    config): a boolean or a string where a number belongs is an error (``true`` is not a worker
    count, ``"1"`` not a job id), an integer is accepted where a float belongs, and a fractional
    number (even ``2.0``) is an error where an integer belongs: a fractional worker count is bad
    input (exit 2) at parse time, never a violation later.
    """
    try:
        return cls.model_validate_json(to_json_text(data), strict=True)
    except pydantic.ValidationError as exc:
        raise input_error(exc, data, root=root) from None
    except RecursionError:
        raise InputError(root, "nested too deeply") from None
    except (TypeError, ValueError) as exc:  # data that is not JSON at all (from the Python API)
        raise InputError(root, f"cannot be read as JSON data: {exc}"[:300]) from None


def input_error(exc: pydantic.ValidationError, data: Any, *, root: str) -> InputError:
    """One `InputError` for a pydantic error: the first field named, every error listed in ``details``."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in (root, *_data_path(data, err["loc"])))
        msg = str(err["msg"]).removeprefix("Value error, ").replace("\n", " ")
        # a model-level validator names the field at the start of its message ("jobs.3.arrival: ...")
        field = _FIELD_PREFIX.match(msg)
        if field:
            loc, msg = f"{loc}.{field.group(1)}", msg[field.end():]
        lines.append((loc, msg))
    loc, msg = lines[0]
    return InputError(loc, msg, details=[f"{lo}: {m}" for lo, m in lines])


def _data_path(data: Any, loc: tuple) -> list:
    """``loc`` without the entries pydantic inserts that are not in the data (a tagged union's tag,
    e.g. ``latency_cost.piecewise.tau`` -> ``latency_cost.tau``), so the error names the field as written.

    An entry absent from its dict is a tag when the entry after it is in that same dict, or is the
    last one (pydantic reports a missing field of the tagged model one level below the tag)."""
    out, node = [], data
    for k, part in enumerate(loc):
        is_tag = (isinstance(node, dict) and part not in node and k + 1 < len(loc)
                  and (loc[k + 1] in node or k + 2 == len(loc)))
        if is_tag:
            continue
        out.append(part)
        inside = (isinstance(node, dict) and part in node
                  or isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node))
        node = node[part] if inside else None
    return out


def _complete_by_some_algorithm(spec: FamilySpec, instance: pydantic.BaseModel) -> str | None:
    """The name of a (non-relaxed) registered algorithm that schedules every job validly, if any."""
    from edgeopt.core.registry import registered

    for name, algo in registered(spec.name).items():
        if algo.relaxed:
            continue
        try:
            res = algo(instance, seed=0)
            if res.status.complete and res.schedule is not None and not spec.validate(
                    instance, spec.parse_schedule(res.schedule)):
                return name
        except Exception:  # noqa: BLE001, S112 - an algorithm that fails refutes nothing
            continue
    return None


def refute_infeasible(spec: FamilySpec, instance: pydantic.BaseModel, rejected: Sequence[int]) -> list[Violation]:
    """Evidence against an ``infeasible`` claim, from the family's own algorithms (so it works for every
    family): a rejected job that one of them schedules alone on the idle cluster, or a valid
    schedule of every job. Empty when nothing refutes the claim (it may still be wrong)."""
    out: list[Violation] = []
    jobs = list(getattr(instance, "jobs", []) or [])
    for j in list(rejected)[:20]:
        try:
            alone = instance.model_copy(update={"jobs": [jobs[j].model_copy(update={"id": 0})]})
        except Exception:  # noqa: BLE001, S112 - a family whose jobs do not renumber like this
            continue
        name = _complete_by_some_algorithm(spec, alone)
        if name is not None:
            out.append(Violation("infeasible", f"rejected job fits alone on the idle cluster ({name} schedules it)",
                                 job=j))
    if not out and len(jobs) <= 500:
        name = _complete_by_some_algorithm(spec, instance)
        if name is not None:
            out.append(Violation("infeasible", f"claimed infeasible, but {name} schedules every job validly"))
    return out
