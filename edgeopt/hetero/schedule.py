"""Schedules of the hetero family, their validator (program (2), and (15) for
Ring-AllReduce) and the objective sum_j w_j (start_j + d_j).

A schedule fixes per job: ``start`` (x_jt = 1 for t = start), ``duration``
(d_j), ``worker_type`` (m), ``ps_type`` (p; None for Ring-AllReduce),
``colocated`` (q_j), ``workers`` {server: y_jhm} and ``ps`` {server: s_jhp}.

How the validator reads the constraints (same reading as the algorithms and
the exact models):

* (2a) every job is scheduled exactly once or listed in ``rejected``.
* (2b)/(2c) one worker type and (PS) one PS type per job: a schedule carries a
  single type of each, so these reduce to "the type exists" and "at least one
  worker"; Ring-AllReduce schedules carry no PS type and no PS.
* (2d)/(15a) ``colocated`` is true iff every worker and PS of the job sits on
  one server (counting servers with a positive count).
* (2e) at least one PS (PS architecture).
* (2f) ``duration * N * rho >= E D K`` with rho of eq. (1)/(14) for the chosen
  types, ``colocated`` and N = total workers (relative slack 1e-9).
* (2g) N <= D_j.
* (2h)/(15b) per server, resource and slot the workers' and PSs' demand of
  running jobs is within capacity (slack 1e-9 relative).
* (2i) for every server h holding PSs of the job: s_jh B_p >= sum of b_m over
  the job's workers on other servers.
* (2j) start >= arrival; completion ``start + duration <= horizon``.

Preemptive schedules (the preemptive `tiresias` and `antman` baselines of Sec.
7; NOT solutions of program (2), which excludes preemption, hence registered
``relaxed``). A schedule with ``preemptive = True`` may give a job several
``segments`` (stretches ``[start, start + duration)`` with a fixed placement:
``colocated``, ``workers``, ``ps``); the job's ``start`` is its first segment's
start and ``start + duration`` its last segment's end (its completion time,
so the objective is unchanged); ``worker_type`` and ``ps_type`` stay fixed
(2b)/(2c); the job's own ``colocated`` / ``workers`` / ``ps`` repeat the first
segment's. Rules of the relaxation (`validate_preemptive`):

* segments are ordered and disjoint (a suspended job holds nothing), the
  first starts at or after the arrival (2j), the last ends by T;
* (2d)/(15a), (2e), (2g), (2i) hold per segment, and (2h)/(15b) counts every
  segment in the slots it covers;
* (2f) becomes ``sum_k max(0, d_k - o_k) N_k rho_k >= E D K``, where rho_k is
  the rate of segment k's placement and ``o_k`` is
  ``preemption_overhead_slots`` for every segment after the first (a resumed
  job first restores its image: those slots hold resources and train
  nothing) and 0 for the first.

A non-preemptive schedule with ``segments`` is a (2j) violation (one window
per job); a non-preemptive schedule is validated exactly as before.
"""

from __future__ import annotations

import itertools

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from edgeopt.core import Violation
from edgeopt.hetero.instance import WORK_RTOL, Instance, rate, work_done

CAP_RTOL = 1e-9


class Segment(BaseModel):
    """A stretch ``[start, start + duration)`` of a preemptive schedule with one fixed placement."""

    model_config = ConfigDict(extra="forbid")
    start: int = Field(ge=0)
    duration: int = Field(ge=1)
    colocated: bool
    workers: dict[int, int]
    ps: dict[int, int] = Field(default_factory=dict)

    @property
    def end(self) -> int:
        return self.start + self.duration

    @property
    def n_workers(self) -> int:
        return sum(self.workers.values())


class JobSchedule(BaseModel):
    """The schedule of one job."""

    model_config = ConfigDict(extra="forbid")
    job: int = Field(ge=0)
    start: int = Field(ge=0, description="first slot the job runs in")
    duration: int = Field(ge=1, description="d_j, slots")
    worker_type: int = Field(ge=0)
    ps_type: int | None = Field(default=None, ge=0)
    colocated: bool = Field(description="q_j")
    workers: dict[int, int] = Field(description="server -> number of workers (y_jhm)")
    ps: dict[int, int] = Field(default_factory=dict, description="server -> number of PSs (s_jhp)")
    segments: list[Segment] | None = Field(
        default=None, description="preemptive schedules only: every stretch with a fixed placement")

    @property
    def end(self) -> int:
        """Completion time c_j = start + d_j."""
        return self.start + self.duration

    def pieces(self) -> list[Segment]:
        """The stretches with a fixed placement (the whole window for a non-preemptive job)."""
        if self.segments:
            return list(self.segments)
        return [Segment(start=self.start, duration=self.duration, colocated=self.colocated, workers=self.workers,
                        ps=self.ps)]

    @property
    def n_workers(self) -> int:
        return sum(self.workers.values())


class Schedule(BaseModel):
    """Schedules of the scheduled jobs, and the ids of jobs an algorithm gave up on."""

    model_config = ConfigDict(extra="forbid")
    jobs: list[JobSchedule] = Field(default_factory=list)
    rejected: list[int] = Field(default_factory=list)
    preemptive: bool = Field(default=False, description="a schedule of the preemptive relaxation (segments)")
    preemption_overhead_slots: float = Field(
        default=0.0, ge=0, description="slots a resumed segment spends restoring the job (trains nothing)")


def objective(instance: Instance, schedule: Schedule) -> float:
    """sum_j w_j (start_j + d_j) over scheduled jobs (objective (2))."""
    return float(sum(instance.jobs[js.job].weight * js.end for js in schedule.jobs if js.job < len(instance.jobs)))


def _servers_used(js: JobSchedule) -> set[int]:
    return {h for h, c in js.workers.items() if c > 0} | {h for h, c in js.ps.items() if c > 0}


def _check_job(instance: Instance, js: JobSchedule) -> list[Violation]:
    """Every per-job constraint of (2) / (15)."""
    out: list[Violation] = []
    j = js.job
    job = instance.jobs[j]
    H, M, P = len(instance.servers), len(instance.worker_types), len(instance.ps_types)
    ps_arch = instance.architecture == "ps"
    coloc_label = "2d" if ps_arch else "15a"

    ok_types = True
    if js.worker_type >= M:
        out.append(Violation("2b", f"worker type {js.worker_type} does not exist (M = {M})", j))
        ok_types = False
    if ps_arch:
        if js.ps_type is None or js.ps_type >= P:
            out.append(Violation("2c", f"PS type {js.ps_type} does not exist (P = {P})", j))
            ok_types = False
    else:
        if js.ps_type is not None or any(c != 0 for c in js.ps.values()):
            out.append(Violation("15", "Ring-AllReduce jobs have no PS (ps_type must be null, ps empty)", j))
    for h, c in js.workers.items():
        if not 0 <= h < H:
            out.append(Violation("2k", f"workers on unknown server {h} (H = {H})", j))
            ok_types = False
        if c < 0:
            out.append(Violation("2k", f"negative worker count {c} on server {h}", j))
            ok_types = False
    for h, c in js.ps.items():
        if not 0 <= h < H:
            out.append(Violation("2l", f"PSs on unknown server {h} (H = {H})", j))
            ok_types = False
        if c < 0:
            out.append(Violation("2l", f"negative PS count {c} on server {h}", j))
            ok_types = False
    n = js.n_workers
    if n < 1:
        out.append(Violation("2b", "the job employs no worker", j))
    if ps_arch and sum(max(0, c) for c in js.ps.values()) < 1:
        out.append(Violation("2e", "the job has no PS (at least one needed)", j))
    used = _servers_used(js)
    if n >= 1 and (len(used) == 1) != js.colocated:
        out.append(Violation(coloc_label, f"colocated={js.colocated} but the job uses servers {sorted(used)}", j))
    if n > job.chunks:
        out.append(Violation("2g", f"{n} workers > D_j = {job.chunks}", j))
    if js.start < job.arrival:
        out.append(Violation("2j", f"starts at {js.start} before its arrival {job.arrival}", j))
    if js.end > instance.horizon:
        out.append(Violation("completion<=T", f"completes at {js.end} > horizon {instance.horizon}", j))
    if ok_types and n >= 1:
        done = work_done(instance, job, js.worker_type, js.ps_type, js.colocated, n, js.duration)
        if done < job.work * (1 - WORK_RTOL):
            out.append(Violation("2f", f"trains {done:.6g} mini-batches in {js.duration} slots, needs E D K = {job.work}", j))
        if ps_arch:
            b = instance.worker_types[js.worker_type].bandwidth_mbps
            B = instance.ps_types[js.ps_type].bandwidth_mbps  # type: ignore[index]
            for h, s in js.ps.items():
                if s <= 0:
                    continue
                remote = sum(c for hh, c in js.workers.items() if hh != h) * b
                if s * B < remote * (1 - CAP_RTOL):
                    out.append(Violation(
                        "2i", f"{s} PSs on server {h} give {s * B:g} Mbps < {remote:g} Mbps of workers elsewhere", j))
    return out


def _check_preemptive_job(instance: Instance, js: JobSchedule, overhead: float) -> list[Violation]:
    """The rules of the preemptive relaxation (module docstring) for one job."""
    out: list[Violation] = []
    j = js.job
    job = instance.jobs[j]
    pieces = js.pieces()
    if js.segments:
        first = pieces[0]
        if js.start != first.start or js.end != pieces[-1].end:
            out.append(Violation("2j", f"start/end {js.start}/{js.end} differ from the segments' "
                                       f"{first.start}/{pieces[-1].end}", j))
        if (js.colocated, js.workers, js.ps) != (first.colocated, first.workers, first.ps):
            out.append(Violation("2d", "colocated/workers/ps differ from the first segment's", j))
    for a, b in itertools.pairwise(pieces):
        if b.start < a.end:
            out.append(Violation("2j", f"segments overlap or are unordered at slot {b.start}", j))
    done = 0.0
    for k, seg in enumerate(pieces):
        # every per-job rule of (2) except the work (2f), on this segment's placement
        one = js.model_copy(update={"start": seg.start, "duration": seg.duration, "colocated": seg.colocated,
                                    "workers": seg.workers, "ps": seg.ps, "segments": None})
        out.extend(v for v in _check_job(instance, one) if v.equation != "2f")
        n = seg.n_workers
        if n >= 1 and js.worker_type < len(instance.worker_types) and (
                instance.architecture != "ps" or (js.ps_type is not None and js.ps_type < len(instance.ps_types))):
            eff = max(0.0, seg.duration - (overhead if k > 0 else 0.0))
            done += eff * n * rate(instance, job, js.worker_type, js.ps_type, seg.colocated, n)
    if done < job.work * (1 - WORK_RTOL):
        out.append(Violation("2f", f"trains {done:.6g} mini-batches over {len(pieces)} segment(s) "
                                   f"(overhead {overhead:g} slots per resumption), needs E D K = {job.work}", j))
    return out


def usage(instance: Instance, schedule: Schedule) -> np.ndarray:
    """Resource use [H, R, T] of the scheduled jobs (entries on unknown servers/types are skipped)."""
    H, R, T = len(instance.servers), len(instance.resources), instance.horizon
    e, z = instance.worker_demand, instance.ps_demand
    use = np.zeros((H, R, T + 1))
    for js in schedule.jobs:
        if js.worker_type >= len(e) or js.job >= len(instance.jobs):
            continue
        for seg in js.pieces():
            lo, hi = min(seg.start, T), min(seg.end, T)
            if hi <= lo:
                continue
            for h, c in seg.workers.items():
                if 0 <= h < H and c > 0:
                    use[h, :, lo:hi] += c * e[js.worker_type][:, None]
            if js.ps_type is not None and js.ps_type < len(z):
                for h, c in seg.ps.items():
                    if 0 <= h < H and c > 0:
                        use[h, :, lo:hi] += c * z[js.ps_type][:, None]
    return use[:, :, :T]


def validate(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violated constraint of program (2) (PS) or (15) (Ring-AllReduce); empty if valid."""
    out: list[Violation] = []
    J = len(instance.jobs)
    seen: dict[int, int] = {}
    for js in schedule.jobs:
        if js.job >= J:
            out.append(Violation("2a", f"schedule for unknown job {js.job} (J = {J})", js.job))
            continue
        seen[js.job] = seen.get(js.job, 0) + 1
    for j in schedule.rejected:
        if not 0 <= j < J:
            out.append(Violation("2a", f"unknown job {j} listed as rejected", j))
            continue
        seen[j] = seen.get(j, 0) + 1
    for j in range(J):
        k = seen.get(j, 0)
        if k == 0:
            out.append(Violation("2a", "job neither scheduled nor rejected", j))
        elif k > 1:
            out.append(Violation("2a", f"job scheduled/rejected {k} times (must be once)", j))
    for js in schedule.jobs:
        if js.job >= J:
            continue
        if schedule.preemptive:
            out.extend(_check_preemptive_job(instance, js, schedule.preemption_overhead_slots))
        elif js.segments is not None:
            out.append(Violation("2j", "segments (a suspended job) in a non-preemptive schedule", js.job))
        else:
            out.extend(_check_job(instance, js))
    use = usage(instance, schedule)
    cap = instance.capacity
    over = use > cap[:, :, None] * (1 + CAP_RTOL) + 1e-9
    if over.any():
        label = "2h" if instance.architecture == "ps" else "15b"
        for h, r, t in zip(*np.nonzero(over), strict=True):
            out.append(Violation(
                label, f"server {h}, resource {instance.resources[r]}, slot {t}: uses {use[h, r, t]:g} > capacity "
                f"{cap[h, r]:g}"))
            if len(out) > 200:
                break
    return out
