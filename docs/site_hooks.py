"""MkDocs hook of `make docs-site`: a link from docs/ to a file of the repository outside docs/ (e.g.
``../benchmarks/README.md``) is not part of the site; when that file exists, the link becomes the file's
repository path in code font. A link to a file that exists nowhere stays a link, so ``--strict`` fails."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[([^\]]+)\]\((\.\./[^)#\s]+)(#[^)]*)?\)")


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 - MkDocs' hook signature
    here = (Path(config["docs_dir"]) / page.file.src_path).parent

    def outside(m: re.Match) -> str:
        target = (here / m.group(2)).resolve()
        if ROOT in target.parents and Path(config["docs_dir"]).resolve() not in target.parents and target.exists():
            return f"{m.group(1)} (`{target.relative_to(ROOT)}` in the repository)"
        return m.group(0)

    return LINK.sub(outside, markdown)
