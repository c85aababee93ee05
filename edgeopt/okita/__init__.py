"""okita: Han, Zhou, Pang, Tan, Cao, "Online Scheduling Unbiased Distributed Learning over Wireless Edge
Networks".

UDL jobs whose training data is spread over edge sites choose, slot by slot, their workers per site,
their PS site and which chunks move where; the objective is a latency cost f_i(t_i - a_i + 1) plus
the bandwidth cost (1) of data transfer and worker-PS parameter exchange. Modules: `instance` (data
model + generators), `schedule` (schedule model, validator of program (2), objective), `online`
(Okita: Alg. 1 with OSF, PA (Alg. 2) and DTA (Alg. 3)), `baselines` (FIFO and DRF of Sec. V-A, and
`oasis_latency`, our stronger OASiS variant), `oasis` (OASiS of Sec. V-A as Bao et al. describe it).
"""

from __future__ import annotations

# Importing the algorithm modules registers them (edgeopt.core.register).
from edgeopt.okita import baselines, oasis, online  # noqa: F401
from edgeopt.okita.instance import Instance, generate
from edgeopt.okita.schedule import Schedule, objective, validate
from edgeopt.okita.spec import FAMILY

__all__ = ["FAMILY", "Instance", "Schedule", "generate", "objective", "validate"]
