"""`run_sweep` from a plain script: a call outside ``if __name__ == "__main__":`` is one clear error before any
worker starts (it was "Nanny failed to start" and 440 lines of worker tracebacks); the guarded call runs."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from edgeopt.core import InputError
from edgeopt.sweep import SweepPoint, _main_test, run_sweep

ROOT = Path(__file__).resolve().parents[1]

BODY = """
from edgeopt.sweep import SweepPoint, run_sweep

def main():
    rows = run_sweep([SweepPoint("edgecloud", "small", seed=s, algorithms=("fifo",)) for s in (0, 1)], n_workers=1)
    print("rows", len(rows), all(r["valid"] for r in rows))
"""


def _script(tmp_path: Path, tail: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "study.py"
    path.write_text(textwrap.dedent(BODY) + textwrap.dedent(tail))
    return subprocess.run([sys.executable, str(path)], check=False, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)


def test_a_call_outside_the_guard_is_one_clear_error_before_any_worker_starts(tmp_path):
    proc = _script(tmp_path, "\nmain()\n")
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"edgeopt.core.errors.InputError: script: run_sweep called at the top level of "
                           f"{tmp_path / 'study.py'}:8: "), last
    assert 'put the call under `if __name__ == "__main__":`' in last
    assert "Nanny" not in proc.stderr and len(proc.stderr.splitlines()) < 20, proc.stderr


def test_the_guarded_call_runs_on_dask(tmp_path):
    proc = _script(tmp_path, '\nif __name__ == "__main__":\n    main()\n')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "rows 2 True"
    assert "8787" not in proc.stderr


@pytest.mark.parametrize("test, sense", [
    ('__name__ == "__main__"', "=="),
    ("'__main__' == __name__", "=="),
    ('__name__ != "__main__"', "!="),
    ('__name__ == "other"', None),
    ("name == '__main__'", None),
    ("__name__ in ('__main__',)", None),
])
def test_the_guard_is_recognised_in_its_usual_spellings(test, sense):
    assert _main_test(ast.parse(test, mode="eval").body) == sense


def test_dashboard_needs_bokeh_and_a_bool():
    pytest.importorskip("dask.distributed")
    points = [SweepPoint("edgecloud", "small", seed=0)]
    with pytest.raises(InputError, match="dashboard"):
        run_sweep(points, dashboard=1)  # type: ignore[arg-type]
    try:
        import bokeh  # noqa: F401
    except ImportError:
        with pytest.raises(InputError, match="dashboard: Dask's dashboard needs bokeh"):
            run_sweep(points, dashboard=True)
