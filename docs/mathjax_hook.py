"""MkDocs hook of `make docs-site`: the pages' math (pymdownx.arithmatex) is typeset by MathJax 3 served from
the site itself, so the site works offline and loads nothing from a CDN.

MathJax's files come from the ``django-static-mathjax`` package of the ``dev`` extra (a plain copy of MathJax
3.2.2 as package data; it needs no Django). Only what the pages use is copied: the self-contained SVG
bundle (fonts are paths inside it, so no font files), and the components it may load on demand (TeX
extensions by autoload, the menu's accessibility parts). The build fails with a clear message when the
package is missing: a site whose equations show as raw TeX must not pass ``--strict`` silently.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

SITE_DIR = "assets/mathjax"  # where extra_javascript in mkdocs.yml points
# relative to MathJax's es5/ folder; MathJax finds on-demand components next to the script it was loaded from
WANTED = ("tex-svg.js", "a11y/*.js", "input/tex/extensions/*.js", "ui/*.js")


def mathjax_root() -> Path:
    """MathJax's es5/ folder inside the installed ``mathjax`` package (of django-static-mathjax)."""
    spec = importlib.util.find_spec("mathjax")
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        es5 = Path(root) / "static" / "mathjax" / "es5"
        if (es5 / "tex-svg.js").is_file():
            return es5
    raise PluginError("MathJax not found: install the dev extra (pip install -e '.[dev]', package "
                      "django-static-mathjax), which ships the MathJax files the site serves")


def on_files(files: Files, config) -> Files:  # MkDocs calls it with the MkDocsConfig
    es5 = mathjax_root()
    found = [(path.relative_to(es5).as_posix(), path) for pattern in WANTED for path in sorted(es5.glob(pattern))]
    found.append(("LICENSE", es5.parent / "LICENSE"))  # Apache 2.0: the licence travels with the copy
    for name, path in found:
        files.append(File.generated(config, f"{SITE_DIR}/{name}", abs_src_path=str(path)))
    return files
