"""Schedules of the preemptive family, the validator of MINLP (2) / ILP (4), and
the two objectives: total JCT (2) and the fractional flow time (4) with (3).

A schedule gives, for every scheduled job, each chunk's ``server`` and
``worker`` (fixed: a chunk never migrates) and the slots it trains in, and the
job's PS per slot as runs ``[start, end)`` on one ``(server, ps)``.

Equation names used by `validate` (each `Violation.equation`):

* ``schedule``: shape errors (unknown / duplicate job, a job neither scheduled
  nor rejected, or both, chunk index out of range, unknown server, worker or
  PS index, empty PS run).
* ``migration``: a chunk listed twice (on two workers, or twice on one): data
  chunks are never moved between workers (Sec. I, III-A; (7c)-(7d)).
* ``2a``: a chunk on a worker whose type is not the job's (v_jsw = 0).
* ``2b`` / ``4a``: a chunk does not train exactly ``P_j`` slots (`Instance.chunk_slots`
  with the job's zeta_j and the schedule's ``speed``). Fewer is (2b)'s ``>=``;
  more is forbidden too: a chunk is trained after its P_j-th slot and stops
  (so c_jd has one meaning for both objectives, and Lemma 1, f <= JCT, holds
  for every valid schedule; with extra slots the literal (3) can exceed the
  JCT). Dropping extra slots never increases (2) or (4), so exact models may
  use ``sum_t y = P_j`` without loss. Reported as ``2b``.
* ``4e``: a chunk lists a slot twice (two workers at once is impossible by
  the format, since each chunk has one worker). (2c), at most D_j workers per
  job and slot, follows from 4e and is not reported separately.
* ``2d`` / ``4b``: a worker trains two chunks in one slot (checked on the
  cloud too: a cloud worker label is one worker; labels are unlimited).
* ``2e`` / ``4c``: a slot where the job trains without exactly one PS, or a PS
  assigned to the job in a slot where none of its chunks trains.
* ``2f`` / ``4d``: a PS serves two jobs in one slot (cloud PS labels too).
* ``2i``: a chunk or PS on server s before ``r_j + Delta_js``.
* ``2k``: a slot outside ``[0, horizon)``.
* ``cloud-no-preemption``: a cloud chunk's slots are not contiguous ("Preemption
  is allowed in servers except for the cloud", Sec. III-A).
* ``7b``: storage (Sec. VI, only when both ``storage_mb`` and ``chunk_size_mb``
  are given): chunk d occupies ``u_j`` MB of its server's storage during
  ``[r_j, c_jd)`` (7c-7d: stored from release until the chunk completes).

(2g)/(2h) define zeta_j and cannot be violated: zeta_j = 1 iff the job has a
chunk, every chunk is on the cloud and every PS run is on the cloud; zeta_j
then selects the faster rate of eq. (1) in the ``2b`` check.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from edgeopt.core import Violation
from edgeopt.preemptive.instance import Instance


class ChunkRun(BaseModel):
    """Where chunk ``chunk`` of a job trains (y_jdsw(t) = 1 for t in ``slots``)."""

    model_config = ConfigDict(extra="forbid")
    chunk: int = Field(ge=0)
    server: int = Field(ge=0)
    worker: int = Field(ge=0, description="index in servers[server].workers; any label on the cloud")
    slots: list[int] = Field(description="slots it trains in (sorted)")


class PsRun(BaseModel):
    """z_jsp(t) = 1 for t in [start, end)."""

    model_config = ConfigDict(extra="forbid")
    server: int = Field(ge=0)
    ps: int = Field(ge=0, description="index < servers[server].ps; any label on the cloud")
    start: int
    end: int


class JobSchedule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    job: int = Field(ge=0)
    chunks: list[ChunkRun]
    ps: list[PsRun] = Field(default_factory=list)


class Schedule(BaseModel):
    """A schedule of MINLP (2); ``speed`` is the speed augmentation it was computed at (1 + eps)."""

    model_config = ConfigDict(extra="forbid")
    speed: float = Field(default=1.0, gt=0)
    jobs: list[JobSchedule] = Field(default_factory=list)
    rejected: list[int] = Field(default_factory=list)


# ----------------------------------------------------------------------------------------------
# Derived quantities of a schedule
# ----------------------------------------------------------------------------------------------


def colocated(instance: Instance, js: JobSchedule) -> bool:
    """zeta_j by (2g)/(2h): every chunk and every PS run on the cloud."""
    cloud = instance.cloud
    if cloud is None or not js.chunks:
        return False
    return all(c.server == cloud for c in js.chunks) and all(p.server == cloud for p in js.ps)


def chunk_completion(js: JobSchedule) -> dict[int, int]:
    """c_jd: last slot + 1 of each chunk (chunks with no slot are left out)."""
    return {c.chunk: max(c.slots) + 1 for c in js.chunks if c.slots}


def completion(instance: Instance, js: JobSchedule) -> int:
    """c_j = max_d c_jd (r_j if the job trains nowhere)."""
    ends = [max(c.slots) + 1 for c in js.chunks if c.slots]
    return max(ends) if ends else instance.jobs[js.job].arrival


def objective(instance: Instance, schedule: Schedule) -> float:
    """Total JCT of (2): sum over scheduled jobs of c_j - r_j."""
    return float(sum(completion(instance, js) - instance.jobs[js.job].arrival for js in schedule.jobs))


def fractional_flow_time(instance: Instance, schedule: Schedule) -> float:
    """f(y) of (4): sum_j sum_d f_jd(y), eq. (3) in slot units.

    ``f_jd = sum_{t in slots_jd} (t + 1 - r_j) / (D_j * P_jd)``, where ``P_jd``
    is the chunk's slot count on its worker (`Instance.chunk_slots` with
    zeta_j and the schedule's speed), i.e. ``n_jsw / (E_j D_j B_j)`` with the
    rate rounded to whole slots. ``t + 1`` is the end of slot t (the paper's
    slots are numbered from 1); a chunk's weights then sum to exactly 1/D_j
    and Lemma 1 holds: f_jd <= (c_jd - r_j)/D_j - (P_jd - 1)/(2 D_j).
    """
    total = 0.0
    for js in schedule.jobs:
        j = js.job
        job = instance.jobs[j]
        p = instance.chunk_slots(j, colocated(instance, js), schedule.speed)
        for c in js.chunks:
            if c.slots:
                s = np.asarray(c.slots, dtype=np.float64)
                total += float(np.sum(s + 1.0 - job.arrival)) / (job.chunks * p)
    return total


def count_preemptions(instance: Instance, schedule: Schedule) -> int:
    """Preemptions: a chunk trained in slot t-1, is not finished, and does not train in t.

    One count per suspended chunk, the same rule for every algorithm (a
    job-level scheduler suspending a job with k running chunks counts k).
    """
    total = 0
    for js in schedule.jobs:
        for c in js.chunks:
            if len(c.slots) > 1:
                s = np.unique(np.asarray(c.slots))
                total += int(np.count_nonzero(np.diff(s) > 1))
    return total


def job_preemptions(instance: Instance, schedule: Schedule) -> int:
    """Job-level preemptions: a job trained in t-1 (some chunk), is not finished and trains in no chunk at t."""
    total = 0
    for js in schedule.jobs:
        slots = [t for c in js.chunks for t in c.slots]
        if len(slots) > 1:
            s = np.unique(np.asarray(slots))
            total += int(np.count_nonzero(np.diff(s) > 1))
    return total


# ----------------------------------------------------------------------------------------------
# Validator
# ----------------------------------------------------------------------------------------------


def _index_errors(instance: Instance, js: JobSchedule, out: list[Violation]) -> bool:
    """Shape checks of one job; True when its entries can be checked further."""
    j = js.job
    job = instance.jobs[j]
    ok = True
    nserv = len(instance.servers)
    for c in js.chunks:
        if c.chunk >= job.chunks:
            out.append(Violation("schedule", f"chunk index {c.chunk} >= D_j = {job.chunks}", j))
            ok = False
        if c.server >= nserv:
            out.append(Violation("schedule", f"chunk {c.chunk}: unknown server {c.server}", j))
            ok = False
            continue
        sv = instance.servers[c.server]
        if not sv.is_cloud and c.worker >= len(sv.workers):
            out.append(Violation("schedule", f"chunk {c.chunk}: server {c.server} has no worker {c.worker}", j))
            ok = False
    for p in js.ps:
        if p.server >= nserv:
            out.append(Violation("schedule", f"PS run on unknown server {p.server}", j))
            ok = False
            continue
        sv = instance.servers[p.server]
        if not sv.is_cloud and p.ps >= sv.ps:
            out.append(Violation("schedule", f"server {p.server} has no PS {p.ps} (it has {sv.ps})", j))
            ok = False
        if p.end <= p.start:
            out.append(Violation("schedule", f"empty PS run [{p.start}, {p.end})", j))
            ok = False
    return ok


def _check_job(instance: Instance, js: JobSchedule, speed: float, uniq: list[list[int]],
               out: list[Violation]) -> None:
    """Per-job constraints: migration, 2a, 2b, 4e, 2i, 2k, 2e, cloud-no-preemption; ``uniq``: each chunk's
    distinct slots (`_unique_slots`)."""
    j = js.job
    job = instance.jobs[j]
    T = instance.horizon
    seen: dict[int, tuple[int, int]] = {}
    for c in js.chunks:
        if c.chunk in seen:
            where = seen[c.chunk]
            if where != (c.server, c.worker):
                out.append(Violation("migration", f"chunk {c.chunk} on worker {where} and on {(c.server, c.worker)}", j))
            else:
                out.append(Violation("migration", f"chunk {c.chunk} listed twice on worker {where}", j))
        else:
            seen[c.chunk] = (c.server, c.worker)
    zeta = colocated(instance, js)
    need = instance.chunk_slots(j, zeta, speed)
    for d in range(job.chunks):
        if d not in seen:
            out.append(Violation("2b", f"chunk {d} is not trained (needs {need} slots)", j))
    # (2b)/(4a) per chunk over all its entries (a migrated chunk is reported as migration only)
    trained: dict[int, set[int]] = defaultdict(set)
    for c in js.chunks:
        trained[c.chunk].update(c.slots)
    for d, slots in sorted(trained.items()):
        if d < job.chunks and len(slots) < need:
            out.append(Violation("2b", f"chunk {d} trains {len(slots)} slots, needs {need} "
                                       f"(zeta={int(zeta)}, speed={speed})", j))
        elif d < job.chunks and len(slots) > need:
            out.append(Violation("2b", f"chunk {d} trains {len(slots)} slots, more than the {need} it needs "
                                       f"(a chunk stops once trained; zeta={int(zeta)}, speed={speed})", j))
    for c, u in zip(js.chunks, uniq, strict=True):
        if not instance.eligible(j, c.server, c.worker):
            typ = instance.servers[c.server].workers[c.worker]
            out.append(Violation("2a", f"chunk {c.chunk} on worker ({c.server}, {c.worker}) of type {typ}, "
                                       f"job needs type {job.worker_type}", j))
        if len(u) != len(c.slots):
            out.append(Violation("4e", f"chunk {c.chunk} lists a slot more than once", j))
        if u and (u[0] < 0 or u[-1] >= T):
            out.append(Violation("2k", f"chunk {c.chunk} trains in slot outside [0, {T}): {u[0]}..{u[-1]}", j))
        rel = instance.release(j, c.server)
        if u and u[0] < rel:
            out.append(Violation("2i", f"chunk {c.chunk} trains on server {c.server} at slot {u[0]} "
                                       f"< r_j + Delta = {rel}", j))
        if instance.servers[c.server].is_cloud and u and u[-1] - u[0] + 1 != len(u):
            out.append(Violation("cloud-no-preemption", f"chunk {c.chunk} is preempted on the cloud", j))
    # (2e): exactly one PS in every slot the job trains, none in other slots.
    train = np.unique(np.concatenate([np.asarray(c.slots, dtype=np.int64) for c in js.chunks])) \
        if js.chunks else np.zeros(0, dtype=np.int64)
    if js.ps:
        ps_slots = np.concatenate([np.arange(p.start, p.end, dtype=np.int64) for p in js.ps])
    else:
        ps_slots = np.zeros(0, dtype=np.int64)
    pu, pc = np.unique(ps_slots, return_counts=True)
    if np.any(pc > 1):
        out.append(Violation("2e", f"more than one PS at slot {int(pu[pc > 1][0])}", j))
    missing = np.setdiff1d(train, pu)
    if missing.size:
        out.append(Violation("2e", f"no PS at training slot {int(missing[0])} ({missing.size} slots)", j))
    idle = np.setdiff1d(pu, train)
    if idle.size:
        out.append(Violation("2e", f"PS assigned at slot {int(idle[0])} where no chunk trains ({idle.size} slots)", j))
    for p in js.ps:
        rel = instance.release(j, p.server)
        if p.start < rel:
            out.append(Violation("2i", f"PS on server {p.server} at slot {p.start} < r_j + Delta = {rel}", j))
        if p.start < 0 or p.end > T:
            out.append(Violation("2k", f"PS run [{p.start}, {p.end}) outside [0, {T})", j))


def _unique_slots(slots: list[int]) -> list[int]:
    """A chunk's distinct slots in increasing order (`np.unique` without its per-call cost: the validator
    needs it once per chunk, about 20,000 times at the paper scale)."""
    return sorted(set(slots))


def _mixed_radix(cols: list[np.ndarray]) -> np.ndarray:
    """One int64 key per row of integer columns (exact: each column shifted to 0 and scaled by its span)."""
    key = np.zeros(cols[0].shape[0], dtype=np.int64)
    for c in cols:
        lo = int(c.min())
        span = int(c.max()) - lo + 1
        key = key * span + (c - lo)
    return key


def _first_duplicate(cols: list[np.ndarray]) -> tuple[int, int] | None:
    """(row index of a duplicated key, number of duplicated keys) over integer columns, or None."""
    if cols[0].shape[0] == 0:
        return None
    key = _mixed_radix(cols)
    _uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
    dup = counts > 1
    if not np.any(dup):
        return None
    return int(first[np.argmax(dup)]), int(np.count_nonzero(dup))


def validate(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violated constraint of (2a)-(2k) / (4a)-(4h) (+ 7b when storage is given).

    Jobs listed in ``rejected`` are exempt from the constraints, but every job
    must be either scheduled or rejected, never both.
    """
    out: list[Violation] = []
    J = len(instance.jobs)
    listed: set[int] = set()
    good: list[JobSchedule] = []
    for js in schedule.jobs:
        if js.job >= J:
            out.append(Violation("schedule", f"unknown job {js.job}"))
            continue
        if js.job in listed:
            out.append(Violation("schedule", "job listed twice", js.job))
            continue
        listed.add(js.job)
        if _index_errors(instance, js, out):
            good.append(js)
    for j in schedule.rejected:
        if j >= J or j < 0:
            out.append(Violation("schedule", f"unknown rejected job {j}"))
        elif j in listed:
            out.append(Violation("schedule", "job both scheduled and rejected", j))
    missing = sorted(set(range(J)) - listed - set(schedule.rejected))
    for j in missing:
        out.append(Violation("schedule", "job neither scheduled nor rejected", j))

    uniq = [[_unique_slots(c.slots) for c in js.chunks] for js in good]
    for js, u in zip(good, uniq, strict=True):
        _check_job(instance, js, schedule.speed, u, out)

    # (2d)/(4b): one chunk per worker and slot, over all chunks of all jobs. A chunk's own
    # repeated slots are 4e, so each chunk's slots are made unique first.
    parts = [(js.job, c.server, c.worker, np.array(u, dtype=np.int64))
             for js, us in zip(good, uniq, strict=True) for c, u in zip(js.chunks, us, strict=True) if u]
    if parts:
        n = [p[3].size for p in parts]
        srv = np.repeat(np.array([p[1] for p in parts], dtype=np.int64), n)
        wrk = np.repeat(np.array([p[2] for p in parts], dtype=np.int64), n)
        job = np.repeat(np.array([p[0] for p in parts], dtype=np.int64), n)
        slot = np.concatenate([p[3] for p in parts])
        dup = _first_duplicate([srv, wrk, slot])
        if dup is not None:
            i, count = dup
            s, w, t = int(srv[i]), int(wrk[i]), int(slot[i])
            jobs_there = sorted({int(x) for x in job[(srv == s) & (wrk == w) & (slot == t)]})
            out.append(Violation("2d", f"worker ({s}, {w}) trains more than one chunk at slot {t} "
                                       f"(jobs {jobs_there}); {count} such (worker, slot) pairs"))
    # (2f)/(4d): one job per PS and slot (a job's own overlapping runs are 2e).
    pparts = []
    for js in good:
        runs = [p for p in js.ps if p.end > p.start]
        if not runs:
            continue
        per_job = np.concatenate([
            np.column_stack([np.full(p.end - p.start, p.server), np.full(p.end - p.start, p.ps),
                             np.arange(p.start, p.end, dtype=np.int64)]) for p in runs])
        pparts.append(np.unique(per_job, axis=0) if len(runs) > 1 else per_job)
    if pparts:
        allp = np.concatenate(pparts).astype(np.int64)
        dup = _first_duplicate([allp[:, 0], allp[:, 1], allp[:, 2]])
        if dup is not None:
            i, count = dup
            s, p, t = (int(x) for x in allp[i])
            out.append(Violation("2f", f"PS ({s}, {p}) serves more than one job at slot {t}; "
                                       f"{count} such (PS, slot) pairs"))
    out.extend(_check_storage(instance, good))
    return out


def _check_storage(instance: Instance, jobs: list[JobSchedule]) -> list[Violation]:
    """(7b): sum of u_j over chunks stored on s at t <= U_s, chunk d stored on its server in [r_j, c_jd)."""
    out: list[Violation] = []
    events: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for js in jobs:
        job = instance.jobs[js.job]
        if job.chunk_size_mb is None:
            continue
        for c in js.chunks:
            if c.server >= len(instance.servers) or instance.servers[c.server].storage_mb is None or not c.slots:
                continue
            events[c.server].append((job.arrival, job.chunk_size_mb))
            events[c.server].append((max(c.slots) + 1, -job.chunk_size_mb))
    for s, ev in sorted(events.items()):
        ev.sort(key=lambda e: (e[0], e[1]))  # releases before arrivals at the same slot
        cap = instance.servers[s].storage_mb
        assert cap is not None
        used = 0.0
        for t, delta in ev:
            used += delta
            if used > cap + 1e-9:
                out.append(Violation("7b", f"server {s} stores {used:.1f} MB > U_s = {cap} MB at slot {t}"))
                break
    return out
