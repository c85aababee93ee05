"""The `Result` every algorithm and exact model returns.

One schedule format, many producers: an online algorithm, a baseline and an
exact solver all return a `Result`; the family's validator checks its
``schedule`` knowing nothing of who produced it.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from edgeopt.core import jsonio
from edgeopt.core.errors import InputError
from edgeopt.core.specs import spec_named


class Status(enum.StrEnum):
    """Outcome of a run.

    ``optimal``: an exact model proved optimality (bound == objective within
    tolerance). ``feasible``: a valid schedule of every job with no optimality
    claim (every heuristic and online algorithm that kept all jobs).
    ``time_limit``: a solver stopped at its limit; ``objective`` is the
    incumbent (or None) and ``bound`` the best bound. ``partial``: a valid
    schedule of some jobs; the others were given up on and are listed in
    ``extra["rejected"]`` (count in ``extra["rejected_count"]``). Its objective
    covers fewer jobs, so a partial result is never ranked or given a ratio
    next to complete ones. ``infeasible``: no schedule of all jobs exists,
    proven by an exact model or by a stated reason in ``extra["reason"]``.
    ``bound``: a certified lower bound only (``bound`` set, no schedule, ``extra["certificate"]``
    holds what `edgeopt.core.lowerbound.check_certificate` needs); never ranked.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    TIME_LIMIT = "time_limit"
    PARTIAL = "partial"
    INFEASIBLE = "infeasible"
    BOUND = "bound"

    @property
    def complete(self) -> bool:
        """Whether a result of this status covers every job (so it may be ranked and given a ratio)."""
        return self in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT)


@dataclasses.dataclass
class Result:
    """What one algorithm or solver produced on one instance.

    Attributes:
        family: problem family (``hetero``, ``edgecloud``, ...).
        algorithm: registered algorithm or exact-model name (``online``, ``milp``).
        status: see `Status`.
        objective: the family's objective of ``schedule`` (None if no schedule).
        bound: a proven lower bound on the optimum (minimisation), or None.
        runtime_s: wall-clock seconds spent producing the result. With ``extra["timings"]`` (a
            dict of named phases in seconds, e.g. ``build_s``, ``solve_s``) these are the ONLY fields
            that differ between two runs of the same deterministic call (every algorithm, and an
            exact model that ends by proof; a run stopped by its time limit depends on the machine's
            speed): everything else is byte-identical (`masked_timings` blanks them for comparisons).
        schedule: the family's schedule as JSON-able data (its pydantic model dumped).
        instance_sha256: hash of the canonical JSON of the instance solved.
        extra: anything else worth keeping (rejected jobs, duals, solver log
            summary, parameters). JSON-able.
    """

    family: str
    algorithm: str
    status: Status
    objective: float | None
    bound: float | None
    runtime_s: float
    schedule: dict[str, Any] | None
    instance_sha256: str
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.status = Status(self.status)
        if not (self.runtime_s >= 0 and math.isfinite(self.runtime_s)):
            raise ValueError(f"runtime_s must be a finite number >= 0, got {self.runtime_s}")

    @property
    def rejected(self) -> list[int]:
        """Ids of the jobs this result gave up on (empty unless ``partial``)."""
        return [int(j) for j in self.extra.get("rejected", [])]

    @property
    def comparable(self) -> bool:
        """Whether this result may be ranked and given a ratio: a complete schedule with an objective."""
        return self.status.complete and self.objective is not None

    @property
    def gap(self) -> float | None:
        """Relative gap (objective - bound) / objective, when both exist."""
        if self.objective is None or self.bound is None:
            return None
        if self.objective == 0:
            return 0.0 if self.bound >= 0 else None
        return max(0.0, (self.objective - self.bound) / abs(self.objective))

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-able data. Shallow: ``schedule`` and ``extra`` are this result's own
        objects, not copies (a deep copy of a paper-size schedule took longer than the run)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["status"] = self.status.value
        return d

    @classmethod
    def from_dict(cls, data: Any) -> Result:
        """Read a result's JSON data; every field is type-checked (InputError naming it, exit 2)."""
        if not isinstance(data, dict):
            raise InputError("result", "a result file must hold a JSON object")
        if isinstance(data.get("family"), str) and "horizon" in data and not {"algorithm", "status"} & set(data):
            # every family's instance has a horizon; a result never has one
            raise InputError("result", f"this is an instance file ({data['family']}), not a result")
        names = {f.name for f in dataclasses.fields(cls)}
        missing = sorted(n for n in names - set(data) if n != "extra")
        if missing:
            raise InputError(f"result.{missing[0]}", "missing field")
        unknown = sorted(set(data) - names)
        if unknown:
            raise InputError(f"result.{unknown[0]}", "unknown field")
        try:
            status = Status(data["status"])
        except (ValueError, TypeError):
            raise InputError("result.status", f"must be one of {[s.value for s in Status]}") from None
        for key in ("family", "algorithm", "instance_sha256"):
            if not isinstance(data[key], str):
                raise InputError(f"result.{key}", "must be a string")
        for key in ("objective", "bound"):
            x = data[key]
            if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x)):
                raise InputError(f"result.{key}", f"must be a finite number or null, got {x!r}")
        rt = data["runtime_s"]
        if isinstance(rt, bool) or not isinstance(rt, (int, float)) or not math.isfinite(rt) or rt < 0:
            raise InputError("result.runtime_s", f"must be a finite number >= 0, got {rt!r}")
        if data["schedule"] is not None and not isinstance(data["schedule"], dict):
            raise InputError("result.schedule", "must be an object or null")
        extra = data.get("extra", {})
        if not isinstance(extra, dict):
            raise InputError("result.extra", "must be an object")
        rejected = extra.get("rejected", [])
        if not isinstance(rejected, list) or not all(isinstance(j, int) and not isinstance(j, bool)
                                                      for j in rejected):
            raise InputError("result.extra.rejected", "must be a list of job ids (integers)")
        return cls(**{**data, "status": status, "extra": extra})

    def to_json(self, *, indent: int | None = 2) -> str:
        return jsonio.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Result:
        return cls.from_dict(jsonio.loads(text, what="result"))

    def save(self, path: str, *, indent: int | None = None) -> None:
        """Write the result as compact JSON (``indent=None``); gzip-compressed when ``path`` ends in ``.gz``."""
        jsonio.write_json(path, self.to_dict(), indent=indent)

    def to_frame(self, instance: Any, spec: Any = None) -> Any:
        """One row per scheduled job as a pandas DataFrame (see `edgeopt.core.tables.result_frame`).

        Args:
            instance: the instance this result schedules (arrivals and weights live there).
            spec: the family's `FamilySpec` (its ``job_rows`` adapter); default: the loaded family
                named ``self.family`` (loaded, since ``instance`` is one of its instances).
        """
        from edgeopt.core.tables import result_frame  # pandas, loaded only by those who want frames

        return result_frame(spec if spec is not None else spec_named(self.family), instance, self)

    @classmethod
    def load(cls, path: str) -> Result:
        return cls.from_dict(jsonio.read_json(path, what="result"))


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """Measure wall-clock seconds with a monotonic clock (never negative).

    Usage: ``with stopwatch() as elapsed: ...; runtime = elapsed[0]``.
    """
    box = [0.0]
    t0 = time.perf_counter()
    try:
        yield box
    finally:
        box[0] = max(0.0, time.perf_counter() - t0)


#: Where a result keeps wall-clock times (the only fields allowed to differ between two equal runs).
TIMING_FIELDS = ("runtime_s", "extra.timings")


def masked_timings(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a result's dict with its timing fields (`TIMING_FIELDS`) blanked, for comparing runs."""
    out = {**data, "runtime_s": 0.0}
    if isinstance(out.get("extra"), dict) and "timings" in out["extra"]:
        out["extra"] = {**out["extra"], "timings": {}}
    return out
