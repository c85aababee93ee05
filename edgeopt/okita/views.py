"""What okita looks like in charts and tables: Gantt bars, resource use, one row per job (the adapters of
`edgeopt.okita.spec.FAMILY`)."""

from __future__ import annotations

from edgeopt.core import GanttBar, JobRow, UsageSeries
from edgeopt.core.views import bar_label
from edgeopt.okita.instance import Instance
from edgeopt.okita.schedule import Schedule, job_parts


def gantt_rows(instance: Instance) -> list[str]:
    """The Gantt row of each site, by index."""
    return [f"site {r}" for r in range(len(instance.sites))]


def gantt(instance: Instance, schedule: Schedule) -> list[GanttBar]:
    """One bar per job, site and slot in which the job has workers or its PS there."""
    bars = []
    for js in schedule.jobs:
        a = instance.jobs[js.job].arrival
        for e in js.slots:
            sites = set(e.workers) | ({e.ps_site} if e.ps_site is not None else set())
            for r in sorted(sites):
                y = e.workers.get(r, 0)
                label = bar_label(js.job, {"w": y, "ps": 1 if r == e.ps_site else 0})
                bars.append(GanttBar(row=f"site {r}", job=js.job, start=e.slot, end=e.slot + 1, label=label,
                                     arrival=a))
    return bars


def usage(instance: Instance, schedule: Schedule) -> list[UsageSeries]:
    """Per resource: the amount used over all sites per slot, against the total capacity.

    The sum over sites of `usage_per_slot`, accumulated slot x resource directly: its slots x sites x
    resources array reaches gigabytes at the caps (10^5 slots, 1,000 sites). Entries on unknown
    jobs, sites or slots are skipped.
    """
    import numpy as np

    T, R = instance.horizon, len(instance.sites)
    u = np.zeros((T, len(instance.resources)))
    for js in schedule.jobs:
        if not 0 <= js.job < len(instance.jobs):
            continue
        job = instance.jobs[js.job]
        wd, pd = np.asarray(job.worker_demand, dtype=float), np.asarray(job.ps_demand, dtype=float)
        for e in js.slots:
            if not 0 <= e.slot < T:
                continue
            u[e.slot] += sum(y for r, y in e.workers.items() if 0 <= r < R) * wd
            if e.ps_site is not None and 0 <= e.ps_site < R and e.n_workers > 0:
                u[e.slot] += pd
    cap = instance.capacity.sum(axis=0)
    return [UsageSeries(resource=name, used=[float(v) for v in u[:, k]], capacity=float(cap[k]))
            for k, name in enumerate(instance.resources)]


def job_rows(instance: Instance, schedule: Schedule) -> list[JobRow]:
    """One row per job: its window, sites, PS sites, and its cost split into latency/transfer/exchange."""
    rows = []
    for js in schedule.jobs:
        job = instance.jobs[js.job]
        active = [e for e in js.slots if e.n_workers > 0]
        parts = job_parts(instance, js)
        sites = sorted({r for e in active for r in e.workers})
        ps = sorted({e.ps_site for e in active if e.ps_site is not None})
        rows.append(JobRow(
            job=js.job, arrival=job.arrival,
            start=min(e.slot for e in active) if active else None,
            end=(js.completion + 1) if js.completion is not None else None,
            placement=f"workers@{sites} ps@{ps}", objective=sum(parts.values()),
            extra={**parts, "worker_slots": sum(e.n_workers for e in active)}))
    for j in schedule.rejected:
        rows.append(JobRow(job=j, arrival=instance.jobs[j].arrival, start=None, end=None, placement="rejected",
                           objective=None))
    return rows
