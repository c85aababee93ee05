"""preemptive: Wang et al., "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud Networks".

Total job completion time of data-parallel ML jobs whose data chunks are
dispatched once to workers on edge servers or the cloud and then trained with
worker-level preemption (MINLP (2)); the fractional flow time ILP (4) is its
lower bound (Lemma 1). Modules: `instance` (data model + generators),
`schedule` (schedule model, validator of (2)/(4), both objectives, preemption
counts), `online` (A_online = A_greedy + A_ps, with its dual values),
`baselines` (A_online-E, SRTF, Tiresias-L, BatchSche of Sec. V, and the
elastic SRTF / Tiresias-L variants that are not the paper's), `offline` (``offline_fill``, ours: an
offline list scheduler, an upper end for the certified interval and a start for the search).
"""

from __future__ import annotations

# Importing the algorithm modules registers them.
from edgeopt.preemptive import baselines, offline, online  # noqa: F401
from edgeopt.preemptive.instance import Instance, generate
from edgeopt.preemptive.schedule import Schedule, fractional_flow_time, objective, validate
from edgeopt.preemptive.spec import FAMILY

__all__ = ["FAMILY", "Instance", "Schedule", "fractional_flow_time", "generate", "objective", "validate"]
