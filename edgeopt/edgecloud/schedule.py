"""Schedules of the edgecloud family, the validator of constraints (2a)-(2l), and objective (2).

A schedule lists, for every scheduled job, its run ``[start, end)`` (0-based
slots: ``h_j = start`` is the first slot with workers, ``c_j = end`` the slot
after the last one, JCT = ``end - arrival``), its workers ``{server: count}``
of type u_j, the server of its single PS of type v_j, and ``colocated`` (xi_j).
Jobs an algorithm gave up on are listed in ``rejected``.

How each constraint of MINLP (2) is checked (`validate`), in slot terms:

* (2a) ``1 <= sum(workers) <= D_j``; every listed count is >= 1 (a job that runs
  has at least one worker; at most one worker per data chunk).
* (2b) exactly one PS: ``ps_server`` is a server index (the format holds one).
* (2c)/(2d) allocation fixed from start to completion: holds by the format
  (one allocation per job). In a *preemptive* schedule (see below) each
  segment has its own fixed allocation, segments must be ordered and disjoint.
* (2e) enough training: ``end - start >= d_j(w, xi)`` with the family's
  `duration_slots` (eq. (1) rate, xi = ``colocated``). Holding the allocation
  longer than needed is allowed (it only finishes later).
* (2f) ``colocated`` is True exactly when every worker sits on ``ps_server``.
* (2g) per server, worker type and slot: workers in use <= W_su.
* (2h) per server, PS type and slot: PSs in use <= P_sv.
* (2i) every server hosting a worker or the PS of ``j`` is used only from
  ``a_j + Delta_js`` on: ``start >= a_j + Delta_js``.
* (2j)/(2k) start/end are the first/last+1 slots with workers: true by the
  format; for a preemptive schedule ``start`` / ``end`` must equal the first
  segment's start / the last segment's end.
* (2l) integrality and ranges: server indices in ``[0, S)``,
  ``0 <= start < end <= T`` (c_j in [T]).
* ``coverage``: every job is scheduled or rejected, exactly once; unknown ids.

Preemptive schedules (the Tiresias-like `preemptive` baseline of Sec. VI;
NOT a solution of MINLP (2), which forbids preemption). A schedule with
``preemptive = True`` may give a job several ``segments``, each with its own
fixed workers / PS / colocated flag, replacing (2c)/(2d) over the whole run by
(2c)/(2d) per segment. Its (2e) reads: sum over segments of
``workers * (length - overhead) * p_j(xi)`` >= E_j D_j M_j, where ``overhead``
is ``preemption_overhead_slots`` for every segment after the first (a resumed
job first reloads its model and data: those slots hold resources but train
nothing) and 0 for the first. All other constraints are checked per segment.
The job's own ``workers`` / ``ps_server`` / ``colocated`` repeat its first
segment's, and ``start`` / ``end`` are the first segment's start and the last
segment's end (2j, 2k).
A non-preemptive schedule with segments is a (2c) violation.
"""

from __future__ import annotations

import itertools

import numpy as np
import pydantic
from pydantic import Field

from edgeopt.core import Violation
from edgeopt.edgecloud.instance import Instance, duration_slots, minibatch_slots


class Segment(pydantic.BaseModel):
    """A stretch ``[start, end)`` with one fixed allocation (preemptive schedules only)."""

    model_config = pydantic.ConfigDict(extra="forbid")

    start: int
    end: int
    workers: dict[int, int]
    ps_server: int
    colocated: bool


class JobRun(pydantic.BaseModel):
    """How one job runs: ``h_j = start``, ``c_j = end``, its workers and its PS."""

    model_config = pydantic.ConfigDict(extra="forbid")

    job: int
    start: int
    end: int
    workers: dict[int, int] = Field(description="server index -> number of type-u_j workers")
    ps_server: int
    colocated: bool
    segments: list[Segment] | None = Field(
        default=None, description="preemptive schedules only: every stretch with a fixed allocation"
    )

    def pieces(self) -> list[Segment]:
        """The stretches with a fixed allocation (one for a non-preemptive run)."""
        if self.segments:
            return list(self.segments)
        return [Segment(start=self.start, end=self.end, workers=self.workers,
                        ps_server=self.ps_server, colocated=self.colocated)]


class Schedule(pydantic.BaseModel):
    """A schedule: one `JobRun` per scheduled job (sorted by job id) and the rejected ids."""

    model_config = pydantic.ConfigDict(extra="forbid")

    jobs: list[JobRun] = Field(default_factory=list)
    rejected: list[int] = Field(default_factory=list)
    preemptive: bool = False
    preemption_overhead_slots: int = Field(default=0, ge=0)


def validate(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violated constraint of (2a)-(2l) (empty list: the schedule is valid).

    The capacities (2g)/(2h) are checked by an event sweep over the runs' starts and ends
    (`_over_capacity`), so the memory grows with the number of runs, not with servers x types x slots.
    """
    out: list[Violation] = []
    J = len(instance.jobs)
    W, P = instance.W(), instance.P()
    use_w: list[tuple[int, int, int, int]] = []  # (server, type, slot, +-count): a run's start and end
    use_p: list[tuple[int, int, int, int]] = []

    seen: dict[int, str] = {}
    for j in schedule.rejected:
        if not 0 <= j < J:
            out.append(Violation("coverage", f"rejected job id {j} does not exist"))
        elif j in seen:
            out.append(Violation("coverage", "rejected twice", j))
        else:
            seen[j] = "rejected"
    for run in schedule.jobs:
        j = run.job
        if not 0 <= j < J:
            out.append(Violation("coverage", f"scheduled job id {j} does not exist"))
            continue
        if j in seen:
            out.append(Violation("coverage", f"scheduled but already {seen[j]}", j))
            continue
        seen[j] = "scheduled"
        out.extend(_check_run(instance, schedule, run, use_w, use_p))
    for j in range(J):
        if j not in seen:
            out.append(Violation("coverage", "neither scheduled nor rejected", j))

    # (2g)/(2h): capacities per server, type and slot; one message per constraint family is enough
    # to name it, then the number of (server, type, slot) cells over capacity.
    for label, what, name, events, cap in (("2g", "worker", "W", use_w, W), ("2h", "PS", "P", use_p, P)):
        found = _over_capacity(events, cap)
        if found is None:
            continue
        (s, u, t, level), n = found
        out.append(Violation(label, f"server {s} {what} type {u} slot {t}: {level} > {name}={cap[s, u]}"))
        if n > 1:
            out.append(Violation(label, f"{n} (server, type, slot) cells over capacity in total"))
    return out


def _over_capacity(events: list[tuple[int, int, int, int]],
                   cap: np.ndarray) -> tuple[tuple[int, int, int, int], int] | None:
    """Usage from ``(server, type, slot, +-count)`` events against ``cap[server, type]``: the
    lexicographically first (server, type, slot) over capacity with its usage, and the number of such
    cells; None when every cell fits.

    Sorted by server, type and slot, the running sum of the counts is the usage from one event to the
    next (each (server, type)'s events sum to zero), so only the stretches between events are looked at.
    """
    if not events:
        return None
    ev = np.array(events, dtype=np.int64)
    srv, typ, pos = ev[:, 0], ev[:, 1], ev[:, 2]
    order = np.lexsort((pos, typ, srv))
    srv, typ, pos = srv[order], typ[order], pos[order]
    level = np.cumsum(ev[order, 3])
    same = (srv[1:] == srv[:-1]) & (typ[1:] == typ[:-1])
    length = np.diff(pos)
    over = same & (length > 0) & (level[:-1] > cap[srv[:-1], typ[:-1]])
    if not np.any(over):
        return None
    i = int(np.argmax(over))
    return (int(srv[i]), int(typ[i]), int(pos[i]), int(level[i])), sum(length[over].tolist())


def _check_run(
    instance: Instance, schedule: Schedule, run: JobRun,
    use_w: list[tuple[int, int, int, int]], use_p: list[tuple[int, int, int, int]],
) -> list[Violation]:
    """The per-job constraints of ``run``; the workers and PS of each checkable piece are appended to
    ``use_w`` / ``use_p`` as (server, type, slot, +-count) events at its start and end."""
    out: list[Violation] = []
    j = run.job
    job = instance.jobs[j]
    S, T = len(instance.servers), instance.horizon
    release = instance.release(j)
    if run.segments and not schedule.preemptive:
        out.append(Violation("2c", "segments (a changing allocation) in a non-preemptive schedule", j))
    pieces = run.pieces()
    if run.segments:
        if run.start != pieces[0].start:
            out.append(Violation("2j", f"start {run.start} != first segment start {pieces[0].start}", j))
        if run.end != pieces[-1].end:
            out.append(Violation("2k", f"end {run.end} != last segment end {pieces[-1].end}", j))
        first = pieces[0]
        if (run.workers, run.ps_server, run.colocated) != (first.workers, first.ps_server, first.colocated):
            out.append(Violation("2c", "workers/ps_server/colocated differ from the first segment's", j))
        for a, b in itertools.pairwise(pieces):
            if b.start < a.end:
                out.append(Violation("2c", f"segments overlap or are unordered at slot {b.start}", j))
    work = 0.0
    for k, seg in enumerate(pieces):
        bad = False
        if not 0 <= seg.start < seg.end <= T:
            out.append(Violation("2l", f"run [{seg.start}, {seg.end}) not inside [0, {T})", j))
            bad = True
        servers_ok = True
        for s, c in seg.workers.items():
            if not 0 <= s < S:
                out.append(Violation("2l", f"worker server {s} does not exist", j))
                servers_ok = False
            elif c < 1:
                out.append(Violation("2a", f"{c} workers listed on server {s} (counts must be >= 1)", j))
        if not 0 <= seg.ps_server < S:
            out.append(Violation("2b", f"PS server {seg.ps_server} does not exist (one PS on a real server)", j))
            servers_ok = False
        w = sum(c for c in seg.workers.values() if c > 0)
        if not 1 <= w <= job.chunks:
            out.append(Violation("2a", f"{w} workers, must be in [1, D_j={job.chunks}]", j))
        together = servers_ok and all(s == seg.ps_server for s, c in seg.workers.items() if c > 0)
        if seg.colocated != together:
            out.append(
                Violation("2f", f"colocated={seg.colocated} but workers on {sorted(seg.workers)}, "
                                f"PS on {seg.ps_server}", j)
            )
        if servers_ok:
            for s in sorted({*(s for s, c in seg.workers.items() if c > 0), seg.ps_server}):
                if seg.start < release[s]:
                    out.append(
                        Violation("2i", f"uses server {s} from slot {seg.start} < a_j + Delta_js = "
                                        f"{int(release[s])}", j)
                    )
        if bad or not servers_ok or not 1 <= w <= job.chunks:
            continue
        length = seg.end - seg.start
        if schedule.preemptive:
            overhead = schedule.preemption_overhead_slots if k > 0 else 0
            work += w * max(0, length - overhead) / minibatch_slots(instance, job, seg.colocated)
        elif length < duration_slots(instance, job, w, seg.colocated):
            need = duration_slots(instance, job, w, seg.colocated)
            out.append(
                Violation("2e", f"runs {length} slots with {w} workers (colocated={seg.colocated}), "
                                f"needs {need}", j)
            )
        for s, c in seg.workers.items():
            use_w.append((s, job.worker_type, seg.start, c))
            use_w.append((s, job.worker_type, seg.end, -c))
        use_p.append((seg.ps_server, job.ps_type, seg.start, 1))
        use_p.append((seg.ps_server, job.ps_type, seg.end, -1))
    if schedule.preemptive and work < job.steps * (1 - 1e-9):
        out.append(Violation("2e", f"trains {work:.3f} mini-batch steps, needs E*D*M = {job.steps}", j))
    return out


def objective(instance: Instance, schedule: Schedule) -> float:
    """Objective (2): total completion time sum_j (c_j - a_j) over the scheduled jobs."""
    return float(sum(run.end - instance.jobs[run.job].arrival for run in schedule.jobs
                     if 0 <= run.job < len(instance.jobs)))


# Re-exported so that exact models can import the one duration rule from here too.
__all__ = ["JobRun", "Schedule", "Segment", "duration_slots", "objective", "validate"]
