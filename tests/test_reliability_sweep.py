"""Issue 10, part 4: sweeps stored cell by cell (Parquet), resumable, surviving a killed worker and driver."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from edgeopt import api
from edgeopt.sweep import COLUMNS, SweepPoint, read_sweep, run_sweep, stored_cells
from tests.reliability_helpers import PROOF_CLOCK, PROOF_WORK

ROOT = Path(__file__).resolve().parents[1]
ALGOS = ("online", "fifo")


def _points(n: int, family: str = "hetero") -> list[SweepPoint]:
    return [SweepPoint(family, "small", seed=s, jobs=4, algorithms=ALGOS) for s in range(n)]


def test_rows_are_stored_with_every_column_and_rerun_computes_nothing(tmp_path):
    store = tmp_path / "sweep"
    points = [SweepPoint("edgecloud", "small", seed=s, algorithms=ALGOS, optimal=True, method="cpsat",
                         time_limit=PROOF_CLOCK, work_limit=PROOF_WORK) for s in range(2)]  # proofs by work
    rows = run_sweep(points, scheduler="sequential", store=store)
    df = read_sweep(store)
    assert list(df.columns) == list(COLUMNS)
    assert len(df) == len(rows) == 2 * (len(ALGOS) + 1)
    assert set(df["algorithm"]) == {*ALGOS, "cpsat"}
    assert df["error"].isna().all() and df["valid"].all()
    assert (df.loc[df.algorithm == "cpsat", "status"] == "optimal").all()
    assert df["ratio"].notna().all() and (df["ratio"] >= 1 - 1e-9).all()
    assert df["instance_sha256"].str.len().eq(64).all()
    assert set(df["rejected"]) <= set(range(100))
    computed = []
    again = run_sweep(points, scheduler="sequential", store=store, on_done=lambda d, t: computed.append(d))
    assert computed == []
    assert [(r["cell"], r["algorithm"], r["objective"]) for r in again] == [
        (r["cell"], r["algorithm"], r["objective"]) for r in rows]


def test_a_cell_that_raises_is_recorded_and_the_sweep_goes_on(tmp_path):
    store = tmp_path / "sweep"
    points = [SweepPoint("hetero", "small", seed=0, jobs=3, algorithms=("online", "nosuch")),
              SweepPoint("hetero", "nosuchpreset", seed=1),
              SweepPoint("hetero", "small", seed=2, jobs=3, algorithms=("online",))]
    run_sweep(points, scheduler="sequential", store=store)
    df = read_sweep(store)
    errors = df[df["error"].notna()]
    assert set(errors["algorithm"]) == {"nosuch", "*"}
    assert errors["error"].str.contains("InputError").all()
    ok = df[df["error"].isna()]
    assert len(ok) == 2 and ok["valid"].all()
    # a rerun leaves recorded errors alone unless asked to retry them
    computed = []
    run_sweep(points, scheduler="sequential", store=store, on_done=lambda d, t: computed.append(t))
    assert computed == []
    run_sweep(points, scheduler="sequential", store=store, retry_errors=True,
              on_done=lambda d, t: computed.append(t))
    assert computed and computed[-1] == 2


def test_killing_a_dask_worker_loses_nothing(tmp_path):
    from dask.distributed import LocalCluster

    store = tmp_path / "sweep"
    points = _points(6)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        killed = []
        victim = min(nanny.pid for nanny in cluster.workers.values())

        def on_done(done: int, total: int) -> None:
            if not killed:  # after the first finished cell: the other worker is mid-task
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)

        rows = run_sweep(points, address=cluster.scheduler_address, store=store, on_done=on_done)
    assert killed
    df = read_sweep(store)
    assert df["error"].isna().all(), df["error"].dropna().tolist()
    assert len(df) == len(rows) == len(points) * len(ALGOS)
    assert df["valid"].all()
    assert stored_cells(store) == {p.key for p in points}


DRIVER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from edgeopt.sweep import SweepPoint, run_sweep
    ready, go = Path(sys.argv[2]), Path(sys.argv[3])

    def on_done(k, total):
        if k == 2:  # two parts written: tell the test, and go on only once its signal has been sent
            ready.touch()
            while not go.exists():
                time.sleep(0.01)

    points = [SweepPoint("hetero", "small", seed=s, jobs=4, algorithms=("online", "fifo")) for s in range({n})]
    run_sweep(points, scheduler="{scheduler}", n_workers=1, store=sys.argv[1], on_done=on_done)
""")


@pytest.mark.parametrize("scheduler, sig", [("dask", signal.SIGINT), ("sequential", signal.SIGTERM)])
def test_interrupted_driver_keeps_finished_cells_and_rerun_computes_only_the_rest(scheduler, sig, tmp_path):
    """The signal is sent while the driver waits after its second finished point (synchronised on files,
    not on timing), so exactly two points are kept however fast or loaded the machine is."""
    store, ready, go = tmp_path / "sweep", tmp_path / "ready", tmp_path / "go"
    n = 6
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", DRIVER.format(n=n, scheduler=scheduler), str(store), str(ready),
                             str(go)], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    guard = time.time() + 600  # only against a hang: the test waits for the event, not for a time
    while not ready.exists() and proc.poll() is None and time.time() < guard:
        time.sleep(0.02)
    assert ready.exists(), proc.communicate()
    proc.send_signal(sig)
    go.touch()
    try:
        proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:  # pragma: no cover - a driver that ignores the signal
        proc.kill()
        proc.communicate()
    kept = stored_cells(store)
    # two points were written before the signal; with Dask the signal may land after more points finished
    assert 2 <= len(kept) <= n, len(kept)
    assert not list(store.glob(".*.tmp")), "a half-written part file"
    before = read_sweep(store)
    assert len(before) == len(kept) * 2 and before["error"].isna().all()
    computed = []
    points = _points(n)
    rows = run_sweep(points, scheduler="sequential", store=store, on_done=lambda d, t: computed.append(t))
    assert (computed and computed[-1] == n - len(kept)) if len(kept) < n else not computed
    after = read_sweep(store)
    assert len(after) == len(rows) == n * 2
    # the cells finished before the interruption are still the same rows
    merged = before.merge(after, on=["cell", "algorithm"], suffixes=("_a", "_b"))
    assert len(merged) == len(before)
    assert (merged["objective_a"] == merged["objective_b"]).all()


def test_read_sweep_of_nothing(tmp_path):
    from edgeopt.core import InputError

    with pytest.raises(InputError):
        read_sweep(tmp_path / "none")
    (tmp_path / "empty").mkdir()
    assert list(read_sweep(tmp_path / "empty").columns) == list(COLUMNS)
    assert api.family("hetero")  # the family the sweep tests use exists


def test_cli_sweep_store_and_resume(tmp_path, capsys):
    from tests.reliability_helpers import cli

    store = tmp_path / "s"
    args = ["sweep", "hetero", "--preset", "small", "--seeds", "0-1", "--jobs", "3", "--algorithms", "online",
            "--workers", "1", "--store", store]
    assert cli(*args) == 0
    first = read_sweep(store)
    assert len(first) == 2 and first["valid"].all()
    assert cli(*args[:5], "0-2", *args[6:]) == 0  # one more seed: only it is computed
    assert len(read_sweep(store)) == 3
    assert "online" in capsys.readouterr().out


# ---- issue 17 (Inputs) and issue 24 (items 3 and 4): interrupted sweeps, damaged parts, file modes ------


def _live_in_group(pgid: int) -> list[str]:
    """Command lines of the processes of group ``pgid`` that are still running (zombies do not count)."""
    out = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append((stat_file.parent / "cmdline").read_text().replace("\0", " ")[:120])
        except (OSError, IndexError, ValueError):
            continue
    return out


def test_ctrl_c_on_a_dask_sweep_exits_130_cleanly_and_leaves_no_process(tmp_path):
    """Ctrl-C in a terminal signals the whole process group: driver and Dask workers alike."""
    store = tmp_path / "s"
    args = ["sweep", "hetero", "--preset", "small", "--jobs", "4", "--seeds", "0-59", "--algorithms", "online,fifo",
            "--workers", "1", "--store", str(store)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "edgeopt.cli", *args], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 240
    while time.time() < deadline and not list(store.glob("part-*.parquet")) and proc.poll() is None:
        time.sleep(0.05)  # the marker: the first instance is stored, the cluster is at work
    assert proc.poll() is None, proc.communicate()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:  # pragma: no cover - a sweep that ignores Ctrl-C
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Error" not in err.replace("error", ""), err
    kept = len(stored_cells(store))
    assert f"{kept} of 60 instances are stored in {store}" in err, err
    assert "resume with: edgeopt sweep hetero --preset small" in err, err
    left: list[str] = []
    for _ in range(100):  # multiprocessing's resource tracker ends as its pipe from the driver closes
        left = _live_in_group(proc.pid)
        if not left:
            break
        time.sleep(0.05)
    assert left == [], left


def test_interrupted_cli_sweep_says_what_is_stored_and_how_to_resume(tmp_path, capsys, monkeypatch):
    import edgeopt.sweep as sweep_mod
    from edgeopt.sweep import write_rows
    from tests.reliability_helpers import cli

    def interrupted(points, *, store=None, **kwargs):
        if store is not None:
            write_rows(store, points[0].key, [])
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_mod, "run_sweep", interrupted)
    store = tmp_path / "s"
    assert cli("sweep", "hetero", "--seeds", "0-2", "--algorithms", "online", "--store", store) == 130
    err = capsys.readouterr().err
    assert f"sweep interrupted: 1 of 3 instances are stored in {store}" in err
    assert f"resume with: edgeopt sweep hetero --seeds 0-2 --algorithms online --store {store}" in err
    assert cli("sweep", "hetero", "--seeds", "0-2", "--algorithms", "online") == 130
    assert "nothing was kept (no --store)" in capsys.readouterr().err


def _truncate(part: Path) -> None:
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])


def test_damaged_part_is_quarantined_and_its_cells_recomputed(tmp_path):
    store = tmp_path / "sweep"
    points = _points(3)
    run_sweep(points, scheduler="sequential", store=store)
    victim = sorted(store.glob("part-*.parquet"))[1]
    _truncate(victim)
    with pytest.warns(RuntimeWarning, match=victim.name):
        df = read_sweep(store)  # the healthy parts are read
    assert len(df) == 2 * len(ALGOS)
    assert victim.exists()  # reading never moves anything
    computed = []
    with pytest.warns(RuntimeWarning, match=f"damaged sweep part {victim.name}"):
        rows = run_sweep(points, scheduler="sequential", store=store, on_done=lambda d, t: computed.append(t))
    assert computed == [1]
    assert (store / "quarantine" / victim.name).exists()
    assert victim.exists()  # computed again
    assert len(rows) == len(read_sweep(store)) == 3 * len(ALGOS)


def test_cli_sweep_over_a_damaged_store_names_the_part_and_recomputes(tmp_path, capsys):
    from tests.reliability_helpers import cli

    store = tmp_path / "s"
    args = ["sweep", "hetero", "--preset", "small", "--seeds", "0-1", "--jobs", "3", "--algorithms", "online",
            "--workers", "1", "--store", store]
    assert cli(*args) == 0
    victim = min(store.glob("part-*.parquet"))
    victim.write_bytes(b"PAR1 not a parquet file")
    with pytest.warns(RuntimeWarning, match=victim.name):
        assert cli(*args) == 0
    assert len(read_sweep(store)) == 2
    assert (store / "quarantine" / victim.name).exists()
    assert "Traceback" not in capsys.readouterr().err


def test_store_files_get_the_users_umask(tmp_path):
    import stat

    old = os.umask(0o022)
    try:
        run_sweep(_points(1), scheduler="sequential", store=tmp_path / "s")
    finally:
        os.umask(old)
    (part,) = (tmp_path / "s").glob("part-*.parquet")
    assert stat.S_IMODE(part.stat().st_mode) == 0o644
