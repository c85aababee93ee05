"""hetero: certified lower bound (``ti_lp``), best complete schedule and gap, paper and congested presets.

    .venv/bin/python benchmarks/hetero_gap.py --time-limit 120 --out benchmarks/results

Regimes: ``paper`` and ``paper_congested`` (300 jobs, 150 servers, T = 150). See ``gap_common.py``.
"""

from gap_common import main

REGIMES = {"paper": ("paper", {}), "congested": ("paper_congested", {})}

if __name__ == "__main__":
    main("hetero", REGIMES)  # every non-relaxed registered algorithm
