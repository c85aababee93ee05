"""Public ML-cluster job traces: loaders into one typed table, statistics, and trace-driven instances.

>>> from edgeopt import traces
>>> jobs = traces.load_jobs(traces.shipped_itp_path())          # doctest: +SKIP
>>> week = traces.window(jobs, cluster="cluster04", start_s=0, end_s=7 * 86400)  # doctest: +SKIP

The table's schema (`JOB_COLUMNS`, units in the column names) is documented in `edgeopt.traces.loaders`.
"""

from edgeopt.traces.loaders import (
    JOB_COLUMNS,
    JOB_LOADERS,
    MACHINE_COLUMNS,
    MACHINE_LOADERS,
    detect_format,
    load_alibaba_jobs,
    load_alibaba_machines,
    load_helios,
    load_itp,
    load_jobs,
    load_machines,
    load_philly_jobs,
    load_philly_machines,
    shipped_itp_path,
)
from edgeopt.traces.select import parse_window, window

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
