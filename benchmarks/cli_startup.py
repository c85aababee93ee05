"""Start-up and fixed cost of the ``edgeopt`` command: ``--version``, ``--help``, ``algorithms`` (target < 0.3 s
CPU) and a small ``solve`` (edgecloud ``small`` preset, seed 1: the solver itself takes about 0.03 s, so the
rest is fixed cost).

Each command runs ``--repeat`` times in a fresh interpreter (as a user types it); the table gives the
median CPU time of the child (user + system, from ``resource.getrusage(RUSAGE_CHILDREN)``), the median
wall time and the peak RSS. CPU time is the number to compare: on a shared machine the wall time
includes waiting for a core. ``--source DIR`` measures another checkout (e.g. an older commit
exported with ``git archive REV | tar -x -C DIR``), to report before/after.

``--breakdown`` also says where a small MILP solve's CPU time goes, stage by stage, in one fresh
interpreter (edgecloud and hetero ``small``, seed 1): importing the CLI, the library, the family (loading
the instance), Pyomo (``pyomo.core``, what the models import) and the family's models, then the solve, split by the model's own timings (taken
in CPU seconds there: ``time.perf_counter`` is replaced by ``time.process_time`` in that process).

    .venv/bin/python benchmarks/cli_startup.py --repeat 5 --breakdown
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
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLVE_FAMILY = "edgecloud"
BREAKDOWN_FAMILIES = ("edgecloud", "hetero")


def commands(instance: Path, result: Path) -> list[list[str]]:
    solve = ["solve", str(instance), "-o", str(result), "--method"]
    return [["--version"], ["--help"], ["algorithms"], ["algorithms", "hetero"], [*solve, "milp"],
            [*solve, "cpsat"]]


def label(args: list[str]) -> str:
    """The command as the table shows it (the instance by its family, not its temporary path)."""
    if args[0] == "solve":
        return f"edgeopt solve {SOLVE_FAMILY}-small.json --method {args[-1]}"
    return "edgeopt " + " ".join(args)


def _cli(args: list[str], source: Path, **kwargs: object) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(source))
    return subprocess.run([sys.executable, "-c", "from edgeopt.cli import main; main()", *args], env=env,
                          check=True, cwd=source, **kwargs)


def measure(args: list[str], source: Path, repeat: int) -> dict:
    cpu, wall, rss = [], [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        _cli(args, source, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        rss.append(after.ru_maxrss / 1024)  # largest child so far, MiB
    return {"command": label(args), "cpu_s": round(statistics.median(cpu), 3),
            "wall_s": round(statistics.median(wall), 3), "peak_rss_mib": round(max(rss), 1), "runs": repeat}


#: Run in a fresh interpreter: CPU seconds of each stage of a small MILP solve, as JSON on the last line.
STAGES = """
import importlib, json, sys, time
path = sys.argv[1]
stages, t = {}, time.process_time()
def lap(name):
    global t
    now = time.process_time()
    stages[name] = round(now - t, 4)
    t = now
import edgeopt.cli
lap("import the CLI (typer, rich)")
from edgeopt import api
lap("import the library (numpy, pydantic)")
inst = api.load(path)
lap("load the instance (imports the family)")
import highspy
import pyomo.core
from pyomo.contrib.solver.solvers import highs
lap("import Pyomo (core), its HiGHS interface, highspy")
importlib.import_module("formulations." + inst.family)
lap("import the family's exact models (rest)")
time.perf_counter = time.process_time  # the model's own timings, in CPU seconds
result = api.solve(inst, method="milp", time_limit=60)
lap("solve")
result.save(path + ".result.json")
lap("write the result")
timings = result.extra.get("timings", {})
build, translate, total = timings.get("build_s", 0.0), timings.get("translate_s", 0.0), timings.get("solve_s", 0.0)
solve = stages.pop("solve")
stages["solve: build the Pyomo model"] = round(build, 4)
stages["solve: translate Pyomo to HiGHS"] = round(translate, 4)
stages["solve: HiGHS"] = round(total - translate, 4)
stages["solve: size estimate, validation, rest"] = round(solve - total - build, 4)
print(json.dumps({"stages": stages, "status": result.status.value,
                  "modules": sorted(m for m in ("ortools", "pandas", "scipy", "torch") if m in sys.modules)}))
"""


def breakdown(instance: Path, source: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(source))
    out = subprocess.run([sys.executable, "-c", STAGES, str(instance)], env=env, check=True, cwd=source,
                         capture_output=True, text=True).stdout.strip().splitlines()[-1]
    data = json.loads(out)
    stages = data["stages"]
    pyomo = sum(v for k, v in stages.items() if "Pyomo" in k)
    total = sum(stages.values())
    data.update(total_cpu_s=round(total, 3), pyomo_cpu_s=round(pyomo, 3), pyomo_share=round(pyomo / total, 3))
    return data


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--source", type=Path, default=ROOT, help="checkout whose edgeopt to measure")
    ap.add_argument("--label", default="current")
    ap.add_argument("--breakdown", action="store_true", help="also the stages of a small MILP solve")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    a = ap.parse_args(argv)
    source = a.source.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for family in {SOLVE_FAMILY, *(BREAKDOWN_FAMILIES if a.breakdown else ())}:
            files[family] = Path(tmp) / f"{family}-small.json"
            _cli(["generate", family, "--preset", "small", "--seed", "1", "-o", str(files[family])], source,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rows = [measure(c, source, a.repeat) for c in commands(files[SOLVE_FAMILY], Path(tmp) / "result.json")]
        stages = {f: breakdown(files[f], source) for f in BREAKDOWN_FAMILIES} if a.breakdown else {}
    print(f"{'command':50s} {'cpu s':>7s} {'wall s':>7s} {'peak MiB':>9s}   ({a.label}, median of {a.repeat})")
    for r in rows:
        print(f"{r['command']:50s} {r['cpu_s']:7.3f} {r['wall_s']:7.3f} {r['peak_rss_mib']:9.1f}")
    for family, data in stages.items():
        print(f"\nwhere the CPU time of `edgeopt solve {family}-small.json --method milp` goes "
              f"({data['status']}; also loaded: {', '.join(data['modules']) or 'none'} of ortools, pandas, scipy, torch)")
        for name, seconds in data["stages"].items():
            print(f"  {name:50s} {seconds:7.3f}")
        print(f"  {'total':50s} {data['total_cpu_s']:7.3f}   Pyomo (import, build, translate): "
              f"{data['pyomo_cpu_s']:.3f} s = {data['pyomo_share']:.0%}")
    a.out.mkdir(parents=True, exist_ok=True)
    path = a.out / f"cli_startup_{a.label}.json"
    path.write_text(json.dumps({"label": a.label, "source": str(a.source), "rows": rows, "breakdown": stages},
                               indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
