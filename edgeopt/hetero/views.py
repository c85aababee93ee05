"""The hetero family's adapters for the shared charts and frames (`edgeopt.viz`, `edgeopt.frames`).

Rows of the Gantt chart are servers: a job's bar sits on every server that
holds its workers or PSs, labelled with what it holds there (``j3 4w+1p``).
Utilisation is per resource, summed over all servers (capacity = the sum
of C_h^r), which keeps the chart readable for any number of servers.
"""

from __future__ import annotations

import numpy as np

from edgeopt.core.views import GanttBar, JobRow, UsageSeries, bar_label
from edgeopt.hetero.instance import Instance
from edgeopt.hetero.schedule import Schedule
from edgeopt.hetero.schedule import usage as resource_use


def _server_name(instance: Instance, h: int) -> str:
    return instance.servers[h].name or f"server {h}"


def gantt(instance: Instance, schedule: Schedule) -> list[GanttBar]:
    """One bar per (server, job): the job's slots [start, start + d_j) on each server it uses."""
    bars = []
    for js in sorted(schedule.jobs, key=lambda s: s.job):
        for h in sorted(set(js.workers) | set(js.ps)):
            w, p = js.workers.get(h, 0), js.ps.get(h, 0)
            if w <= 0 and p <= 0:
                continue
            bars.append(GanttBar(row=_server_name(instance, h), job=js.job, start=js.start, end=js.end,
                                 label=bar_label(js.job, {"w": w, "ps": p}), arrival=instance.jobs[js.job].arrival))
    order = {_server_name(instance, h): h for h in range(len(instance.servers))}
    return sorted(bars, key=lambda b: (order[b.row], b.start, b.job))


def usage(instance: Instance, schedule: Schedule) -> list[UsageSeries]:
    """Used amount of each resource per slot, summed over servers, against the total capacity."""
    use = resource_use(instance, schedule).sum(axis=0)  # [R, T]
    cap = instance.capacity.sum(axis=0)  # [R]
    return [UsageSeries(resource=name, used=use[r].tolist(), capacity=float(cap[r]))
            for r, name in enumerate(instance.resources)]


def job_rows(instance: Instance, schedule: Schedule) -> list[JobRow]:
    """One row per scheduled job; ``objective`` is its term w_j (t_j + d_j) of objective (2)."""
    out = []
    for js in sorted(schedule.jobs, key=lambda s: s.job):
        job = instance.jobs[js.job]
        workers = ", ".join(f"{h}:{c}" for h, c in sorted(js.workers.items()) if c > 0)
        ps = ", ".join(f"{h}:{c}" for h, c in sorted(js.ps.items()) if c > 0)
        placement = f"workers {workers}" + (f"; ps {ps}" if ps else "")
        out.append(JobRow(
            job=js.job, arrival=job.arrival, start=js.start, end=js.end, placement=placement,
            objective=float(job.weight * js.end),
            extra={"weight": job.weight, "duration": js.duration, "worker_type": js.worker_type,
                   "ps_type": js.ps_type, "n_workers": js.n_workers,
                   "n_ps": int(np.sum([c for c in js.ps.values() if c > 0])), "colocated": js.colocated,
                   "wait": js.start - job.arrival},
        ))
    return out
