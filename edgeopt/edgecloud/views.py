"""The edgecloud family's adapters for the shared charts and frames (`edgeopt.viz`, `edgeopt.frames`).

Rows of the Gantt chart are servers (``edge 0``, ..., ``cloud``): a job's bar
sits on every server that holds its workers or its PS over each stretch with
a fixed allocation (one stretch, or the segments of a preemptive baseline),
labelled with what it holds there (``j3 4w+ps``). Utilisation is per server:
workers in use (every type) against W_s = sum_u W_su, and PSs in use summed
over servers against sum_sv P_sv.
"""

from __future__ import annotations

import numpy as np

from edgeopt.core.views import GanttBar, JobRow, UsageSeries, bar_label, step_usage
from edgeopt.edgecloud.instance import Instance
from edgeopt.edgecloud.schedule import Schedule


def server_name(instance: Instance, s: int) -> str:
    """``cloud`` or ``edge k`` (k counts edge servers only)."""
    srv = instance.servers[s]
    if srv.is_cloud:
        return "cloud"
    return f"edge {sum(1 for x in instance.servers[:s] if not x.is_cloud)}"


def gantt_rows(instance: Instance) -> list[str]:
    """The Gantt row of each server, by index (`server_name` of each, counting edges once: linear)."""
    names, edges = [], 0
    for srv in instance.servers:
        names.append("cloud" if srv.is_cloud else f"edge {edges}")
        edges += not srv.is_cloud
    return names


def gantt(instance: Instance, schedule: Schedule) -> list[GanttBar]:
    """One bar per (server, job, stretch with a fixed allocation)."""
    bars = []
    for run in sorted(schedule.jobs, key=lambda r: r.job):
        arrival = instance.jobs[run.job].arrival
        for seg in run.pieces():
            for s in sorted({*(s for s, c in seg.workers.items() if c > 0), seg.ps_server}):
                held = {"w": seg.workers.get(s, 0), "ps": 1 if s == seg.ps_server else 0}
                bars.append(GanttBar(row=server_name(instance, s), job=run.job, start=seg.start, end=seg.end,
                                     label=bar_label(run.job, held), arrival=arrival))
    order = {server_name(instance, s): s for s in range(len(instance.servers))}
    return sorted(bars, key=lambda b: (order[b.row], b.start, b.job))


def usage(instance: Instance, schedule: Schedule) -> list[UsageSeries]:
    """Workers in use per server and slot (all types), and PSs in use over all servers.

    Step series (`step_usage`): the horizon runs to millions of slots and the servers to thousands,
    so a dense servers x slots array could take gigabytes; the sweep costs the schedule's pieces.
    """
    S, T = len(instance.servers), instance.horizon
    srv: list[int] = []
    lo: list[int] = []
    hi: list[int] = []
    amount: list[float] = []
    ps_lo: list[int] = []
    ps_hi: list[int] = []
    for run in schedule.jobs:
        for seg in run.pieces():
            ps_lo.append(seg.start)
            ps_hi.append(seg.end)
            for s, c in seg.workers.items():
                if 0 <= s < S:
                    srv.append(s)
                    lo.append(seg.start)
                    hi.append(seg.end)
                    amount.append(c)
    server = np.asarray(srv, dtype=np.int64)
    order = np.argsort(server, kind="stable")
    bounds = np.searchsorted(server[order], np.arange(S + 1))
    start, end, held = (np.asarray(x, dtype=float)[order] for x in (lo, hi, amount))
    W, P = instance.W(), instance.P()
    out = []
    for s in range(S):
        k = slice(bounds[s], bounds[s + 1])
        edges, used = step_usage(start[k], end[k], held[k], T)
        out.append(UsageSeries(resource=f"workers, {server_name(instance, s)}", used=used,
                               capacity=float(W[s].sum()), edges=edges))
    edges, used = step_usage(ps_lo, ps_hi, 1.0, T)
    out.append(UsageSeries(resource="PSs, all servers", used=used, capacity=float(P.sum()), edges=edges))
    return out


def job_rows(instance: Instance, schedule: Schedule) -> list[JobRow]:
    """One row per scheduled job; ``objective`` is its JCT c_j - a_j, its term of objective (2)."""
    out = []
    for run in sorted(schedule.jobs, key=lambda r: r.job):
        job = instance.jobs[run.job]
        workers = ", ".join(f"{server_name(instance, s)}:{c}" for s, c in sorted(run.workers.items()) if c > 0)
        pieces = run.pieces()
        out.append(JobRow(
            job=run.job, arrival=job.arrival, start=run.start, end=run.end,
            placement=f"workers {workers}; ps {server_name(instance, run.ps_server)}",
            objective=float(run.end - job.arrival),
            extra={"n_workers": sum(c for c in run.workers.values() if c > 0), "colocated": run.colocated,
                   "wait": run.start - job.arrival, "segments": len(pieces),
                   "worker_type": job.worker_type, "ps_type": job.ps_type},
        ))
    return out
