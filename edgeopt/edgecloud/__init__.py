"""edgecloud: She et al., "Online Scheduling of Machine Learning Jobs in Edge-Cloud Networks".

Importing the package registers its algorithms (``online``, the baselines).
"""

from edgeopt.edgecloud.instance import Instance, generate
from edgeopt.edgecloud.schedule import Schedule, objective, validate
from edgeopt.edgecloud.spec import FAMILY

__all__ = ["FAMILY", "Instance", "Schedule", "generate", "objective", "validate"]

# Imported for their side effect: they register `online` and the baselines.
from edgeopt.edgecloud import baselines as baselines
from edgeopt.edgecloud import batchsche as batchsche
from edgeopt.edgecloud import offline as offline
from edgeopt.edgecloud import online as online
