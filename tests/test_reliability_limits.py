"""Issue 10, parts 3-5: limits that hold (size guard, deadline over the whole call), interruption, determinism."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edgeopt import api
from edgeopt.commands import common
from edgeopt.commands.common import Terminated
from edgeopt.core import InputError, Status
from edgeopt.core.jsonio import dumps
from edgeopt.core.result import masked_timings
from tests.reliability_helpers import (
    FAMILIES,
    PROOF_CLOCK,
    PROOF_WORK,
    assert_clean_error,
    cli,
    small_instance,
    write,
)

ROOT = Path(__file__).resolve().parents[1]
PAPER_LIMIT = 4  # seconds of `solve --time-limit` on the paper presets


def _python_threads(pid: int) -> list[str]:
    """The names of the process's threads, less the allocator's background ones ([] once it has ended)."""
    names = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            names.append((task / "comm").read_text().strip())
        except OSError:  # the thread (or the process) ended meanwhile
            continue
    return [n for n in names if not n.endswith("_bg_thd")]


def _edgeopt(*args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "edgeopt.cli", *map(str, args)], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("method", ["milp", "cpsat"])
def test_size_estimate_is_close_to_the_built_model(family, method):
    """The estimate never undercounts the built model much, and overcounts by a bounded factor."""
    inst = api.generate(family, "small", seed=2)
    size = api.model_sizes(family)[method](inst)
    # built whatever the load (an hour on the clock); the search is not the point: 0.01 units of work stop it
    res = api.solve(inst, method=method, time_limit=PROOF_CLOCK, work_limit=0.01)
    built = res.extra.get("n_vars") or res.extra.get("variables")
    assert res.extra["model_size"]["variables"] == size.variables
    if built:
        assert 0.5 * built <= size.variables <= 25 * built, (size, built)


def test_huge_horizon_is_refused_before_building(tmp_path, capsys):
    _, path = small_instance("hetero", tmp_path, horizon=10**6)
    t0 = time.process_time()  # CPU time: the refusal costs no work, however busy the machine
    assert cli("solve", path, "--method", "milp", "-o", tmp_path / "out.json") == 2
    assert time.process_time() - t0 < 10
    err = capsys.readouterr().err
    assert_clean_error(err, "nonzeros", "--max-model-size", "smaller instance", "other method")
    assert not (tmp_path / "out.json").exists()


def test_max_model_size_sets_the_budget(tmp_path, capsys):
    _, path = small_instance("hetero", tmp_path)
    assert cli("solve", path, "--max-model-size", "10", "-o", tmp_path / "out.json") == 2
    assert_clean_error(capsys.readouterr().err, "budget of 10 nonzeros")
    assert cli("solve", path, "--max-model-size", "0") == 2
    inst = api.load(path)
    with pytest.raises(InputError, match="time_limit"):
        api.solve(inst, time_limit=float("nan"))
    big = api.generate("hetero", "paper", seed=0, jobs=30)
    # without fixing the guard judges the whole model before anything runs; with it (the default) the guard waits
    # for the model fixing leaves, after an incumbent search that takes a share of the time limit, so whether it is
    # reached within 5 s would depend on the machine's load
    with pytest.raises(InputError, match="budget"):
        api.solve(big, method="milp", time_limit=5, fix=False)


@pytest.mark.parametrize("method", ["milp", "cpsat"])
def test_time_limit_bounds_model_building(method):
    """The issue's case: hetero paper preset, 30 jobs, --time-limit 5. With the size guard lifted the
    model is too big to build in time: status time_limit, and the call spends no more CPU than the limit
    allows (at most 2 threads busy for 1.5x the limit + 1 s). CPU time, not wall-clock: on a loaded
    machine the wall-clock overshoot measures the load (the wall-clock promise is kept by
    benchmarks/time_limits.py)."""
    inst = api.generate("hetero", "paper", seed=0, jobs=30)
    limit = 4.0
    t0 = time.process_time()
    res = api.solve(inst, method=method, time_limit=limit, max_model_size=10**12)
    cpu = time.process_time() - t0
    assert cpu <= 2 * (1.5 * limit + 1), cpu
    assert res.status == Status.TIME_LIMIT
    assert res.objective is None and "time limit" in res.extra["reason"]


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupting_cpsat_exits_without_output(sig, code, tmp_path):
    """Ctrl-C during CP-SAT used to be swallowed by CP-SAT: a 'time_limit' result written, exit 0."""
    # 12 jobs: feasible (25 are not, and the CP-SAT model's certified objective floor now proves that at once)
    # and far from solved when the signal comes
    inst = write(tmp_path / "i.json", api.generate("hetero", "small", seed=3, jobs=12).model_dump(mode="json"))
    out = tmp_path / "out.json"
    proc = _edgeopt("solve", inst, "--method", "cpsat", "--time-limit", "120", "-o", out)
    deadline = time.time() + 60
    # wait until the search runs (main thread + search thread + CP-SAT's 2 workers), then interrupt. The
    # allocator's background thread (jemalloc_bg_thd) starts during the imports: it is not counted, or the
    # signal can come before CP-SAT is even imported (what a loaded machine did; the CLI now exits 143 then
    # too, `test_a_signal_during_an_extension_import_is_still_the_signal`)
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.25)
        if len(_python_threads(proc.pid)) >= 4:
            break
    time.sleep(1.0)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert not out.exists()
    assert not list(tmp_path.glob(".out.json*"))


@pytest.mark.parametrize(("signalled", "code", "word"), [(KeyboardInterrupt, 130, "interrupted"),
                                                         (Terminated, 143, "terminated")])
def test_a_signal_during_an_extension_import_is_still_the_signal(signalled, code, word, tmp_path, monkeypatch,
                                                                 capsys):
    """A SIGTERM that arrived while ortools' compiled helper initialised (the first import of ``cp_model``,
    seen on a loaded machine) came out as ``ImportError: initialization failed`` raised from `Terminated`:
    exit 1 and a traceback. The CLI now follows the cause: 143 (130 for Ctrl-C), one word, no output file."""
    _, inst = small_instance("hetero", tmp_path)
    out = tmp_path / "out.json"

    def import_interrupted(*args, **kwargs):
        try:
            raise signalled()
        except BaseException as exc:
            raise ImportError("initialization failed") from exc

    monkeypatch.setattr(common.api, "solve", import_interrupted)
    assert cli("solve", inst, "--method", "cpsat", "-o", out) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip() == word
    assert not out.exists()


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("method", ["milp", "cpsat"])
def test_two_solves_are_identical_but_for_timings(family, method, tmp_path):
    """Runs that end by proof are byte-identical once `masked_timings` blanks runtime_s and extra.timings
    (CP-SAT's two workers used to race to different optimal schedules)."""
    path = write(tmp_path / "i.json", api.generate(family, "small", seed=1, jobs=3).model_dump(mode="json"))
    texts = []
    for k in range(2):
        out = tmp_path / f"r{k}.json"
        # proofs by work: both runs end by proof on a loaded machine too
        assert cli("solve", path, "--method", method, "--time-limit", int(PROOF_CLOCK), "--work-limit", PROOF_WORK,
                   "-o", out) == 0
        texts.append(dumps(masked_timings(json.loads(out.read_text()))))
    assert texts[0] == texts[1]
    data = json.loads((tmp_path / "r0.json").read_text())
    assert set(data["extra"]["timings"]) >= {"build_s", "solve_s"}
    # nothing else in the result is a time
    assert not [k for k in data["extra"] if k.endswith("_s")], data["extra"].keys()


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("method", ["milp", "cpsat"])
def test_paper_preset_with_a_time_limit_stays_within_its_cpu_budget(family, method, tmp_path):
    """``solve --time-limit 4`` on the paper preset ends by itself (the 600 s timeout only catches a
    hang) and uses at most the CPU of its threads (HiGHS 1, CP-SAT 2 workers) over the limit plus 15 s
    (Python's start and imports, reading and writing). Measured in the child's CPU time, so a loaded
    machine cannot fail it. The limit is short so that the deadline also has to cut the build of the
    larger models; the wall-clock promise of ``--time-limit 10`` (25 s on an idle machine) is reported
    by benchmarks/time_limits.py."""
    import resource

    inst = write(tmp_path / "p.json", api.generate(family, "paper", seed=0).model_dump(mode="json"))
    out = tmp_path / "out.json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = _edgeopt("solve", inst, "--method", method, "--time-limit", str(PAPER_LIMIT), "-o", out)
    _, err = proc.communicate(timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    threads = 2 if method == "cpsat" else 1
    assert cpu < threads * (PAPER_LIMIT + 15), (cpu, err)
    assert "Traceback" not in err
    if proc.returncode == 2:
        assert "--max-model-size" in err and not out.exists()
    else:
        assert proc.returncode == 0, err
        res = json.loads(out.read_text())
        assert res["status"] in ("optimal", "time_limit", "infeasible")


def test_guard_reports_an_overrun_whose_exception_was_swallowed():
    """CPython drops an asynchronous exception that lands in a gc callback or a ``__del__``: the block
    then runs on past the deadline. The guard must still end it as a time limit, not return normally."""
    from edgeopt.core.limits import BuildTimeLimit, Deadline, _AsyncBuildTimeLimit

    deadline = Deadline(0.05)
    with pytest.raises(BuildTimeLimit, match="time limit"), deadline.guard("a swallowing build"):
        end = time.perf_counter() + 30
        while time.perf_counter() < end:
            try:
                time.sleep(0.01)
            except _AsyncBuildTimeLimit:  # what a gc callback does to it
                break
        else:
            pytest.fail("the guard never fired")
