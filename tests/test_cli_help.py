"""The CLI always helps (issue 21, section 5): "did you mean" for families, schema names and options;
``run --json``."""

from __future__ import annotations

import json

import pytest

from edgeopt.cli import main


def run(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(a) for a in argv])
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


@pytest.mark.parametrize("argv, hint", [
    (["generate", "heteor", "-o", "x.json"], "did you mean 'hetero'?"),
    (["algorithms", "hetro"], "did you mean 'hetero'?"),
    (["demo", "--family", "hetro"], "did you mean 'hetero'?"),
    (["schema", "reslt"], "did you mean 'result'?"),
    (["generate", "hetero", "--jobz", "3", "-o", "x.json"], "did you mean '--jobs'?"),
    (["generate", "tapfinger", "--clusterz", "3", "-o", "x.json"], "did you mean '--clusters'?"),
    (["run", "online", "x.json", "--sed", "3"], "--seed"),
])
def test_did_you_mean(argv, hint, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(argv, capsys)
    assert code == 2 and hint in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


def test_schema_lists_result_among_the_choices(capsys):
    _, _, err = run(["schema", "nothing"], capsys)
    assert "result" in err and "hetero" in err


def test_run_json_prints_the_result_also_with_output(tmp_path, capsys):
    inst, res = tmp_path / "h.json", tmp_path / "r.json"
    assert run(["generate", "hetero", "-o", inst], capsys)[0] == 0
    code, out, _ = run(["run", "fifo", inst, "--json", "-o", res], capsys)
    assert code == 0
    assert json.loads(out) == json.loads(res.read_text())


def test_plot_schedule_options(tmp_path, capsys):
    inst, res, png = tmp_path / "h.json", tmp_path / "r.json", tmp_path / "g.png"
    assert run(["generate", "hetero", "-o", inst], capsys)[0] == 0
    assert run(["run", "online", inst, "-o", res], capsys)[0] == 0
    code, _, _ = run(["plot-schedule", inst, res, "-o", png, "--jobs", "0-2", "--window", "0:8", "--no-labels"],
                     capsys)
    assert code == 0 and png.stat().st_size > 0
    code, _, err = run(["plot-schedule", inst, res, "-o", tmp_path / "x.png", "--window", "8"], capsys)
    assert code == 2 and "window" in err and not (tmp_path / "x.png").exists()
    code, _, err = run(["plot-schedule", inst, res, "-o", tmp_path / "x.png", "--servers", "nowhere"], capsys)
    assert code == 2 and "--servers" in err and "nowhere" in err


def test_usage_names_arguments_as_the_readme_does_and_summaries_are_whole(capsys):
    code, out, _ = run(["--help"], capsys)
    assert code == 0 and "..." not in out.split("Commands:")[1]
    # every command's whole first sentence is listed (click cut them at the terminal's width)
    assert "Run algorithms over many seeded instances on Dask and summarise the ratios" in " ".join(out.split())
    code, out, _ = run(["run", "--help"], capsys)
    assert code == 0 and "Usage: edgeopt run [OPTIONS] ALGORITHM INSTANCE" in out and "{" not in out.splitlines()[0]
    assert "Write the result JSON here." in out and "result/instance" not in out
    code, out, _ = run(["algorithms", "--help"], capsys)
    assert "Usage: edgeopt algorithms [OPTIONS] [FAMILY]" in out
