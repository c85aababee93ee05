"""What a family package exposes, so the CLI and the test suites can treat all alike."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pydantic

from edgeopt.core.errors import InputError
from edgeopt.core.jsonio import sha256_of, to_json_text
from edgeopt.core.registry import exact_method_names, registered
from edgeopt.core.result import Result, Status
from edgeopt.core.specs import add_spec
from edgeopt.core.validation import Violation
from edgeopt.core.views import GanttBar, JobRow, UsageSeries

#: Every `FamilySpec` built so far, by name: a family registers itself when its package is imported.


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
        gantt_rows: adapter ``gantt_rows(instance) -> list[str]``: the name `gantt` gives each server
            (site, cluster) of the instance, by its index, so a chart's rows can be chosen by index
            (``--servers 0-9``) as well as by name, and an idle one is known too.
        job_rows: adapter ``job_rows(instance, schedule) -> list[JobRow]`` for `Result.to_frame`.
        job_ids: adapter ``job_ids(instance) -> list[int]``: the ids of every job (task) of the instance.
        listed_jobs: adapter ``listed_jobs(schedule) -> (scheduled, rejected)``: the ids the schedule
            schedules, in order and with repetitions (so a job listed twice shows), and the ids it lists
            as rejected, or None when the family's schedule has no such list (the result's
            ``extra["rejected"]`` is then the only list). `check_coverage` holds every family to one rule
            with these two.
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
    gantt_rows: Callable[[Any], list[str]] | None = None
    job_rows: Callable[[Any, Any], list[JobRow]] | None = None
    job_ids: Callable[[Any], list[int]] | None = None
    listed_jobs: Callable[[Any], tuple[list[int], list[int] | None]] | None = None
    limits: Mapping[str, int] = dataclasses.field(default_factory=dict)
    from_trace: Callable[..., Any] | None = None
    trace_options: Sequence[str] = ()

    def __post_init__(self) -> None:
        add_spec(self)  # so the core finds a family's adapters by name (`edgeopt.core.specs.spec_named`)

    def ids_of_jobs(self, instance: Any) -> list[int]:
        """Every job id of ``instance`` (the family's `job_ids` adapter; ``instance.jobs`` positions otherwise)."""
        if self.job_ids is not None:
            return list(self.job_ids(instance))
        return list(range(len(getattr(instance, "jobs", []) or [])))

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

        Checked: the family and instance hash; every job scheduled or rejected exactly once
        (`check_coverage`); an ``optimal`` claim has a zero gap and an exact producer
        (`check_optimal_claim`); the schedule against the family's validator; the
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
        out.extend(self.check_coverage(instance, result, schedule))
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
        out: list[Violation] = []
        ids = set(self.ids_of_jobs(instance))
        n_jobs = len(ids)
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
        if result.status == Status.OPTIMAL:
            out.extend(check_optimal_claim(result, exact_method_names(self.name), algo is not None))
        rejected = result.rejected
        unknown = sorted(set(rejected) - ids)
        if unknown:
            out.append(Violation("rejected", f"names jobs that do not exist: {unknown[:5]}"))
        if len(set(rejected)) != len(rejected):
            out.append(Violation("rejected", "extra.rejected lists a job more than once"))
        if "rejected_count" in result.extra and result.extra["rejected_count"] != len(rejected):
            out.append(Violation("rejected", f"extra.rejected_count is {result.extra['rejected_count']}, "
                                             f"extra.rejected lists {len(rejected)}"))
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

    def check_coverage(self, instance: pydantic.BaseModel, result: Result, schedule: Any) -> list[Violation]:
        """The one rule on jobs, for every family: each job of the instance is scheduled or listed as
        rejected, never both, never neither, and never twice; the rejected ids in the schedule (where
        the family's schedule has such a list) and in ``extra["rejected"]`` are the same set.

        With the status rules of `_check_claims` (``optimal``, ``feasible`` and ``time_limit`` reject
        nothing, ``partial`` rejects at least one job) a result cannot drop a job unnoticed, even with
        its objective recomputed over the jobs that are left.
        """
        if self.listed_jobs is None:
            return []
        out: list[Violation] = []
        ids = set(self.ids_of_jobs(instance))
        scheduled, in_schedule = self.listed_jobs(schedule)
        in_extra = result.rejected
        if in_schedule is not None and sorted(set(in_schedule)) != sorted(set(in_extra)):
            out.append(Violation("rejected", f"the schedule rejects {_ids(in_schedule)} but extra.rejected "
                                             f"lists {_ids(in_extra)}: the two must agree"))
        rejected = set(in_extra) | set(in_schedule or [])
        counts: dict[int, int] = {}
        for j in scheduled:
            counts[j] = counts.get(j, 0) + 1
        for j in sorted(j for j, k in counts.items() if k > 1)[:20]:
            out.append(Violation("coverage", f"scheduled {counts[j]} times", j))
        unknown = sorted(set(counts) - ids)
        if unknown:
            out.append(Violation("coverage", f"the schedule names jobs that do not exist: {_ids(unknown)}"))
        for j in sorted(set(counts) & rejected)[:20]:
            out.append(Violation("coverage", "both scheduled and rejected", j))
        missing = sorted(ids - set(counts) - rejected)
        for j in missing[:20]:
            out.append(Violation("coverage", "neither scheduled nor listed as rejected", j))
        if len(missing) > 20:
            out.append(Violation("coverage", f"{len(missing) - 20} more jobs neither scheduled nor rejected"))
        return out


def ids_of_jobs_list(instance: Any) -> list[int]:
    """`FamilySpec.job_ids` of a family whose jobs are ``instance.jobs``, each id its position."""
    return [int(job.id) for job in instance.jobs]


def jobs_and_rejected(schedule: Any) -> tuple[list[int], list[int] | None]:
    """`FamilySpec.listed_jobs` of a family whose schedule has ``jobs`` (each with ``job``) and ``rejected``."""
    return [int(js.job) for js in schedule.jobs], [int(j) for j in schedule.rejected]


def _ids(ids: Sequence[int]) -> str:
    ids = sorted(set(ids))
    return str(ids) if len(ids) <= 8 else f"{ids[:8]} and {len(ids) - 8} more"


#: Relative tolerance of "zero gap". Exact models stop at a relative gap of 1e-6 (formulations.common.REL_GAP),
#: and their bound is the solver's while the objective is recomputed from the schedule (the two may differ
#: by 1e-5 relative before `formulations.common` calls it a defect): 1e-4 covers both with room.
ZERO_GAP_RTOL = 1e-4


def check_optimal_claim(result: Result, exact: set[str] | None, by_algorithm: bool) -> list[Violation]:
    """What is wrong with an ``optimal`` claim that the result itself shows: optimal means a zero gap (a
    bound equal to the objective, within `ZERO_GAP_RTOL`) and a result of an exact method. ``exact`` is the
    family's exact methods (None: unknown, that part is not checked); a registered algorithm is reported
    by `_check_claims` already. Whether the objective IS the optimum needs a re-solve: ``validate --certify``.
    """
    out: list[Violation] = []
    obj, bound = result.objective, result.bound
    if obj is None and result.schedule is None:
        return out  # a bound model solved to optimality (no schedule): its bound is checked as a bound
    if obj is None:
        out.append(Violation("optimal", "optimal without an objective"))
    elif bound is None:
        out.append(Violation("optimal", "optimal claims a zero gap but states no bound"))
    elif obj - bound > ZERO_GAP_RTOL * max(1.0, abs(obj)):
        out.append(Violation("optimal", f"optimal claims a zero gap, but bound {bound} < objective {obj} "
                                        f"(gap {(obj - bound) / max(1e-12, abs(obj)):.3g})"))
    if exact is not None and not by_algorithm and result.algorithm not in exact:
        known = ", ".join(sorted(exact)) or "none"
        out.append(Violation("optimal", f"{result.algorithm!r} is not an exact method of this family "
                                        f"(exact: {known}); only an exact method proves optimality"))
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
