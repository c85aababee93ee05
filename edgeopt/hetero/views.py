"""The hetero family's adapters for the shared charts and frames (`edgeopt.viz`, `edgeopt.frames`).

Rows of the Gantt chart are servers: a job's bar sits on every server that
holds its workers or PSs, labelled with what it holds there (``j3 4w+1p``).
Utilisation is per resource, summed over all servers (capacity = the sum
of C_h^r), which keeps the chart readable for any number of servers.
"""

from __future__ import annotations

import numpy as np

from edgeopt.core.views import GanttBar, JobRow, UsageSeries, bar_label, step_usage
from edgeopt.hetero.instance import Instance
from edgeopt.hetero.schedule import Schedule


def _server_name(instance: Instance, h: int) -> str:
    return instance.servers[h].name or f"server {h}"


def gantt_rows(instance: Instance) -> list[str]:
    """The Gantt row of each server, by index."""
    return [_server_name(instance, h) for h in range(len(instance.servers))]


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
    """Used amount of each resource per slot, summed over servers, against the total capacity.

    Step series (`step_usage`) built from each piece's total demand: the same amounts as
    `edgeopt.hetero.schedule.usage` summed over servers, without its servers x resources x slots
    array (gigabytes at a horizon of millions of slots). Entries on unknown servers or types are
    skipped, as there.
    """
    H, R, T = len(instance.servers), len(instance.resources), instance.horizon
    e, z = instance.worker_demand, instance.ps_demand
    lo: list[int] = []
    hi: list[int] = []
    held: list[np.ndarray] = []
    for js in schedule.jobs:
        if js.worker_type >= len(e) or js.job >= len(instance.jobs):
            continue
        for seg in js.pieces():
            w = sum(c for h, c in seg.workers.items() if 0 <= h < H and c > 0)
            p = (sum(c for h, c in seg.ps.items() if 0 <= h < H and c > 0)
                 if js.ps_type is not None and js.ps_type < len(z) else 0)
            if w or p:
                lo.append(seg.start)
                hi.append(seg.end)
                held.append(w * e[js.worker_type] + (p * z[js.ps_type] if p else 0.0))
    amounts = np.asarray(held, dtype=float).reshape(len(held), R)
    cap = instance.capacity.sum(axis=0)  # [R]
    out = []
    for r, name in enumerate(instance.resources):
        edges, used = step_usage(lo, hi, amounts[:, r], T)
        out.append(UsageSeries(resource=name, used=used, capacity=float(cap[r]), edges=edges))
    return out


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
