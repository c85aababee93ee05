"""Large MILPs are solved by HiGHS in a child process the deadline can kill (`formulations.highs_process`).

HiGHS 1.12's presolve can run far past the time limit on models of about a million nonzeros without looking
at its clock; the child keeps the promise that the time limit bounds the whole call. Here the threshold is
lowered so that small models take the child's path: it must answer exactly as the in-process solve does, and
a child that does not answer in time is killed and its last incumbent kept. No test depends on the wall
clock: the hanging children never answer, whatever the load.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pyomo.environ as pyo
import pytest
from pyomo.common.collections import ComponentMap

from edgeopt import api
from edgeopt.core import ModelError, Status
from formulations import highs_process
from formulations.common import solve_pyomo


def _tiny_model(*, integer: bool = True, infeasible: bool = False) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4), domain=pyo.Integers if integer else pyo.Reals)
    m.y = pyo.Var(bounds=(0, 3), domain=pyo.Integers if integer else pyo.Reals)
    m.c = pyo.Constraint(expr=2 * m.x + 3 * m.y <= 7.5)
    if infeasible:
        m.d = pyo.Constraint(expr=m.x + m.y >= 9)
    m.obj = pyo.Objective(expr=-m.x - 2.1 * m.y + 1)  # integer optimum (0, 2): -3.2; LP (0, 2.5): -4.25
    return m


@pytest.fixture
def child(monkeypatch):
    """Every model goes to the child; returns the list of the child runs' answers."""
    seen = []
    real = highs_process.solve_in_child

    def spy(*args, **kwargs):
        seen.append(real(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(highs_process, "MIN_NONZEROS", 0)
    monkeypatch.setattr(highs_process, "solve_in_child", spy)
    return seen


@pytest.mark.parametrize("integer", [True, False])
def test_the_child_answers_as_the_in_process_solve(child, monkeypatch, integer):
    out = solve_pyomo(m := _tiny_model(integer=integer), time_limit=60)
    values = (pyo.value(m.x), pyo.value(m.y))
    assert len(child) == 1
    monkeypatch.setattr(highs_process, "MIN_NONZEROS", 10**12)
    ref = solve_pyomo(r := _tiny_model(integer=integer), time_limit=60)
    assert len(child) == 1  # the reference did not take the child's path
    assert out.status == ref.status == Status.OPTIMAL
    assert out.objective == pytest.approx(ref.objective) and out.bound == pytest.approx(ref.bound)
    assert values == pytest.approx((pyo.value(r.x), pyo.value(r.y)))
    assert out.objective == pytest.approx(-3.2 if integer else -4.25)


def test_the_child_takes_the_mip_start(child):
    m = _tiny_model()
    out = solve_pyomo(m, time_limit=60, start=ComponentMap([(m.x, 2.0), (m.y, 1.0)]))
    assert out.start_values == 2 and out.status == Status.OPTIMAL and out.objective == pytest.approx(-3.2)


def test_the_child_reports_infeasibility(child):
    out = solve_pyomo(_tiny_model(infeasible=True), time_limit=60)
    assert out.status == Status.INFEASIBLE and not out.has_solution


@pytest.mark.parametrize("family", ["edgecloud", "hetero", "okita", "preemptive", "tapfinger"])
def test_every_family_proves_the_same_optimum_through_the_child(child, monkeypatch, family):
    inst = api.generate(family, "small", seed=1, jobs=3)
    res = api.solve(inst, method="milp", time_limit=60)  # api.solve validates the schedule it returns
    assert child and all(a.model_status == "kOptimal" for a in child)
    monkeypatch.setattr(highs_process, "MIN_NONZEROS", 10**12)
    ref = api.solve(inst, method="milp", time_limit=60)
    assert res.status == ref.status == Status.OPTIMAL
    assert res.objective == pytest.approx(ref.objective, rel=1e-9)
    assert not api.validate(inst, res) and not api.validate(inst, ref)


def _hanging_child(monkeypatch, script: str, cls: type = subprocess.Popen) -> list[subprocess.Popen]:
    """Replace the child by ``script`` (run with the exchange folder as argv[1]), started as ``cls``; no grace
    past the limit. Returns the list the started processes are appended to."""
    started: list[subprocess.Popen] = []

    def popen(*args, **kwargs):
        started.append(cls(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(highs_process, "CHILD_COMMAND", [sys.executable, "-c", script])
    monkeypatch.setattr(highs_process, "grace_s", lambda time_limit: 0.0)
    monkeypatch.setattr(highs_process.subprocess, "Popen", popen)
    return started


def test_a_child_past_the_deadline_is_killed(child, monkeypatch):
    started = _hanging_child(monkeypatch, "import time; time.sleep(600)")
    out = solve_pyomo(_tiny_model(), time_limit=0.2)
    assert out.status == Status.TIME_LIMIT and not out.has_solution and out.objective is None
    assert child[0].model_status == "killed"
    assert started[0].returncode is not None  # ended, not left running


def test_a_killed_child_gives_its_last_incumbent(child, monkeypatch):
    import numpy as np

    # the incumbent the child's HiGHS callback would have written, x = 1, y = 1 (objective -2.1), is in the
    # exchange folder before the child starts: what the parent finds does not depend on how fast a child runs
    real_mkdtemp = highs_process.tempfile.mkdtemp

    def mkdtemp(**kwargs):
        folder = real_mkdtemp(**kwargs)
        np.savez(os.path.join(folder, "incumbent.npz"), objective=-2.1, bound=-5.0, col_value=np.array([1.0, 1.0]))
        return folder

    monkeypatch.setattr(highs_process.tempfile, "mkdtemp", mkdtemp)
    _hanging_child(monkeypatch, "import time; time.sleep(600)")
    m = _tiny_model()
    out = solve_pyomo(m, time_limit=0.2)
    assert out.status == Status.TIME_LIMIT and out.objective == -2.1 and out.bound == -5.0
    assert (pyo.value(m.x), pyo.value(m.y)) == (1.0, 1.0)


def test_a_child_that_dies_without_an_answer_is_an_error(child, monkeypatch):
    _hanging_child(monkeypatch, "import sys; sys.exit(3)")
    with pytest.raises(ModelError, match="exit code 3"):
        solve_pyomo(_tiny_model(), time_limit=60)


class _InterruptedWhileWaiting(subprocess.Popen):
    def wait(self, timeout=None):
        if timeout is not None:
            raise KeyboardInterrupt  # Ctrl-C (or SIGTERM turned into an exception) while the parent waits
        return super().wait(timeout)


def test_an_interrupt_while_waiting_kills_the_child_and_cleans_up(child, monkeypatch):
    started = _hanging_child(monkeypatch, "import time; time.sleep(600)", _InterruptedWhileWaiting)
    folders: list[str] = []
    real_mkdtemp = highs_process.tempfile.mkdtemp

    def mkdtemp(**kwargs):
        folders.append(real_mkdtemp(**kwargs))
        return folders[-1]

    monkeypatch.setattr(highs_process.tempfile, "mkdtemp", mkdtemp)
    with pytest.raises(KeyboardInterrupt):
        solve_pyomo(_tiny_model(), time_limit=60)
    assert started[0].returncode is not None  # killed, not left running
    assert folders and not os.path.exists(folders[0])  # the exchange folder is gone


@pytest.mark.parametrize(("threshold", "used"), [(2, True), (3, False)])
def test_the_child_takes_models_from_min_nonzeros_on(child, monkeypatch, threshold, used):
    monkeypatch.setattr(highs_process, "MIN_NONZEROS", threshold)  # the tiny model has 2 nonzeros
    assert solve_pyomo(_tiny_model(), time_limit=60).status == Status.OPTIMAL
    assert bool(child) == used


def test_the_threshold_is_well_below_the_smallest_measured_overrun():
    assert highs_process.MIN_NONZEROS <= 1_300_000 // 4


def test_the_child_keeps_each_improving_solution_while_it_runs(tmp_path):
    """The child's own code, run here: HiGHS's improving-solution callback leaves the last incumbent (the one
    a kill would return) beside the answer, and it is the optimum the answer reports."""
    import numpy as np
    from pyomo.contrib.solver.solvers.highs import Highs

    opt = Highs()
    opt.set_instance(_tiny_model())
    highs_process.write_inputs(str(tmp_path), opt._solver_model, {"time_limit": 30.0, "threads": 1}, None)
    assert highs_process.child_main(str(tmp_path)) == 0
    with np.load(tmp_path / "answer.npz") as answer, np.load(tmp_path / "incumbent.npz") as last:
        assert str(answer["status"]) == "kOptimal" and float(answer["objective"]) == pytest.approx(-3.2)
        assert float(last["objective"]) == pytest.approx(-3.2)
        assert last["col_value"] == pytest.approx(answer["col_value"])
        assert float(last["bound"]) <= float(last["objective"]) + 1e-9


def test_benchmarks_count_the_cpu_of_the_child_processes():
    """Benchmarks report CPU time with `edgeopt.bench.cpu_seconds`, which must see a waited-for child's CPU
    (a large HiGHS solve runs in one): measured against the kernel's own count for the children."""
    import resource

    from edgeopt.bench import cpu_seconds

    def kids() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    c0, k0 = cpu_seconds(), kids()
    subprocess.run([sys.executable, "-c", "sum(range(3_000_000))"], check=True)
    child = kids() - k0
    assert child > 0
    assert cpu_seconds() - c0 >= child


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_dies_with_a_parent_killed_outright(tmp_path):
    """A parent killed by SIGKILL cannot kill its child: the kernel does (the child asked for it at start)."""
    import signal
    import time

    script = tmp_path / "parent.py"
    script.write_text(
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import os, sys, time; "
        "from formulations.highs_process import _die_with_parent; _die_with_parent(int(sys.argv[1])); "
        "print(os.getpid(), flush=True); time.sleep(600)', str(os.getpid())], stdout=subprocess.PIPE, text=True)\n"
        "print(child.stdout.readline().strip(), flush=True)\n"
        "time.sleep(600)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    child_pid = int(parent.stdout.readline())  # the child has made its request once it printed its pid
    parent.send_signal(signal.SIGKILL)
    parent.wait()

    def state() -> str:
        try:
            with open(f"/proc/{child_pid}/status") as f:
                return next(line.split()[1] for line in f if line.startswith("State:"))
        except (FileNotFoundError, ProcessLookupError):
            return "gone"

    try:
        for _ in range(600):  # waits for the kernel's kill; the bound is only a failsafe
            if state() in ("gone", "Z", "X"):
                break
            time.sleep(0.1)
        assert state() in ("gone", "Z", "X")
    finally:
        if state() not in ("gone", "Z", "X"):
            os.kill(child_pid, signal.SIGKILL)  # a failed run leaves no sleeper behind
