"""Scale words that mean what they say: hetero's Fig. 2 preset, `--jobs` saying what it does to the
horizon, and the short name `itp` of the shipped trace."""

from __future__ import annotations

import json

from edgeopt import api
from edgeopt.traces.loaders import SHIPPED_ITP, load_jobs
from tests.reliability_helpers import cli


def test_hetero_fig2_preset_is_the_papers_figure_setting() -> None:
    fig2 = api.generate("hetero", "paper_fig2", seed=3)
    assert (len(fig2.jobs), fig2.horizon, len(fig2.servers)) == (1000, 300, 150)
    same = api.generate("hetero", "paper", seed=3, jobs=1000, horizon=300)
    assert fig2.model_dump() == same.model_dump()
    assert api.generate("hetero", "paper_fig2_ra", seed=3).architecture == "ring_allreduce"
    paper = api.generate("hetero", "paper", seed=3)
    assert (len(paper.jobs), paper.horizon) == (300, 150)  # Sec. 7's default T


def test_generate_jobs_says_whether_the_horizon_moved(tmp_path, capsys) -> None:
    assert cli("generate", "hetero", "--preset", "paper", "--jobs", "400", "-o", tmp_path / "h.json") == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "--jobs does not scale the horizon: T = 150" in err and "--horizon" in err
    assert cli("generate", "preemptive", "--preset", "paper", "--jobs", "50", "-o", tmp_path / "p.json") == 0
    err = " ".join(capsys.readouterr().err.split())
    horizon = json.loads((tmp_path / "p.json").read_text())["horizon"]
    assert f"the horizon follows the jobs: T = {horizon:,}" in err
    # an explicit horizon needs no note
    assert cli("generate", "hetero", "--preset", "paper", "--jobs", "20", "--horizon", "60", "-o",
               tmp_path / "h2.json") == 0
    assert "note" not in capsys.readouterr().err


def test_itp_names_the_shipped_trace(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("trace-stats", "itp", "--json") == 0
    assert json.loads(capsys.readouterr().out)["jobs"] == len(load_jobs(SHIPPED_ITP))
    assert cli("generate", "hetero", "--trace", "itp", "--window", "14d:15d", "--jobs", "20", "-o", "h.json") == 0
    assert len(json.loads((tmp_path / "h.json").read_text())["jobs"]) == 20
    # a file of that name in the working directory is the user's own and wins
    (tmp_path / "itp").write_text("job_id,submit_time,duration_s,num_gpus\na,0,600,1\nb,10,1200,2\n")
    assert len(load_jobs("itp")) == 2
