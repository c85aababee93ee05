"""A solver-neutral plan (chunk -> worker and slots, job x slot -> PS), and its conversion to a `Schedule`.

Each exact model extracts a `Plan` from its solution; `to_schedule` is the
one place that knows the family's schedule format, so the MILP and the
CP-SAT model cannot disagree on it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from formulations.preemptive.data import ModelData


@dataclasses.dataclass
class ChunkPlan:
    """Where and when chunk ``chunk`` of job ``job`` trains.

    ``worker`` is the global edge-worker index of `ModelData` or None for the cloud.
    """

    job: int
    chunk: int
    worker: int | None
    slots: list[int]


@dataclasses.dataclass
class Plan:
    """Chunks plus the PS of each job in each slot it trains: ``ps[(j, t)] = server``."""

    chunks: list[ChunkPlan]
    ps: dict[tuple[int, int], int]


def assign_ps(data: ModelData, plan_chunks: list[ChunkPlan], edge_ps: dict[tuple[int, int], int]) -> Plan:
    """Complete a plan's PS: for each slot a job trains in, the edge server the model chose
    (``edge_ps[(j, t)]``) or else the cloud (unlimited PSs, available from r_j + Delta_jc)."""
    ps: dict[tuple[int, int], int] = {}
    for cp in plan_chunks:
        for t in cp.slots:
            key = (cp.job, t)
            if key in ps:
                continue
            if key in edge_ps:
                ps[key] = edge_ps[key]
            elif data.cloud is not None and t >= data.cloud_start(cp.job):
                ps[key] = data.cloud
            else:
                raise RuntimeError(f"job {cp.job} trains in slot {t} with no PS chosen")
    return Plan(plan_chunks, ps)


def to_schedule(instance: Any, data: ModelData, plan: Plan) -> Any:
    """The family's `Schedule` of a plan.

    Cloud labels are unlimited: each cloud chunk gets its own worker label and
    each job its own cloud PS label (its id), so (2d)/(2f) hold there trivially.
    On an edge server the jobs holding a PS in slot t get distinct PS indices
    (< P_s, which the models guarantee), a job keeping its index from t-1 when it can.
    """
    from edgeopt.preemptive.schedule import ChunkRun, JobSchedule, PsRun, Schedule

    runs: dict[int, list[Any]] = {j: [] for j in range(data.n_jobs)}
    cloud_label = 0
    for cp in sorted(plan.chunks, key=lambda c: (c.job, c.chunk)):
        if cp.worker is None:
            server, worker = data.cloud, cloud_label
            cloud_label += 1
        else:
            server, worker = int(data.worker_server[cp.worker]), int(data.worker_slot[cp.worker])
        runs[cp.job].append(ChunkRun(chunk=cp.chunk, server=server, worker=worker, slots=sorted(cp.slots)))
    # PS labels per (job, slot)
    label: dict[tuple[int, int], tuple[int, int]] = {}
    by_slot: dict[int, list[tuple[int, int]]] = {}
    for (j, t), s in plan.ps.items():
        by_slot.setdefault(t, []).append((j, s))
    for t in sorted(by_slot):
        used: dict[int, set[int]] = {}
        pending = []
        for j, s in sorted(by_slot[t]):
            if s == data.cloud:
                label[(j, t)] = (s, j)
                continue
            prev = label.get((j, t - 1))
            if prev is not None and prev[0] == s and prev[1] not in used.setdefault(s, set()):
                label[(j, t)] = prev
                used[s].add(prev[1])
            else:
                pending.append((j, s))
        for j, s in pending:
            free = next(i for i in range(int(data.ps_count[s]) + len(by_slot[t])) if i not in used.setdefault(s, set()))
            label[(j, t)] = (s, free)
            used[s].add(free)
    jobs = []
    for j in range(data.n_jobs):
        slots = sorted(t for (jj, t) in label if jj == j)
        ps_runs: list[Any] = []
        for t in slots:
            s, p = label[(j, t)]
            last = ps_runs[-1] if ps_runs else None
            if last is not None and last.server == s and last.ps == p and last.end == t:
                last.end = t + 1
            else:
                ps_runs.append(PsRun(server=s, ps=p, start=t, end=t + 1))
        jobs.append(JobSchedule(job=j, chunks=runs[j], ps=ps_runs))
    return Schedule(speed=1.0, jobs=jobs, rejected=[])
