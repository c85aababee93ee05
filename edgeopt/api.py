"""The Python API: what the CLI, the notebooks and the sweeps call.

>>> from edgeopt import api
>>> inst = api.generate("hetero", "small", seed=1)          # doctest: +SKIP
>>> res = api.run("online", inst)                           # doctest: +SKIP
>>> opt = api.solve(inst, method="milp", time_limit=10)     # doctest: +SKIP
>>> res.objective / opt.objective                           # doctest: +SKIP
>>> res.to_frame(inst)                                      # doctest: +SKIP
>>> api.plot_schedule(inst, res)                            # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import json
import math
import numbers
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pydantic

from edgeopt import families as _families
from edgeopt.core import AlgorithmSpec, FamilySpec, InputError, Result, Status, Violation, jsonio, lookup
from edgeopt.core.errors import ModelError
from edgeopt.core.family import input_error, instance_sha256
from edgeopt.core.limits import (
    BuildTimeLimit,
    Deadline,
    ModelSize,
    check_work_limit,
    guard_size,
    work_limit_scope,
)
from edgeopt.core.registry import unavailable


def did_you_mean(value: str, known: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known name, or ``""`` when none is close."""
    close = difflib.get_close_matches(value, list(known), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_choice(field: str, value: str, known: Sequence[str], what: str) -> None:
    """InputError naming ``field`` when ``value`` is not in ``known``, with the choices and a suggestion."""
    if value not in known:
        raise InputError(field, f"unknown {what} {value!r}{did_you_mean(value, known)} "
                                f"(known: {', '.join(known) or 'none'})")


def families() -> list[FamilySpec]:
    """Every implemented family."""
    return _families.available_families()


def family(name: str) -> FamilySpec:
    """The family called ``name`` (InputError if unknown or not implemented)."""
    return _families.get_family(name)


def family_of(instance: Any) -> FamilySpec:
    """The family an instance belongs to (from its ``family`` field)."""
    if isinstance(instance, Result):
        raise TypeError("instance: expected an instance, got a Result (the order is (instance, result))")
    name = getattr(instance, "family", None)
    if not isinstance(name, str) or not hasattr(instance, "model_dump"):
        raise TypeError(f"instance: expected an edgeopt instance (from api.load or api.generate), "
                        f"got {_type_name(instance)}")
    return family(name)


def _type_name(x: Any) -> str:
    return "None" if x is None else type(x).__name__


def _check_result(result: Any, name: str = "result") -> Result:
    """``result`` if it is a `Result`; TypeError naming ``name`` and what to pass otherwise."""
    if not isinstance(result, Result):
        hint = " (Result.from_dict(d) reads a dict; api.load_result a file)" if isinstance(result, dict) else ""
        raise TypeError(f"{name}: expected an edgeopt Result (from api.run or api.solve), "
                        f"got {_type_name(result)}{hint}")
    return result


def algorithms(name: str) -> dict[str, AlgorithmSpec]:
    """Registered algorithms of family ``name``."""
    return _families.algorithms(name)


def unavailable_algorithms(name: str) -> dict[str, str]:
    """Algorithms of family ``name`` that exist but are not registered here, with why (e.g. tapfinger's
    ``online`` without the ``rl`` extra)."""
    algorithms(name)  # imports the family, which marks them
    return unavailable(name)


def exact_method_names(name: str) -> list[str]:
    """The names of family ``name``'s exact models, without importing them (Pyomo, OR-Tools)."""
    from formulations import METHOD_NAMES

    algorithms(name)  # the family exists
    return list(METHOD_NAMES.get(name, ()))


def exact_methods(name: str) -> dict[str, Callable[..., Result]]:
    """Exact models of family ``name`` (``{"milp": ..., "cpsat": ...}``)."""
    return _families.solve_methods(name)


def generate(
    name: str,
    preset: str | None = None,
    *,
    seed: int = 0,
    jobs: int | None = None,
    servers: int | None = None,
    horizon: int | None = None,
    **options: Any,
) -> Any:
    """A seeded instance of family ``name`` (preset defaults to the family's first, ``small``).

    ``options`` are the family generator's own keyword arguments (`generator_options`), e.g.
    ``clusters=6, arrival_rate=4`` for tapfinger or ``cost="piecewise"`` for okita; a string value
    (as the CLI passes it) is converted to the argument's type. ``jobs``, ``servers`` and ``horizon``
    are counts >= 1 within the family's caps; a bool is no count (nor a seed, nor a numeric option):
    InputError naming it.
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a family name (str), got {_type_name(name)}")
    if preset is not None and not isinstance(preset, str):
        raise TypeError(f"preset: expected a preset name (str) or None, got {_type_name(preset)}")
    _check_seed(seed)
    spec = family(name)
    preset = preset or spec.presets[0]
    check_choice("preset", preset, list(spec.presets), f"{name} preset")
    jobs, servers, horizon = (_check_count(f, v) for f, v in (("jobs", jobs), ("servers", servers),
                                                              ("horizon", horizon)))
    if seed < 0:
        raise InputError("seed", f"must be >= 0, got {seed}")
    known = generator_options(name)
    for key, value in list(options.items()):
        check_choice(key, key, sorted(known), f"{name} generator option")
        options[key] = _convert_option(key, value, known[key])
    spec.check_limits(jobs=jobs, servers=servers, horizon=horizon, **options)  # before anything is drawn
    try:
        return spec.generate(preset, seed=seed, jobs=jobs, servers=servers, horizon=horizon, **options)
    except pydantic.ValidationError as exc:  # a combination of options the instance model refuses
        raise input_error(exc, None, root="generate") from None


#: The generator arguments every family shares (``generate``'s own parameters).
_COMMON_GENERATOR_ARGS = ("preset", "seed", "jobs", "servers", "horizon")


def generator_options(name: str) -> dict[str, Any]:
    """Family ``name``'s own generator options: keyword argument -> its type (from the annotations)."""
    import typing

    fn = family(name).generate
    try:
        hints = typing.get_type_hints(fn)
    except (NameError, TypeError):  # an annotation that does not resolve: fall back to the defaults' types
        hints = {}
    out = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.KEYWORD_ONLY and p.name not in _COMMON_GENERATOR_ARGS:
            out[p.name] = hints.get(p.name, type(p.default) if p.default is not None else str)
    return out


def _convert_option(key: str, value: Any, hint: Any) -> Any:
    """``value`` converted to ``hint`` (int, float, bool, a Literal's choices, or str); InputError naming ``key``."""
    import typing

    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is typing.Literal:
        choices = [str(a) for a in args]
        check_choice(key, str(value), choices, "value")
        return str(value)
    base = next((a for a in args if a in (bool, int, float, str)), args[0] if len(args) == 1 else hint)  # X | None -> X
    if typing.get_origin(base) is typing.Literal:
        return _convert_option(key, value, base)
    if base in (int, float) and isinstance(value, bool):  # True is an int to Python, never a count or rate
        raise InputError(key, f"expected {base.__name__}, got bool {value!r}: booleans are not numbers")
    if not isinstance(value, str):
        return value
    try:
        if base is bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError(value)
            return value.lower() in ("true", "1")
        if base is int:
            return int(value)
        if base is float:
            return float(value)
    except ValueError:
        raise InputError(key, f"expected {base.__name__}, got {value!r}") from None
    return value


def load(path: str | Path) -> Any:
    """Read and validate an instance file (``.json`` or ``.json.gz``); returns the instance.

    Its family is ``instance.family`` (`family_of` gives the `FamilySpec`).
    """
    return _families.load_instance(str(path))[1]


def load_result(path: str | Path) -> Result:
    """Read a result file (``.json`` or ``.json.gz``) written by `save` or ``edgeopt run -o``."""
    return Result.load(str(path))


def save(obj: Any, path: str | Path) -> None:
    """Write an instance, a `Result` or a `Comparison` as JSON, atomically.

    Results are written compact (no indentation: paper-size schedules are
    large); instances and comparisons indented, to be read by people. A path
    ending in ``.gz`` is gzip-compressed.
    """
    if isinstance(obj, Result):
        obj.save(str(path))
    elif isinstance(obj, Comparison):
        jsonio.write_json(path, obj.to_dict())
    elif hasattr(obj, "model_dump") and isinstance(getattr(obj, "family", None), str):
        jsonio.write_json(path, obj.model_dump(mode="json"))
    else:
        raise InputError("obj", f"cannot save a {type(obj).__name__} (an instance, Result or Comparison)")


def result_schema(family_name: str | None = None) -> dict[str, Any]:
    """JSON Schema of result files; with ``family_name`` its ``schedule`` is that family's schedule schema."""
    import pydantic

    schema = pydantic.TypeAdapter(Result).json_schema()
    schema["title"] = "edgeopt result"
    schema["description"] = (Result.__doc__ or "").strip().splitlines()[0]
    props = schema.get("properties", {})
    if "status" in props:
        props["status"] = {"title": "Status", "enum": [s.value for s in Status], "type": "string"}
    if family_name is not None:
        sched = family(family_name).schedule_type.model_json_schema()
        defs = sched.pop("$defs", {})
        schema.setdefault("$defs", {}).update(defs)
        props["schedule"] = {"anyOf": [sched, {"type": "null"}], "title": f"{family_name} schedule"}
        schema["title"] = f"edgeopt {family_name} result"
    return schema


def check_algorithm(name: str, algorithm: str) -> AlgorithmSpec:
    """The registered algorithm ``algorithm`` of family ``name`` (InputError with a suggestion if unknown)."""
    table = algorithms(name)
    if not isinstance(algorithm, str):
        raise TypeError(f"algorithm: expected an algorithm name (str), got {_type_name(algorithm)}")
    missing = unavailable(name)
    if algorithm not in table and algorithm in missing:
        raise InputError("algorithm", f"{name} algorithm {algorithm!r} is not available here: {missing[algorithm]}")
    check_choice("algorithm", algorithm, sorted(table), f"{name} algorithm")
    return table[algorithm]


def register_algorithm(
    family_name: str,
    name: str,
    *,
    kind: str = "offline",
    summary: str | None = None,
    randomized: bool = False,
    relaxed: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: make ``fn(instance, **params) -> schedule`` a registered algorithm of ``family_name``.

    ``fn`` returns the family's schedule (its pydantic model or the same data
    as a dict); jobs it gives up on go in the schedule's ``rejected`` list
    and make the result ``partial`` (in a family whose schedule has no such
    list, tapfinger, the tasks it leaves out are the rejected ones). The wrapper times ``fn`` and builds the
    `Result`, so the algorithm then runs, validates and compares like the
    built-in ones (`run`, `validate`, `compare`, ``edgeopt run``). Its
    tunables are ``fn``'s keyword-only arguments (typed, with a default,
    one-line meaning under ``Args:``); ``fn`` receives ``seed`` only if it
    declares it. Registering a name again replaces the earlier algorithm
    (with a warning when the function is a different one), so a notebook cell
    can be re-run.

    Args:
        family_name: the family it schedules.
        name: its name in tables and on the command line.
        kind: ``offline`` (sees every job; the default for a function of the
            whole instance), ``online`` or ``baseline``.
        summary: one line for ``edgeopt algorithms`` (default: the docstring's first line).
        randomized: whether the seed changes its output.
        relaxed: whether it schedules a relaxation of the family's model.
    """
    from edgeopt.core import register

    spec = family(family_name)
    check_choice("kind", kind, ["online", "baseline", "offline"], "algorithm kind")

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        takes_seed = "seed" in inspect.signature(fn).parameters

        @functools.wraps(fn)
        def algorithm(instance: Any, *, seed: int = 0, **params: Any) -> Result:
            t0 = time.perf_counter()
            schedule = fn(instance, seed=seed, **params) if takes_seed else fn(instance, **params)
            runtime = max(0.0, time.perf_counter() - t0)
            if isinstance(schedule, Result):
                return schedule
            if not hasattr(schedule, "model_dump"):
                schedule = spec.parse_schedule(schedule)
            rejected = getattr(schedule, "rejected", []) or []
            if spec.listed_jobs is not None and spec.listed_jobs(schedule)[1] is None:
                # a family whose schedule has no rejected list (tapfinger): the jobs it leaves out are rejected
                scheduled = set(spec.listed_jobs(schedule)[0])
                rejected = [j for j in spec.ids_of_jobs(instance) if j not in scheduled]
            return spec.algorithm_result(instance, name, schedule, runtime, rejected=rejected)

        line = summary or ((inspect.getdoc(fn) or "").splitlines() or [name])[0]
        register(family_name, name, kind=kind, summary=line, randomized=randomized,  # type: ignore[arg-type]
                 relaxed=relaxed)(algorithm)
        return fn

    return deco


def _check_count(field: str, value: Any) -> int | None:
    """``value`` as a plain int >= 1 (None stays None). A bool is an int to Python but never a count
    (``jobs=True`` would be one job): InputError naming ``field``. A numpy integer becomes an int, so that
    the family's caps (`FamilySpec.check_limits`, which looks at ints) hold it too."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InputError(field, f"expected a count (int >= 1), got bool {value!r}: booleans are not counts")
    if not isinstance(value, numbers.Integral):
        raise TypeError(f"{field}: expected a count (int >= 1) or None, got {_type_name(value)} {value!r}")
    if value < 1:
        raise InputError(field, f"must be >= 1, got {value}")
    return int(value)


def _check_seed(seed: Any) -> None:
    if isinstance(seed, bool):  # an int to Python, but True is no seed: refused like a bool count
        raise InputError("seed", f"expected a non-negative int, got bool {seed!r}: booleans are not seeds")
    if not isinstance(seed, int):
        raise TypeError(f"seed: expected a non-negative int, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise InputError("seed", f"must be >= 0, got {seed}")


def run(algorithm: str, instance: Any, *, seed: int = 0, **params: Any) -> Result:
    """Run a registered algorithm of the instance's family.

    What an algorithm from outside edgeopt returns (a plug-in, or one registered with
    `register_algorithm`) is validated before it is handed back: a result that breaks the family's
    rules (a job dropped, an objective that is not its schedule's, a false claim) is never given a
    status; `ModelError` is raised with its violations (``edgeopt run`` exits 1). The built-in
    algorithms are held to the same validator by the test suite instead of on every call.
    """
    spec = family_of(instance)
    _check_seed(seed)
    check_algorithm(spec.name, algorithm)
    algo = lookup(spec.name, algorithm)
    result = algo(instance, seed=seed, **params)
    if not is_builtin(algo):
        check_plugin_result(spec, instance, algo, result)
    return result


def is_builtin(algo: AlgorithmSpec) -> bool:
    """Whether ``algo`` is one of edgeopt's own algorithms (not a plug-in or a user's function)."""
    module = getattr(algo.fn, "__module__", "") or ""
    return module == "edgeopt" or module.startswith("edgeopt.")


def check_plugin_result(spec: FamilySpec, instance: Any, algo: AlgorithmSpec, result: Any) -> None:
    """Raise `ModelError` when a registered algorithm's output is not a valid `Result` of ``instance``."""
    if not isinstance(result, Result):
        raise ModelError(f"algorithm {spec.name}/{algo.name} returned a {type(result).__name__}, not a Result")
    violations = spec.check_result(instance, result)
    if violations:
        shown = "; ".join(str(v) for v in violations[:3])
        more = f" (and {len(violations) - 3} more)" if len(violations) > 3 else ""
        raise ModelError(f"algorithm {spec.name}/{algo.name} returned an invalid result, given no status: "
                         f"{shown}{more}")


class InvalidResultWarning(UserWarning):
    """A chart drew a result that its instance's validator rejects; the chart's title says INVALID.

    `plot_schedule` and `plot_utilisation` still draw such a result (seeing a broken schedule is how one
    finds what broke it); the CLI prints this warning as one ``warning:`` line on stderr.
    """


def plot_schedule(
    instance: Any,
    result: Result,
    ax: Any = None,
    *,
    title: str | None = None,
    jobs: Sequence[int] | range | None = None,
    rows: Sequence[str] | None = None,
    window: tuple[float, float] | None = None,
    labels: bool | None = None,
) -> Any:
    """Gantt chart of ``result``'s schedule: one row per server (or site), bars coloured by job.

    The result must be one of ``instance`` (its ``instance_sha256``, as `validate` compares it):
    another instance's result is refused (InputError), since its bars would be drawn on rows and
    arrivals it was never computed for. A result the validator rejects (a dropped job, an overfull
    server) is drawn, its title starting with INVALID and the first violation, and an
    `InvalidResultWarning` is issued.

    Args:
        instance: the instance the result schedules.
        result: any algorithm's or exact model's result with a schedule.
        ax: a matplotlib Axes to draw on (a new figure when None).
        title: defaults to family, algorithm, status and objective.
        jobs: draw only these jobs (ids of the instance); a ``range`` is clipped to the instance's
            ids, never expanded (``range(10**9)`` is every job).
        rows: draw only these rows (server, site or cluster names as the chart shows them).
        window: ``(t0, t1)``: draw only these slots (``t1`` is clipped to the horizon).
        labels: write bar texts; None: only when the chart has few enough bars to read them
            (`edgeopt.viz.LABEL_LIMIT`).

    Returns:
        The matplotlib Axes.
    """
    from edgeopt import viz

    spec, violations = _plot_check(instance, result)
    if spec.gantt is None:
        raise InputError("family", f"family {spec.name!r} has no gantt adapter (FamilySpec.gantt)")
    if title is None:
        title = f"{spec.name} / {result.algorithm}: {result.status.value}, objective {_short(result.objective)}"
        if result.rejected:
            title += f", {len(result.rejected)} rejected"
    wanted = _wanted_jobs(spec, instance, jobs)
    schedule = spec.parse_schedule(result.schedule)
    bars = _drawable(lambda: spec.gantt(instance, schedule), violations)
    bars, window, note = _select_bars(bars, wanted, rows, window, float(instance.horizon))
    # The time axis ends a little after the last bar or arrival shown (the horizon is often far longer).
    last = max([b.end for b in bars] + [b.arrival or 0 for b in bars] + [1])
    until = min(float(instance.horizon), math.ceil(last + max(1.0, 0.08 * last)))
    if note and title:
        title += f"\n{note}"
    return viz.plot_gantt(bars, ax=ax, title=_marked(title, violations), horizon=until, labels=labels,
                          window=window)


#: The most job ids a chart's ``jobs`` may list one by one (a ``range`` is clipped, not listed).
MAX_PLOT_JOBS = 100_000


def _wanted_jobs(spec: FamilySpec, instance: Any, jobs: Any) -> set[int] | None:
    """The instance's job ids among ``jobs`` (None: all). Ids the instance lacks, or none of its own,
    are an InputError naming ``jobs``; the ids are never expanded beyond the instance's own."""
    if jobs is None:
        return None
    ids = [int(j) for j in spec.ids_of_jobs(instance)]
    if isinstance(jobs, range):
        wanted = {j for j in ids if j in jobs}  # membership in a range is arithmetic: no expansion
        if not wanted:
            raise InputError("jobs", f"{jobs} holds no job of the instance ({_id_span(ids)})")
        return wanted
    if isinstance(jobs, (str, bytes)) or not hasattr(jobs, "__iter__"):
        raise TypeError(f"jobs: expected a list of job ids (int), got {jobs!r}")
    import itertools
    import numbers

    listed = list(itertools.islice(iter(jobs), MAX_PLOT_JOBS + 1))
    if len(listed) > MAX_PLOT_JOBS:
        raise InputError("jobs", f"more than {MAX_PLOT_JOBS:,} job ids listed (a range selects many)")
    if not all(isinstance(j, numbers.Integral) and not isinstance(j, bool) for j in listed):
        raise TypeError(f"jobs: expected a list of job ids (int), got {listed[:10]!r}")
    known = set(ids)
    unknown = sorted({int(j) for j in listed} - known)
    if unknown:
        shown = ", ".join(map(str, unknown[:5])) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise InputError("jobs", f"not jobs of the instance: {shown} ({_id_span(ids)})")
    if not listed:
        raise InputError("jobs", "no job selected (an empty list)")
    return {int(j) for j in listed}


def _id_span(ids: Sequence[int]) -> str:
    return f"its ids are {min(ids)}-{max(ids)}" if ids else "it has no jobs"


def _select_bars(bars: list[Any], jobs: set[int] | None, rows: Sequence[str] | None,
                 window: tuple[float, float] | None, horizon: float) -> tuple[list[Any], Any, str]:
    """The bars of the chosen jobs and rows that overlap ``window``; a note of what was selected."""
    notes = []
    if jobs is not None:
        bars = [b for b in bars if b.job in jobs]
        if not bars:
            shown = ", ".join(map(str, sorted(jobs)[:5])) + (" ..." if len(jobs) > 5 else "")
            raise InputError("jobs", f"none of the selected jobs ({shown}) is scheduled in this result")
        notes.append(f"jobs {', '.join(map(str, sorted(jobs)))}" if len(jobs) <= 8 else f"{len(jobs)} jobs")
    if rows is not None:
        if isinstance(rows, (str, bytes)):
            rows = [rows]
        rows = list(dict.fromkeys(rows))
        known = list(dict.fromkeys(b.row for b in bars))
        if len(rows) > len(known):
            raise InputError("rows", f"{len(rows)} rows named, the chart has {len(known)}")
        for r in rows:
            check_choice("rows", r, known, "row")
        bars = [b for b in bars if b.row in set(rows)]
        notes.append(f"rows {', '.join(rows)}" if len(rows) <= 4 else f"{len(rows)} rows")
    if window is not None:
        try:
            t0, t1 = (float(x) for x in window)
        except (TypeError, ValueError):
            raise TypeError(f"window: expected (t0, t1) in slots, got {window!r}") from None
        if not (math.isfinite(t0) and math.isfinite(t1) and 0 <= t0 < t1):
            raise InputError("window", f"expected 0 <= t0 < t1, got ({t0:g}, {t1:g})")
        if t0 >= horizon:
            raise InputError("window", f"starts at {t0:g}, at or after the horizon ({horizon:g} slots)")
        t1 = min(t1, horizon)
        bars = [b for b in bars if b.end > t0 and b.start < t1]
        window = (t0, t1)
        notes.append(f"slots {t0:g}-{t1:g}")
    return bars, window, ("shown: " + "; ".join(notes)) if notes else ""


def plot_utilisation(instance: Any, result: Result, fig: Any = None, *, title: str | None = None) -> Any:
    """Used capacity over time per resource of ``result``'s schedule; returns the matplotlib Figure.

    The result must be one of ``instance`` and an invalid one is drawn marked, as in `plot_schedule`.
    """
    from edgeopt import viz

    spec, violations = _plot_check(instance, result)
    if spec.usage is None:
        raise InputError("family", f"family {spec.name!r} has no usage adapter (FamilySpec.usage)")
    if title is None:
        title = f"{spec.name} / {result.algorithm}: capacity in use"
    schedule = spec.parse_schedule(result.schedule)
    series = _drawable(lambda: spec.usage(instance, schedule), violations)
    return viz.plot_usage(series, fig=fig, title=_marked(title, violations))


def _plot_check(instance: Any, result: Result) -> tuple[FamilySpec, list[Violation]]:
    """The family, and the violations of ``result`` (`FamilySpec.check_result`, as `validate` finds them).

    A result of another family or instance (``instance_sha256``), or without a schedule, cannot be
    drawn on ``instance``: InputError. Violations are returned, and warned of (`InvalidResultWarning`):
    an invalid result is still drawn, marked.
    """
    import warnings

    spec = family_of(instance)
    _check_result(result)
    if result.family != spec.name:
        raise InputError("result.family", f"result of family {result.family!r}, instance of {spec.name!r}")
    if result.instance_sha256 != instance_sha256(instance):
        raise InputError("result.instance_sha256", "the result is of another instance (its instance_sha256 "
                         "is not this instance's hash): not drawn on this one")
    if result.schedule is None:
        raise InputError("result.schedule", f"{result.algorithm} returned no schedule ({result.status.value})")
    violations = [v for v in spec.check_result(instance, result)]
    if violations:
        warnings.warn(InvalidResultWarning(
            f"{spec.name}/{result.algorithm} result is INVALID ({len(violations)} violation(s)), drawn anyway; "
            f"first: {_one_line(str(violations[0]))}"), stacklevel=3)
    return spec, violations


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _marked(title: str | None, violations: list[Violation]) -> str | None:
    """``title`` under an INVALID line naming the first violation, when there is one."""
    if not violations:
        return title
    mark = f"INVALID ({len(violations)} violation(s)): {_one_line(str(violations[0]), 70)}"
    return f"{mark}\n{title}" if title else mark


def _drawable(adapter: Callable[[], Any], violations: list[Violation]) -> Any:
    """The adapter's records; an invalid schedule the adapter cannot even read is an InputError."""
    if not violations:
        return adapter()
    try:
        return adapter()
    except (IndexError, KeyError, ValueError, TypeError, AttributeError) as exc:
        raise InputError("result", f"invalid and cannot be drawn ({exc.__class__.__name__}: {exc}); "
                         f"first violation: {_one_line(str(violations[0]))}") from None


def _short(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def _formulations_table(name: str, table: str) -> dict[str, Any]:
    """``formulations.<name>.<table>`` of family ``name`` as a dict (empty if the package or table is missing)."""
    from formulations import table as formulations_table

    exact_methods(name)  # the family exists
    return formulations_table(name, table)


def model_sizes(name: str) -> dict[str, Callable[..., ModelSize]]:
    """Size estimators of family ``name``'s exact models, ``formulations.<name>.SIZES`` (empty if none)."""
    return _formulations_table(name, "SIZES")


def solve(
    instance: Any,
    *,
    method: str = "milp",
    time_limit: float = 60.0,
    max_model_size: int | None = None,
    warm_start: str | None = None,
    lns: bool = False,
    work_limit: float | None = None,
    **options: Any,
) -> Result:
    """Solve an instance with one of its family's exact models, within ``time_limit`` for the whole call.

    ``work_limit``: also stop the solver after this much deterministic work (`edgeopt.core.limits.work_limit`:
    CP-SAT deterministic seconds, 100 HiGHS nodes a unit). Unlike ``time_limit`` it stops at the same point
    on any machine at any load, so a result obtained under it is reproducible; ``extra["work_limit"]``
    records it.

    ``warm_start``: a registered algorithm's name or ``best``: it runs first (inside the time limit)
    and the incumbent returned is never worse than its schedule (`edgeopt.warmstart`).
    ``lns``: improve the warm start (default ``best``) by a large-neighbourhood search whose windows
    are solved with ``method`` until ``time_limit``; status ``time_limit`` (`edgeopt.warmstart.solve_lns`).

    Before anything is built, the model's size is estimated (``formulations.<family>.SIZES``) and a
    model above the budget is refused with an `InputError` that gives the size and what to do
    (exit 2 in the CLI). The budget is ``max_model_size`` nonzeros, default
    `edgeopt.core.limits.DEFAULT_MAX_NONZEROS` (2,000,000, about 3 GB through Pyomo). The estimate,
    the model building and the solve share one `Deadline`: a deadline that passes before the solver
    ran gives status ``time_limit`` with no incumbent and ``extra["reason"]``.
    """
    from formulations import loaded

    spec = family_of(instance)
    methods = exact_methods(spec.name)
    check_choice("method", method, sorted(methods), f"{spec.name} exact method")
    _check_solver_limits(time_limit, max_model_size)
    if work_limit is not None:
        with work_limit_scope(check_work_limit(work_limit)):
            result = solve(instance, method=method, time_limit=time_limit, max_model_size=max_model_size,
                           warm_start=warm_start, lns=lns, **options)
        result.extra["work_limit"] = float(work_limit)
        return result
    # Only the chosen model's solver is imported (a MILP solve never loads OR-Tools), and now, before the
    # deadline starts: its clock must never interrupt an extension module's initialisation.
    solve_model = loaded(methods[method])
    estimator = model_sizes(spec.name).get(method)
    estimator = None if estimator is None else loaded(estimator)
    if lns:
        from edgeopt.warmstart import solve_lns

        return solve_lns(instance, method=method, time_limit=time_limit, warm_start=warm_start or "best",
                         max_model_size=max_model_size, **options)
    if warm_start is not None:
        from edgeopt.warmstart import solve_warm

        return solve_warm(instance, method=method, time_limit=time_limit, warm_start=warm_start, solve=solve,
                          max_model_size=max_model_size, **options)
    deadline = Deadline(time_limit)
    size = None
    try:
        if estimator is not None:
            with deadline.guard("the model size estimate"):
                size = estimator(instance)
            guard_size(size, method=method, max_nonzeros=max_model_size)
        result = solve_model(instance, time_limit=deadline.remaining(), **options)
    except BuildTimeLimit as exc:
        result = Result(family=spec.name, algorithm=method, status=Status.TIME_LIMIT, objective=None, bound=None,
                        runtime_s=deadline.elapsed(), schedule=None, instance_sha256=instance_sha256(instance),
                        extra={"reason": str(exc)})
    if size is not None:
        result.extra["model_size"] = {"variables": size.variables, "constraints": size.constraints,
                                      "nonzeros": size.nonzeros}
    return result


#: Longest time limit a solve accepts (a week): beyond it, the number is a typo, not a plan.
MAX_TIME_LIMIT = 7 * 24 * 3600.0


def _check_solver_limits(time_limit: Any, max_model_size: Any) -> None:
    """The ``time_limit`` and ``max_model_size`` arguments of `solve` and `bound`, checked once."""
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not (
            0 < time_limit <= MAX_TIME_LIMIT):
        raise InputError("time_limit", f"must be a number of seconds in (0, {MAX_TIME_LIMIT:g}], got {time_limit}")
    if max_model_size is not None and (isinstance(max_model_size, bool) or not isinstance(max_model_size, int)
                                       or max_model_size < 1):
        raise InputError("max_model_size", f"must be a positive integer (nonzeros), got {max_model_size!r}")


def bound_methods(name: str) -> dict[str, Any]:
    """Certified lower bounds of family ``name``, ``formulations.<name>.LOWER_BOUNDS`` (empty if none)."""
    return _formulations_table(name, "LOWER_BOUNDS")


def bound(instance: Any, *, method: str = "auto", time_limit: float = 60.0,
          max_model_size: int | None = None) -> Result:
    """A certified lower bound on the optimum over complete schedules, within ``time_limit`` for the whole call.

    Status ``bound``, the number in ``bound``, no schedule, ``extra["certificate"]`` (checked by
    `check_bound` without a solver). ``method="auto"`` picks the family's strongest scalable bound.
    The model-size budget is the one of `solve` (``max_model_size`` nonzeros).
    """
    from edgeopt.core.lowerbound import compute_bound, find_method

    spec = family_of(instance)
    _check_solver_limits(time_limit, max_model_size)
    chosen = find_method(bound_methods(spec.name), method, spec.name)
    deadline = Deadline(time_limit)
    try:
        return compute_bound(spec.name, chosen, instance, max_model_size=max_model_size, deadline=deadline)
    except BuildTimeLimit as exc:
        return Result(family=spec.name, algorithm=chosen.name, status=Status.TIME_LIMIT, objective=None, bound=None,
                      runtime_s=deadline.elapsed(), schedule=None, instance_sha256=instance_sha256(instance),
                      extra={"reason": str(exc) or f"time limit of {time_limit:g} s reached", "method": chosen.name})


def check_bound(instance: Any, result: Result) -> float:
    """Recompute a ``bound`` result's number from its certificate, without a solver; `ModelError` if it fails."""
    from edgeopt.core.lowerbound import check_certificate, find_method

    spec = family_of(instance)
    return check_certificate(find_method(bound_methods(spec.name), result.algorithm, spec.name), instance, result)


def validate(instance: Any, result: Result) -> list[Violation]:
    """Every violation of ``result`` on ``instance`` (empty list: valid).

    A ``bound`` result is also checked against its certificate (`check_bound`, no solver): a forged
    number or certificate is a violation named ``certificate``.
    """
    spec = family_of(instance)
    violations = spec.check_result(instance, _check_result(result))
    if not violations and result.status == Status.BOUND:
        try:
            check_bound(instance, result)
        except (ModelError, InputError) as exc:
            violations.append(Violation("certificate", str(exc)))
    return violations


#: The status a comparison row shows for a result that failed validation (`compare` ranks it nowhere).
INVALID = "invalid"


@dataclasses.dataclass
class Row:
    """One line of a comparison."""

    algorithm: str
    kind: str
    status: str
    objective: float | None
    bound: float | None
    ratio: float | None
    valid: bool
    runtime_s: float
    violations: list[str]
    relaxed: bool = False
    rejected: int = 0
    rank: int | None = None
    #: every parameter the run used, as sorted JSON (the same column as a stored sweep's)
    params: str = "{}"
    #: ``ratio`` split by what it is against: a proven optimum, or the exact model's bound (never both)
    ratio_to_optimum: float | None = None
    ratio_to_bound: float | None = None


@dataclasses.dataclass
class Comparison:
    """Algorithms side by side on one instance, each validated, with ratios to a reference.

    ``reference_name`` says what the ratios divide by: ``optimum`` (a proven
    optimum), ``bound`` (a proven lower bound at a time limit) or ``-``.
    """

    family: str
    objective_name: str
    rows: list[Row]
    reference: float | None
    reference_name: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def plot(self, path: str | Path | None = None, *, ax: Any = None) -> Any:
        """Bar chart of the objectives (`edgeopt.viz.plot_comparison`); returns the matplotlib Axes.

        With ``path`` the chart is also written there (PNG, SVG or PDF by extension)
        and its figure closed. The matplotlib backend is never switched.
        """
        from edgeopt import viz

        ax = viz.plot_comparison(self, ax=ax)
        if path is not None:
            import matplotlib.pyplot as plt

            with jsonio.atomic_file(path, what="plot") as tmp:  # whole or absent
                ax.figure.savefig(tmp, dpi=150, format=Path(path).suffix.lower().lstrip(".") or None)
            plt.close(ax.figure)
        return ax

    def to_frame(self) -> Any:
        """One row per algorithm as a pandas DataFrame (see `edgeopt.frames.comparison_frame`)."""
        from edgeopt.frames import comparison_frame

        return comparison_frame(self)


def _row(spec: FamilySpec, instance: Any, result: Result, kind: str, relaxed: bool = False) -> Row:
    violations = [str(v) for v in spec.check_result(instance, result)]
    return Row(
        algorithm=result.algorithm,
        kind=kind,
        # a result that fails validation keeps no status of its own: it is never ranked or given a ratio
        status=result.status.value if not violations else INVALID,
        objective=result.objective,
        bound=result.bound,
        ratio=None,
        valid=not violations,
        runtime_s=result.runtime_s,
        violations=violations,
        relaxed=relaxed,
        rejected=len(result.rejected),
    )


def _rank_and_ratio(rows: list[Row], reference: float | None, reference_name: str = "optimum") -> None:
    """Ratios to ``reference`` (a proven ``optimum`` or a ``bound``) and ranks (1 = best objective) for
    complete, valid rows only; the ratio also goes to ``ratio_to_optimum`` or ``ratio_to_bound``."""
    comparable = [r for r in rows if r.valid and r.objective is not None
                  and r.status in ("optimal", "feasible", "time_limit")]
    for row in comparable:
        if reference:
            row.ratio = row.objective / reference
            if reference_name == "optimum":
                row.ratio_to_optimum = row.ratio
            else:
                row.ratio_to_bound = row.ratio
    for rank, row in enumerate(sorted(comparable, key=lambda r: r.objective), start=1):
        row.rank = rank


def compare(
    instance: Any,
    names: Any = None,
    *,
    optimal: bool = False,
    method: str = "milp",
    time_limit: float = 60.0,
    seed: int = 0,
    on_step: Callable[[str], None] | None = None,
    work_limit: float | None = None,
) -> Comparison:
    """Run algorithms (default: all registered) and optionally an exact model on ``instance``.

    ``names`` lists algorithms or variants of them: ``"online"``, ``"online[F=64]"``,
    ``("online", {"F": 64})`` or an `edgeopt.variants.Variant`; a single string is one algorithm.
    Every variant is checked against the declared parameters before anything runs; its row is
    labelled with the variant (``online[F=64]``) and its ``params`` column holds every parameter
    the run used.

    Ratios are objective / optimum when the exact model proved optimality,
    objective / bound (an upper estimate of the true ratio) when it stopped at
    its time limit with a bound, and absent otherwise. Results that gave up on
    jobs (status ``partial``) get neither a ratio nor a rank: their objective
    covers fewer jobs; tables show "k rejected" instead. Invalid rows are not
    ranked either. Rows of algorithms that solve a relaxation (``relaxed``)
    keep their ratio, which may be below 1.

    ``work_limit`` bounds the exact solve by deterministic work as well as by ``time_limit`` (see `solve`):
    the way to get the same reference on a busy machine as on an idle one.
    """
    from edgeopt.variants import resolve

    spec = family_of(instance)
    _check_seed(seed)
    table = algorithms(spec.name)
    # Reject a typo or a bad parameter before running anything: a long comparison must not fail at its end.
    variants = resolve(spec.name, list(table) if names is None else names, "names")
    if optimal:
        check_choice("method", method, sorted(exact_methods(spec.name)), f"{spec.name} exact method")
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or time_limit <= 0:
            raise InputError("time_limit", f"must be a number of seconds > 0, got {time_limit!r}")
        check_work_limit(work_limit)
    rows: list[Row] = []
    for variant in variants:
        if on_step:
            on_step(variant.label)
        algo = lookup(spec.name, variant.name)
        res = algo(instance, seed=seed, **variant.kwargs)
        if not isinstance(res, Result):
            check_plugin_result(spec, instance, algo, res)  # raises: nothing to tabulate
        row = _row(spec, instance, res, algo.kind, algo.relaxed)
        row.algorithm, row.params = variant.label, variant.params_json(algo.defaults())
        rows.append(row)
    reference, reference_name = None, "-"
    if optimal:
        if on_step:
            on_step(method)
        exact = solve(instance, method=method, time_limit=time_limit, work_limit=work_limit)
        rows.append(_row(spec, instance, exact, "exact"))
        rows[-1].params = json.dumps({"time_limit": time_limit} | (
            {} if work_limit is None else {"work_limit": work_limit}))
        if exact.status == Status.OPTIMAL:
            reference, reference_name = exact.objective, "optimum"
        elif exact.bound is not None and exact.bound > 0:
            reference, reference_name = exact.bound, "bound"
    _rank_and_ratio(rows, reference, reference_name)
    return Comparison(spec.name, spec.objective_name, rows, reference, reference_name)
