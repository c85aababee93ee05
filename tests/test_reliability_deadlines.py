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
from edgeopt.core import BuildTimeLimit, Status
from tests.reliability_helpers import cli


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
    import edgeopt.api

    path = long_okita(2000, tmp_path)
    monkeypatch.setattr(edgeopt.api, "Deadline", lambda time_limit: TickDeadline(40, time_limit))
    out = tmp_path / "bound.json"
    assert cli("bound", path, "--time-limit", "30", "-o", out) == 0
    res = json.loads(out.read_text())
    assert res["status"] == "time_limit" and res["bound"] is None and "pricing" in res["extra"]["reason"]


def test_bound_cli_keeps_its_time_limit_on_huge_okita_durations(tmp_path: Path) -> None:
    # the probe's case: T = 10^5 and jobs needing 10^5 worker-slots ran past 200 s with --time-limit 30
    path = long_okita(100_000, tmp_path)
    out = tmp_path / "bound.json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "edgeopt.cli", "bound", str(path), "--time-limit", "1", "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
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
    import edgeopt.warmstart

    def no_search(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("no window can start: the search must not run")

    monkeypatch.setattr(edgeopt.warmstart, "Deadline", lambda time_limit: TickDeadline(0, time_limit))
    monkeypatch.setattr(edgeopt.core.lns, "search", no_search)
    inst = api.generate("okita", "small", seed=1)
    res = api.solve(inst, method="cpsat", lns=True, warm_start="fifo", time_limit=30)
    ws = api.run("fifo", inst, seed=0)
    assert res.status == Status.TIME_LIMIT and res.objective == pytest.approx(ws.objective)
    assert not api.validate(inst, res)
    assert res.extra["lns"]["iterations"] == 0 and res.extra["warm_start"]["kept"]
