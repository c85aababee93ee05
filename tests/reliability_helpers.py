"""Shared test helpers: run the CLI in-process and read its exit code and streams; family-neutral reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgeopt import api
from edgeopt.cli import main

FAMILIES = tuple(s.name for s in api.families())


def cli(*args: Any) -> int:
    """Exit code of ``edgeopt ARGS`` run in this process."""
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    return int(exc.value.code or 0)


def small_instance(family: str, tmp_path: Path, **changes: Any) -> tuple[dict, Path]:
    """The small preset of ``family`` (seed 1) as JSON data, written to a file."""
    data = api.generate(family, "small", seed=1).model_dump(mode="json")
    data.update(changes)
    path = tmp_path / f"{family}.json"
    path.write_text(json.dumps(data))
    return data, path


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def assert_clean_error(err: str, *fragments: str) -> None:
    """An error on stderr: a one-line summary first (``error: field: ...``), no traceback."""
    assert "Traceback" not in err, err
    first = err.strip().splitlines()[0]
    assert first.startswith("error: "), err
    for f in fragments:
        assert f in first, (f, err)


def scheduled_ids(res: Any) -> list[int]:
    """Ids of the jobs (tapfinger: tasks) a result's schedule places, read from the raw schedule."""
    if "placements" in res.schedule:  # tapfinger: one placement per task
        return [p["task"] for p in res.schedule["placements"]]
    return [js["job"] for js in res.schedule["jobs"]]


def jobs_key(family: str) -> str:
    """The instance field that lists the jobs (tapfinger calls them tasks)."""
    return "tasks" if family == "tapfinger" else "jobs"


def make_job_too_long(family: str, data: dict) -> None:
    """Make job (task) 0 of a small instance's JSON far too long for the horizon, within the schema."""
    if family == "okita":  # one chunk per worker-slot (rho = E is the schema's floor) and 10,000 per site
        data["jobs"][0].update(epochs=100, worker_chunks_per_slot=100)
        data["jobs"][0]["data_chunks"] = [10_000] * len(data["sites"])
    elif family == "tapfinger":  # the slowest progress the schema allows, for task 0's type
        kind = data["task_types"][data["tasks"][0]["task_type"]]
        kind["progress"] = {"kind": "insensitive", "rate": 1e-300}
    else:
        for k in ("chunks", "epochs", "minibatches_per_chunk"):
            data["jobs"][0][k] = 10_000
        if family == "preemptive":
            data["jobs"][0]["requested_workers"] = 1


#: The certified instances shipped with the project: ``instances/<family>/<name>.json`` and ``.optimum.json``.
INSTANCES = Path(__file__).resolve().parents[1] / "instances"


def certified_names(family: str) -> list[str]:
    """Names of ``family``'s certified instances (those with an ``.optimum.json`` record)."""
    return sorted(p.name[: -len(".optimum.json")] for p in (INSTANCES / family).glob("*.optimum.json"))


def load_certified(family: str, name: str) -> tuple[Any, dict]:
    """A certified instance of ``family`` (checked to be of that family) and its optimum record."""
    from edgeopt.core import jsonio

    inst = api.load(INSTANCES / family / f"{name}.json")
    assert api.family_of(inst).name == family
    return inst, jsonio.read_json(str(INSTANCES / family / f"{name}.optimum.json"), what="optimum")


#: Deterministic work (`edgeopt.core.limits.work_limit`) for a test that needs a proven optimum: ample for the
#: suite's small instances (they prove within a few units), and the same on an idle and a loaded machine.
#: Such a test gives the clock an hour, so that only this budget can stop the solver.
PROOF_WORK = 1000.0
#: The wall-clock limit of such a test: an hour, never reached, so that only `PROOF_WORK` can stop the solver.
PROOF_CLOCK = 3600.0


def edited_certificate(res: Any, **cert: Any) -> Any:
    """``res`` (a `Result`) with the entries ``cert`` of its ``extra["certificate"]`` replaced: a forged proof."""
    from edgeopt.core import Result

    d = res.to_dict()
    d["extra"] = {**d["extra"], "certificate": {**d["extra"]["certificate"], **cert}}
    return Result.from_dict(d)


def prove(solve: Any, *args: Any, **kwargs: Any) -> Any:
    """``solve(*args, time_limit=PROOF_CLOCK, **kwargs)`` under `PROOF_WORK` units of deterministic work: for a
    test that needs the solve to finish (a proven optimum or infeasibility, a converged bound), which then
    ends at the same point on an idle and on a loaded machine. ``solve`` is any callable whose exact solves
    go through `formulations.common` (they read `edgeopt.core.limits.work_limit`)."""
    from edgeopt.core.limits import work_limit

    with work_limit(PROOF_WORK):
        return solve(*args, time_limit=PROOF_CLOCK, **kwargs)


def limit_cpsat_by_work(monkeypatch: pytest.MonkeyPatch, deterministic_s: float = 0.2) -> None:
    """Make every CP-SAT solve of `formulations.common` stop after ``deterministic_s`` of CP-SAT's
    deterministic time (its own work units; 0.2 is about 1.5 s of CPU on an idle core) instead of a
    wall-clock limit, so what it finds does not depend on how busy the machine is (its interleaved
    search is deterministic). Tests that need "stopped at its limit with an incumbent" use it."""
    from ortools.sat.python import cp_model

    from formulations import common

    class WorkLimitedSolver(cp_model.CpSolver):
        def solve(self, model: Any, *args: Any, **kwargs: Any) -> Any:
            self.parameters.max_deterministic_time = deterministic_s
            self.parameters.max_time_in_seconds = 600.0  # the work budget, not the clock, ends the search
            return super().solve(model, *args, **kwargs)

    monkeypatch.setattr(common.cp_model, "CpSolver", WorkLimitedSolver)


def valid_schedules(family: str, inst: Any) -> list[tuple[str, dict]]:
    """(name, schedule) of every registered non-relaxed algorithm's run on ``inst`` that has a schedule, each
    run first checked by the family's validator."""
    out = []
    for name, algo in api.algorithms(family).items():
        if algo.relaxed:
            continue
        res = api.run(name, inst, seed=0)
        assert not api.validate(inst, res), name
        if res.schedule is not None:
            out.append((name, res.schedule))
    return out


def assert_lns_result(inst: Any, ws: Any, res: Any) -> None:
    """What every family's `solve --lns` owes (`edgeopt.core.lns`): status ``time_limit`` (or ``optimal``
    when the certified bound meets the schedule, its certificate the proof, which `api.validate`
    re-checks), a valid complete schedule never worse than the warm start ``ws``, a log that agrees with
    the result, and a bound (if any) not above it."""
    from edgeopt.core import Status

    assert res.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    assert not api.validate(inst, res)
    assert res.objective <= ws.objective + 1e-9
    lns = res.extra["lns"]
    if res.status == Status.OPTIMAL:
        assert res.extra["certificate"]["bound"] == pytest.approx(res.objective)
    if res.status == Status.TIME_LIMIT or lns["iterations"]:
        assert lns["iterations"] >= 1
    assert lns["start_objective"] == pytest.approx(ws.objective)
    assert lns["objective"] == pytest.approx(res.objective)
    assert res.extra["warm_start"]["kept"] == (lns["improvements"] == 0)
    assert res.bound is None or res.bound <= res.objective


def assert_window_kept_the_others(instance: Any, before: Any, after: Any, free: Any) -> None:
    """An LNS window over jobs ``free`` (a schedule with ``jobs``: okita, preemptive) left every other job
    exactly as it was, still lists every job once, and is valid."""
    keep = {js.job: js for js in before.jobs if js.job not in free}
    assert {js.job: js for js in after.jobs if js.job not in free} == keep
    assert sorted(js.job for js in after.jobs) == list(range(len(instance.jobs)))
    assert api.family_of(instance).validate(instance, after) == []
