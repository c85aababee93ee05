"""preemptive: certified lower bound (``lp4_jct``), best complete schedule and gap.

    .venv/bin/python benchmarks/preemptive_gap.py --time-limit 300 --out benchmarks/results

Regimes: ``paper`` (Sec. V-A as printed), and ``congested`` = the ``paper`` generator with the
``far_cloud`` regime (cloud upload delay of one to two chunk times, so the edge servers are where
the jobs compete). See ``gap_common.py``.
"""

from gap_common import main

REGIMES = {"paper": ("paper", {}), "congested": ("paper", {"regime": "far_cloud"})}

if __name__ == "__main__":
    main("preemptive", REGIMES)  # every non-relaxed registered algorithm
