"""Schedules of the okita family, their validator (program (2), readings of instance.py) and the
objective (2): latency cost plus bandwidth cost (1).

A schedule holds, per job, one entry per slot in which the job does something:

* ``workers`` {site: y_i^r(t)}; ``ps_site`` the r with s_i^r(t) = 1 (None when no workers);
* ``transfers`` [[from, to, chunks]] = g_i^{from,to}(t); ``from == to`` is local data;
* ``trained`` {site: chunks}: the chunks trained at each site in that slot = sum of transfers into it.

How the validator reads each constraint (identical in the algorithms and the exact models):

* (2a) every chunk is trained exactly once: for each job and origin site r the chunks moved out of r
  over all slots equal D_i^r (their sum is (2a); never more than r holds is eq. (3), M_i^r(t) >= 0).
* (2b) ``rho_i y_i^{r'}(t) >= E_i trained^{r'}(t)``; ``trained`` must equal the transfers into r'
  (a chunk is trained in the slot it is moved, where it is moved to).
* (2c) exactly one PS site in every slot in which the job has workers, and none otherwise.
* (2d) per site, resource and slot: sum over jobs of m y + n s <= C (relative slack 1e-9).
* (2e) t_i = last slot with workers; a job with chunks must have one.
* (2f)/(2g) integers >= 0, site indices in range; slots in [a_i, T-1] ("arrival", "horizon").
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from edgeopt.core import Violation
from edgeopt.okita.instance import Instance

CAP_RTOL = 1e-9


class SlotEntry(BaseModel):
    """What one job does in one slot."""

    model_config = ConfigDict(extra="forbid")
    slot: int
    workers: dict[int, int] = Field(default_factory=dict, description="site -> y_i^r(t)")
    ps_site: int | None = Field(default=None, description="the site r with s_i^r(t) = 1")
    transfers: list[tuple[int, int, int]] = Field(default_factory=list, description="[from, to, chunks] = g")
    trained: dict[int, int] = Field(default_factory=dict, description="site -> chunks trained there")

    @property
    def n_workers(self) -> int:
        return sum(self.workers.values())


class JobSchedule(BaseModel):
    """The per-slot entries of one job."""

    model_config = ConfigDict(extra="forbid")
    job: int = Field(ge=0)
    slots: list[SlotEntry] = Field(default_factory=list)

    @property
    def completion(self) -> int | None:
        """t_i of (2e): the last slot with workers."""
        active = [e.slot for e in self.slots if e.n_workers > 0]
        return max(active) if active else None


class Schedule(BaseModel):
    """Schedules of the scheduled jobs, and the ids of jobs an algorithm gave up on."""

    model_config = ConfigDict(extra="forbid")
    jobs: list[JobSchedule] = Field(default_factory=list)
    rejected: list[int] = Field(default_factory=list)


# ---- objective ------------------------------------------------------------------------------------

def job_parts(instance: Instance, js: JobSchedule) -> dict[str, float]:
    """Latency, data-transfer and parameter-exchange cost of one job (eq. (1) and (2))."""
    job = instance.jobs[js.job]
    q = instance.q
    transfer = exchange = 0.0
    for e in js.slots:
        for a, b, c in e.transfers:
            transfer += float(q[a, b]) * job.chunk_size_mb * c
        if e.ps_site is not None:
            for r, y in e.workers.items():
                exchange += float(q[r, e.ps_site]) * job.param_size_mb * y
    t = js.completion
    latency = float(job.cost(t - job.arrival + 1)) if t is not None else 0.0
    return {"latency": latency, "transfer": transfer, "exchange": exchange}


def objective_parts(instance: Instance, schedule: Schedule) -> dict[str, float]:
    """The objective and its parts: ``latency``, ``bandwidth`` = ``transfer`` + ``exchange``, ``total``."""
    tot = {"latency": 0.0, "transfer": 0.0, "exchange": 0.0}
    for js in schedule.jobs:
        if 0 <= js.job < len(instance.jobs):
            for k, v in job_parts(instance, js).items():
                tot[k] += v
    tot["bandwidth"] = tot["transfer"] + tot["exchange"]
    tot["total"] = tot["latency"] + tot["bandwidth"]
    return tot


def objective(instance: Instance, schedule: Schedule) -> float:
    """Objective (2): sum over scheduled jobs of f_i(t_i - a_i + 1) + B_i."""
    return objective_parts(instance, schedule)["total"]


# ---- validator ------------------------------------------------------------------------------------

def _check_job(instance: Instance, js: JobSchedule, usage: np.ndarray) -> list[Violation]:
    out: list[Violation] = []
    i = js.job
    job = instance.jobs[i]
    R, T = len(instance.sites), instance.horizon
    moved_out = np.zeros(R, dtype=np.int64)
    seen: set[int] = set()
    wd = np.asarray(job.worker_demand, dtype=float)
    pd = np.asarray(job.ps_demand, dtype=float)
    for e in js.slots:
        t = e.slot
        if t in seen:
            out.append(Violation("2e", f"slot {t} listed twice", i))
            continue
        seen.add(t)
        if t < job.arrival:
            out.append(Violation("arrival", f"slot {t} is before the arrival {job.arrival}", i))
        if not 0 <= t < T:
            out.append(Violation("horizon", f"slot {t} outside 0..{T - 1}", i))
            continue
        ok = True
        for r, y in e.workers.items():
            if not 0 <= r < R:
                out.append(Violation("2f", f"slot {t}: workers on unknown site {r}", i))
                ok = False
            elif y < 0:
                out.append(Violation("2f", f"slot {t}: negative worker count {y} at site {r}", i))
                ok = False
        n = sum(max(0, y) for y in e.workers.values())
        if e.ps_site is not None and not 0 <= e.ps_site < R:
            out.append(Violation("2g", f"slot {t}: PS on unknown site {e.ps_site}", i))
            ok = False
        if n > 0 and e.ps_site is None:
            out.append(Violation("2c", f"slot {t}: {n} workers but no PS", i))
        if n == 0 and e.ps_site is not None:
            out.append(Violation("2c", f"slot {t}: a PS at site {e.ps_site} but no worker", i))
        into = np.zeros(R, dtype=np.int64)
        for a, b, c in e.transfers:
            if not (0 <= a < R and 0 <= b < R):
                out.append(Violation("2f", f"slot {t}: transfer between unknown sites {a} -> {b}", i))
                ok = False
                continue
            if c < 0:
                out.append(Violation("2f", f"slot {t}: negative transfer {c} from {a} to {b}", i))
                ok = False
                continue
            moved_out[a] += c
            into[b] += c
        trained = np.zeros(R, dtype=np.int64)
        for r, c in e.trained.items():
            if not 0 <= r < R or c < 0:
                out.append(Violation("2f", f"slot {t}: trained entry {r}: {c} invalid", i))
                ok = False
            else:
                trained[r] += c
        if not ok:
            continue
        if np.any(trained != into):
            r = int(np.flatnonzero(trained != into)[0])
            out.append(Violation("2b", f"slot {t}: {trained[r]} chunks trained at site {r} but {into[r]} moved "
                                 "there (a chunk is trained where it is moved, in that slot)", i))
        y = np.zeros(R)
        for r, c in e.workers.items():
            y[r] += c
        need = job.epochs * into
        short = job.worker_chunks_per_slot * y < need - 1e-9
        for r in np.flatnonzero(short):
            out.append(Violation("2b", f"slot {t}: site {r}: rho*y = {job.worker_chunks_per_slot * y[r]:g} < "
                                 f"E*chunks = {need[r]}", i))
        usage[t] += y[:, None] * wd[None, :]
        if e.ps_site is not None and n > 0:
            usage[t, e.ps_site] += pd
    D = np.asarray(job.data_chunks, dtype=np.int64)
    over = moved_out > D
    for r in np.flatnonzero(over):
        out.append(Violation("3", f"{moved_out[r]} chunks moved out of site {r}, which holds D = {D[r]} "
                             "(M_i^r(t) < 0)", i))
    if moved_out.sum() != D.sum() or np.any(moved_out < D):
        out.append(Violation("2a", f"{int(moved_out.sum())} chunks trained, {int(D.sum())} needed "
                             f"(per origin site: {moved_out.tolist()} vs {D.tolist()})", i))
    if js.completion is None:
        out.append(Violation("2e", "the job never has a worker (no completion time)", i))
    return out


def validate(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violated constraint of program (2) under the readings of this module (empty when valid)."""
    out: list[Violation] = []
    n = len(instance.jobs)
    R, K, T = len(instance.sites), len(instance.resources), instance.horizon
    usage = np.zeros((T, R, K))
    seen: dict[int, str] = {}
    for j in schedule.rejected:
        if not 0 <= j < n:
            out.append(Violation("2a", f"rejected job {j} does not exist"))
        elif j in seen:
            out.append(Violation("2a", f"job {j} rejected twice", j))
        seen[j] = "rejected"
    for js in schedule.jobs:
        if not 0 <= js.job < n:
            out.append(Violation("2a", f"schedule for unknown job {js.job}"))
            continue
        if js.job in seen:
            out.append(Violation("2a", f"job {js.job} is both {seen[js.job]} and scheduled", js.job))
            continue
        seen[js.job] = "scheduled"
        out.extend(_check_job(instance, js, usage))
    for j in range(n):
        if j not in seen:
            out.append(Violation("2a", "job neither scheduled nor rejected", j))
    cap = instance.capacity
    over = usage > cap[None] * (1 + CAP_RTOL) + 1e-9
    for t, r, k in zip(*np.nonzero(over), strict=True):
        out.append(Violation("2d", f"slot {t}, site {r}, {instance.resources[k]}: used {usage[t, r, k]:g} > "
                             f"capacity {cap[r, k]:g}"))
    return out


def usage_per_slot(instance: Instance, schedule: Schedule) -> np.ndarray:
    """Used resources [T, R, K] (workers and PSs of every scheduled job)."""
    T, R, K = instance.horizon, len(instance.sites), len(instance.resources)
    usage = np.zeros((T, R, K))
    for js in schedule.jobs:
        job = instance.jobs[js.job]
        wd, pd = np.asarray(job.worker_demand), np.asarray(job.ps_demand)
        for e in js.slots:
            if not 0 <= e.slot < T:
                continue
            for r, y in e.workers.items():
                usage[e.slot, r] += y * wd
            if e.ps_site is not None and e.n_workers > 0:
                usage[e.slot, e.ps_site] += pd
    return usage


def entry(slot: int, y: np.ndarray, ps: int | None, g: np.ndarray) -> SlotEntry:
    """A `SlotEntry` from arrays: workers y [R], PS site, transfers g [R, R] (from, to)."""
    src, dst = np.nonzero(g)
    trained = g.sum(axis=0)
    return SlotEntry(
        slot=int(slot),
        workers={int(r): int(y[r]) for r in np.flatnonzero(y)},
        ps_site=None if ps is None or not np.any(y) else int(ps),
        transfers=[(int(a), int(b), int(g[a, b])) for a, b in zip(src, dst, strict=True)],
        trained={int(r): int(trained[r]) for r in np.flatnonzero(trained)},
    )


def group_entries(entries: dict[int, list[SlotEntry]]) -> list[JobSchedule]:
    """Job schedules from ``{job: [entries]}``, sorted by job and slot."""
    return [JobSchedule(job=j, slots=sorted(es, key=lambda e: e.slot)) for j, es in sorted(entries.items())]


def split_transfers(totals: np.ndarray, trained: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """Per-slot transfers g [R, R] (from, to) from the totals G [R, R] and the chunks trained per slot
    ``trained`` {t: [R]}: at each destination, the slots take the origins' chunks in turn. Possible
    whenever every column of G sums to that destination's trained chunks over the slots."""
    left = totals.copy()
    out = {}
    for t in sorted(trained):
        g = np.zeros_like(left)
        for r2 in np.flatnonzero(trained[t]):
            need = int(trained[t][r2])
            for r in np.flatnonzero(left[:, r2]):
                take = min(need, int(left[r, r2]))
                g[r, r2] += take
                left[r, r2] -= take
                need -= take
                if not need:
                    break
        out[t] = g
    return out


__all__ = ["JobSchedule", "Schedule", "SlotEntry", "entry", "group_entries", "job_parts",
           "objective", "objective_parts", "split_transfers", "usage_per_slot", "validate"]
