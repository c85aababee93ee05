"""hetero: Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed Machine Learning Jobs".

Total weighted completion time of ML training jobs that choose their worker and
PS types, their numbers, their placement (colocated or distributed) and their
execution window; PS and Ring-AllReduce architectures. Modules:
`instance` (data model + generators), `schedule` (schedule model, validator of
program (2)/(15), objective), `online` (A_online and its subroutines),
`baselines` (FIFO, DRF of Sec. 7; non-preemptive AntMan and Tiresias),
`preemptive` (AntMan and Tiresias of Sec. 7 with preemption: relaxed), `offline` (``offline_fill``,
ours: an offline list scheduler that gives complete schedules where the online algorithms reject jobs).
"""

from __future__ import annotations

# Importing the algorithm modules registers them (edgeopt.core.register).
from edgeopt.hetero import baselines, offline, online, preemptive  # noqa: F401
from edgeopt.hetero.instance import Instance, generate
from edgeopt.hetero.schedule import Schedule, objective, validate
from edgeopt.hetero.spec import FAMILY

__all__ = ["FAMILY", "Instance", "Schedule", "generate", "objective", "validate"]
