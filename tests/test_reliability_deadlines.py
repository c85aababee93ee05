"""Deadlines of the solvers' own loops: pricing, column generation and the large-neighbourhood search.

A time limit bounds the whole call. The loops are tested deterministically: `TickDeadline` passes after
a fixed number of checks, whatever the machine's load, so a test asserts *that* a loop checks and what
it returns when it stops, never how long it took. The one end-to-end run reads CPU time, with a wide
margin.
"""

from __future__ import annotations

import contextlib
import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgeopt import api
from edgeopt.core import BuildTimeLimit, Result, Status
from edgeopt.core.limits import work_limit
from tests.reliability_helpers import PROOF_CLOCK, cli


class TickDeadline:
    """A stand-in for `edgeopt.core.limits.Deadline` that passes after ``ticks`` calls of `check`.

    Before that it reports plenty of time left; after it, none. `guard` does nothing: the loops under
    test must stop through their own `check` calls.
    """

    def __init__(self, ticks: int, time_limit: float = 30.0) -> None:
        self.ticks, self.checks, self.time_limit = ticks, 0, time_limit

    def _passed(self) -> bool:
        return self.checks >= self.ticks

    def expired(self) -> bool:
        return self._passed()

    def elapsed(self) -> float:
        return 0.0

    def remaining(self, *, floor: float = 0.05) -> float:
        return floor if self._passed() else 1e6

    def check(self, what: str = "model building") -> None:
        self.checks += 1
        if self.checks > self.ticks:
            raise BuildTimeLimit(f"time limit reached during {what}")

    def guard(self, what: str = "model building", **_: Any) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


def long_okita(horizon: int, tmp_path: Path | None = None) -> Any:
    """The okita small preset with every job needing ``horizon`` worker-slots: the worker_lp pricing tries
    every completion slot c with a sort of its window, O(T^2 log T) per job (minutes at T = 10^5)."""
    data = api.generate("okita", "small", seed=1).model_dump(mode="json")
    data["horizon"] = horizon
    for job in data["jobs"]:
        job.update(arrival=0, epochs=1, worker_chunks_per_slot=1.0,
                   latency_cost={"kind": "linear", "tau": 1.0, "b": 0.0})
        job["data_chunks"] = [horizon] + [0] * (len(job["data_chunks"]) - 1)
    if tmp_path is not None:
        path = tmp_path / "long_okita.json"
        path.write_text(json.dumps(data))
        return path
    return api.family("okita").instance_type.model_validate(data)


def test_okita_worker_lp_pricing_checks_the_deadline_in_its_completion_loop() -> None:
    from edgeopt.core.colgen import column_generation
    from formulations.okita.lpbound import WorkerRelaxation

    rel = WorkerRelaxation(long_okita(2000))
    deadline = TickDeadline(25)
    with pytest.raises(BuildTimeLimit, match="pricing"):
        column_generation(rel, deadline=deadline)
    assert deadline.checks == 26  # stopped at the first check past the deadline, inside the first job


def test_column_generation_keeps_the_prices_priced_before_the_deadline() -> None:
    from edgeopt.core.colgen import JobModes, TimeIndexedRelaxation, column_generation, lagrangian

    rng = np.random.default_rng(3)
    T, J = 12, 5
    jobs = [JobModes(weight=1.0, offset=0.0, latest=T, duration=rng.integers(1, 4, size=2),
                     earliest=0, run=rng.integers(1, 3, size=(2, 1))) for _ in range(J)]
    rel = TimeIndexedRelaxation(jobs, np.full((1, T), 2.0))
    assert column_generation(rel).stop_reason != "time limit"  # unhurried, it goes further than L(0)
    deadline = TickDeadline(J + 1)  # the first pass (one check per job) and one job of the second
    cg = column_generation(rel, deadline=deadline)
    assert cg.stop_reason == "time limit" and not cg.converged
    assert deadline.checks == J + 2
    assert np.all(cg.prices == 0) and cg.value == lagrangian(rel, np.zeros((1, T))).value


@pytest.mark.parametrize("passes", [1, 3])
def test_a_bound_stopped_in_a_later_pricing_pass_is_still_certified(passes: int) -> None:
    from edgeopt.core.lowerbound import compute_bound
    from formulations.tapfinger.lpbound import TI_LP, relaxation

    inst = api.generate("tapfinger", "small", seed=0)  # 13 iterations unhurried
    J = len(relaxation(inst).jobs)
    res = compute_bound("tapfinger", TI_LP, inst, deadline=TickDeadline(passes * J + 1))
    assert res.status == Status.BOUND and res.extra["solver"]["stop"] == "time limit"
    assert res.extra["solver"]["iterations"] == passes + 1
    assert api.check_bound(inst, res) == pytest.approx(res.bound)


def test_bound_cli_on_a_long_okita_instance_ends_as_a_time_limit(tmp_path: Path, monkeypatch) -> None:
    import edgeopt.solving.bounds

    path = long_okita(2000, tmp_path)
    monkeypatch.setattr(edgeopt.solving.bounds, "Deadline", lambda time_limit: TickDeadline(40, time_limit))
    out = tmp_path / "bound.json"
    assert cli("bound", path, "--time-limit", "30", "-o", out) == 0
    res = json.loads(out.read_text())
    assert res["status"] == "time_limit" and res["bound"] is None and "pricing" in res["extra"]["reason"]


def test_bound_cli_keeps_its_time_limit_on_huge_okita_durations(tmp_path: Path) -> None:
    # the probe's case: T = 10^5 and jobs needing 10^5 worker-slots ran past 200 s with --time-limit 30
    path = long_okita(100_000, tmp_path)
    out = tmp_path / "bound.json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "edgeopt.cli", "bound", str(path), "--time-limit", "1",
                           "-o", str(out)], check=False, capture_output=True, text=True, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads(out.read_text())["status"] == "time_limit"
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 60, cpu  # imports and the relaxation's build: a few seconds; the whole pricing: minutes


def test_lns_polish_needs_the_time_a_window_would_get() -> None:
    from edgeopt.core.lns import Neighbourhood, SubSolve, search

    inst = api.generate("hetero", "small", seed=1)
    ws = api.run("fifo", inst)
    spec = api.family_of(inst)
    sched = spec.parse_schedule(ws.schedule)
    polished: list[int] = []

    def polish(i: Any, s: Any) -> None:
        polished.append(1)

    class Nearly(TickDeadline):
        def remaining(self, *, floor: float = 0.05) -> float:
            return max(floor, 0.1)  # not expired, but less than a sub-solve's minimum

    hood = Neighbourhood(order=lambda i, s: [js.job for js in s.jobs],
                         reoptimise=lambda i, s, free, limit: SubSolve(None, False), polish=polish)
    best, obj, log = search(spec, inst, sched, hood, deadline=Nearly(10**9), min_sub_limit=0.5)
    assert polished == [] and log.iterations == 0 and best is sched and obj == pytest.approx(ws.objective)


def test_lns_whose_warm_start_used_up_the_time_returns_it_at_once(monkeypatch) -> None:
    import edgeopt.core.lns
    import edgeopt.solving.warmstart

    def no_search(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("no window can start: the search must not run")

    monkeypatch.setattr(edgeopt.solving.warmstart, "Deadline", lambda time_limit: TickDeadline(0, time_limit))
    monkeypatch.setattr(edgeopt.core.lns, "search", no_search)
    inst = api.generate("okita", "small", seed=1)
    res = api.solve(inst, method="cpsat", lns=True, warm_start="fifo", time_limit=30)
    ws = api.run("fifo", inst, seed=0)
    assert res.status == Status.TIME_LIMIT and res.objective == pytest.approx(ws.objective)
    assert not api.validate(inst, res)
    assert res.extra["lns"]["iterations"] == 0 and res.extra["warm_start"]["kept"]


# ---- the model-size budget in the large-neighbourhood search -------------------------------------------

#: A quick complete algorithm per family (the LNS's warm start in these tests).
QUICK = {"edgecloud": "fifo", "hetero": "fifo", "preemptive": "srtf", "okita": "fifo", "tapfinger": "greedy"}


@pytest.mark.parametrize("family", sorted(QUICK))
def test_lns_refuses_every_window_model_above_the_budget(family: str, monkeypatch) -> None:
    # the budget bounds the models the LNS builds (its windows), estimated before each is built; when
    # even one-job windows are above it the search stops at once instead of ignoring the budget
    import dataclasses
    import importlib

    table = importlib.import_module(f"formulations.{family}").NEIGHBOURHOODS
    plain = table["cpsat"]
    # the windows alone: the local step builds no model, so the budget does not stop it (the test below)
    monkeypatch.setitem(table, "cpsat", lambda: dataclasses.replace(plain(), local=None))
    inst = api.generate(family, "small", seed=1)
    res = api.solve(inst, method="cpsat", lns=True, warm_start=QUICK[family], max_model_size=1, time_limit=60)
    ws = api.run(QUICK[family], inst, seed=0)
    lns = res.extra["lns"]
    assert res.status == Status.TIME_LIMIT and not api.validate(inst, res)
    assert res.objective == pytest.approx(ws.objective) and lns["improvements"] == 0 and "local" not in lns
    assert lns["max_model_size"] == 1 and lns["refused_windows"] == lns["iterations"] >= 1
    assert "above the size budget" in lns["stop"] and "--max-model-size" in res.extra["reason"]


def test_the_lns_local_step_builds_no_model_and_runs_under_any_budget() -> None:
    # ruin and recreate re-places jobs with the list scheduler's own search: nothing for the budget to refuse
    inst = api.generate("hetero", "small", seed=1)
    res = api.solve(inst, method="cpsat", lns=True, warm_start="fifo", max_model_size=1, time_limit=60)
    ws = api.run("fifo", inst, seed=0)
    lns = res.extra["lns"]
    assert lns["local"] == "kept" and lns["improvements"] == 1 and not api.validate(inst, res)
    assert res.objective < ws.objective and lns["refused_windows"] >= 1


def test_lns_windows_under_the_budget_are_solved() -> None:
    from formulations.okita.lns import last_slots, order, reoptimise, window_size

    inst = api.generate("okita", "small", seed=1)
    sched = api.family_of(inst).parse_schedule(api.run("fifo", inst).schedule)
    free = order(inst, sched)[:2]
    need = window_size(inst, last_slots(inst, sched, free)).nonzeros
    refused = reoptimise(inst, sched, free, 15.0, max_nonzeros=need - 1)
    assert refused.schedule is None and "above the budget" in refused.refused
    with work_limit(2.0):  # a window stopped by work (2 units), not by the clock: the same on a loaded machine
        solved = reoptimise(inst, sched, free, PROOF_CLOCK, max_nonzeros=need)
    assert solved.refused is None and solved.schedule is not None


# ---- CP-SAT's 64-bit integers -----------------------------------------------------------------------------

def _overflowing_okita(tmp_path: Path) -> Path:
    # the probe's instance: the paper's exponential latency over a long horizon, 2.1e20 once scaled
    path = tmp_path / "x.json"
    assert cli("generate", "okita", "--preset", "paper", "--seed", "2011", "--jobs", "2", "--servers", "2",
               "-o", path) == 0
    return path


def test_okita_cpsat_refuses_costs_beyond_cpsats_integers(tmp_path: Path, capsys) -> None:
    from tests.reliability_helpers import assert_clean_error

    path = _overflowing_okita(tmp_path)
    capsys.readouterr()
    assert cli("solve", path, "--method", "cpsat", "--time-limit", "20") == 2
    assert_clean_error(capsys.readouterr().err, "job 0's largest latency cost", "2^62", "--method milp")


def test_okita_cpsat_with_a_warm_start_returns_it_with_the_reason(tmp_path: Path) -> None:
    inst = api.load(_overflowing_okita(tmp_path))
    res = api.solve(inst, method="cpsat", warm_start="fifo", time_limit=20)
    assert res.status == Status.FEASIBLE and not api.validate(inst, res)
    assert "2^62" in res.extra["reason"] and "--method milp" in res.extra["reason"]


def test_hetero_cpsat_refuses_weighted_completions_beyond_cpsats_integers() -> None:
    from edgeopt.core import InputError

    data = api.generate("hetero", "small", seed=1, jobs=60).model_dump(mode="json")
    data["horizon"] = 100_000
    for job in data["jobs"]:
        job["weight"] = 1e6
    data["jobs"][0]["weight"] = 1e-6  # the weights' scale becomes 10^6: 10^12 per slot of a heavy job
    inst = api.family("hetero").instance_type.model_validate(data)
    with pytest.raises(InputError, match="weighted completion times' largest sum") as err:
        api.solve(inst, method="cpsat", time_limit=20)
    assert err.value.field == "instance" and "--method milp" in str(err.value)


def test_a_cpsat_model_invalid_by_overflow_is_an_input_error() -> None:
    from ortools.sat.python import cp_model

    from edgeopt.core import InputError
    from formulations.common import solve_cpsat

    model = cp_model.CpModel()
    x = model.new_int_var(0, 2**61, "x")
    model.minimize(8 * x)  # each domain fits, the objective's range does not
    with pytest.raises(InputError, match="overflow") as err:
        solve_cpsat(model, time_limit=5)
    assert "--method milp" in str(err.value)


# ---- an instance without jobs -----------------------------------------------------------------------------

@pytest.mark.parametrize("family", sorted(QUICK))
def test_an_instance_without_jobs_is_bounded_solved_and_run(family: str, tmp_path: Path, capsys) -> None:
    from tests.reliability_helpers import jobs_key, small_instance

    _, path = small_instance(family, tmp_path, **{jobs_key(family): []})
    out = tmp_path / "r.json"
    assert cli("bound", path, "--time-limit", "20", "-o", out) == 0
    res = json.loads(out.read_text())
    assert res["status"] == "bound" and res["bound"] == 0.0
    inst = api.load(path)
    assert api.check_bound(inst, Result.load(str(out))) == 0.0
    for args in (["--method", "milp"], ["--method", "cpsat"], ["--method", "cpsat", "--lns"],
                 ["--method", "cpsat", "--warm-start", "best"], ["--method", "milp", "--warm-start", "best"]):
        assert cli("solve", path, *args, "--time-limit", "10", "-o", out) == 0, args
        res = json.loads(out.read_text())
        assert res["objective"] == 0.0 and not api.validate(inst, Result.load(str(out))), args
    for name in api.algorithms(family):
        assert cli("run", name, path, "-o", out) == 0, name
        assert json.loads(out.read_text())["objective"] == 0.0, name
    assert "Traceback" not in capsys.readouterr().err
