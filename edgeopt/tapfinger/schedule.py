"""Schedules of the tapfinger family, their validator (constraints (2)-(8)) and the objective.

A schedule lists, per placed task: ``cluster`` (y_{j,n,t} = 1 for n), ``start`` (t*_j),
``allocation`` {resource: amount} (x_{j,r,n}) and ``end``. Tasks absent from the schedule were not
placed (a ``partial`` result lists them as rejected). Preemptive (relaxed) baselines add
``segments``: the task runs on its cluster in each ``[start, end)`` with that segment's allocation,
and is paused between segments; ``allocation`` is then the first segment's.

How the validator reads the constraints (the environment and the exact models read them alike):

* (3) a task appears at most once, on a cluster of its D_j ("D_j").
* (2) at most one task starts on a cluster per timestep (the first start of a segmented task;
  resuming or re-allocating a running task is not a new placement).
* (8) every resource of every allocation lies in ``[b_{j,r}, C_{r,n}]``; (7) follows as a task only
  holds resources of the cluster it was placed on.
* (5) per cluster, resource and timestep, the allocations of the tasks running then fit.
* (6) ``start >= arrival``; "T": ``end <= horizon``.
* "phi": the task's progress, simulated with `edgeopt.tapfinger.speedup` (the instance's noise
  realisation included; a segment after the first pays the switch overhead in its first
  timestep), reaches 1 exactly in the last timestep before ``end``.

Objective (1): sum_j (end_j - arrival_j) over the placed tasks, which equals sum_t R_t.
"""

from __future__ import annotations

import itertools

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from edgeopt.core import GanttBar, JobRow, UsageSeries, Violation
from edgeopt.core.views import bar_label
from edgeopt.tapfinger.instance import Instance
from edgeopt.tapfinger.speedup import DONE, step_gain


class Segment(BaseModel):
    """A stretch ``[start, end)`` in which a task runs with a fixed allocation."""

    model_config = ConfigDict(extra="forbid")
    start: int = Field(ge=0)
    end: int = Field(ge=1)
    allocation: dict[str, int]


class Placement(BaseModel):
    """Where, when and with what one task runs."""

    model_config = ConfigDict(extra="forbid")
    task: int = Field(ge=0)
    cluster: int = Field(ge=0)
    start: int = Field(ge=0, description="t*_j")
    end: int = Field(ge=1, description="completion timestep (exclusive)")
    allocation: dict[str, int] = Field(description="x_{j,r,n}: resource -> amount")
    segments: list[Segment] = Field(default_factory=list, description="preemptive runs only")

    def runs(self) -> list[Segment]:
        """The segments, or the single run ``[start, end)`` of a non-preemptive placement."""
        return self.segments or [Segment(start=self.start, end=self.end, allocation=self.allocation)]


class Schedule(BaseModel):
    """A tapfinger schedule."""

    model_config = ConfigDict(extra="forbid")
    family: str = "tapfinger"
    placements: list[Placement] = Field(default_factory=list)


def _vector(instance: Instance, alloc: dict[str, int]) -> list[int] | None:
    if set(alloc) != set(instance.resources):
        return None
    return [int(alloc[r]) for r in instance.resources]


def simulate_end(instance: Instance, task: int, runs: list[tuple[int, int, list[int]]]) -> tuple[int | None, float]:
    """When task ``task`` finishes under ``runs = [(start, end, allocation)]`` (sorted, disjoint).

    Returns ``(finish, progress)``: the timestep after the one in which progress reached 1 (None if
    it never does within the runs) and the progress reached.
    """
    t = instance.tasks[task]
    model = instance.task_types[t.task_type].progress
    noise = instance.noise_of(task)
    p, k = 0.0, 0
    for i, (s, e, alloc) in enumerate(runs):
        cpu, gpu = alloc[0], alloc[1] if len(alloc) > 1 else 0
        for step in range(s, e):
            gain = step_gain(model, cpu, gpu, p, instance.timestep_seconds)
            if noise is not None and k < len(noise):
                gain *= 1.0 + noise[k]
            if i > 0 and step == s:
                gain *= 1.0 - instance.switch_overhead
            p += gain
            k += 1
            if p >= DONE:
                return step + 1, p
    return None, p


def validate(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violated constraint of ``schedule`` (empty when valid)."""
    out: list[Violation] = []
    R, N, T, J = len(instance.resources), len(instance.clusters), instance.horizon, len(instance.tasks)
    used = np.zeros((N, R, T + 1), dtype=np.int64)
    starts: dict[tuple[int, int], int] = {}
    seen: set[int] = set()
    for pl in schedule.placements:
        j = pl.task
        if j >= J:
            out.append(Violation("3", f"unknown task {j}", j))
            continue
        if j in seen:
            out.append(Violation("3", "placed more than once", j))
            continue
        seen.add(j)
        task = instance.tasks[j]
        if pl.cluster >= N:
            out.append(Violation("D_j", f"unknown cluster {pl.cluster}", j))
            continue
        if pl.cluster not in task.reachable_clusters:
            out.append(Violation("D_j", f"cluster {pl.cluster} not in D_j = {task.reachable_clusters}", j))
        if pl.start < task.arrival:
            out.append(Violation("6", f"starts at {pl.start} before its arrival {task.arrival}", j))
        if pl.end > T:
            out.append(Violation("T", f"ends at {pl.end}, after the horizon {T}", j))
        runs = pl.runs()
        if pl.segments:
            if runs[0].start != pl.start or runs[-1].end != pl.end or runs[0].allocation != pl.allocation:
                out.append(Violation("segments", "first/last segment disagree with start, end or allocation", j))
            if any(a.end <= a.start for a in runs) or any(b.start < a.end for a, b in itertools.pairwise(runs)):
                out.append(Violation("segments", "segments must be non-empty, sorted and disjoint", j))
                continue
        elif pl.end <= pl.start:
            out.append(Violation("phi", f"end {pl.end} is not after start {pl.start}", j))
            continue
        cap = instance.clusters[pl.cluster].capacity
        vecs: list[tuple[int, int, list[int]]] = []
        bad = False
        for seg in runs:
            vec = _vector(instance, seg.allocation)
            if vec is None:
                out.append(Violation("8", f"allocation must name exactly the resources {instance.resources}", j))
                bad = True
                break
            for r in range(R):
                if not task.min_resources[r] <= vec[r] <= cap[r]:
                    out.append(Violation("8", f"{instance.resources[r]} = {vec[r]} outside [b = "
                                              f"{task.min_resources[r]}, C = {cap[r]}]", j))
                    bad = True
            vecs.append((seg.start, min(seg.end, T), vec))
        if bad:
            continue
        starts[(pl.cluster, pl.start)] = starts.get((pl.cluster, pl.start), 0) + 1
        for s, e, vec in vecs:
            used[pl.cluster, :, s:e] += np.array(vec, dtype=np.int64)[:, None]
        finish, p = simulate_end(instance, j, [(s.start, s.end, v) for s, (_, _, v) in zip(runs, vecs, strict=True)])
        if finish != pl.end:
            what = f"finishes at {finish}" if finish is not None else f"reaches only progress {p:.4f}"
            out.append(Violation("phi", f"end {pl.end} but under its allocation it {what}", j))
    for (n, t), k in sorted(starts.items()):
        if k > 1:
            out.append(Violation("2", f"{k} tasks start on cluster {n} at timestep {t}"))
    for n, cl in enumerate(instance.clusters):
        over = used[n, :, :T] > np.array(cl.capacity)[:, None]
        for r, t in zip(*np.nonzero(over), strict=True):
            out.append(Violation("5", f"cluster {n} {instance.resources[r]} at timestep {t}: "
                                      f"{used[n, r, t]} > C = {cl.capacity[r]}"))
    return out


def objective(instance: Instance, schedule: Schedule) -> float:
    """Total completion time sum_j (end_j - arrival_j) over the placed tasks."""
    return float(sum(pl.end - instance.tasks[pl.task].arrival for pl in schedule.placements))


def _label(task: int, alloc: dict[str, int]) -> str:
    return bar_label(task, dict(alloc))


def gantt_rows(instance: Instance) -> list[str]:
    """The Gantt row of each cluster, by index."""
    return [f"cluster {n}" for n in range(len(instance.clusters))]


def gantt(instance: Instance, schedule: Schedule) -> list[GanttBar]:
    """One row per cluster, one bar per run segment."""
    return [GanttBar(row=f"cluster {pl.cluster}", job=pl.task, start=s.start, end=s.end,
                     label=_label(pl.task, s.allocation), arrival=instance.tasks[pl.task].arrival)
            for pl in schedule.placements for s in pl.runs()]


def usage(instance: Instance, schedule: Schedule) -> list[UsageSeries]:
    """Used amount of each resource summed over clusters, per timestep, up to the last end.

    Ends past the horizon (an invalid schedule) are cut at it: the series is never longer than the
    horizon, whatever a result file states.
    """
    T = max(1, min(instance.horizon, max([pl.end for pl in schedule.placements] or [1])))
    R = len(instance.resources)
    used = np.zeros((R, T))
    for pl in schedule.placements:
        for s in pl.runs():
            lo, hi = max(0, s.start), min(T, s.end)
            if hi <= lo:
                continue
            for r, name in enumerate(instance.resources):
                used[r, lo:hi] += s.allocation.get(name, 0)
    return [UsageSeries(resource=name, used=used[r].tolist(),
                        capacity=float(sum(c.capacity[r] for c in instance.clusters)))
            for r, name in enumerate(instance.resources)]


def job_rows(instance: Instance, schedule: Schedule) -> list[JobRow]:
    """One row per task (unplaced tasks with no start or end)."""
    placed = {pl.task: pl for pl in schedule.placements}
    rows = []
    for t in instance.tasks:
        pl = placed.get(t.id)
        typ = instance.task_types[t.task_type].name
        if pl is None:
            rows.append(JobRow(t.id, t.arrival, None, None, "-", None, {"task_type": typ}))
        else:
            rows.append(JobRow(t.id, t.arrival, pl.start, pl.end, f"cluster {pl.cluster}", float(pl.end - t.arrival),
                               {"task_type": typ, **pl.allocation, "segments": len(pl.segments)}))
    return rows
