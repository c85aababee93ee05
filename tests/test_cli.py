"""The edgeopt command: exit codes, one-line errors, reproducible files, nothing half-written."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgeopt import api
from edgeopt.cli import main
from edgeopt.core.jsonio import get_path, set_path, tree_paths

FAMILIES = [s.name for s in api.families()]
needs_family = pytest.mark.skipif(not FAMILIES, reason="no family implemented yet")


def cli(*args: str) -> int:
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    return exc.value.code


def one_line_error(capsys) -> str:
    """The one-line summary of an error; when the input had several errors, each follows on its own
    indented line (``  field: message``), the first repeating the summary's."""
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: "), err
    assert "Traceback" not in err, err
    first, *details = err.splitlines()
    if details:
        assert all(line.startswith(("  instance", "  result")) for line in details), err
        assert first.removeprefix("error: ").startswith(details[0].strip()), err
    return first


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["generate", "nosuch", "-o", "{tmp}/x.json"], "family: unknown family"),
        (["run", "online", "{tmp}/missing.json"], "file not found"),
        (["schema", "nosuch"], "family"),
        (["frobnicate"], "No such command"),
        (["generate", "hetero", "-o", "{tmp}/x.json", "--jobs", "abc"], "--jobs"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, fragment, tmp_path, capsys):
    code = cli(*[a.format(tmp=tmp_path) for a in args])
    assert code == 2
    assert fragment in one_line_error(capsys)
    assert not (tmp_path / "x.json").exists()


def test_not_json_and_wrong_root(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    assert cli("run", "online", bad) == 2
    assert "not valid JSON" in one_line_error(capsys)
    bad.write_text("[1, 2]")
    assert cli("run", "online", bad) == 2
    assert "JSON object" in one_line_error(capsys)
    bad.write_text('{"jobs": []}')
    assert cli("run", "online", bad) == 2
    assert "instance.family" in one_line_error(capsys)


@needs_family
@pytest.mark.parametrize("family", FAMILIES)
def test_generate_same_seed_same_bytes(family, tmp_path, capsys):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    assert cli("generate", family, "--seed", "5", "-o", a) == 0
    assert cli("generate", family, "--seed", "5", "-o", b) == 0
    assert cli("generate", family, "--seed", "6", "-o", c) == 0
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    capsys.readouterr()
    assert cli("generate", family, "--preset", "nosuch", "-o", tmp_path / "d.json") == 2
    assert "preset" in one_line_error(capsys)


@needs_family
@pytest.mark.parametrize("family", FAMILIES)
def test_run_validate_round_trip_and_tampering(family, tmp_path, capsys):
    inst, res = tmp_path / "i.json", tmp_path / "r.json"
    # a family whose paper algorithm is pending (ONLINE_PENDING) is exercised with its first baseline
    algo = "online" if "online" in api.algorithms(family) else next(iter(api.algorithms(family)))
    assert cli("generate", family, "--seed", "2", "-o", inst) == 0
    assert cli("run", algo, inst, "-o", res) == 0
    assert cli("validate", inst, res) == 0
    assert "valid" in capsys.readouterr().out
    # same seed: the result differs only in runtime_s
    res2 = tmp_path / "r2.json"
    assert cli("run", algo, inst, "-o", res2) == 0
    d1, d2 = json.loads(res.read_text()), json.loads(res2.read_text())
    d1.pop("runtime_s"), d2.pop("runtime_s")
    assert d1 == d2
    # a lie about the objective is caught: exit 1 and the violation listed
    data = json.loads(res.read_text())
    data["objective"] = data["objective"] - 1.0
    res.write_text(json.dumps(data))
    capsys.readouterr()
    assert cli("validate", inst, res) == 1
    assert "(objective)" in capsys.readouterr().out
    # a result of another instance is caught too
    other = tmp_path / "o.json"
    assert cli("generate", family, "--seed", "3", "-o", other) == 0
    assert cli("run", algo, inst, "-o", res) == 0
    assert cli("validate", other, res) == 1
    # a broken result file is bad input
    res.write_text('{"family": "x"}')
    capsys.readouterr()
    assert cli("validate", inst, res) == 2
    assert "result." in one_line_error(capsys)


@needs_family
def test_algorithms_and_schema(capsys):
    assert cli("algorithms") == 0
    out = capsys.readouterr().out
    for family in FAMILIES:
        assert family in out
    for family in FAMILIES:
        assert cli("schema", family) == 0
        schema = json.loads(capsys.readouterr().out)
        # tapfinger calls its jobs "tasks", as its paper does
        assert schema["type"] == "object" and ({"jobs", "tasks"} & set(schema["properties"]))


@needs_family
def test_compare_writes_json_and_plot(tmp_path, capsys):
    family = FAMILIES[0]
    inst = tmp_path / "i.json"
    cli("generate", family, "--seed", "1", "-o", inst)
    js, png = tmp_path / "c.json", tmp_path / "c.png"
    assert cli("compare", inst, "-o", js, "--plot", png) == 0
    table = json.loads(js.read_text())
    assert {r["algorithm"] for r in table["rows"]} == set(api.algorithms(family))
    assert all(r["valid"] for r in table["rows"])
    assert png.read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    assert cli("compare", inst, "--algorithms", "online,nosuch") == 2
    assert "nosuch" in one_line_error(capsys)


# ---- malformed instance files (hypothesis) -------------------------------------------------------


def _wrong_type(value):
    """A replacement that no schema accepting ``value``'s type can accept."""
    if isinstance(value, (bool, int, float)):
        return "not-a-number"
    if isinstance(value, str):
        return {"not": "a string"}
    return "not-a-container"


@needs_family
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_malformed_instances_exit_2_naming_the_field(data, tmp_path_factory, capsys):
    family = data.draw(st.sampled_from(FAMILIES))
    good = api.generate(family, "small", seed=0).model_dump(mode="json")
    paths = [p for p, _ in tree_paths(good) if p and p != ("family",)]
    kind = data.draw(st.sampled_from(["wrong_type", "unknown_key", "truncate"]))
    tmp = tmp_path_factory.mktemp("bad")
    target, out = tmp / "inst.json", tmp / "res.json"
    text = json.dumps(good)
    if kind == "wrong_type":
        path = data.draw(st.sampled_from(paths))
        set_path(good, path, _wrong_type(get_path(good, path)))
        text = json.dumps(good)
    elif kind == "unknown_key":
        dicts = [p for p, v in tree_paths(good) if isinstance(v, dict)]
        path = data.draw(st.sampled_from(dicts))
        get_path(good, path)["zz_unknown_field"] = 1
        path = (*path, "zz_unknown_field")
        text = json.dumps(good)
    else:
        cut = data.draw(st.integers(1, len(text) - 2))
        text, path = text[:cut], None
    target.write_text(text)
    capsys.readouterr()
    assert cli("run", "online", target, "-o", out) == 2
    err = one_line_error(capsys)
    assert not out.exists()
    if path is not None:
        # the error names the mutated field or one of its ancestors
        reported = err.split(": ", 2)[1]
        assert reported.startswith("instance"), err
        parts = reported.split(".")[1:]
        assert tuple(parts) == tuple(str(p) for p in path)[: len(parts)], (err, path)
