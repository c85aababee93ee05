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

from edgeopt.core.views import GanttBar, JobRow, UsageSeries, bar_label, step_usage
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


def gantt_rows(instance: Instance) -> list[str]:
    """The Gantt row of each server, by index (`server_name` of each, counting edges once: linear)."""
    names, edges = [], 0
    for srv in instance.servers:
        names.append(srv.name or ("cloud" if srv.is_cloud else f"edge {edges}"))
        edges += not srv.is_cloud
    return names


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
    """Busy workers per server and slot against its number of workers (the cloud: unlimited).

    Step series (`step_usage`) over each chunk's runs of consecutive slots: a servers x slots array
    at a paper-size horizon (8 million slots) took gigabytes; the runs cost about one entry per chunk.
    A slot listed twice in a chunk counts twice, as a per-slot count would.
    """
    S, T = len(instance.servers), instance.horizon
    srv: list[int] = []
    lo: list[int] = []
    hi: list[int] = []
    held: list[int] = []
    for js in schedule.jobs:
        for c in js.chunks:
            if not 0 <= c.server < S or not c.slots:
                continue
            for start, end, k in _slot_runs(c.slots, T):
                srv.append(c.server)
                lo.append(start)
                hi.append(end)
                held.append(k)
    server = np.asarray(srv, dtype=np.int64)
    order = np.argsort(server, kind="stable")
    bounds = np.searchsorted(server[order], np.arange(S + 1))
    start, end, amount = (np.asarray(x, dtype=float)[order] for x in (lo, hi, held))
    out = []
    for s, sv in enumerate(instance.servers):
        k = slice(bounds[s], bounds[s + 1])
        edges, used = step_usage(start[k], end[k], amount[k], T)
        out.append(UsageSeries(resource=f"workers, {server_name(instance, s)}", used=used,
                               capacity=float("inf") if sv.is_cloud else float(len(sv.workers)), edges=edges))
    return out


def _slot_runs(slots: list[int], horizon: int) -> list[tuple[int, int, int]]:
    """(start, end, k): runs of consecutive slots in [0, horizon) each listed k times in ``slots``."""
    first, last, n = slots[0], slots[-1], len(slots)
    if last - first == n - 1 and 0 <= first and last < horizon and slots == list(range(first, last + 1)):
        return [(first, last + 1, 1)]  # the usual chunk: one run of distinct consecutive slots
    a = np.asarray(slots, dtype=np.int64)
    a = a[(a >= 0) & (a < horizon)]
    if a.size == 0:
        return []
    t, k = np.unique(a, return_counts=True)
    cut = np.flatnonzero((np.diff(t) != 1) | (np.diff(k) != 0)) + 1
    first_i = np.concatenate([[0], cut])
    last_i = np.concatenate([cut - 1, [t.size - 1]])
    return list(zip(t[first_i].tolist(), (t[last_i] + 1).tolist(), k[first_i].tolist(), strict=True))


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
