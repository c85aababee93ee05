"""The preemptive validator as it was before it worked on runs of slots: it builds one int64 row per
(chunk, slot) and per (PS, slot), which took about 600 MB over the 8 million chunk-slots of a 2,000-job
paper-preset SRTF schedule. Kept verbatim, for tests only: `edgeopt.preemptive.schedule.validate` must
report the same violations, with the same messages, in the same order."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from edgeopt.core import Violation
from edgeopt.preemptive.instance import Instance
from edgeopt.preemptive.schedule import JobSchedule, Schedule, _check_storage, _index_errors, colocated


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


def validate_reference(instance: Instance, schedule: Schedule) -> list[Violation]:
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
