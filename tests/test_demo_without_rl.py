"""`edgeopt demo` without the ``rl`` extra says which algorithms it skipped and why.

Without torch, tapfinger's learned ``online`` and ``vanilla_marl`` are not registered, and the demo's
tapfinger table simply lacked them: a reader could not tell the paper's algorithm was missing.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.test_notebooks_without_rl import BLOCK, ROOT


def test_demo_notes_the_learned_policy_it_skipped_without_the_rl_extra(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCK)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "COLUMNS": "200"}
    run = subprocess.run([sys.executable, "-m", "edgeopt.cli", "demo", "--family", "tapfinger"], check=False,
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    notes = [ln for ln in run.stdout.splitlines() if ln.startswith("note: tapfinger")]
    assert len(notes) == 1, run.stdout
    assert "online" in notes[0] and "vanilla_marl" in notes[0] and "skipped" in notes[0]
    assert "pip install 'edgeopt[rl]'" in notes[0]
    assert "│ online " not in run.stdout  # the table itself has no row of the learned policy
