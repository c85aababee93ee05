import json
import os
import stat

import numpy as np
import pytest

from edgeopt.core import InputError
from edgeopt.core.jsonio import dumps, read_json, sha256_of, write_json


def test_dumps_is_canonical_and_strict():
    a = dumps({"b": np.int64(2), "a": [np.float64(0.5), float("nan")]})
    b = dumps({"a": [0.5, None], "b": 2})
    assert a == b
    json.loads(a)  # strict JSON: NaN became null
    assert sha256_of({"x": 1, "y": 2}) == sha256_of({"y": 2, "x": 1})


def test_write_json_is_atomic_and_world_readable(tmp_path):
    """The temporary file of the atomic write is 0600; the result must get the usual umask mode."""
    target = tmp_path / "sub" / "out.json"
    write_json(target, {"k": 1})
    assert read_json(target) == {"k": 1}
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]  # no temporary left behind


def test_write_json_failure_leaves_nothing(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(TypeError):
        write_json(target, {"k": object()})
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("content", [None, "{not json", b"\xff\xfe"])
def test_read_json_errors_name_the_file(tmp_path, content):
    path = tmp_path / "bad.json"
    if isinstance(content, str):
        path.write_text(content)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(InputError, match="bad.json"):
        read_json(path)


def test_input_error_survives_pickling_with_field_message_and_details():
    import pickle

    from edgeopt.core import InputError

    err = InputError("jobs.3.epochs", "must be positive", details=["jobs.3.epochs: must be positive", "x: y"])
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, InputError)
    assert (back.field, back.message, back.details, str(back)) == (err.field, err.message, err.details, str(err))


def test_depth_check_in_chunks_equals_the_one_pass_check(monkeypatch):
    """`_depth_ok` scans in chunks (bounded memory); it decides as one pass over the whole text does."""
    import random

    import numpy as np

    from edgeopt.core import jsonio

    def one_pass(text: str, limit: int) -> bool:
        raw = np.frombuffer(jsonio._STRING.sub("", text).encode(), dtype=np.uint8)
        step = np.isin(raw, (ord("["), ord("{"))).astype(np.int64) - np.isin(raw, (ord("]"), ord("}")))
        return raw.size == 0 or int(np.cumsum(step).max()) <= limit

    monkeypatch.setattr(jsonio, "_DEPTH_CHUNK", 7)
    rng = random.Random(0)
    for _ in range(2000):
        text = "".join(rng.choice('[]{}"a\\,') for _ in range(rng.randint(0, 120)))
        for limit in (0, 1, 2, 4):
            assert jsonio._depth_ok(text, limit) == one_pass(text, limit), (text, limit)
    assert not jsonio._depth_ok("[" * 10 + "]" * 10, 9) and jsonio._depth_ok("[" * 10 + "]" * 10, 10)
