import json

import pytest

from edgeopt.core import InputError, Result, Status, stopwatch
from edgeopt.core.jsonio import dumps, read_json, sha256_of, write_json


def _result(**kw):
    base = {
        "family": "hetero", "algorithm": "online", "status": "feasible", "objective": 12.5, "bound": None,
        "runtime_s": 0.25, "schedule": {"jobs": [{"start": 1}]}, "instance_sha256": "ab" * 32, "extra": {"rejected": []},
    }
    base.update(kw)
    return Result(**base)


def test_json_round_trip_is_lossless():
    r = _result(status=Status.TIME_LIMIT, bound=11.0)
    back = Result.from_json(r.to_json())
    assert back == r
    assert back.status is Status.TIME_LIMIT
    assert back.to_json() == r.to_json()


def test_gap():
    assert _result(objective=10.0, bound=8.0).gap == pytest.approx(0.2)
    assert _result(bound=None).gap is None


def test_negative_runtime_rejected():
    with pytest.raises(ValueError):
        _result(runtime_s=-1.0)


def test_stopwatch_is_non_negative_and_measures():
    import time

    with stopwatch() as t:
        time.sleep(0.01)
    assert 0.009 <= t[0] < 1.0


@pytest.mark.parametrize(
    "mutation, field",
    [
        (lambda d: d.pop("objective"), "result.objective"),
        (lambda d: d.update(status="great"), "result.status"),
        (lambda d: d.update(bogus=1), "result.bogus"),
        (lambda d: d.update(bound="x"), "result.bound"),
        (lambda d: d.update(schedule=[1]), "result.schedule"),
    ],
)
def test_bad_result_files_name_the_field(mutation, field):
    d = _result().to_dict()
    mutation(d)
    with pytest.raises(InputError) as exc:
        Result.from_dict(d)
    assert exc.value.field == field


def test_canonical_json_is_sorted_and_hash_stable():
    a = {"b": 1, "a": [1.0, 2]}
    b = {"a": [1.0, 2], "b": 1}
    assert dumps(a) == dumps(b)
    assert sha256_of(a) == sha256_of(b)
    assert sha256_of(a) != sha256_of({"a": [1.0, 3], "b": 1})
    assert json.loads(dumps({"x": float("inf")})) == {"x": None}


def test_write_json_is_atomic(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    write_json(target, {"ok": 1})
    assert read_json(target) == {"ok": 1}

    class Boom:
        pass

    with pytest.raises(TypeError):
        write_json(target, {"bad": Boom()})
    # the old file is intact and no temporary file is left behind
    assert read_json(target) == {"ok": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_read_json_errors_name_the_input(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        read_json(tmp_path / "missing.json", what="instance")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError) as exc:
        read_json(bad, what="instance")
    assert exc.value.field == "instance" and "line 1" in exc.value.message
