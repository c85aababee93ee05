"""The CLI for scripts: --json on stdout that parses, --version, plots, schemas, early rejection of typos."""

from __future__ import annotations

import json

import pytest

from edgeopt import api
from edgeopt.cli import main
from tests.reliability_helpers import PROOF_CLOCK

#: The exact results need a schedule, not a proof: 2 units of deterministic work (about 2 CPU s of CP-SAT) stop
#: the solve at the same point on any machine, and the clock (an hour) never does.
HOUR = int(PROOF_CLOCK)

FAMILIES = [s.name for s in api.families()]


def cli(*args) -> int:
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    return exc.value.code


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """An instance, the online result and an exact result per family, written by the CLI itself."""
    d = tmp_path_factory.mktemp("cli")
    out = {}
    for f in FAMILIES:
        inst, on, opt = d / f"{f}.json", d / f"{f}.online.json", d / f"{f}.opt.json.gz"
        for args in (("generate", f, "--seed", "1", "-o", inst), ("run", "online", inst, "-o", on),
                     ("solve", inst, "--method", "cpsat", "--time-limit", HOUR, "--work-limit", 2, "-o", opt)):
            with pytest.raises(SystemExit) as exc:
                main([str(a) for a in args])
            assert exc.value.code == 0, args
        out[f] = (inst, on, opt)
    return out


def test_version(capsys):
    assert cli("--version") == 0
    assert capsys.readouterr().out.strip() == "edgeopt 0.1.0"


def test_algorithms_json_lists_parameters(capsys):
    assert cli("algorithms", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    by = {(r["family"], r["algorithm"]): r for r in rows}
    for f in FAMILIES:
        assert by[(f, "online")]["kind"] == "online"
        assert by[(f, "milp")]["kind"] == "exact"
        for name, algo in api.algorithms(f).items():
            assert [p["name"] for p in by[(f, name)]["params"]] == [p.name for p in algo.params]


@pytest.mark.parametrize("family", FAMILIES)
def test_validate_json_valid_and_invalid(family, files, tmp_path, capsys):
    inst, on, opt = files[family]
    for res in (on, opt):
        assert cli("validate", inst, res, "--json") == 0
        report = json.loads(capsys.readouterr().out)
        assert report["valid"] is True and report["violations"] == []
    broken = json.loads(on.read_text())
    broken["objective"] = broken["objective"] + 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(broken))
    assert cli("validate", inst, bad, "--json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False and report["violations"][0]["equation"] == "objective"


def test_compare_json_goes_to_stdout_not_to_a_file(files, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    inst = files["edgecloud"][0]
    assert cli("compare", inst, "--algorithms", "online,fifo", "--json") == 0
    table = json.loads(capsys.readouterr().out)
    assert [r["algorithm"] for r in table["rows"]] == ["online", "fifo"]
    assert list(tmp_path.iterdir()) == []  # no file named "-" or anything else


def test_compare_rejects_a_typo_before_running_anything(files, capsys):
    inst = files["hetero"][0]
    assert cli("compare", inst, "--algorithms", "online,onlnie", "--optimal") == 2
    err = capsys.readouterr().err
    assert "did you mean 'online'" in err and "\n" not in err.strip()


@pytest.mark.parametrize("args, hint", [
    (["generate", "hetero", "-o", "{tmp}/x.json", "--preset", "smal"], "did you mean 'small'"),
    (["solve", "{inst}", "--method", "mlip"], "did you mean 'milp'"),
    (["run", "onlin", "{inst}"], "did you mean 'online'"),
])
def test_unknown_choices_suggest(args, hint, files, tmp_path, capsys):
    inst = files["hetero"][0]
    assert cli(*[a.format(tmp=tmp_path, inst=inst) for a in args]) == 2
    assert hint in capsys.readouterr().err


def test_help_lists_presets_and_methods(capsys):
    assert cli("generate", "--help") == 0
    text = " ".join(capsys.readouterr().out.split())
    for f in FAMILIES:
        assert f"{f}: " + ", ".join(api.family(f).presets) in text
    assert cli("solve", "--help") == 0
    text = capsys.readouterr().out
    assert "milp" in text and "cpsat" in text


@pytest.mark.parametrize("family", FAMILIES)
def test_plot_commands_write_images(family, files, tmp_path):
    inst, on, opt = files[family]
    png, svg = tmp_path / "g.png", tmp_path / "u.svg"
    assert cli("plot-schedule", inst, opt, "-o", png) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert cli("plot-utilisation", inst, on, "-o", svg) == 0
    assert "<svg" in svg.read_text()[:500]
    assert cli("plot-schedule", inst, on, "-o", tmp_path / "g.txt") == 2


def test_schema_result(capsys):
    assert cli("schema", "result") == 0
    schema = json.loads(capsys.readouterr().out)
    assert set(schema["required"]) >= {"family", "algorithm", "status", "objective", "schedule"}
    assert set(schema["properties"]["status"]["enum"]) == {"optimal", "feasible", "time_limit", "partial",
                                                            "infeasible", "bound"}
    assert cli("schema", "result", "--family", "hetero") == 0
    schema = json.loads(capsys.readouterr().out)
    assert "hetero" in schema["title"]


def test_result_files_are_compact_and_gzip_readable(files):
    _, on, opt = files["preemptive"]
    assert "\n " not in on.read_text()
    assert opt.read_bytes()[:2] == b"\x1f\x8b"
    assert api.load_result(opt).family == "preemptive"


def test_family_docs_formats_match_the_schemas():
    """docs/families/<family>.md embed tables generated from the schemas and the registry; they must be current.

    When this fails after a change to an instance/schedule model or an algorithm's parameters, run
    ``python docs/make_docs.py`` and commit the pages.
    """
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "make_docs.py"
    spec = importlib.util.spec_from_file_location("make_docs", path)
    make_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_docs)
    for family in FAMILIES:
        old, new = make_docs.update(make_docs.PAGES / f"{family}.md")
        assert "<!-- generated:instance -->" in old
        assert old == new, f"docs/families/{family}.md is out of date: run python docs/make_docs.py"


def test_generate_passes_family_options_typed_and_checked(tmp_path, capsys):
    """``--clusters 6 --arrival-rate 4`` (tapfinger's 6-cluster setting) and ``--cost`` (okita) reach the generator."""
    out = tmp_path / "t6.json"
    assert cli("generate", "tapfinger", "--preset", "paper", "--clusters", "6", "--arrival-rate", "4", "-o", out) == 0
    six = api.load(out)
    assert len(six.clusters) == 6 and six == api.generate("tapfinger", "paper", clusters=6, arrival_rate=4.0)
    assert cli("generate", "okita", "--cost=piecewise", "-o", tmp_path / "o.json") == 0
    assert {j.latency_cost.kind for j in api.load(tmp_path / "o.json").jobs} == {"piecewise"}
    for args, field in ((["okita", "--cots", "linear"], "cots"), (["okita", "--cost", "lineer"], "cost"),
                        (["tapfinger", "--clusters", "six"], "clusters"), (["hetero", "stray"], "arguments")):
        capsys.readouterr()
        bad = tmp_path / "bad.json"
        assert cli("generate", *args, "-o", bad) == 2
        first = capsys.readouterr().err.strip().splitlines()[0]
        assert first.startswith(f"error: {field}:"), first
        assert not bad.exists()


def test_what_native_code_writes_on_descriptor_1_goes_to_stderr_and_stdout_stays_the_commands(tmp_path) -> None:
    """A solver library printing on descriptor 1 by itself (HiGHS 1.12 does, from some MIP solves) must not
    corrupt the JSON a command prints on stdout: the command moves descriptor 1 to stderr at its start."""
    import subprocess
    import sys

    code = ("import os, sys\n"
            "from edgeopt.cli import native_output_to_stderr\n"
            "native_output_to_stderr()\n"
            "os.write(1, b'native note\\n')\n"  # what a C library's printf does
            "sys.stdout.write('{\"status\": \"optimal\"}\\n')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    assert json.loads(done.stdout) == {"status": "optimal"}
    assert done.stderr == "native note\n"
