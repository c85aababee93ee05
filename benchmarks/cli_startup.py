"""Start-up cost of the ``edgeopt`` command: ``--version``, ``--help``, ``algorithms`` (target < 0.3 s).

Each command runs ``--repeat`` times in a fresh interpreter (as a user types it); the table gives the
median CPU time of the child (user + system, from ``resource.getrusage(RUSAGE_CHILDREN)``), the median
wall time and the peak RSS. CPU time is the number to compare: on a shared machine the wall time
includes waiting for a core. ``--source DIR`` measures another checkout (e.g. an older commit
exported with ``git archive REV | tar -x -C DIR``), to report before/after.

    .venv/bin/python benchmarks/cli_startup.py --repeat 5
    .venv/bin/python benchmarks/cli_startup.py --source /tmp/before --label before
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (["--version"], ["--help"], ["algorithms"], ["algorithms", "hetero"])


def measure(args: list[str], source: Path, repeat: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(source))
    cpu, wall, rss = [], [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from edgeopt.cli import main; main()", *args], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=source)
        wall.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        rss.append(after.ru_maxrss / 1024)  # largest child so far, MiB
    return {"command": "edgeopt " + " ".join(args), "cpu_s": round(statistics.median(cpu), 3),
            "wall_s": round(statistics.median(wall), 3), "peak_rss_mib": round(max(rss), 1), "runs": repeat}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--source", type=Path, default=ROOT, help="checkout whose edgeopt to measure")
    ap.add_argument("--label", default="current")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    a = ap.parse_args(argv)
    rows = [measure(c, a.source.resolve(), a.repeat) for c in COMMANDS]
    print(f"{'command':28s} {'cpu s':>7s} {'wall s':>7s} {'peak MiB':>9s}   ({a.label}, median of {a.repeat})")
    for r in rows:
        print(f"{r['command']:28s} {r['cpu_s']:7.3f} {r['wall_s']:7.3f} {r['peak_rss_mib']:9.1f}")
    a.out.mkdir(parents=True, exist_ok=True)
    path = a.out / f"cli_startup_{a.label}.json"
    path.write_text(json.dumps({"label": a.label, "source": str(a.source), "rows": rows}, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
