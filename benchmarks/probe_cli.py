"""Probe the `edgeopt` command as a hostile user would, and count what goes wrong.

Three kinds of probe per family (hetero, edgecloud, preemptive, and any other implemented family):

1. *bad input*: instance files with deep nesting, NaN / Infinity / 1e308 / 10**20 in each numeric
   field, jobs outside the horizon, wrong types, several errors at once -> ``run`` and ``solve``
   must exit 2 with an ``error:`` line and write nothing;
2. *extreme but valid input*: 0, 1 and the documented maxima (`edgeopt.core.bounds`), huge horizons
   -> ``run`` and ``solve --time-limit 3`` must exit 0 or 2, within 1.5x the limit + 1 s (plus the
   command's start-up), and a result they write must pass ``validate``;
3. *lies*: results altered so that they claim something false (NaN objective, a bound above the
   objective, a bound on an algorithm's result, a bad runtime, unknown job ids, ``infeasible``
   without a reason or on a feasible instance, a rejected job that fits alone, a wrong objective)
   -> ``validate`` must exit 1 or 2, never 0.

Counted: inputs tried, tracebacks, hangs (no answer within the timeout), wrong exit codes, files
left behind by a failing command, slow answers, and false "valid" answers.

    python benchmarks/probe_cli.py --runs-per-kind 40 --jobs 4 --out benchmarks/out/probe_cli.json
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import copy
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from edgeopt import api
from edgeopt.core import bounds as B
from edgeopt.core.jsonio import get_path, number_paths, set_path

# (JSON true where a number belongs is left out: pydantic's lax mode reads it as 1, a documented coercion)
HOSTILE_NUMBERS = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 10**20, -(10**20), 2**63, -1, "x", None,
                   [1], {"x": 1}]
EXTREME_INTS = [0, 1, 2, B.MAX_COUNT, B.MAX_HORIZON - 1]
EXTREME_FLOATS = [0.0, B.MIN_MBPS, 1.0, B.MAX_SLOTS_PER_STEP, B.MAX_WEIGHT, B.MAX_MB]
START_UP_S = 20.0  # the command's own start-up (imports): seconds on a 2-core machine under load


def edgeopt(args: list[str], timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "edgeopt.cli", *map(str, args)], env=env, cwd=ROOT,
                           capture_output=True, text=True, timeout=timeout, check=False)
        return {"code": p.returncode, "err": p.stderr[-2000:], "out": p.stdout[-2000:],
                "wall": time.perf_counter() - t0, "hang": False}
    except subprocess.TimeoutExpired:
        return {"code": None, "err": "", "out": "", "wall": timeout, "hang": True}


def bad_inputs(family: str, rng: random.Random, n: int, tmp: Path) -> list[dict]:
    base = api.generate(family, "small", seed=1).model_dump(mode="json")
    leaves = number_paths(base)
    cases = [("deep nesting", "[" * 5000 + "]" * 5000), ("deep object", '{"a":' * 3000 + "1" + "}" * 3000)]
    jobs = "tasks" if family == "tapfinger" else "jobs"
    d = copy.deepcopy(base)
    d["horizon"] = 12
    d[jobs][0]["arrival"] = 50
    cases.append(("arrival after horizon", json.dumps(d)))
    d = copy.deepcopy(base)
    d["horizon"] = -1
    first, second = {"tapfinger": ("task_type", "arrival"), "okita": ("epochs", "chunk_size_mb")}.get(
        family, ("epochs", "chunks"))
    d[jobs][0][first] = -1 if family == "tapfinger" else 0
    d[jobs][1][second] = "x"
    cases.append(("three errors", json.dumps(d)))
    while len(cases) < n:
        d = copy.deepcopy(base)
        path = rng.choice(leaves)
        value = rng.choice(HOSTILE_NUMBERS)
        set_path(d, path, value)
        cases.append((f"{'.'.join(map(str, path))}={value!r}", json.dumps(d)))
    out = []
    for k, (label, text) in enumerate(cases[:n]):
        f = tmp / f"{family}_bad_{k}.json"
        f.write_text(text)
        out.append({"family": family, "kind": "bad", "label": label, "instance": f})
    return out


def extreme_inputs(family: str, rng: random.Random, n: int, tmp: Path) -> list[dict]:
    out = []
    for k in range(n):
        d = api.generate(family, "small", seed=rng.randrange(10), jobs=rng.randint(1, 4)).model_dump(mode="json")
        leaves = number_paths(d)
        changes = []
        for path in rng.sample(leaves, min(len(leaves), rng.randint(1, 3))):
            value = rng.choice(EXTREME_FLOATS if isinstance(get_path(d, path), float) else EXTREME_INTS)
            set_path(d, path, value)
            changes.append(f"{'.'.join(map(str, path))}={value}")
        if rng.random() < 0.3:
            d["horizon"] = rng.choice([1, 10**5, 10**6, B.MAX_HORIZON])
            changes.append(f"horizon={d['horizon']}")
        if rng.random() < 0.1:
            jobs = "tasks" if family == "tapfinger" else "jobs"
            d[jobs] = []
            changes.append(f"{jobs}=[]")
        f = tmp / f"{family}_ext_{k}.json"
        f.write_text(json.dumps(d))
        out.append({"family": family, "kind": "extreme", "label": "; ".join(changes), "instance": f})
    return out


def lies(family: str, rng: random.Random, n: int, tmp: Path) -> list[dict]:
    inst = api.generate(family, "small", seed=rng.randrange(5))
    ipath = tmp / f"{family}_lie_instance.json"
    ipath.write_text(json.dumps(inst.model_dump(mode="json")))
    algo = api.run("online", inst).to_dict()
    exact = api.solve(inst, method="cpsat", time_limit=20).to_dict()
    n_jobs = len(inst.jobs)

    def infeasible(extra):
        return {**algo, "algorithm": "milp", "status": "infeasible", "objective": None, "bound": None,
                "schedule": None, "extra": extra}

    makers = [
        ("NaN objective", lambda: {**algo, "objective": float("nan")}),
        ("Infinity objective", lambda: {**algo, "objective": float("inf")}),
        ("objective too low", lambda: {**algo, "objective": algo["objective"] * 0.5}),
        ("bound above objective", lambda: {**exact, "bound": exact["objective"] + 1}),
        ("bound on an algorithm", lambda: {**algo, "bound": algo["objective"] * 0.9}),
        ("algorithm claims optimal", lambda: {**algo, "status": "optimal"}),
        ("runtime -1", lambda: {**algo, "runtime_s": -1}),
        ("runtime 'fast'", lambda: {**algo, "runtime_s": "fast"}),
        ("runtime null", lambda: {**algo, "runtime_s": None}),
        ("infeasible, no reason", lambda: infeasible({})),
        ("infeasible on a feasible instance", lambda: infeasible({"reason": "trust me"})),
        ("rejected job fits alone", lambda: infeasible({"reason": "job 0 fits nowhere", "rejected": [0]})),
        ("partial without rejected", lambda: {**algo, "status": "partial"}),
        ("rejected unknown job", lambda: {**algo, "status": "partial", "extra": {"rejected": [n_jobs + 50]}}),
        ("unknown job in schedule", lambda: _rename_job(algo, 99)),
        ("other instance hash", lambda: {**algo, "instance_sha256": "0" * 64}),
        ("schedule dropped, status feasible", lambda: {**algo, "schedule": None}),
    ]
    out = []
    for k in range(n):
        label, make = makers[k % len(makers)]
        f = tmp / f"{family}_lie_{k}.json"
        f.write_text(json.dumps(make()))
        out.append({"family": family, "kind": "lie", "label": label, "instance": ipath, "result": f})
    return out


def _rename_job(res: dict, new_id: int) -> dict:
    res = copy.deepcopy(res)
    sched = res["schedule"]
    for key in ("jobs", "placements", "schedule"):
        if isinstance(sched.get(key), list) and sched[key]:
            first = sched[key][0]
            for idk in ("job", "task", "id", "job_id"):
                if idk in first:
                    first[idk] = new_id
                    return res
    return res


def probe(case: dict, tmp: Path, timeout: float) -> list[dict]:
    rows = []
    fam = case["family"]
    if case["kind"] == "lie":
        r = edgeopt(["validate", case["instance"], case["result"]], timeout)
        rows.append({**case, "command": "validate", **r, "false_valid": r["code"] == 0,
                     "bad_code": r["code"] not in (1, 2)})
        return rows
    algos = sorted(api.algorithms(fam))
    out = tmp / f"out_{os.getpid()}_{time.perf_counter_ns()}.json"
    for cmd in (["run", random.choice(algos), case["instance"]],
                ["solve", case["instance"], "--method", random.choice(["milp", "cpsat"]), "--time-limit", "3"]):
        out.unlink(missing_ok=True)
        r = edgeopt([*cmd, "-o", out], timeout)
        row = {**case, "command": " ".join(map(str, cmd[:2])), **r, "false_valid": False,
               "bad_code": r["code"] not in ((2,) if case["kind"] == "bad" else (0, 2)),
               "left_file": r["code"] not in (0, None) and out.exists(),
               "slow": cmd[0] == "solve" and r["wall"] > 1.5 * 3 + 1 + START_UP_S}
        if r["code"] == 0 and out.exists() and cmd[0] == "solve":
            # the limit bounds the call (api.solve); the command's start-up is measured apart
            row["slow"] = json.loads(out.read_text())["runtime_s"] > 1.5 * 3 + 1
        if r["code"] == 0 and out.exists():
            v = edgeopt(["validate", case["instance"], out], timeout)
            row["validates"] = v["code"] == 0
            row["bad_code"] = row["bad_code"] or v["code"] != 0
            res = json.loads(out.read_text())
            if res["status"] in ("partial", "infeasible"):
                ok = bool(res["extra"].get("rejected") or res["extra"].get("reason"))
                row["bad_code"] = row["bad_code"] or not ok
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs-per-kind", type=int, default=30, help="inputs per family and kind")
    ap.add_argument("--jobs", type=int, default=4, help="commands run at once")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds before a command counts as hung")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "probe_cli.json")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    random.seed(args.seed)
    families = [s.name for s in api.families()]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cases = []
        for fam in families:
            cases += bad_inputs(fam, rng, args.runs_per_kind, tmp)
            cases += extreme_inputs(fam, rng, args.runs_per_kind, tmp)
            cases += lies(fam, rng, args.runs_per_kind, tmp)
        rows: list[dict] = []
        with cf.ThreadPoolExecutor(args.jobs) as pool:
            for res in pool.map(lambda c: probe(c, tmp, args.timeout), cases):
                rows += res
    for r in rows:
        r["traceback"] = "Traceback" in r["err"] or "Traceback" in r["out"]
        r["instance"] = str(r["instance"])
        r.pop("result", None)
    summary = {
        "families": families,
        "inputs_tried": len(cases),
        "commands_run": len(rows),
        "tracebacks": sum(r["traceback"] for r in rows),
        "hangs": sum(r["hang"] for r in rows),
        "false_valid": sum(r["false_valid"] for r in rows),
        "wrong_exit_codes": sum(bool(r["bad_code"]) for r in rows),
        "files_left_behind": sum(bool(r.get("left_file")) for r in rows),
        "slow_solves": sum(bool(r.get("slow")) for r in rows),
        "killed_by_signal": sum(1 for r in rows if isinstance(r["code"], int) and r["code"] < 0),
        "max_solve_wall_s": round(max((r["wall"] for r in rows if r["command"].startswith("solve")), default=0), 2),
    }
    problems = [{k: r[k] for k in ("family", "kind", "label", "command", "code", "err")} for r in rows
                if r["traceback"] or r["hang"] or r["false_valid"] or r["bad_code"] or r.get("left_file")
                or r.get("slow") or (isinstance(r["code"], int) and r["code"] < 0)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": summary, "problems": problems}, indent=2, default=str,
                                   allow_nan=False) if all(math.isfinite(r["wall"]) for r in rows) else "{}")
    print(json.dumps(summary, indent=2))
    for p in problems[:40]:
        print(p["family"], p["kind"], p["label"][:80], p["command"], p["code"], p["err"].strip()[-300:])


if __name__ == "__main__":
    main()
