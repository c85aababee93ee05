"""Issues 17 (Inputs) and 24 (items 1, 2, 5, 6, 9): files that are not what they should be.

Special files and oversize files are refused before they are read, types are JSON's (strict),
duplicate keys and files of another family are named in one line, output paths that cannot be
written are refused before any work, and `generate` checks each family's caps before drawing.
Every case: exit 2, one `error:` line naming the field, no traceback, nothing written.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import stat
from pathlib import Path

import pytest

from edgeopt import api
from edgeopt.core import InputError, Result, jsonio
from edgeopt.core.jsonio import set_path
from tests.reliability_helpers import FAMILIES, assert_clean_error, cli, jobs_key, small_instance, write

# ---- special files and streams (issue 24, item 1) ------------------------------------------------


def _fifo(tmp_path):
    path = tmp_path / "f.json"
    os.mkfifo(path)
    return path


SPECIAL = {
    "dev-zero": lambda tmp: "/dev/zero",
    "dev-urandom": lambda tmp: "/dev/urandom",
    "directory": lambda tmp: tmp,
    "fifo": _fifo,
    "stdin-dash": lambda tmp: "-",
}


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_special_file_as_instance_exits_2_without_reading(kind, tmp_path, capsys):
    path = SPECIAL[kind](tmp_path)
    assert cli("run", "online", path) == 2  # a FIFO would block forever if it were opened
    err = capsys.readouterr().err
    assert_clean_error(err, "instance:")
    assert "regular file" in err or "standard input" in err


@pytest.mark.parametrize("kind", ["dev-urandom", "fifo", "directory"])
def test_special_file_as_result_exits_2(kind, tmp_path, capsys):
    _, inst = small_instance("hetero", tmp_path)
    sub = tmp_path / "sub"
    sub.mkdir()
    assert cli("validate", inst, SPECIAL[kind](sub)) == 2
    assert_clean_error(capsys.readouterr().err, "result:", "not a regular file")


def test_read_bytes_refuses_a_fifo_opened_nowhere(tmp_path):
    with pytest.raises(InputError, match="FIFO"):
        jsonio.read_json(_fifo(tmp_path), what="instance")


# ---- size cap (issue 17) ---------------------------------------------------------------------------


def test_default_cap_is_64_mib():
    assert jsonio.DEFAULT_MAX_INPUT_BYTES == 64 * 2**20
    assert jsonio.max_input_bytes() == jsonio.DEFAULT_MAX_INPUT_BYTES


def test_file_above_the_default_cap_is_refused_before_parsing(tmp_path, capsys):
    big = tmp_path / "big.json"
    with big.open("wb") as fh:  # a sparse file: 65 MiB of size, no disk, never parsed
        fh.truncate(65 * 2**20)
    assert cli("run", "online", big) == 2
    assert_clean_error(capsys.readouterr().err, "instance:", "above the input cap", "--max-input-bytes")


def test_max_input_bytes_changes_the_cap(tmp_path, capsys):
    _, inst = small_instance("hetero", tmp_path)
    size = inst.stat().st_size
    assert cli("run", "online", inst, "--max-input-bytes", size - 1) == 2
    assert_clean_error(capsys.readouterr().err, "instance:", f"{size - 1:,} bytes")
    assert cli("run", "online", inst, "--max-input-bytes", size) == 0
    assert jsonio.max_input_bytes() == jsonio.DEFAULT_MAX_INPUT_BYTES  # the CLI puts the default back
    assert cli("run", "online", inst, "--max-input-bytes", 0) == 2
    assert_clean_error(capsys.readouterr().err, "max_input_bytes")


@pytest.mark.parametrize("command", ["run", "solve", "validate", "compare", "plot-schedule", "plot-utilisation"])
def test_every_command_that_reads_files_takes_max_input_bytes(command, tmp_path, capsys):
    _, inst = small_instance("hetero", tmp_path)
    res = tmp_path / "r.json"
    api.run("online", api.load(inst)).save(str(res))
    args = {"run": ["run", "online", inst], "solve": ["solve", inst], "validate": ["validate", inst, res],
            "compare": ["compare", inst], "plot-schedule": ["plot-schedule", inst, res, "-o", tmp_path / "p.png"],
            "plot-utilisation": ["plot-utilisation", inst, res, "-o", tmp_path / "p.png"]}[command]
    assert cli(*args, "--max-input-bytes", 100) == 2
    assert_clean_error(capsys.readouterr().err, "above the input cap of 100 bytes")
    assert not (tmp_path / "p.png").exists()


def test_gzip_bomb_is_refused_by_its_decompressed_size(tmp_path, capsys):
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (4 * 2**20)))  # 4 MiB of spaces, a few kB compressed
    assert cli("run", "online", bomb, "--max-input-bytes", 2**20) == 2
    assert_clean_error(capsys.readouterr().err, "decompresses to more than")


def test_gzip_instance_below_the_cap_is_read(tmp_path):
    data, _ = small_instance("okita", tmp_path)
    gz = tmp_path / "i.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(data).encode()))
    assert api.load(gz).model_dump(mode="json") == data


# ---- strict types (issue 17) -------------------------------------------------------------------------

#: (family, path into the instance, a value of the wrong JSON type, the field the error names)
WRONG_TYPES = [
    *[(f, (jobs_key(f), 0, "id"), "0", f"instance.{jobs_key(f)}.0.id") for f in FAMILIES],
    *[(f, (jobs_key(f), 0, "id"), True, f"instance.{jobs_key(f)}.0.id") for f in FAMILIES],
    *[(f, ("horizon",), "12", "instance.horizon") for f in FAMILIES],
    *[(f, ("horizon",), True, "instance.horizon") for f in FAMILIES],
    ("hetero", ("jobs", 0, "epochs"), 2.0, "instance.jobs.0.epochs"),
    ("edgecloud", ("jobs", 0, "chunks"), 1.5, "instance.jobs.0.chunks"),
    ("preemptive", ("jobs", 0, "requested_workers"), 1.5, "instance.jobs.0.requested_workers"),
    ("preemptive", ("jobs", 0, "requested_workers"), 2.0, "instance.jobs.0.requested_workers"),
    ("okita", ("jobs", 0, "epochs"), True, "instance.jobs.0.epochs"),
    ("okita", ("jobs", 0, "chunk_size_mb"), "20", "instance.jobs.0.chunk_size_mb"),
    ("okita", ("jobs", 0, "worker_demand", 0), False, "instance.jobs.0.worker_demand.0"),
    ("tapfinger", ("tasks", 0, "task_type"), "0", "instance.tasks.0.task_type"),
]


@pytest.mark.parametrize("family, path, value, field", WRONG_TYPES,
                         ids=[f"{w[0]}-{'.'.join(map(str, w[1]))}={w[2]!r}" for w in WRONG_TYPES])
def test_wrong_json_type_exits_2_naming_the_field(family, path, value, field, tmp_path, capsys):
    data, _ = small_instance(family, tmp_path)
    set_path(data, path, value)
    assert cli("run", "online", write(tmp_path / "bad.json", data)) == 2
    assert_clean_error(capsys.readouterr().err, field)


@pytest.mark.parametrize("family", FAMILIES)
def test_an_integer_where_a_float_belongs_is_accepted(family, tmp_path):
    """JSON writes 5.0 as 5 in many tools: integers stay valid for real-valued fields."""
    data, _ = small_instance(family, tmp_path)
    floats = [p for p, v in jsonio.tree_paths(data) if type(v) is float and v == int(v) and abs(v) < 1e15]
    assert floats, "no float field with an integral value to try"
    for p in floats:
        set_path(data, p, int(jsonio.get_path(data, p)))
    inst = api.load(write(tmp_path / "ints.json", data))
    assert api.family_of(inst).name == family


def _okita_result(tmp_path):
    _, inst_path = small_instance("okita", tmp_path)
    res = api.run("online", api.load(inst_path)).to_dict()
    slot = next(e for js in res["schedule"]["jobs"] for e in js["slots"] if e["workers"] and e["transfers"])
    return inst_path, res, slot


@pytest.mark.parametrize("change, field", [
    (lambda slot: slot["workers"].update({next(iter(slot["workers"])): True}), "workers"),
    (lambda slot: slot["workers"].update({next(iter(slot["workers"])): 1.5}), "workers"),
    (lambda slot: slot["workers"].update({next(iter(slot["workers"])): 2.0}), "workers"),
    (lambda slot: slot["transfers"][0].__setitem__(2, "1"), "transfers"),
], ids=["workers-true", "workers-1.5", "workers-2.0", "transfer-count-string"])
def test_okita_result_with_wrong_types_exits_2_naming_the_field(change, field, tmp_path, capsys):
    """A fractional worker count (even 2.0) is bad input when the result is read: exit 2, the one rule."""
    inst_path, res, slot = _okita_result(tmp_path)
    change(slot)
    assert cli("validate", inst_path, write(tmp_path / "r.json", res)) == 2
    assert_clean_error(capsys.readouterr().err, "schedule.jobs.", field)


@pytest.mark.parametrize("family", ["hetero", "edgecloud"])
def test_fractional_worker_count_is_bad_input_in_the_cli_and_the_api(family, tmp_path, capsys):
    _, inst_path = small_instance(family, tmp_path)
    inst = api.load(inst_path)
    res = api.run("online", inst).to_dict()
    js = res["schedule"]["jobs"][0]
    entry = js["workers"] if "workers" in js else js["placements"][0]["workers"]
    entry[next(iter(entry))] = 1.5
    assert cli("validate", inst_path, write(tmp_path / "r.json", res)) == 2
    assert_clean_error(capsys.readouterr().err, "schedule.jobs.0.", "workers")
    with pytest.raises(InputError, match="workers"):
        api.validate(inst, Result.from_dict(res))


# ---- duplicate keys, wrong family (issue 24, item 9) --------------------------------------------------


def test_duplicate_key_is_refused_naming_its_path(tmp_path, capsys):
    data, _ = small_instance("hetero", tmp_path)
    text = json.dumps(data)
    dup = tmp_path / "dup.json"
    dup.write_text(text.replace('"horizon": ', '"horizon": 3, "horizon": ', 1))
    assert cli("run", "online", dup) == 2
    assert_clean_error(capsys.readouterr().err, "duplicate key 'horizon'")
    nested = tmp_path / "nested.json"
    nested.write_text(text.replace('"epochs": ', '"epochs": 1, "epochs": ', 1))
    assert cli("run", "online", nested) == 2
    assert_clean_error(capsys.readouterr().err, "duplicate key 'jobs.0.epochs'")


def test_duplicate_key_in_a_result_is_refused(tmp_path, capsys):
    _, inst = small_instance("hetero", tmp_path)
    text = api.run("online", api.load(inst)).to_json()
    res = tmp_path / "r.json"
    res.write_text(text.replace('"objective": ', '"objective": 0, "objective": ', 1))
    assert cli("validate", inst, res) == 2
    assert_clean_error(capsys.readouterr().err, "result:", "duplicate key 'objective'")


@pytest.mark.parametrize("actual", FAMILIES)
def test_instance_of_another_family_is_named_in_one_line(actual, tmp_path, capsys):
    data, _ = small_instance(actual, tmp_path)
    claimed = next(f for f in FAMILIES if f != actual)
    data["family"] = claimed
    assert cli("run", "online", write(tmp_path / "w.json", data)) == 2
    err = capsys.readouterr().err
    assert_clean_error(err, f"{actual} file", f"says {claimed!r}")
    assert len(err.strip().splitlines()) == 1, err


def test_result_given_as_instance_and_instance_given_as_result(tmp_path, capsys):
    _, inst = small_instance("edgecloud", tmp_path)
    res = tmp_path / "r.json"
    api.run("online", api.load(inst)).save(str(res))
    assert cli("run", "online", res) == 2
    assert_clean_error(capsys.readouterr().err, "this is a result file")
    assert cli("validate", inst, inst) == 2
    assert_clean_error(capsys.readouterr().err, "result:", "this is an instance file")


def test_result_of_another_family_is_bad_input_not_a_violation(tmp_path, capsys):
    _, hetero = small_instance("hetero", tmp_path)
    _, okita = small_instance("okita", tmp_path)
    res = tmp_path / "r.json"
    api.run("online", api.load(okita)).save(str(res))
    assert cli("validate", hetero, res) == 2
    err = capsys.readouterr().err
    assert_clean_error(err, "is a okita result", "hetero")
    assert len(err.strip().splitlines()) == 1


# ---- output paths (issue 24, item 5) ------------------------------------------------------------------

BAD_OUTPUTS = {"directory": lambda tmp: tmp, "empty": lambda tmp: "", "proc": lambda tmp: "/proc/x.json",
               "under-a-file": lambda tmp: tmp / "i.json" / "x.json"}


def _command(name, inst, res, out):
    return {
        "generate": ["generate", "hetero", "-o", out],
        "run": ["run", "online", inst, "-o", out],
        "solve": ["solve", inst, "--method", "cpsat", "--time-limit", "5", "-o", out],
        "compare-o": ["compare", inst, "--algorithms", "online", "-o", out],
        "compare-plot": ["compare", inst, "--algorithms", "online", "--plot", out],
        "plot-schedule": ["plot-schedule", inst, res, "-o", out],
        "plot-utilisation": ["plot-utilisation", inst, res, "-o", out],
        "sweep-json": ["sweep", "hetero", "--seeds", "0", "--algorithms", "online", "--json", out],
        "sweep-store": ["sweep", "hetero", "--seeds", "0", "--algorithms", "online", "--store", out],
    }[name]


@pytest.mark.parametrize("bad", sorted(BAD_OUTPUTS))
@pytest.mark.parametrize("command", ["generate", "run", "solve", "compare-o", "compare-plot", "plot-schedule",
                                     "plot-utilisation", "sweep-json", "sweep-store"])
def test_unwritable_output_exits_2_before_any_work(command, bad, tmp_path, capsys):
    work = tmp_path / "w"
    work.mkdir()
    _, inst = small_instance("hetero", work)
    res = work / "r.json"
    api.run("online", api.load(inst)).save(str(res))
    (work / "i.json").write_text("{}")
    out = BAD_OUTPUTS[bad](work)
    if command.startswith(("plot", "compare-plot")) and bad in ("proc", "under-a-file"):
        out = Path(out).with_suffix(".png")
    if command == "sweep-store" and bad == "directory":
        out = work / "i.json"  # a store that is a file
    before = sorted(p.name for p in work.iterdir())
    assert cli(*_command(command, inst, res, out)) == 2
    err = capsys.readouterr().err
    assert_clean_error(err)
    assert len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in work.iterdir()) == before


# ---- output paths that exist and are not regular files (issue 31, item 1) ------------------------------

def _char_device(path: Path) -> Path:
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # /dev/full's numbers, made in the test's folder
    return path


NODES = {"fifo": lambda p: (os.mkfifo(p), p)[1], "char-device": _char_device}


def _node_commands(inst, res, out):
    return {**{k: _command(k, inst, res, out) for k in ("generate", "run", "solve", "compare-o", "compare-plot",
                                                          "plot-schedule", "plot-utilisation", "sweep-json",
                                                          "sweep-store")},
            "generate-gz": ["generate", "hetero", "-o", out],
            "bound": ["bound", inst, "--time-limit", "5", "-o", out]}


@pytest.mark.parametrize("node", sorted(NODES))
@pytest.mark.parametrize("command", ["generate", "generate-gz", "run", "solve", "bound", "compare-o", "compare-plot",
                                     "plot-schedule", "plot-utilisation", "sweep-json", "sweep-store"])
def test_output_that_is_a_device_or_fifo_is_refused_and_kept(command, node, tmp_path, capsys):
    """The atomic rename would replace the node itself (as root, ``-o /dev/full`` became a JSON file)."""
    work = tmp_path / "w"
    work.mkdir()
    _, inst = small_instance("hetero", work)
    res = work / "r.json"
    api.run("online", api.load(inst)).save(str(res))
    name = {"compare-plot": "o.png", "plot-schedule": "o.png", "plot-utilisation": "o.png",
            "generate-gz": "o.json.gz"}.get(command, "o.json")
    out = NODES[node](work / name)
    mode = os.lstat(out).st_mode
    before = sorted(p.name for p in work.iterdir())
    assert cli(*_node_commands(inst, res, out)[command]) == 2
    err = capsys.readouterr().err
    assert_clean_error(err)
    assert len(err.strip().splitlines()) == 1, err
    assert "not a regular file" in err or "store" in err, err
    assert os.lstat(out).st_mode == mode  # still the same node
    assert sorted(p.name for p in work.iterdir()) == before


def test_atomic_file_rechecks_the_target_before_the_rename(tmp_path):
    """A node that appears while the work runs is refused at the rename too, and the temporary file goes."""
    out = tmp_path / "o.json"
    with pytest.raises(InputError, match="not a regular file"), jsonio.atomic_file(out) as tmp:
        Path(tmp).write_text("{}")
        os.mkfifo(out)
    assert stat.S_ISFIFO(os.lstat(out).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["o.json"]


def test_symlink_to_a_device_is_refused_and_a_symlink_to_a_file_is_written(tmp_path):
    link = tmp_path / "dev.json"
    link.symlink_to(_char_device(tmp_path / "node"))
    with pytest.raises(InputError, match="character device"):
        jsonio.write_json(link, {"a": 1})
    assert link.is_symlink()
    target = tmp_path / "t.json"
    target.write_text("old")
    (tmp_path / "file.json").symlink_to(target)
    jsonio.write_json(tmp_path / "file.json", {"a": 1})
    assert json.loads((tmp_path / "file.json").read_text()) == {"a": 1}


def test_write_json_refuses_and_leaves_nothing(tmp_path):
    for bad in ("", tmp_path, "/proc/x.json"):
        with pytest.raises(InputError, match="output"):
            jsonio.write_json(bad, {"a": 1})
    assert list(tmp_path.iterdir()) == []


def test_files_get_the_users_umask(tmp_path):
    old = os.umask(0o027)
    try:
        jsonio.write_json(tmp_path / "x.json", {"a": 1})
        jsonio.write_json(tmp_path / "x.json.gz", {"a": 1})
    finally:
        os.umask(old)
    for name in ("x.json", "x.json.gz"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o640


def test_gzip_output_is_deterministic(tmp_path):
    jsonio.write_json(tmp_path / "a.json.gz", {"a": 1})
    jsonio.write_json(tmp_path / "b.json.gz", {"a": 1})
    assert (tmp_path / "a.json.gz").read_bytes() == (tmp_path / "b.json.gz").read_bytes()


# ---- caps (issue 24, items 2 and 6) ---------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_declares_caps_that_its_model_enforces(family):
    spec = api.family(family)
    assert {"jobs", "servers", "horizon"} <= set(spec.limits)
    schema = spec.instance_type.model_json_schema()
    props = schema["properties"]
    assert props[jobs_key(family)]["maxItems"] == spec.limits["jobs"]
    assert props["horizon"]["maximum"] == spec.limits["horizon"]


@pytest.mark.parametrize("family", FAMILIES)
def test_generate_above_a_cap_exits_2_naming_the_option_before_drawing(family, tmp_path, capsys, monkeypatch):
    spec = api.family(family)
    drawn = []

    @functools.wraps(spec.generate)  # the same signature: the family's options stay known
    def spy(*args, **kwargs):
        drawn.append(1)

    monkeypatch.setitem(spec.__dict__, "generate", spy)  # a frozen dataclass
    for option, cap in spec.limits.items():
        out = tmp_path / "g.json"
        assert cli("generate", family, f"--{option}", cap + 1, "-o", out) == 2
        err = capsys.readouterr().err
        assert_clean_error(err, f"{option}: must be <= {cap:,}")
        assert "ValidationError" not in err and "pydantic" not in err
        assert not out.exists()
    assert drawn == []


def test_issue_examples_of_generate_ranges(tmp_path, capsys):
    assert cli("generate", "hetero", "--jobs", 10001, "-o", tmp_path / "a.json") == 2
    assert_clean_error(capsys.readouterr().err, "jobs:")
    assert cli("generate", "edgecloud", "--horizon", 100_000_000, "-o", tmp_path / "b.json") == 2
    assert_clean_error(capsys.readouterr().err, "horizon:")
    assert cli("generate", "okita", "--jobs", 1_000_000, "-o", tmp_path / "c.json") == 2
    assert_clean_error(capsys.readouterr().err, "jobs:")
    assert list(tmp_path.iterdir()) == []


def test_okita_instance_above_the_job_cap_is_refused_on_load(tmp_path, capsys):
    data, _ = small_instance("okita", tmp_path)
    cap = api.family("okita").limits["jobs"]
    job = data["jobs"][0]
    data["jobs"] = [{**job, "id": i} for i in range(cap + 1)]
    assert cli("run", "online", write(tmp_path / "many.json", data)) == 2
    assert_clean_error(capsys.readouterr().err, "instance.jobs", f"{cap}")
