"""Rewrite `tests/durations.json` (each test file's seconds, which the root ``conftest.py`` uses to run the
longest files first) from the output of a suite run with ``--durations=0``:

    .venv/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --nbmake tests notebooks \
        --durations=0 > suite.log
    .venv/bin/python tests/update_durations.py suite.log
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path

LINE = re.compile(r"^([0-9.]+)s (?:setup|call|teardown)\s+(\S+)")


def per_file(lines) -> dict[str, float]:
    seconds: dict[str, float] = collections.defaultdict(float)
    for line in lines:
        m = LINE.match(line)
        if m:
            seconds[m.group(2).split("::")[0]] += float(m.group(1))
    return {k: round(v, 1) for k, v in sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0]))}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: update_durations.py SUITE_LOG")
    seconds = per_file(Path(sys.argv[1]).read_text().splitlines())
    if not seconds:
        sys.exit("no --durations lines in the log")
    out = Path(__file__).resolve().parent / "durations.json"
    out.write_text(json.dumps(seconds, indent=0) + "\n")
    print(f"{len(seconds)} files -> {out}")
