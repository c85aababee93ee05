"""okita: certified lower bound (``worker_lp``), best complete schedule and gap.

    .venv/bin/python benchmarks/okita_gap.py --time-limit 300 --out benchmarks/results

Regimes: ``paper`` (100 jobs, 50 sites, T = 150, exponential latency cost) and ``congested`` = the
same generator with 150 jobs. See ``gap_common.py``.
"""

from gap_common import main

REGIMES = {"paper": ("paper", {}), "congested": ("paper", {"jobs": 150})}

if __name__ == "__main__":
    main("okita", REGIMES)  # every non-relaxed registered algorithm
