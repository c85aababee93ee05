"""Okita under the alternative readings of its garbled or silent passages, at the paper preset, next to
both OASiS versions (``oasis_latency``, ours, is the strongest baseline here): which reading moves the
total cost, and by how much. Mean, standard deviation, min and max over the seeds, and each seed's total.

    .venv/bin/python benchmarks/okita_readings.py --seeds 0-9 --out benchmarks/results

Regime: ``paper`` preset (R = 50, I = 100, T = 150, exponential cost, arrivals uniform in [0, 50)).
Readings: ``delay_rule`` listing / tentative (Alg. 1 line 17), beta2 = 0 (eq. (6) without its
bandwidth term, which is unnormalised: pi q / (R-1) summed over sites is about 15 while the other two
terms lie in [0, 1], so with beta = 1 it alone orders the sites), beta2 = 1/15 (the same term brought to
the others' scale).
"""

from __future__ import annotations

import json
import statistics

from edgeopt import api
from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import Status
from edgeopt.okita import FAMILY, generate

VARIANTS = {
    "okita (defaults)": ("online", {}),
    "okita delay_rule=tentative": ("online", {"delay_rule": "tentative"}),
    "okita beta2=0": ("online", {"beta2": 0.0}),
    "okita beta2=1/15": ("online", {"beta2": 1 / 15}),
    "oasis (paper's)": ("oasis", {}),
    "oasis_latency (ours)": ("oasis_latency", {}),
}


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-9")
    args = ap.parse_args()
    insts = [(s, generate("paper", seed=s)) for s in args.seeds]
    rows = {}
    for label, (name, params) in VARIANTS.items():
        tots, parts = [], {"latency": [], "transfer": [], "exchange": []}
        for seed, inst in insts:
            res = api.run(name, inst, seed=seed, **params)
            assert not FAMILY.check_result(inst, res) and res.status == Status.FEASIBLE, label
            tots.append(res.objective)
            for k, v in parts.items():
                v.append(res.extra[k])
        rows[label] = {"total_mean": statistics.mean(tots), "total_std": statistics.stdev(tots) if len(tots) > 1 else 0.0,
                       "total_min": min(tots), "total_max": max(tots),
                       **{k: statistics.mean(v) for k, v in parts.items()}, "points": tots}
        print(label, {k: round(v) for k, v in rows[label].items() if k != "points"}, flush=True)
    out = {"setting": "paper preset, exponential cost, arrivals in [0, 50)", "seeds": args.seeds, "rows": rows}
    path = result_path(args.out, "okita_readings.json")
    path.write_text(json.dumps(out, indent=2) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
