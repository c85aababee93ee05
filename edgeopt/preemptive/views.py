"""The preemptive family's adapters for the shared charts and frames (`edgeopt.viz`, `edgeopt.frames`).

Rows of the Gantt chart are servers (``edge 0``, ..., ``cloud``). A job's
chunks train slot by slot, so its bar on a server covers each maximal run of
consecutive slots in which the same number of its chunks train there,
labelled ``j3 x2`` (2 workers busy); a gap is a preemption. Utilisation is
per server: busy workers against the server's workers (the cloud's are
unlimited: no capacity line).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from edgeopt.core.views import GanttBar, JobRow, UsageSeries, bar_label
from edgeopt.preemptive.instance import Instance
from edgeopt.preemptive.schedule import Schedule, colocated, completion


def server_name(instance: Instance, s: int) -> str:
    """The server's own name, else ``cloud`` or ``edge k`` (k counts edge servers only)."""
    srv = instance.servers[s]
    if srv.name:
        return srv.name
    if srv.is_cloud:
        return "cloud"
    return f"edge {sum(1 for x in instance.servers[:s] if not x.is_cloud)}"


def _runs(count: Counter[int]) -> list[tuple[int, int, int]]:
    """(start, end, k): maximal runs of consecutive slots with the same positive count k."""
    out: list[tuple[int, int, int]] = []
    for t in sorted(count):
        k = count[t]
        if out and out[-1][1] == t and out[-1][2] == k:
            out[-1] = (out[-1][0], t + 1, k)
        else:
            out.append((t, t + 1, k))
    return out


def gantt(instance: Instance, schedule: Schedule) -> list[GanttBar]:
    """One bar per (server, job, run of slots with a constant number of training chunks)."""
    bars = []
    for js in sorted(schedule.jobs, key=lambda x: x.job):
        arrival = instance.jobs[js.job].arrival
        per_server: dict[int, Counter[int]] = {}
        for c in js.chunks:
            per_server.setdefault(c.server, Counter()).update(c.slots)
        for s in sorted(per_server):
            for start, end, k in _runs(per_server[s]):
                bars.append(GanttBar(row=server_name(instance, s), job=js.job, start=start, end=end,
                                     label=bar_label(js.job, {"w": k}), arrival=arrival))  # k chunks, k workers
    order = {server_name(instance, s): s for s in range(len(instance.servers))}
    return sorted(bars, key=lambda b: (order[b.row], b.start, b.job))


def usage(instance: Instance, schedule: Schedule) -> list[UsageSeries]:
    """Busy workers per server and slot against its number of workers (the cloud: unlimited)."""
    S, T = len(instance.servers), instance.horizon
    busy = np.zeros((S, T))
    for js in schedule.jobs:
        for c in js.chunks:
            slots = np.asarray([t for t in c.slots if 0 <= t < T], dtype=np.int64)
            if 0 <= c.server < S and slots.size:
                np.add.at(busy[c.server], slots, 1)
    return [UsageSeries(resource=f"workers, {server_name(instance, s)}", used=busy[s].tolist(),
                        capacity=float("inf") if sv.is_cloud else float(len(sv.workers)))
            for s, sv in enumerate(instance.servers)]


def job_rows(instance: Instance, schedule: Schedule) -> list[JobRow]:
    """One row per scheduled job; ``objective`` is its JCT c_j - r_j, its term of objective (2)."""
    out = []
    for js in sorted(schedule.jobs, key=lambda x: x.job):
        job = instance.jobs[js.job]
        slots = sorted({t for c in js.chunks for t in c.slots})
        per_server = Counter(c.server for c in js.chunks)
        placement = ", ".join(f"{server_name(instance, s)}:{n}" for s, n in sorted(per_server.items()))
        end = completion(instance, js)
        gaps = int(np.count_nonzero(np.diff(slots) > 1)) if len(slots) > 1 else 0
        out.append(JobRow(
            job=js.job, arrival=job.arrival, start=slots[0] if slots else None, end=end,
            placement=f"chunks {placement}", objective=float(end - job.arrival),
            extra={"chunks": job.chunks, "colocated": colocated(instance, js), "job_preemptions": gaps,
                   "wait": (slots[0] - job.arrival) if slots else None},
        ))
    return out
