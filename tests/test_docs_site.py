"""`make docs-site` builds the MkDocs site with --strict (issue 21, section 6): it passes on the docs as
they are, and a broken link fails it (so the check means something)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _build(root: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"),
                           "-d", str(site)], cwd=root, env=env, capture_output=True, text=True, check=False)


def test_docs_site_builds_strict(tmp_path):
    proc = _build(ROOT, tmp_path / "site")
    assert proc.returncode == 0, proc.stderr[-3000:]
    api_page = (tmp_path / "site" / "api" / "index.html").read_text()
    assert "plot_schedule" in api_page and "ratio_to_optimum" in api_page  # generated from the docstrings
    for family in ("hetero", "edgecloud", "tapfinger", "preemptive", "okita"):
        assert (tmp_path / "site" / "families" / family / "index.html").exists()


def test_a_broken_link_fails_the_build(tmp_path):
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", copy / "docs")
    (copy / "docs" / "index.md").write_text((ROOT / "docs" / "index.md").read_text()
                                            + "\nSee [nothing](families/no_such_page.md).\n")
    proc = _build(copy, tmp_path / "site")
    assert proc.returncode != 0 and "no_such_page.md" in proc.stderr
