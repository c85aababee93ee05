"""Caps and clear errors of `edgeopt sweep` and the generator API.

Each bad value is refused with exit 2 and one ``error:`` line naming the option, before anything slow
runs: these tests replace `run_sweep` (and with it every Dask cluster) by a function that fails the test,
so a refusal that came too late fails instead of starting processes.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

import edgeopt.sweep as sweep_mod
from edgeopt import api
from edgeopt.core import InputError
from edgeopt.sweep import SweepPoint, error_kinds, read_sweep, run_sweep, write_rows
from tests.reliability_helpers import cli

SMALL = ["sweep", "hetero", "--preset", "small", "--algorithms", "fifo"]


@pytest.fixture
def no_sweep(monkeypatch):
    """`run_sweep` replaced by a failure: nothing may reach the cluster."""

    def forbidden(*args, **kwargs):
        raise AssertionError("the sweep ran (a cluster would have started)")

    monkeypatch.setattr(sweep_mod, "run_sweep", forbidden)


def _refused(capsys, args, *fragments) -> str:
    assert cli(*args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for f in fragments:
        assert f in lines[0], err
    return lines[0]


# ---- 1. --workers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", ["1000", "0", "-1", str(4 * (os.cpu_count() or 1) + 1)])
def test_workers_out_of_range_is_refused_before_any_cluster(n, capsys, no_sweep, tmp_path):
    line = _refused(capsys, [*SMALL, "--seeds", "0", "--workers", n, "--json", tmp_path / "r.json"],
                    "workers", f"got {n}")
    assert f"between 1 and {4 * (os.cpu_count() or 1)}" in line
    assert not (tmp_path / "r.json").exists()


def test_workers_default_is_the_core_count(monkeypatch, capsys):
    seen = {}

    def fake(points, *, n_workers, **kwargs):
        seen["n_workers"] = n_workers
        return []

    monkeypatch.setattr(sweep_mod, "run_sweep", fake)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)  # not the old fixed default of 2
    assert cli(*SMALL, "--seeds", "0") == 0
    assert seen["n_workers"] == 3
    capsys.readouterr()


def test_run_sweep_refuses_a_bad_worker_count():
    for bad in (0, -1, 10**6, True, 1.5):
        with pytest.raises(InputError, match="^n_workers"):
            run_sweep([SweepPoint("hetero", "small", jobs=2)], n_workers=bad)


# ---- 2. counts of points, seeds, job counts, grids, time limit ------------------------------------


@pytest.mark.parametrize("args, fragments", [
    (["--seeds", "0-99999999999"], ["seeds", "100,000,000,000 seeds", "at most 100,000"]),
    (["--seeds", "0-99999", "--jobs", "3,4"], ["seeds", "at most 50,000"]),
    (["--seeds", "0", "--jobs", ",".join(["3"] * 100_001)], ["jobs", "at most 100,000"]),
    (["--seeds", "99999999999999999999"], ["seeds", "2**63"]),
    (["--seeds", "0-99999", "--algorithms", "fifo,online,drf,tiresias,antman,tiresias_np"],
     ["algorithms", "600,000 cells, at most 500,000"]),
    (["--seeds", "0", "--grid", "online.F=" + ",".join(map(str, range(1, 1001))),
      "--grid", "online.order=" + ",".join(["a"] * 1000)], ["grid", "1,000,000 variants"]),
    (["--seeds", "0", "--time-limit", "nan"], ["time_limit", "got nan"]),
    (["--seeds", "0", "--time-limit", "0"], ["time_limit"]),
    (["--seeds", "0", "--time-limit", "1e9"], ["time_limit", "604800"]),
])
def test_counts_are_capped_before_any_list_is_built(args, fragments, capsys, no_sweep):
    _refused(capsys, [*SMALL, *args], *fragments)


def test_a_huge_seed_range_is_refused_without_building_it(capsys, no_sweep):
    import tracemalloc

    tracemalloc.start()
    try:
        _refused(capsys, [*SMALL, "--seeds", "0-999999999999999"], "seeds")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20  # a list of the seeds would be petabytes


# ---- 3. generator options checked before the sweep; the reasons of error cells shown ----------------


@pytest.mark.parametrize("args, fragments", [
    (["--jobs", "10000000"], ["jobs", "must be <= 10,000"]),
    (["--jobs", "3,10000000"], ["jobs", "must be <= 10,000"]),
    (["--jobs", "0"], ["jobs", "must be >= 1"]),
    (["--servers", "100000"], ["servers", "must be <= 10,000"]),
    (["--servers", "0"], ["servers", "must be >= 1"]),
    (["--horizon", "100000000"], ["horizon", "must be <= 10,000,000"]),
    (["--horizon", "1"], ["horizon"]),
    (["--preset", "nosuch"], ["preset", "nosuch"]),
    (["--optimal", "--method", "nosuch"], ["method", "nosuch"]),
])
def test_generator_options_are_checked_before_the_sweep(args, fragments, capsys, no_sweep, tmp_path):
    _refused(capsys, [*SMALL, "--seeds", "0-3", *args, "--store", tmp_path / "s"], *fragments)
    assert not (tmp_path / "s").exists()


def test_error_cells_are_explained_under_the_table(monkeypatch, capsys):
    def with_errors(points, **kwargs):
        return [sweep_mod._blank(p, "fifo", "InputError: jobs: must be <= 10,000 (at family.py:88)")
                for p in points[:3]] + [
            sweep_mod._blank(points[3], "*", "ZeroDivisionError: division by zero (at x.py:1)")]

    monkeypatch.setattr(sweep_mod, "run_sweep", with_errors)
    assert cli(*SMALL, "--seeds", "0-3") == 0
    captured = capsys.readouterr()
    assert "errors: 3 cell(s): jobs: must be <= 10,000 (first at seed 0, algorithm fifo)" in captured.err
    assert "errors: 1 cell(s): ZeroDivisionError: division by zero (first at seed 3, algorithm *)" in captured.err
    assert "family.py" not in captured.err


def test_error_kinds_groups_by_message():
    rows = [{"error": None, "seed": 0, "algorithm": "a"},
            {"error": "InputError: x: bad (at a.py:1)", "seed": 1, "algorithm": "a"},
            {"error": "InputError: x: bad (at a.py:1)", "seed": 2, "algorithm": "b"},
            {"error": "ValueError: y", "seed": 3, "algorithm": "a"}]
    assert error_kinds(rows) == [{"message": "x: bad", "count": 2, "seed": 1, "algorithm": "a"},
                                 {"message": "ValueError: y", "count": 1, "seed": 3, "algorithm": "a"}]


# ---- 4. --address that does not answer ---------------------------------------------------------------


def _unused_local_port() -> int:
    """A port of 127.0.0.1 that nobody listens on: bound (never listened on) to learn a free one."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sweep_mod, "CONNECT_TIMEOUT_S", 0.5)
    address = f"tcp://127.0.0.1:{_unused_local_port()}"
    _refused(capsys, [*SMALL, "--seeds", "0", "--jobs", "2", "--address", address, "--json", tmp_path / "r.json"],
             "address", f"cannot reach the Dask scheduler at {address}")
    assert not (tmp_path / "r.json").exists()


def test_malformed_address_is_one_line(capsys):
    _refused(capsys, [*SMALL, "--seeds", "0", "--jobs", "2", "--address", "127.0.0.1"], "address",
             "missing port")


# ---- 5. booleans are not counts ----------------------------------------------------------------------


@pytest.mark.parametrize("field", ["jobs", "servers", "horizon", "seed"])
@pytest.mark.parametrize("value", [True, False])
def test_generate_refuses_a_bool_count(field, value):
    with pytest.raises(InputError, match=f"^{field}: .*bool"):
        api.generate("hetero", "small", **{field: value})


@pytest.mark.parametrize("family, option", [("tapfinger", "clusters"), ("tapfinger", "arrival_rate"),
                                            ("okita", "sites"), ("okita", "arrival_window")])
def test_generate_refuses_a_bool_family_number(family, option):
    with pytest.raises(InputError, match=f"^{option}: .*bool"):
        api.generate(family, "small", **{option: True})


def test_generate_counts_of_other_types():
    import numpy as np

    assert len(api.generate("hetero", "small", jobs=np.int64(3)).jobs) == 3
    with pytest.raises(InputError, match="^jobs: must be <= 10,000"):  # a numpy count is held to the cap
        api.generate("hetero", "small", jobs=np.int64(10**7))
    for bad in (2.5, "3"):
        with pytest.raises(TypeError, match="^jobs: expected a count"):
            api.generate("hetero", "small", jobs=bad)


def test_run_refuses_a_bool_seed():
    inst = api.generate("hetero", "small", seed=0)
    with pytest.raises(InputError, match="^seed: .*bool"):
        api.run("fifo", inst, seed=True)


# ---- 6. outputs that are devices, FIFOs, or hold them -----------------------------------------------


def _nodes(tmp_path: Path) -> dict[str, Path]:
    fifo, dev = tmp_path / "fifo", tmp_path / "dev"
    os.mkfifo(fifo)
    os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    return {"fifo": fifo, "dev": dev}


def _still(path: Path, kind: str) -> None:
    mode = os.lstat(path).st_mode
    assert (stat.S_ISFIFO if kind == "fifo" else stat.S_ISCHR)(mode), path


@pytest.mark.parametrize("kind", ["fifo", "dev"])
@pytest.mark.parametrize("option", ["--json", "--store"])
def test_json_or_store_onto_a_node_is_refused(kind, option, tmp_path, capsys, no_sweep):
    node = _nodes(tmp_path)[kind]
    _refused(capsys, [*SMALL, "--seeds", "0", option, node], option.lstrip("-"))
    _still(node, kind)


def _key(seed: int = 0) -> str:
    """The cell key of ``SMALL --seeds SEED`` (the CLI's point)."""
    return SweepPoint("hetero", "small", seed=seed, algorithms=("fifo",)).key


@pytest.mark.parametrize("kind", ["fifo", "dev"])
def test_store_with_a_node_where_a_part_goes_is_refused(kind, tmp_path, capsys, no_sweep):
    store = tmp_path / "s"
    store.mkdir()
    part = store / f"part-{_key()}.parquet"
    os.replace(_nodes(tmp_path)[kind], part)
    _refused(capsys, [*SMALL, "--seeds", "0", "--store", store], "store", part.name, "refusing to replace")
    _still(part, kind)
    assert sorted(p.name for p in store.iterdir()) == [part.name]  # nothing moved aside, nothing written


@pytest.mark.parametrize("kind", ["fifo", "dev"])
def test_run_sweep_never_replaces_a_node_in_the_store(kind, tmp_path):
    store = tmp_path / "s"
    store.mkdir()
    point = SweepPoint("hetero", "small", seed=0, jobs=2, algorithms=("fifo",))
    part = store / f"part-{point.key}.parquet"
    os.replace(_nodes(tmp_path)[kind], part)
    with pytest.raises(InputError, match="^store: .*refusing to replace"):
        run_sweep([point], scheduler="sequential", store=store)
    with pytest.raises(InputError, match="^store: .*not a regular file"):  # the part writer's own check
        write_rows(store, point.key, [])
    _still(part, kind)
    with pytest.warns(RuntimeWarning, match="not regular files"):  # listed, never opened (a FIFO would block)
        assert len(read_sweep(store)) == 0
    assert sorted(p.name for p in store.iterdir()) == [part.name]


@pytest.mark.parametrize("kind", ["fifo", "dev"])
def test_quarantine_never_replaces_a_node(kind, tmp_path):
    store = tmp_path / "s"
    point = SweepPoint("hetero", "small", seed=0, jobs=2, algorithms=("fifo",))
    run_sweep([point], scheduler="sequential", store=store)
    part = store / f"part-{point.key}.parquet"
    part.write_bytes(b"PAR1 damaged")
    (store / "quarantine").mkdir()
    target = store / "quarantine" / part.name
    os.replace(_nodes(tmp_path)[kind], target)
    with pytest.raises(InputError, match="^store: .*quarantine.*not a regular file"):
        run_sweep([point], scheduler="sequential", store=store)
    _still(target, kind)
    assert part.read_bytes() == b"PAR1 damaged"


def test_a_quarantine_that_is_a_file_is_one_line(tmp_path):
    store = tmp_path / "s"
    point = SweepPoint("hetero", "small", seed=0, jobs=2, algorithms=("fifo",))
    run_sweep([point], scheduler="sequential", store=store)
    (store / f"part-{point.key}.parquet").write_bytes(b"PAR1 damaged")
    (store / "quarantine").write_text("mine")
    with pytest.raises(InputError, match="^store: .*quarantine is not a directory"):
        run_sweep([point], scheduler="sequential", store=store)
    assert (store / "quarantine").read_text() == "mine"


def test_run_sweep_caps_points_and_int64_columns():
    with pytest.raises(InputError, match="^points: 100,001 instances"):
        run_sweep([SweepPoint("hetero")] * 100_001, scheduler="sequential")
    with pytest.raises(InputError, match="^seed: .*64-bit"):
        run_sweep([SweepPoint("hetero", seed=2**63)], scheduler="sequential")
