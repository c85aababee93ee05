"""Public ML-cluster job traces: loaders into one typed table, statistics, and trace-driven instances.

>>> from edgeopt import traces
>>> jobs = traces.load_jobs(traces.shipped_itp_path())          # doctest: +SKIP
>>> week = traces.window(jobs, cluster="cluster04", start_s=0, end_s=7 * 86400)  # doctest: +SKIP

The table's schema (`JOB_COLUMNS`, units in the column names) is documented in `edgeopt.traces.loaders`.
"""

import importlib
from typing import Any

# The names below are loaded on first use (PEP 562): `edgeopt.cli` registers the trace commands, and
# importing pandas for them at start-up would make `edgeopt --version` pay for it.
_WHERE = {
    **dict.fromkeys(
        ["JOB_COLUMNS", "JOB_LOADERS", "MACHINE_COLUMNS", "MACHINE_LOADERS", "detect_format",
         "load_alibaba_jobs", "load_alibaba_machines", "load_helios", "load_itp", "load_jobs",
         "load_machines", "load_philly_jobs", "load_philly_machines", "shipped_itp_path"],
        "edgeopt.traces.loaders",
    ),
    "parse_window": "edgeopt.traces.select",
    "window": "edgeopt.traces.select",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'edgeopt.traces' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "JOB_COLUMNS",
    "JOB_LOADERS",
    "MACHINE_COLUMNS",
    "MACHINE_LOADERS",
    "detect_format",
    "load_alibaba_jobs",
    "load_alibaba_machines",
    "load_helios",
    "load_itp",
    "load_jobs",
    "load_machines",
    "load_philly_jobs",
    "load_philly_machines",
    "parse_window",
    "shipped_itp_path",
    "window",
]
