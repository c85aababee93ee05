"""What the built site shows a reader, checked in its HTML: examples in the API reference are highlighted
code without doctest directives, the reference lists the public API only, code is highlighted at build
time, the family pages' equations are math typeset by a MathJax the site serves itself (it must work
offline), and every page is in the navigation. One build (about 6 s) serves the checks."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ("hetero", "edgecloud", "tapfinger", "preemptive")  # okita's page keeps its ASCII equations for now
DISPLAYED = ("hetero", "edgecloud", "preemptive")  # tapfinger's equations sit inside sentences: inline only


def _build(root: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"),
                           "-d", str(site)], cwd=root, env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    proc = _build(ROOT, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text()


def test_api_examples_are_highlighted_code_without_doctest_directives(site):
    api = _page(site, "api")
    assert "doctest" not in api and "+SKIP" not in api
    # the module examples of edgeopt.api and edgeopt.sweep: Pygments' console-session lexer, prompt spans
    blocks = re.findall(r'<div class="language-pycon highlight"><pre>.*?</pre></div>', api, re.DOTALL)
    assert len(blocks) == 2 and all('<span class="gp">&gt;&gt;&gt; </span>' in b for b in blocks)
    assert "&gt;&gt;&gt; " not in re.sub(r'<div class="language-pycon highlight">.*?</div>', "", api, flags=re.DOTALL)
    assert "<blockquote" not in api


def test_api_reference_lists_the_public_api_only(site):
    api = _page(site, "api")
    for helper in ("edgeopt.api.did_you_mean", "edgeopt.sweep.write_rows", "edgeopt.sweep.quarantine_damaged",
                   "edgeopt.sweep.check_store_path", "edgeopt.viz.overlaps_figure",
                   "edgeopt.core.registry.set_exact_methods_provider"):
        assert f'id="{helper}"' not in api, helper
    for public in ("edgeopt.api.generate", "edgeopt.api.solve", "edgeopt.sweep.run_sweep", "edgeopt.sweep.read_sweep",
                   "edgeopt.sweep.SweepPoint", "edgeopt.viz.plot_gantt", "edgeopt.core.registry.register"):
        assert f'id="{public}"' in api, public


def test_code_blocks_are_highlighted_at_build_time(site):
    sweeps = _page(site, "sweeps")
    assert re.search(r'<div class="language-\w+ highlight"><pre><span></span><code><span class="', sweeps)
    assert '<span class="gp">' in _page(site, "api") or '<span class="kn">' in _page(site, "api")


@pytest.mark.parametrize("family", FAMILIES)
def test_family_equations_are_math(site, family):
    page = _page(site, f"families/{family}")
    assert page.count('class="arithmatex"') >= 3, family
    if family in DISPLAYED:
        assert '<div class="arithmatex">\\[' in page  # at least one displayed equation
    assert "assets/mathjax/tex-svg.js" in page and "javascripts/mathjax.js" in page


def test_math_is_served_by_the_site_itself(site):
    assert (site / "assets" / "mathjax" / "tex-svg.js").stat().st_size > 1_000_000
    assert (site / "assets" / "mathjax" / "LICENSE").is_file()
    # components MathJax may load on demand lie beside it (it resolves them from its own script path)
    assert (site / "assets" / "mathjax" / "input" / "tex" / "extensions" / "ams.js").is_file()
    assert (site / "assets" / "mathjax" / "a11y" / "assistive-mml.js").is_file()
    for html in site.rglob("*.html"):
        srcs = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?:)?//[^"]*"', html.read_text())
        assert not srcs, (html, srcs)  # nothing loaded from another host


def test_every_page_is_in_the_navigation(site):
    built = {p.relative_to(ROOT / "docs").with_suffix("").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in built:
        assert f"{page}.md" in nav, page
    assert "Testing" in _page(site, "testing")


def test_a_page_left_out_of_the_navigation_fails_the_build(tmp_path):
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", copy / "docs")
    (copy / "docs" / "stray.md").write_text("# A page nobody linked\n")
    proc = _build(copy, tmp_path / "site")
    assert proc.returncode != 0 and "stray.md" in proc.stderr


def test_the_headless_notebook_commands_of_the_docs_are_installed():
    """README and docs/testing.md tell users to run a notebook with `jupyter execute` or `jupyter nbconvert
    --execute`: both must come with the extras those pages name (nbconvert was missing from `dev`)."""
    import importlib.util
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in ("notebooks", "dev"):
        assert any(req.startswith("nbconvert") for req in extras[extra]), extra
    assert "nbconvert --to notebook --execute" in (ROOT / "docs" / "testing.md").read_text()
    for module in ("nbconvert", "nbclient"):  # `jupyter nbconvert`, `jupyter execute`
        assert importlib.util.find_spec(module) is not None, module
