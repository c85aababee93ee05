"""Before / after the large-neighbourhood search: best schedule from the warm start alone, then
``solve --warm-start best --lns`` (MIP starts / hints in every window), and the gap to the certified
bound, per family and regime (the regimes of ``benchmarks/<family>_gap.py``).

    .venv/bin/python benchmarks/lns_gap.py hetero --regimes paper --time-limit 180 --out benchmarks/results

Reports CPU seconds (``time.process_time``, this process) and peak RSS; the machine these numbers
come from was shared, so the wall-clock limit bought less CPU than it says: compare CPU seconds.
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgeopt import api
from edgeopt.bench import cpu_seconds, result_path
from edgeopt.core.jsonio import write_json


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("family")
    ap.add_argument("--regimes", default="paper,congested")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--method", default="cpsat", help="exact model of the LNS windows")
    ap.add_argument("--time-limit", type=float, default=180.0, help="seconds for the whole LNS call")
    ap.add_argument("--sub-limit", type=float, default=10.0, help="seconds per window")
    ap.add_argument("--out", default="")
    ap.add_argument("--name", default="", help="result file name (default: <family>_lns.json)")
    args = ap.parse_args(argv)
    regimes = importlib.import_module(f"{args.family}_gap").REGIMES
    rows = []
    for regime in args.regimes.split(","):
        preset, options = regimes[regime]
        inst = api.generate(args.family, preset, seed=args.seed, **options)
        c0, w0 = cpu_seconds(), time.perf_counter()
        row: dict = {"family": args.family, "regime": regime, "preset": preset, "seed": args.seed,
                     "method": args.method, "time_limit_s": args.time_limit}
        try:
            res = api.solve(inst, method=args.method, time_limit=args.time_limit, warm_start="best", lns=True,
                            sub_limit=args.sub_limit)
        except Exception as exc:  # noqa: BLE001 - reported, e.g. no complete warm start
            row["error"] = f"{exc.__class__.__name__}: {exc}"
        else:
            ws = res.extra["warm_start"]
            row.update({
                "warm_start_algorithm": ws["algorithm"], "before": ws["objective"], "after": res.objective,
                "improvement": (ws["objective"] - res.objective) / ws["objective"], "bound": res.bound,
                "bound_method": res.extra.get("bound_method"),
                "gap_before": None if res.bound is None else (ws["objective"] - res.bound) / ws["objective"],
                "gap_after": None if res.bound is None else (res.objective - res.bound) / res.objective,
                "valid": not api.validate(inst, res),
                "lns": {k: v for k, v in res.extra["lns"].items()},
            })
        row["cpu_s"] = round(cpu_seconds() - c0, 2)
        row["wall_s"] = round(time.perf_counter() - w0, 2)
        row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "lns"}), flush=True)
    if args.out:
        # atomic, and refuses a path that exists and is not a regular file
        write_json(result_path(Path(args.out), args.name or f"{args.family}_lns.json"), rows)
    return rows


if __name__ == "__main__":
    main()
