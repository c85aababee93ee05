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

import itertools
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


_BATCH_SLOTS = 1 << 18  # slots turned into arrays at once: about 10 MB of temporaries
_FAR = 1 << 61  # slots and PS bounds beyond +-2**61 are refused: run ends and sums of lengths stay in int64


def _int64(values: list[int] | itertools.chain[int], count: int) -> np.ndarray:
    """Slots or PS bounds as int64, refusing values whose ends or lengths could overflow (far outside any
    horizon; the caller, `FamilySpec.check_result`, reports the schedule as one that cannot be checked)."""
    out = np.fromiter(values, dtype=np.int64, count=count)
    if out.size and (int(out.min()) < -_FAR or int(out.max()) > _FAR):
        raise OverflowError(f"a slot or PS bound outside [-2**61, 2**61]: {int(out.min())}..{int(out.max())}")
    return out


class _Runs:
    """Every chunk entry of the checked jobs as maximal runs of consecutive distinct slots.

    The validator works on these runs instead of on one row per (chunk, slot): a 2,000-job paper-preset
    SRTF schedule has 8 million chunk-slots but about 137,000 runs, and the rows took 600 MB. Slots are
    turned into arrays a batch of chunks at a time (`_BATCH_SLOTS`), so the only memory that grows with
    the slot count is the schedule's own lists. Per entry (in job order, then chunk order): ``listed``
    (len(slots)), ``distinct``, ``first`` / ``last`` (smallest / largest slot; 0 when it has none) and
    ``run_ptr`` (its runs are ``start[run_ptr[e]:run_ptr[e + 1]]``, ``end`` likewise, half-open).
    """

    def __init__(self, jobs: list[JobSchedule]) -> None:
        entries = [c for js in jobs for c in js.chunks]
        columns: list[list[np.ndarray]] = [[] for _ in range(7)]
        batch: list[ChunkRun] = []
        size = 0
        for c in [*entries, None]:
            if c is None or (batch and size + len(c.slots) > _BATCH_SLOTS):
                if batch:
                    for col, part in zip(columns, _batch_runs(batch, size), strict=True):
                        col.append(part)
                batch, size = [], 0
            if c is not None:
                batch.append(c)
                size += len(c.slots)
        listed, distinct, first, last, start, end, per_entry = (_concat_int64(col) for col in columns)
        self.listed, self.distinct = listed.tolist(), distinct.tolist()
        self.first, self.last = first.tolist(), last.tolist()
        self.start, self.end = start, end
        self.run_ptr = np.zeros(len(entries) + 1, dtype=np.int64)
        np.cumsum(per_entry, out=self.run_ptr[1:])


def _concat_int64(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts).astype(np.int64, copy=False) if parts else np.zeros(0, dtype=np.int64)


def _batch_runs(batch: list[ChunkRun], size: int) -> tuple[np.ndarray, ...]:
    """`_Runs`' columns for a few chunks: sort each chunk's slots (they are normally sorted already),
    then a run breaks where the chunk changes or the next distinct slot is more than one further."""
    n = np.fromiter((len(c.slots) for c in batch), dtype=np.int64, count=len(batch))
    vals = _int64(itertools.chain.from_iterable(c.slots for c in batch), size)
    eid = np.repeat(np.arange(len(batch), dtype=np.int64), n)
    same = eid[1:] == eid[:-1]
    step = np.diff(vals)
    if np.any(same & (step < 0)):
        vals = vals[np.lexsort((vals, eid))]
        step = np.diff(vals)
    repeats = np.bincount(eid[1:][same & (step == 0)], minlength=len(batch))
    off = np.cumsum(n) - n
    has = n > 0
    first = np.zeros(len(batch), dtype=np.int64)
    last = np.zeros(len(batch), dtype=np.int64)
    first[has] = vals[off[has]]
    last[has] = vals[off[has] + n[has] - 1]
    brk = np.ones(vals.size, dtype=bool)
    brk[1:] = ~same | (step > 1)
    heads = np.flatnonzero(brk)
    tails = np.append(heads[1:], vals.size)[:heads.size] - 1
    per_entry = np.bincount(eid[heads], minlength=len(batch))
    return n, n - repeats, first, last, vals[heads], vals[tails] + 1, per_entry


def _merge(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of half-open intervals as sorted, disjoint, non-touching intervals."""
    if start.size == 0:
        return start, end
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(s.size, dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    heads = np.flatnonzero(new)
    return s[heads], reach[np.append(heads[1:], s.size) - 1]


def _covered(start: np.ndarray, end: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Whether each point of ``x`` lies in the union of merged intervals ``start``/``end``."""
    if start.size == 0:
        return np.zeros(x.size, dtype=bool)
    i = np.searchsorted(start, x, side="right") - 1
    return (i >= 0) & (x < end[np.maximum(i, 0)])


def _difference(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[int, int]:
    """(smallest slot, number of slots) of merged intervals ``a`` minus merged intervals ``b``; (0, 0) when empty.

    Every endpoint of either set cuts the line into pieces that lie wholly inside or outside each set,
    so one membership test per piece decides it."""
    if a[0].size == 0:
        return 0, 0
    cuts = np.unique(np.concatenate([a[0], a[1], b[0], b[1]]))
    lo, hi = cuts[:-1], cuts[1:]
    keep = _covered(*a, lo) & ~_covered(*b, lo)
    if not np.any(keep):
        return 0, 0
    return int(lo[np.argmax(keep)]), sum((hi - lo)[keep].tolist())  # Python ints: no overflow


def _first_double(start: np.ndarray, end: np.ndarray) -> int | None:
    """The smallest slot inside two of the (non-empty) intervals, or None.

    In start order, the first interval that starts before an earlier one ends starts the first overlap."""
    if start.size < 2:
        return None
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    hit = s[1:] < np.maximum.accumulate(e)[:-1]
    return int(s[1:][np.argmax(hit)]) if np.any(hit) else None


def _first_overlap(key: tuple[np.ndarray, ...], start: np.ndarray,
                   end: np.ndarray) -> tuple[tuple[int, ...], int, int] | None:
    """Intervals held on resources named by ``key`` columns, e.g. (server, worker): the smallest
    (resource, slot) held by two of them (lexicographic, like the rows' order) and how many
    (resource, slot) pairs are held more than once; None when none is.

    An event sweep: +1 at each start, -1 at each end, sorted by resource then slot; the running
    sum is the number of holders from an event to the next one (each resource's events sum to zero)."""
    if start.size < 2:
        return None
    pos = np.concatenate([start, end])
    delta = np.concatenate([np.ones(start.size, dtype=np.int64), np.full(end.size, -1, dtype=np.int64)])
    cols = [np.concatenate([k, k]) for k in key]
    order = np.lexsort((pos, *reversed(cols)))
    pos, held = pos[order], np.cumsum(delta[order])
    cols = [c[order] for c in cols]
    same = np.ones(pos.size - 1, dtype=bool)
    for c in cols:
        same &= c[1:] == c[:-1]
    length = np.diff(pos)
    over = same & (length > 0) & (held[:-1] >= 2)
    if not np.any(over):
        return None
    i = int(np.argmax(over))
    return tuple(int(c[i]) for c in cols), int(pos[i]), sum(length[over].tolist())


def _check_job(instance: Instance, js: JobSchedule, speed: float, runs: _Runs, e0: int,
               out: list[Violation]) -> None:
    """Per-job constraints: migration, 2a, 2b, 4e, 2i, 2k, 2e, cloud-no-preemption; ``runs``: the
    job's chunk entries are ``e0, e0 + 1, ...`` there."""
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
    entries: dict[int, list[int]] = defaultdict(list)
    for k, c in enumerate(js.chunks):
        entries[c.chunk].append(e0 + k)
    ptr = runs.run_ptr
    for d, es in sorted(entries.items()):
        if len(es) == 1:
            n = runs.distinct[es[0]]
        else:
            idx = np.concatenate([np.arange(ptr[e], ptr[e + 1]) for e in es])
            ms, me = _merge(runs.start[idx], runs.end[idx])
            n = int(np.sum(me - ms))
        if d < job.chunks and n < need:
            out.append(Violation("2b", f"chunk {d} trains {n} slots, needs {need} "
                                       f"(zeta={int(zeta)}, speed={speed})", j))
        elif d < job.chunks and n > need:
            out.append(Violation("2b", f"chunk {d} trains {n} slots, more than the {need} it needs "
                                       f"(a chunk stops once trained; zeta={int(zeta)}, speed={speed})", j))
    for k, c in enumerate(js.chunks):
        e = e0 + k
        n, lo, hi = runs.distinct[e], runs.first[e], runs.last[e]
        if not instance.eligible(j, c.server, c.worker):
            typ = instance.servers[c.server].workers[c.worker]
            out.append(Violation("2a", f"chunk {c.chunk} on worker ({c.server}, {c.worker}) of type {typ}, "
                                       f"job needs type {job.worker_type}", j))
        if n != runs.listed[e]:
            out.append(Violation("4e", f"chunk {c.chunk} lists a slot more than once", j))
        if n and (lo < 0 or hi >= T):
            out.append(Violation("2k", f"chunk {c.chunk} trains in slot outside [0, {T}): {lo}..{hi}", j))
        rel = instance.release(j, c.server)
        if n and lo < rel:
            out.append(Violation("2i", f"chunk {c.chunk} trains on server {c.server} at slot {lo} "
                                       f"< r_j + Delta = {rel}", j))
        if instance.servers[c.server].is_cloud and n and hi - lo + 1 != n:
            out.append(Violation("cloud-no-preemption", f"chunk {c.chunk} is preempted on the cloud", j))
    # (2e): exactly one PS in every slot the job trains, none in other slots.
    lo_run, hi_run = int(ptr[e0]), int(ptr[e0 + len(js.chunks)])
    train = _merge(runs.start[lo_run:hi_run], runs.end[lo_run:hi_run])
    ps_start = _int64([p.start for p in js.ps], len(js.ps))
    ps_end = _int64([p.end for p in js.ps], len(js.ps))
    double = _first_double(ps_start, ps_end)
    if double is not None:
        out.append(Violation("2e", f"more than one PS at slot {double}", j))
    held = _merge(ps_start, ps_end)
    first, count = _difference(train, held)
    if count:
        out.append(Violation("2e", f"no PS at training slot {first} ({count} slots)", j))
    first, count = _difference(held, train)
    if count:
        out.append(Violation("2e", f"PS assigned at slot {first} where no chunk trains ({count} slots)", j))
    for p in js.ps:
        rel = instance.release(j, p.server)
        if p.start < rel:
            out.append(Violation("2i", f"PS on server {p.server} at slot {p.start} < r_j + Delta = {rel}", j))
        if p.start < 0 or p.end > T:
            out.append(Violation("2k", f"PS run [{p.start}, {p.end}) outside [0, {T})", j))


def validate(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violated constraint of (2a)-(2k) / (4a)-(4h) (+ 7b when storage is given).

    Jobs listed in ``rejected`` are exempt from the constraints, but every job
    must be either scheduled or rejected, never both.

    The checks work on runs of consecutive slots (`_Runs`) and event sweeps, so the memory they add
    grows with the number of runs and PS runs, not with the number of (chunk, slot) or (PS, slot)
    pairs (a 2,000-job paper-preset SRTF schedule: 8 million chunk-slots, 137,000 runs).
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

    runs = _Runs(good)
    e0 = 0
    for js in good:
        _check_job(instance, js, schedule.speed, runs, e0, out)
        e0 += len(js.chunks)

    # (2d)/(4b): one chunk per worker and slot, over all chunks of all jobs. A chunk's own
    # repeated slots are 4e: its runs hold each slot once.
    entries = [(js.job, c.server, c.worker) for js in good for c in js.chunks]
    cols = np.array(entries, dtype=np.int64).reshape(len(entries), 3)
    of_run = np.repeat(np.arange(len(entries), dtype=np.int64), np.diff(runs.run_ptr))
    job, srv, wrk = (cols[of_run, k] for k in range(3))
    found = _first_overlap((srv, wrk), runs.start, runs.end)
    if found is not None:
        (s, w), t, count = found
        there = (srv == s) & (wrk == w) & (runs.start <= t) & (t < runs.end)
        jobs_there = sorted({int(x) for x in job[there]})
        out.append(Violation("2d", f"worker ({s}, {w}) trains more than one chunk at slot {t} "
                                   f"(jobs {jobs_there}); {count} such (worker, slot) pairs"))
    # (2f)/(4d): one job per PS and slot (a job's own overlapping runs are 2e, so they are merged first).
    held: list[tuple[int, int, int, int]] = []
    for js in good:
        per_ps: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
        for p in js.ps:
            per_ps[(p.server, p.ps)].append((p.start, p.end))
        for (s, q), spans in per_ps.items():
            a = np.array(spans, dtype=np.int64)
            ms, me = _merge(a[:, 0], a[:, 1]) if len(spans) > 1 else (a[:, 0], a[:, 1])
            held.extend((s, q, int(x), int(y)) for x, y in zip(ms, me, strict=True))
    ps_cols = np.array(held, dtype=np.int64).reshape(len(held), 4)
    found = _first_overlap((ps_cols[:, 0], ps_cols[:, 1]), ps_cols[:, 2], ps_cols[:, 3])
    if found is not None:
        (s, q), t, count = found
        out.append(Violation("2f", f"PS ({s}, {q}) serves more than one job at slot {t}; "
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
