"""Hostile trace files and outputs: every one is a one-line error (exit 2) naming what is wrong, with no
traceback and nothing written, and valid traces keep their instances.

Each case is met where the user meets it: ``edgeopt generate FAMILY --trace FILE``, ``edgeopt
trace-stats FILE`` and ``edgeopt download-trace`` through `edgeopt.cli.main`, in process.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import stat
import urllib.error

import numpy as np
import pytest

from edgeopt.cli import main
from edgeopt.traces import download, load_jobs, shipped_itp_path
from edgeopt.traces.stats import MAX_BINS

FAMILIES = ("edgecloud", "hetero", "preemptive", "okita", "tapfinger")
ITP_HEADER = "job_id,cluster,submit_time,duration_s,num_gpus\n"


def _fails(capsys, argv: list[str], field: str) -> str:
    """Run the CLI; assert exit 2, one ``error: FIELD...`` line on stderr, no traceback, nothing on stdout."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert info.value.code == 2, err
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith(f"error: {field}"), lines[0]
    assert out == ""
    return lines[0]


def _ok(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    assert info.value.code == 0, err
    return out


# ---- 1. non-finite and absurd numbers, every format ---------------------------------------------

BAD_VALUES = ("inf", "-inf", "nan", "1e300")

#: (file name, text with {v} where the bad value goes, the field the error must name)
FORMATS = [
    ("itp-duration.csv", ITP_HEADER + "a,c,0,{v},1\n", "trace.row2.duration_s"),
    ("itp-submit.csv", ITP_HEADER + "a,c,{v},600,1\n", "trace.row2.submit_time"),
    ("alibaba.csv", ("job_id,submit_time,duration_s,num_gpus,gpu_milli,num_cpus,memory_mib,status\n"
                     "p0,0,{v},1,1000,6,2048,Succeeded\n"), "trace.row2.duration_s"),
    ("alibaba-upstream.csv", ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
                              "deletion_time,scheduled_time\nq,1500,512,2,1000,,LS,Failed,3,{v},10\n"),
     "trace.row2.deletion_time"),
    ("alibaba-upstream-cpu.csv", ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                                  "creation_time,deletion_time,scheduled_time\nq,{v},512,2,1000,,LS,Failed,3,50,10\n"),
     "trace.row2.cpu_milli"),
    ("helios.csv", "job_id,vc,gpu_num,submit_time,duration\nj,v,1,0,{v}\n", "trace.row2.duration"),
    ("helios-submit.csv", "job_id,vc,gpu_num,submit_time,duration\nj,v,1,{v},600\n", "trace.row2.submit_time"),
    ("helios-ends.csv", "job_id,gpu_num,submit_time,start_time,end_time\nj,1,0,10,{v}\n", "trace.row2.end_time"),
]


@pytest.mark.parametrize("name, text, field", FORMATS, ids=[f[0] for f in FORMATS])
@pytest.mark.parametrize("value", BAD_VALUES)
def test_non_finite_or_absurd_numbers_name_row_and_column(tmp_path, capsys, name, text, field, value):
    """``inf`` gave ``OverflowError: cannot convert float infinity to integer`` in every family, and
    ``1e300`` an instance no algorithm could allocate; both are refused when the trace is read."""
    trace = tmp_path / name
    trace.write_text(text.format(v=value))
    out = tmp_path / "inst.json"
    for family in FAMILIES:
        _fails(capsys, ["generate", family, "--trace", str(trace), "-o", str(out)], field)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == [name]
    _fails(capsys, ["trace-stats", str(trace)], field)


def test_absurd_philly_values(tmp_path, capsys):
    def log(submits, end="2017-10-01 01:00:00"):
        return json.dumps([{"jobid": f"j{k}", "vc": "v", "submitted_time": t, "attempts": [
            {"start_time": "2017-10-01 00:00:00", "end_time": end, "detail": [{"ip": "m", "gpus": ["g0"]}]}]}
            for k, t in enumerate(submits)])

    p = tmp_path / "log.json"
    p.write_text(log(["2017-10-01 00:00:00"], end="9999-12-31 23:59:59"))  # a job of 7,982 years
    msg = _fails(capsys, ["generate", "hetero", "--trace", str(p), "-o", str(tmp_path / "i.json")],
                 "trace.0.attempts.0.end_time")
    assert "1e+08 s" in msg
    # submissions spanning the years 0001 to 9999 (669 MiB of arrival bins in trace-stats before)
    p.write_text(log(["0001-01-01 00:00:00", "9999-12-31 23:59:59"]))
    msg = _fails(capsys, ["trace-stats", str(p)], "trace.1.submitted_time")
    assert "1e+10 s" in msg


def test_machine_lists_refuse_absurd_numbers(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_text(ITP_HEADER + "a,c,0,600,1\n")
    m = tmp_path / "m.csv"
    for row, field in (("n0,1e300,G,32,1024", "machines.row2.num_gpus"), ("n0,8,G,inf,1024", "machines.row2.cpu_cores"),
                       ("n0,8,G,32,nan", "machines.row2.memory_mib")):
        m.write_text("machine_id,num_gpus,gpu_model,cpu_cores,memory_mib\n" + row + "\n")
        _fails(capsys, ["generate", "edgecloud", "--trace", str(trace), "--machines", str(m),
                        "-o", str(tmp_path / "i.json")], field)


# ---- 2. durations and horizons within generate's limits --------------------------------------------

def test_a_job_beyond_the_horizon_limit_says_which_limit_and_what_to_pass(tmp_path, capsys):
    out = str(tmp_path / "i.json")
    t = tmp_path / "t.csv"
    # tapfinger: 300-s steps, at most 100,000 of them (347 days); arrivals 3 years apart
    t.write_text(ITP_HEADER + "a,c,0,600,1\nb,c,1e8,600,1\n")
    msg = _fails(capsys, ["generate", "tapfinger", "--trace", str(t), "-o", out], "window")
    assert "100,000 slots" in msg and "--window" in msg
    # okita: 1,800-s slots, at most 100,000 (5.7 years): a job that starts in time but ends after it
    t.write_text(ITP_HEADER + "a,c,0,600,1\nb,c,1.7e8,9e7,1\n")
    msg = _fails(capsys, ["generate", "okita", "--trace", str(t), "-o", out], "window")
    assert "'b'" in msg and "100,000 slots of 1800 s" in msg
    # preemptive: its safe horizon (all work one chunk after another) past 10**7 slots
    t.write_text(ITP_HEADER + "a,c,0,3600,1\nb,c,10,9e7,9000\n")
    msg = _fails(capsys, ["generate", "preemptive", "--trace", str(t), "-o", out], "jobs")
    assert "10,000,000" in msg and "--jobs 1 or fewer" in msg
    _ok(capsys, ["generate", "preemptive", "--trace", str(t), "--jobs", "1", "-o", out])
    assert os.path.exists(out)


@pytest.mark.parametrize("family", FAMILIES)
def test_shipped_trace_5000_jobs_fits_every_family(tmp_path, capsys, family):
    """``generate preemptive --trace <shipped ITP> --jobs 5000`` was a pydantic traceback (the paper
    preset's own draws had a horizon of 20,693,935): the trace's work sets the horizon now."""
    out = tmp_path / "i.json"
    _ok(capsys, ["generate", family, "--trace", str(shipped_itp_path()), "--jobs", "5000", "-o", str(out)])
    from edgeopt import api

    inst = api.load(out)
    assert inst.horizon <= api.family(family).limits["horizon"]


def test_shipped_trace_large_windows(tmp_path, capsys):
    out = str(tmp_path / "i.json")
    msg = _fails(capsys, ["generate", "okita", "--trace", str(shipped_itp_path()), "--window", "0:1000d",
                          "-o", out], "jobs")
    assert "--jobs" in msg and "--window" in msg


# ---- 4. byte cap and stream rules --------------------------------------------------------------------

def test_deep_philly_json_is_refused_before_decoding(tmp_path, capsys):
    p = tmp_path / "cluster_job_log"
    p.write_text("[" * 100_000 + "]" * 100_000)  # was a RecursionError
    msg = _fails(capsys, ["trace-stats", str(p), "--format", "philly"], "trace")
    assert "deeper than" in msg


@pytest.mark.parametrize("kind", ["fifo", "zero", "directory"])
def test_trace_must_be_a_regular_file(tmp_path, capsys, kind):
    """``trace-stats /dev/zero`` ran out of memory (its size reads 0); a FIFO blocked forever."""
    p = tmp_path / "node"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "zero":
        os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 5))
    else:
        p.mkdir()
    msg = _fails(capsys, ["trace-stats", str(p)], "trace")
    assert "not a regular file" in msg
    _fails(capsys, ["generate", "hetero", "--trace", str(p), "-o", str(tmp_path / "i.json")], "trace")
    assert not (tmp_path / "i.json").exists()


def test_trace_byte_cap_is_the_input_cap(tmp_path, capsys):
    body = ITP_HEADER + "a,c,0,600,1\n" * 500
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress(body.encode()))
    msg = _fails(capsys, ["trace-stats", str(tmp_path / "t.csv.gz"), "--max-input-bytes", "1000"], "trace")
    assert "--max-input-bytes" in msg
    assert "jobs: 500" in _ok(capsys, ["trace-stats", str(tmp_path / "t.csv.gz")])
    _fails(capsys, ["generate", "hetero", "--trace", str(tmp_path / "t.csv.gz"), "--max-input-bytes", "1000",
                    "-o", str(tmp_path / "i.json")], "trace")


# ---- 5. arrival bins -------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e9"])
def test_bin_hours_must_be_finite_and_positive(tmp_path, capsys, value):
    p = tmp_path / "t.csv"
    p.write_text(ITP_HEADER + "a,c,0,600,1\n")
    _fails(capsys, ["trace-stats", str(p), "--bin-hours", value], "bin_hours")


def test_bin_count_is_capped_with_the_smallest_bin_allowed(tmp_path, capsys):
    """``--bin-hours 1e-6`` on the shipped trace asked for 1.4 * 10**9 bins (10.7 GiB)."""
    trace = str(shipped_itp_path())
    msg = _fails(capsys, ["trace-stats", trace, "--bin-hours", "1e-6", "--plot", str(tmp_path / "f.png")],
                 "bin_hours")
    assert f"{MAX_BINS:,} bins" in msg
    least = float(msg.split("pass at least ")[1].split()[0])
    assert not (tmp_path / "f.png").exists()
    # the width it names is allowed, and needs at most MAX_BINS bins
    stats = json.loads(_ok(capsys, ["trace-stats", trace, "--bin-hours", repr(least), "--json"]))
    assert MAX_BINS // 2 < stats["arrivals_per_bin"]["bins"] <= MAX_BINS
    from edgeopt.core import InputError
    from edgeopt.traces.stats import trace_stats

    with pytest.raises(InputError) as info:  # the API refuses it too
        trace_stats(load_jobs(trace), bin_s=1e-3)
    assert info.value.field == "bin_s"


# ---- 6. outputs that are not regular files, and downloads -------------------------------------------

def _node(path, kind):
    if kind == "fifo":
        os.mkfifo(path)
        return stat.S_ISFIFO
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # like /dev/full
    return stat.S_ISCHR


@pytest.mark.parametrize("kind", ["fifo", "char"])
def test_outputs_that_are_not_regular_files_are_refused_before_any_work(tmp_path, capsys, monkeypatch, kind):
    trace = tmp_path / "t.csv"
    trace.write_text(ITP_HEADER + "a,c,0,600,1\nb,c,100,1200,2\n")
    calls = []
    from edgeopt.traces import loaders

    real = loaders.load_jobs
    monkeypatch.setattr(loaders, "load_jobs", lambda *a, **k: calls.append(a) or real(*a, **k))
    for argv, name in ((["trace-stats", str(trace), "--plot"], "f.png"),
                       (["generate", "hetero", "--trace", str(trace), "-o"], "i.json")):
        node = tmp_path / name
        is_kind = _node(node, kind)
        msg = _fails(capsys, [*argv, str(node)], "plot" if name == "f.png" else "output")
        assert "not a regular file" in msg
        assert is_kind(os.stat(node).st_mode)  # still the node, never replaced
    assert calls == []  # refused before the trace was read
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png", "i.json", "t.csv"]


@pytest.mark.parametrize("kind", ["fifo", "char"])
def test_download_target_that_is_not_a_regular_file_is_refused_before_fetching(tmp_path, capsys, monkeypatch,
                                                                                kind):
    def no_network(*args, **kwargs):
        raise AssertionError("nothing may be fetched")

    monkeypatch.setattr(download.urllib.request, "urlopen", no_network)
    folder = tmp_path / "d"
    folder.mkdir()
    second = folder / download.SOURCES["alibaba-gpu-v2023"][1].name
    is_kind = _node(second, kind)
    msg = _fails(capsys, ["download-trace", "alibaba-gpu-v2023", "--to", str(folder)], "to")
    assert "not a regular file" in msg and is_kind(os.stat(second).st_mode)
    assert [p.name for p in folder.iterdir()] == [second.name]
    (tmp_path / "file").write_text("x")
    _fails(capsys, ["download-trace", "alibaba-gpu-v2023", "--to", str(tmp_path / "file")], "to")


def test_download_without_internet_says_what_to_do(tmp_path, capsys, monkeypatch):
    def offline(*args, **kwargs):
        raise urllib.error.URLError(socket.gaierror(-2, "Name or service not known"))

    monkeypatch.setattr(download.urllib.request, "urlopen", offline)
    msg = _fails(capsys, ["download-trace", "alibaba-gpu-v2023", "--to", str(tmp_path / "d")], "download")
    assert "cannot reach raw.githubusercontent.com from this machine" in msg
    assert "itp_elasticflow_jobs.csv.gz" in msg and "--trace FILE" in msg
    assert "[Errno" not in msg and "https://" not in msg
    assert not (tmp_path / "d").exists()


def test_valid_traces_still_load_unchanged(tmp_path):
    """The bounds leave real traces alone: the shipped trace's totals and a negative Helios clock."""
    df = load_jobs(shipped_itp_path())
    assert len(df) == 69351 and np.isfinite(df["duration_s"]).all()
    p = tmp_path / "h.csv"
    p.write_text("submit_time,gpu_num,start_time,end_time\n-100,1,-90,-30\n")
    assert load_jobs(p, "helios")["duration_s"].tolist() == [60.0]
