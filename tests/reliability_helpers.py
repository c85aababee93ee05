"""Shared helpers of the reliability tests: run the CLI in-process and read its exit code and streams."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgeopt import api
from edgeopt.cli import main

FAMILIES = ("hetero", "edgecloud", "preemptive")


def cli(*args: Any) -> int:
    """Exit code of ``edgeopt ARGS`` run in this process."""
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    return int(exc.value.code or 0)


def small_instance(family: str, tmp_path: Path, **changes: Any) -> tuple[dict, Path]:
    """The small preset of ``family`` (seed 1) as JSON data, written to a file."""
    data = api.generate(family, "small", seed=1).model_dump(mode="json")
    data.update(changes)
    path = tmp_path / f"{family}.json"
    path.write_text(json.dumps(data))
    return data, path


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def assert_clean_error(err: str, *fragments: str) -> None:
    """An error on stderr: a one-line summary first (``error: field: ...``), no traceback."""
    assert "Traceback" not in err, err
    first = err.strip().splitlines()[0]
    assert first.startswith("error: "), err
    for f in fragments:
        assert f in first, (f, err)
