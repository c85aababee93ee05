"""``--plugin FILE.py``: a user's algorithm file, without packaging, on every command that takes an algorithm
name, shipped to a sweep's Dask workers; and what a bad file gives (one line naming ``plugin``, exit 2)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from edgeopt import api, plugins
from edgeopt.cli import main
from edgeopt.core import registry
from edgeopt.sweep import SweepPoint, evaluate_point, run_sweep

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = '''
from edgeopt import api


@api.register_algorithm("edgecloud", "file_copy", summary="the online schedule, from a plugin file")
def file_copy(instance, *, repeat: int = 1):
    """Copies `online`.

    Args:
        repeat: how many times to run it (the last one is kept).
    """
    for _ in range(repeat):
        res = api.run("online", instance)
    return res.schedule
'''

DROPS_A_JOB = '''
from edgeopt import api


@api.register_algorithm("edgecloud", "file_drops")
def file_drops(instance):
    """The online schedule less its first job, which is neither run nor rejected."""
    schedule = api.run("online", instance).schedule
    return {**schedule, "jobs": schedule["jobs"][1:]}
'''


def cli(*args: object) -> int:
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    return exc.value.code


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture(autouse=True)
def clean_registry():
    """Each test starts from edgeopt's own registry and leaves it so (a plugin may replace `online`)."""
    api.algorithms("edgecloud")
    saved = {family: dict(table) for family, table in registry._REGISTRY.items()}
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)
    for name in [m for m in sys.modules if m.startswith("_edgeopt_plugin_")]:
        del sys.modules[name]
    plugins._FILES.clear()
    plugins._FILE_PATHS.clear()


@pytest.fixture
def inst(tmp_path):
    path = tmp_path / "inst.json"
    api.save(api.generate("edgecloud", "small", seed=3), path)
    return path


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_run_compare_and_algorithms_use_the_plugin(tmp_path, inst, capsys):
    plugin = _write(tmp_path, "my_algos.py", PLUGIN)
    assert cli("run", "file_copy", inst, "--param", "repeat=2", "--plugin", plugin) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["algorithm"] == "file_copy" and res["status"] == "feasible"
    assert cli("compare", inst, "--algorithms", "online,file_copy", "--json", "--plugin", plugin) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["algorithm"] for r in rows] == ["online", "file_copy"] and all(r["valid"] for r in rows)
    assert rows[0]["objective"] == rows[1]["objective"]
    assert cli("algorithms", "edgecloud", "--json", "--plugin", plugin) == 0
    listed = {r["algorithm"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed["file_copy"]["params"][0]["name"] == "repeat"
    # the module is one of its own, never counted as edgeopt's (built-ins are not validated on each run)
    algo = api.algorithms("edgecloud")["file_copy"]
    assert algo.fn.__module__.startswith("_edgeopt_plugin_my_algos_") and not api.is_builtin(algo)


def test_solve_warm_start_takes_a_plugin_algorithm(tmp_path, inst, capsys):
    plugin = _write(tmp_path, "warm.py", PLUGIN)
    assert cli("solve", inst, "--method", "cpsat", "--warm-start", "file_copy", "--time-limit", "20",
               "--work-limit", "20", "--plugin", plugin) == 0
    assert json.loads(capsys.readouterr().out)["family"] == "edgecloud"


def test_without_the_plugin_the_name_is_unknown(inst, capsys):
    assert cli("run", "file_copy", inst) == 2
    assert "unknown edgecloud algorithm 'file_copy'" in one_line_error(capsys)


def test_a_plugin_schedule_is_validated_by_run_and_compare(tmp_path, inst, capsys):
    plugin = _write(tmp_path, "drops.py", DROPS_A_JOB)
    out = tmp_path / "res.json"
    assert cli("run", "file_drops", inst, "-o", out, "--plugin", plugin) == 1
    err = capsys.readouterr().err
    assert "invalid result" in err and not out.exists()
    assert cli("compare", inst, "--algorithms", "online,file_drops", "--json", "--plugin", plugin) == 0
    rows = {r["algorithm"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["file_drops"]["valid"] is False and rows["online"]["valid"] is True


RUNS_OUT_OF_MEMORY = '''
from edgeopt import api


@api.register_algorithm("edgecloud", "file_oom")
def file_oom(instance):
    """Fails as a solver does when an allocation fails (OR-Tools' std::bad_alloc comes out as MemoryError)."""
    raise MemoryError("std::bad_alloc")
'''


def test_running_out_of_memory_is_one_line_and_writes_nothing(tmp_path, inst, capsys):
    plugin = _write(tmp_path, "oom.py", RUNS_OUT_OF_MEMORY)
    out = tmp_path / "res.json"
    assert cli("run", "file_oom", inst, "-o", out, "--plugin", plugin) == 1
    assert "out of memory (std::bad_alloc)" in one_line_error(capsys)
    assert not out.exists()


def test_a_replaced_name_is_said_once_and_the_plugin_wins(tmp_path, inst, capsys):
    """The registry replaces an algorithm registered again; the command says whose it was."""
    first = _write(tmp_path, "first.py", PLUGIN)
    second = _write(tmp_path, "second.py", PLUGIN.replace("def file_copy", "def other_copy")
                    .replace("the online schedule", "the second file's"))
    shadow = _write(tmp_path, "shadow.py", PLUGIN.replace('"file_copy"', '"online"'))
    assert cli("algorithms", "edgecloud", "--json", "--plugin", first, "--plugin", second, "--plugin", shadow) == 0
    captured = capsys.readouterr()
    listed = {r["algorithm"]: r["summary"] for r in json.loads(captured.out)}
    assert listed["file_copy"] == "the second file's, from a plugin file"
    assert listed["online"] == "the online schedule, from a plugin file"
    assert captured.err.splitlines() == [
        f"warning: plugin {second}: edgecloud/file_copy replaces the one from plugin {first}",
        f"warning: plugin {shadow}: edgecloud/online replaces edgeopt's built-in one",
    ]
    # the same file twice is loaded once, silently
    assert cli("algorithms", "edgecloud", "--json", "--plugin", first, "--plugin", first) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("case, fragment", [
    ("missing", "plugin: file not found"),
    ("not_py", "expected a Python file ending in .py"),
    ("directory", "is a directory, not a regular file"),
    ("fifo", "FIFO"),
    ("device", "device"),
    ("too_big", "above the 1,048,576-byte cap"),
    ("raises", "plugin {path}: ValueError: no GPU here"),
    ("syntax", "plugin {path}: SyntaxError: "),
    ("exits", "plugin {path}: SystemExit: 3"),
    ("nothing", "plugin {path}: registers no algorithm"),
    ("bad_family", "plugin {path}: InputError: family: unknown family 'edgecloudz'"),
    ("too_many", "plugin: 17 plugin files, at most 16"),
])
def test_a_bad_plugin_is_one_line_naming_plugin_exit_2(case, fragment, tmp_path, inst, capsys):
    path = tmp_path / "p.py"
    extra: list[object] = []
    if case == "not_py":
        path = _write(tmp_path, "p.txt", PLUGIN)
    elif case == "directory":
        path.mkdir()
    elif case == "fifo":
        os.mkfifo(path)
    elif case == "device":
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    elif case == "too_big":
        path.write_text(PLUGIN + "#" * (plugins.MAX_PLUGIN_BYTES + 1 - len(PLUGIN)) + "\n")
    elif case == "raises":
        _write(tmp_path, "p.py", "raise ValueError('no GPU here\\nsecond line')\n")
    elif case == "syntax":
        _write(tmp_path, "p.py", "def broken(:\n")
    elif case == "exits":
        _write(tmp_path, "p.py", "import sys\nsys.exit(3)\n")
    elif case == "nothing":
        _write(tmp_path, "p.py", "from edgeopt import api\nX = 1\n")
    elif case == "bad_family":
        _write(tmp_path, "p.py", PLUGIN.replace('"edgecloud"', '"edgecloudz"'))
    elif case == "too_many":
        _write(tmp_path, "p.py", PLUGIN)
        extra = ["--plugin", path] * 16
    assert cli("run", "online", inst, "-o", tmp_path / "out.json", "--plugin", path, *extra) == 2
    assert fragment.format(path=path) in one_line_error(capsys)
    assert not (tmp_path / "out.json").exists()
    assert not [m for m in sys.modules if m.startswith("_edgeopt_plugin_")]  # a failed module is forgotten


def test_sweep_sequential_runs_the_plugin(tmp_path):
    plugin = _write(tmp_path, "seq.py", PLUGIN)
    rows = run_sweep([SweepPoint("edgecloud", "small", seed=s, algorithms=("online", "file_copy")) for s in (0, 1)],
                     scheduler="sequential", plugins=[plugin])
    assert [(r["seed"], r["algorithm"]) for r in rows] == [(0, "online"), (0, "file_copy"), (1, "online"),
                                                           (1, "file_copy")]
    assert all(r["valid"] and r["error"] is None for r in rows)


def test_run_sweep_refuses_a_bad_plugin_before_any_point(tmp_path):
    from edgeopt.core import InputError

    store = tmp_path / "store"
    with pytest.raises(InputError, match="plugin .*registers no algorithm"):
        run_sweep([SweepPoint("edgecloud", "small", seed=0)], scheduler="sequential", store=store,
                  plugins=[_write(tmp_path, "empty.py", "X = 1\n")])
    assert not store.exists()


def test_sweep_on_dask_ships_the_plugin_and_takes_no_dashboard_port(tmp_path):
    """A CLI sweep on a LocalCluster: the workers (other processes) run the plugin's algorithm, and with
    port 8787 taken Dask's "Port 8787 is already in use" warning no longer appears (no dashboard)."""
    plugin = _write(tmp_path, "dask_algos.py", PLUGIN)
    rows_file = tmp_path / "rows.json"
    held = socket.socket()
    try:
        held.bind(("127.0.0.1", 8787))
        held.listen()
    except OSError:  # already taken by something else: the condition under test holds anyway
        pass
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "edgeopt.cli", "sweep", "edgecloud", "--preset", "small", "--seeds", "0-1",
             "--algorithms", "online,file_copy", "--workers", "2", "--json", str(rows_file), "--plugin", str(plugin)],
            check=False, cwd=ROOT, capture_output=True, text=True, timeout=300)
    finally:
        held.close()
    assert proc.returncode == 0, proc.stderr
    assert "8787" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    rows = json.loads(rows_file.read_text())
    assert sorted((r["seed"], r["algorithm"]) for r in rows) == [
        (0, "file_copy"), (0, "online"), (1, "file_copy"), (1, "online")]
    assert all(r["valid"] and r["error"] is None for r in rows)
    by = {(r["seed"], r["algorithm"]): r["objective"] for r in rows}
    assert by[0, "file_copy"] == by[0, "online"] and by[1, "file_copy"] == by[1, "online"]


def test_a_worker_loads_the_shipped_text_not_the_file(tmp_path):
    """What a worker gets is the text the driver read: the file may be gone (or on another machine)."""
    path = _write(tmp_path, "gone.py", PLUGIN)
    pf = plugins.read_plugin_file(path)
    path.unlink()
    rows = evaluate_point(SweepPoint("edgecloud", "small", seed=1, algorithms=("file_copy",)), plugins=(pf,))
    assert rows[0]["algorithm"] == "file_copy" and rows[0]["valid"] and rows[0]["error"] is None


def test_a_plugin_that_fails_on_a_worker_is_an_error_row(tmp_path):
    bad = plugins.PluginFile(str(tmp_path / "w.py"), "_edgeopt_plugin_w_test", "import no_such_module_here\n", "x")
    rows = evaluate_point(SweepPoint("edgecloud", "small", seed=1, algorithms=("online",)), plugins=(bad,))
    assert len(rows) == 1 and rows[0]["algorithm"] == "*"
    assert "ModuleNotFoundError: No module named 'no_such_module_here'" in rows[0]["error"]
