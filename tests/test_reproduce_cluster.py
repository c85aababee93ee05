"""benchmarks/reproduce.py --address runs its entries as Dask tasks on an existing cluster (issue 21,
section 7): one entry per task, files moved into place atomically with a done record, and a re-run skips
what is done. The cluster is a local scheduler and two workers started as separate processes; the
entries are two tiny scripts (the real ones take hours)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FAKE = """
import argparse, json, os, socket, sys, time
from pathlib import Path
ap = argparse.ArgumentParser()
ap.add_argument("--name")
ap.add_argument("--fail", action="store_true")
ap.add_argument("--out", type=Path)
a = ap.parse_args()
time.sleep(0.5)
if a.fail:
    sys.exit(3)
a.out.mkdir(parents=True, exist_ok=True)
(a.out / f"{a.name}.json").write_text(json.dumps({"name": a.name, "pid": os.getpid(), "ppid": os.getppid()}))
"""


def _reproduce():
    spec = importlib.util.spec_from_file_location("reproduce_under_test", ROOT / "benchmarks" / "reproduce.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def cluster(tmp_path):
    """A scheduler and two single-thread workers, each its own process; yields the scheduler address."""
    sched_file = tmp_path / "scheduler.json"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--dashboard-address", ":0", "--scheduler-file", str(sched_file)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 120
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sched_file.exists(), "the scheduler did not start"
        for k in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                           str(sched_file), "--nthreads", "1", "--nworkers", "1", "--name", f"w{k}",
                                           "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
        address = json.loads(sched_file.read_text())["address"]
        from dask.distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for p in procs[::-1]:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.mark.slow
def test_entries_run_as_tasks_on_a_cluster_and_a_rerun_skips_them(cluster, tmp_path, capsys):
    repro = _reproduce()
    script = tmp_path / "fake_bench.py"
    script.write_text(FAKE)
    entries = tuple(repro.Entry("fake", str(script), f"--name e{k}", f"--name e{k}", 0.1, f"e{k}.json")
                    for k in range(4))
    repro.ENTRIES = entries
    out = tmp_path / "results"
    assert repro.main(["--address", cluster, "--out", str(out)]) == 0
    records = [json.loads(p.read_text()) for p in sorted((out / ".done").glob("*.json"))]
    assert len(records) == 4 and all(r["rc"] == 0 for r in records)
    assert sorted(p.name for p in out.glob("e*.json")) == ["e0.json", "e1.json", "e2.json", "e3.json"]
    assert len({r["pid"] for r in records}) == 2  # both worker processes took entries
    assert not list(out.glob(".run-*"))  # private folders are gone
    first = capsys.readouterr().out
    assert "0 of 4 entries already done; 4 to run" in first
    # a re-run skips everything; a new failing entry runs, leaves no file and no done record
    repro.ENTRIES = (*entries, repro.Entry("fake", str(script), "--name bad --fail", "--name bad --fail", 0.1, "-"))
    assert repro.main(["--address", cluster, "--out", str(out)]) == 1
    assert "4 of 5 entries already done; 1 to run" in capsys.readouterr().out
    assert not (out / "bad.json").exists() and len(list((out / ".done").glob("*.json"))) == 4
