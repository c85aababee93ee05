"""edgecloud: certified lower bound (``ti_lp``), best complete schedule and gap.

    .venv/bin/python benchmarks/edgecloud_gap.py --time-limit 300 --out benchmarks/results

Regimes: ``paper`` (arrivals over T/1.5, T = 6144) and ``congested`` = the ``paper_compact`` preset
(the same 200 jobs arriving in [1, 128], T = 4096). See ``gap_common.py``.
"""

from gap_common import main

REGIMES = {"paper": ("paper", {}), "congested": ("paper_compact", {})}

if __name__ == "__main__":
    main("edgecloud", REGIMES)  # every non-relaxed registered algorithm
