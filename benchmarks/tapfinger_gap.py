"""tapfinger: certified lower bound (``ti_lp``), best complete schedule and gap.

    .venv/bin/python benchmarks/tapfinger_gap.py --time-limit 300 --out benchmarks/results

Regimes: ``paper`` (3 clusters, Poisson(2) arrivals) and ``congested`` = the ``paper`` generator with
Poisson(4) arrivals on the same 3 clusters. See ``gap_common.py``.
"""

from gap_common import main

REGIMES = {"paper": ("paper", {}), "congested": ("paper", {"arrival_rate": 4.0})}

if __name__ == "__main__":
    main("tapfinger", REGIMES)  # every non-relaxed registered algorithm
