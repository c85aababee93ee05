"""Trace loaders: typed table, column mappings, one-line errors, download with checksum."""

from __future__ import annotations

import gzip
import hashlib
import json
import math

import pandas as pd
import pytest

from edgeopt import traces
from edgeopt.cli import main
from edgeopt.core import InputError
from edgeopt.traces import download


def _write(path, text):
    path.write_text(text)
    return path


def _check_schema(df: pd.DataFrame) -> None:
    assert list(df.columns) == list(traces.JOB_COLUMNS)
    assert {c: str(t) for c, t in df.dtypes.items()} == traces.JOB_COLUMNS
    assert list(df.index) == list(range(len(df)))
    assert df["submit_s"].is_monotonic_increasing


def test_itp(tmp_path):
    p = _write(tmp_path / "itp.csv", "job_id,cluster,submit_time,duration_s,num_gpus\n"
                                     "b,c2,20,700,8\na,c1,10,600,1\n")
    df = traces.load_jobs(p)
    _check_schema(df)
    assert df["job_id"].tolist() == ["a", "b"]
    assert df["gpus"].tolist() == [1, 8] and df["duration_s"].tolist() == [600.0, 700.0]
    assert math.isnan(df["cpus"][0]) and df["status"][0] == ""
    raw = _write(tmp_path / "raw.csv", "job_id,submission_time,duration,num_gpu\nx,5,60,2\n")  # upstream member
    assert traces.load_itp(raw)["gpus"].tolist() == [2]


def test_itp_gzip_without_ids(tmp_path):
    p = tmp_path / "itp.csv.gz"
    p.write_bytes(gzip.compress(b"cluster,submit_time,duration_s,num_gpus\nc1,3,600,4\nc1,1,900,1\n"))
    df = traces.load_jobs(p)
    assert df["job_id"].tolist() == ["row1", "row0"]  # file order names, then sorted by submission


def test_shipped_itp_matches_its_documented_totals():
    df = traces.load_itp()
    _check_schema(df)
    assert len(df) == 69351
    assert round(float((df["gpus"] * df["duration_s"]).sum()) / 3600, 1) == 1632719.7
    assert df["cluster"].nunique() == 10


def test_alibaba_jobs_and_machines(tmp_path):
    jobs = _write(tmp_path / "a.csv",
                  "job_id,submit_time,start_time,end_time,duration_s,queue_s,num_gpus,gpu_milli,num_cpus,memory_mib,"
                  "qos,status,end_censored\n"
                  "p0,0,1,101,100,1,1,500,6,2048,LS,Running,0\n"
                  "p1,5,,,,,0,0,4,1024,BE,Pending,0\n")
    df = traces.load_jobs(jobs)
    _check_schema(df)
    assert df["gpus"].tolist() == [1, 0] and df["cpus"].tolist() == [6.0, 4.0]
    assert df["mem_gb"].tolist() == [2.0, 1.0] and math.isnan(df["duration_s"][1])
    upstream = _write(tmp_path / "pods.csv",
                      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
                      "deletion_time,scheduled_time\nq,1500,512,2,1000,,LS,Failed,3,50,10\n")
    up = traces.load_jobs(upstream)
    assert up["duration_s"].tolist() == [40.0] and up["cpus"].tolist() == [1.5] and up["status"][0] == "Failed"
    nodes = _write(tmp_path / "m.csv", "machine_id,num_gpus,gpu_model,cpu_cores,memory_mib\nn0,8,G2,96,786432\n"
                                       "n1,0,,32,262144\n")
    m = traces.load_machines(nodes)
    assert list(m.columns) == list(traces.MACHINE_COLUMNS)
    assert m["gpus"].tolist() == [8, 0] and m["mem_gb"].tolist() == [768.0, 256.0]


def test_philly(tmp_path):
    log = [
        {"status": "Pass", "vc": "vc1", "jobid": "application_2", "user": "u", "submitted_time": "2017-10-01 00:10:00",
         "attempts": [{"start_time": "2017-10-01 00:11:00", "end_time": "2017-10-01 01:11:00",
                       "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}, {"ip": "m2", "gpus": ["gpu3"]}]}]},
        {"status": "Killed", "vc": "vc2", "jobid": "application_1", "user": "u", "submitted_time": "2017-10-01 00:00:00",
         "attempts": []},
    ]
    p = _write(tmp_path / "cluster_job_log", json.dumps(log))
    df = traces.load_jobs(p)
    _check_schema(df)
    assert df["job_id"].tolist() == ["application_1", "application_2"]
    assert df["submit_s"].tolist() == [0.0, 600.0]
    assert df["gpus"].tolist() == [0, 3] and df["duration_s"][1] == 3600.0 and math.isnan(df["duration_s"][0])
    assert df["cluster"].tolist() == ["vc2", "vc1"]
    machines = _write(tmp_path / "cluster_machine_list", "machineId, number of GPUs, single GPU mem\nm0,2, 12GB\n"
                                                          "m1,8, 24GB\n")
    m = traces.load_machines(machines)
    assert m["gpus"].tolist() == [2, 8] and m["gpu_model"].tolist() == ["12GB GPU", "24GB GPU"]


def test_helios_numeric_and_datetimes(tmp_path):
    p = _write(tmp_path / "h.csv", "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,"
                                   "duration,queue\n"
                                   "j1,u,vcA,8,48,1,COMPLETED,2020-04-01 00:01:00,2020-04-01 00:02:00,"
                                   "2020-04-01 01:02:00,3600,60\n"
                                   "j0,u,vcB,0,4,1,FAILED,2020-04-01 00:00:00,,,,\n")
    df = traces.load_jobs(p)
    _check_schema(df)
    assert df["job_id"].tolist() == ["j0", "j1"] and df["submit_s"].tolist() == [0.0, 60.0]
    assert df["gpus"].tolist() == [0, 8] and df["cpus"].tolist() == [4.0, 48.0]
    assert df["duration_s"][1] == 3600.0 and df["status"][1] == "COMPLETED"
    q = _write(tmp_path / "h2.csv", "submit_time,gpu_num,start_time,end_time\n100,1,110,170\n")
    assert traces.load_helios(q)["duration_s"].tolist() == [60.0]


@pytest.mark.parametrize("text, field", [
    ("job_id,cluster,submit_time,duration_s,num_gpus\na,c,ten,600,1\n", "trace.row2.submit_time"),
    ("job_id,cluster,submit_time,duration_s,num_gpus\na,c,1,600,1.5\n", "trace.row2.num_gpus"),
    ("job_id,cluster,submit_time,duration_s,num_gpus\na,c,1,-3,1\n", "trace.row2.duration_s"),
    ("job_id,cluster,submit_time,num_gpus\na,c,1,1\n", "trace"),
    ("hello,world\n1,2\n", "trace"),
])
def test_malformed_csv_is_one_input_error(tmp_path, text, field):
    p = _write(tmp_path / "bad.csv", text)
    with pytest.raises(InputError) as info:
        traces.load_jobs(p, "itp" if "num_gpus" in text else "auto")
    assert info.value.field == field
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text, field", [
    ("[{", "trace"),
    ('{"a": 1}', "trace"),
    ('[{"jobid": "x", "submitted_time": "yesterday", "attempts": []}]', "trace.0.submitted_time"),
    ('[{"jobid": "x", "submitted_time": "2017-10-01 00:00:00", "attempts": 3}]', "trace.0.attempts"),
])
def test_malformed_philly(tmp_path, text, field):
    p = _write(tmp_path / "log.json", text)
    with pytest.raises(InputError) as info:
        traces.load_philly_jobs(p)
    assert info.value.field == field


def test_cli_malformed_trace_exit_2(tmp_path, capsys):
    p = _write(tmp_path / "bad.csv", "job_id,cluster,submit_time,duration_s,num_gpus\na,c,x,600,1\n")
    with pytest.raises(SystemExit) as info:
        main(["trace-stats", str(p)])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: trace.row2.submit_time") and "\n" not in err and "Traceback" not in err


def test_missing_file_and_window_errors(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        traces.load_jobs(tmp_path / "nope.csv", "itp")
    with pytest.raises(InputError) as info:
        traces.parse_window("5d:2d")
    assert info.value.field == "window"
    assert traces.parse_window("1d:36h") == (86400.0, 129600.0)


def test_window_selects_cluster_and_interval(tmp_path):
    p = _write(tmp_path / "itp.csv", "job_id,cluster,submit_time,duration_s,num_gpus\n"
                                     "a,c1,10,600,1\nb,c2,20,700,8\nc,c1,30,700,2\nd,c1,99,700,2\n")
    df = traces.load_jobs(p)
    w = traces.window(df, start_s=15, end_s=99, cluster="c1")
    assert w["job_id"].tolist() == ["c"]
    with pytest.raises(InputError) as info:
        traces.window(df, cluster="c9")
    assert info.value.field == "cluster"


def _file_source(monkeypatch, tmp_path, payload: bytes, sha: str) -> None:
    src = tmp_path / "upstream.csv"
    src.write_bytes(payload)
    monkeypatch.setitem(download.SOURCES, "test-trace",
                        (download.RemoteFile("t.csv", src.as_uri(), sha),))


def test_download_trace_verifies_sha256(monkeypatch, tmp_path, capsys):
    payload = b"machine_id,num_gpus\n"
    _file_source(monkeypatch, tmp_path, payload, hashlib.sha256(payload).hexdigest())
    with pytest.raises(SystemExit) as info:
        main(["download-trace", "test-trace", "--to", str(tmp_path / "out")])
    assert info.value.code == 0
    assert (tmp_path / "out" / "t.csv").read_bytes() == payload


def test_download_trace_checksum_mismatch_leaves_nothing(monkeypatch, tmp_path, capsys):
    _file_source(monkeypatch, tmp_path, b"tampered\n", "0" * 64)
    with pytest.raises(SystemExit) as info:
        main(["download-trace", "test-trace", "--to", str(tmp_path / "out")])
    assert info.value.code == 2
    assert "does not match" in capsys.readouterr().err
    assert list((tmp_path / "out").iterdir()) == []


def test_download_unreachable(monkeypatch, tmp_path):
    monkeypatch.setitem(download.SOURCES, "gone", (download.RemoteFile("g", (tmp_path / "absent").as_uri(), "0" * 64),))
    with pytest.raises(InputError, match="cannot reach .* from this machine"):
        download.download_trace("gone", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_known_sources_are_pinned():
    for files in download.SOURCES.values():
        for f in files:
            assert len(f.sha256) == 64 and f.url.startswith("https://")


def test_trace_stats_numbers_and_plot(tmp_path, capsys):
    p = _write(tmp_path / "itp.csv", "job_id,cluster,submit_time,duration_s,num_gpus\n"
                                     "a,c1,0,600,1\nb,c1,100,1200,2\nc,c1,7300,1800,4\n")
    from edgeopt.traces.stats import trace_stats

    s = trace_stats(traces.load_jobs(p))
    assert s["jobs"] == 3 and s["arrivals_per_bin"]["bins"] == 3 and s["arrivals_per_bin"]["empty_bins"] == 1
    assert s["gpus"]["p50"] == 2.0 and s["duration_s"]["max"] == 1800.0
    assert s["gpu_hours"] == pytest.approx((600 + 2400 + 7200) / 3600)
    with pytest.raises(SystemExit) as info:
        main(["trace-stats", str(p), "--plot", str(tmp_path / "f.png")])
    assert info.value.code == 0
    assert (tmp_path / "f.png").stat().st_size > 1000
    assert "jobs: 3" in capsys.readouterr().out


def test_oversized_files_are_refused_before_parsing(tmp_path):
    """Traces share the input cap of instance files (``--max-input-bytes``), after gzip decompression,
    whatever the file's name says."""
    from edgeopt.core import jsonio

    body = gzip.compress(b"cluster,submit_time,duration_s,num_gpus\n" + b"c,1,600,1\n" * 2000)
    (tmp_path / "big.csv.gz").write_bytes(body)
    (tmp_path / "renamed.csv").write_bytes(body)  # gzip recognised by its magic bytes
    raw = tmp_path / "big.csv"
    raw.write_bytes(b"x" * 6000)
    previous = jsonio.set_max_input_bytes(5000)
    try:
        for name in ("big.csv.gz", "renamed.csv"):
            with pytest.raises(InputError, match="decompresses to more than the input cap of 5,000 bytes"):
                traces.load_jobs(tmp_path / name, "itp")
        with pytest.raises(InputError, match="above the input cap"):
            traces.load_jobs(raw, "itp")
    finally:
        jsonio.set_max_input_bytes(previous)
    assert len(traces.load_jobs(tmp_path / "renamed.csv", "itp")) == 2000


def test_philly_times_do_not_depend_on_the_local_time_zone(tmp_path, monkeypatch):
    import time as _time

    log = [{"jobid": "a", "submitted_time": "2017-11-05 00:00:00", "attempts": [
        {"start_time": "2017-11-05 00:00:00", "end_time": "2017-11-05 04:00:00", "detail": []}]}]
    p = _write(tmp_path / "log", json.dumps(log))
    monkeypatch.setenv("TZ", "America/Los_Angeles")  # a daylight-saving change on 2017-11-05 at 02:00
    if hasattr(_time, "tzset"):
        _time.tzset()
    try:
        assert traces.load_philly_jobs(p)["duration_s"].tolist() == [4 * 3600.0]
    finally:
        monkeypatch.undo()
        if hasattr(_time, "tzset"):
            _time.tzset()
