"""``offline_fill`` (ours, NOT in Wang et al.): an offline list scheduler that sees every job in advance.

Like the siblings' ``offline_fill`` (edgecloud, hetero, tapfinger) it gives the certified interval
[lower bound, best schedule] an upper end and the large-neighbourhood search a start. It is of kind
``offline`` (it knows the future), so it is never a fair competitor of the online algorithms and is not
one of the paper's baselines.

Why it exists: the paper's baselines are online, and the two that serve as the search's starts
(``srtf_elastic``, ``tiresias_l_elastic``) run a job only when every one of its D_j workers is free in the
same slot. The model itself does not ask that: a chunk is pinned to one worker (no migration) and may be
preempted there, so the chunks of a job may train in different slots. On the ``paper`` preset with the
``far_cloud`` regime the gang schedules keep the edge workers 56-84 % busy in the first 200 slots where
the LP bound keeps them 81-100 % busy.

How it schedules (each step deterministic):

* Jobs are placed one at a time, each at its earliest completion in what the jobs placed before it leave
  (`Held.earliest`): a chunk of job j on edge worker k of server s trains in the first p_j free slots of k
  from r_j + Delta_js on ((2b), (2d), (2i); preemption fills the gaps earlier jobs left); in a slot before
  the cloud may serve it (t < r_j + Delta_jc) the job also needs a free edge PS on a server it may use
  ((2e), (2f), (2i)); with storage limits (7b) a server takes no more of j's chunks than fit from r_j on.
  Of every (worker, i-th chunk there) finish and the cloud's (a chunk on the cloud trains p_j slots from
  r_j + Delta_jc, not colocated: unlimited workers) the D_j earliest are taken, which minimises the job's
  completion. The whole job on the cloud (colocated, p_j^c slots from r_j + Delta_jc) is taken instead
  when it completes no later.
* Three job orders: shortest edge run first (ceil(D_j / eligible workers) p_j), arrival order, and least
  work first (D_j p_j). Jobs a pass could not place are moved to the front and the pass is repeated, up to
  ``repairs`` times (`edgeopt.core.listsched.best_of_passes`).
* Improvement sweeps (`edgeopt.core.listsched.sweep`): every job in turn, latest completion first, is taken
  out and placed again at its earliest completion while every other job stays; a move is kept only when
  the job completes earlier, so no sweep makes the total JCT worse.

`recreate` runs ruin and recreate (`edgeopt.core.listsched.ruin_recreate`) with the same placement; it is the
local search of the preemptive large-neighbourhood search (`formulations.preemptive.lns.local_search`).

PSs: in a slot at or after r_j + Delta_jc the job's PS is on the cloud (unlimited); before it, on the edge
server with a free PS that the job may use with the most free PSs (lowest index on ties).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from edgeopt.core import Result, register, stopwatch
from edgeopt.core.listsched import (
    MAX_RUIN_ITERATIONS,
    RuinLog,
    best_of_passes,
    check_counts,
    ruin_recreate,
    sweep,
)
from edgeopt.preemptive.instance import Instance
from edgeopt.preemptive.schedule import ChunkRun, JobSchedule, PsRun, Schedule, count_preemptions
from edgeopt.preemptive.spec import FAMILY

ORDERS = ("spt", "arrival", "work")

#: Slots the occupancy arrays grow by at least when a placement needs more (they start at the latest
#: arrival plus the longest delay and run).
GROW = 1024


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where job ``job`` trains: ``edge`` = ((worker k, slots), ...) one entry per edge chunk, ``cloud``
    chunks on the cloud from ``cloud_from`` (``colocated``: the whole job, p_j^c slots each), ``ps`` =
    ((slot, server), ...) for its slots before the cloud may hold its PS, and its completion c_j."""

    job: int
    edge: tuple[tuple[int, tuple[int, ...]], ...]
    cloud: int
    cloud_from: int
    colocated: bool
    ps: tuple[tuple[int, int], ...]
    end: int


class Held:
    """What the placed jobs hold: edge workers per slot, edge PSs per (server, slot), storage per (server,
    slot). ``earliest`` places one job in what is left; ``put`` and ``take_out`` book and free it."""

    def __init__(self, instance: Instance) -> None:
        self.inst = instance
        self.T = int(instance.horizon)
        self.cloud = instance.cloud
        self.workers: list[tuple[int, int]] = [(s, w) for s, sv in enumerate(instance.servers) if not sv.is_cloud
                                               for w in range(len(sv.workers))]
        self.index = {sw: k for k, sw in enumerate(self.workers)}
        self.w_server = np.array([s for s, _ in self.workers], dtype=np.int64)
        self.w_type = np.array([instance.servers[s].workers[w] for s, w in self.workers], dtype=np.int64)
        S = len(instance.servers)
        self.edge_servers = np.array([s for s in range(S) if not instance.servers[s].is_cloud], dtype=np.int64)
        self.ps_cap = np.array([0 if sv.is_cloud else sv.ps for sv in instance.servers], dtype=np.int64)
        self.store_cap = np.array([math.inf if sv.storage_mb is None or sv.is_cloud else sv.storage_mb
                                   for sv in instance.servers])
        self.p_edge = instance.chunk_slots_array(False)
        self.p_colo = instance.chunk_slots_array(True)
        self.delay = np.array([job.upload_delay_slots for job in instance.jobs], dtype=np.int64).reshape(-1, S)
        self.arrival = np.array([job.arrival for job in instance.jobs], dtype=np.int64)
        start = int((self.arrival.max(initial=0) + self.delay.max(initial=0) + self.p_edge.max(initial=1)) * 2)
        self.H = max(1, min(self.T, start + GROW))
        self.occ = np.zeros((len(self.workers), self.H), dtype=bool)
        self.ps_used = np.zeros((S, self.H), dtype=np.int64)
        self.stored = np.zeros((S, self.H))

    def _grow(self, need: int) -> None:
        H = min(self.T, max(need, self.H + max(GROW, self.H)))
        if H <= self.H:
            return
        pad = H - self.H
        self.occ = np.pad(self.occ, ((0, 0), (0, pad)))
        self.ps_used = np.pad(self.ps_used, ((0, 0), (0, pad)))
        self.stored = np.pad(self.stored, ((0, 0), (0, pad)))
        self.H = H

    def cloud_start(self, j: int) -> int | None:
        return None if self.cloud is None else int(self.arrival[j] + self.delay[j, self.cloud])

    def _ps_open(self, j: int, until: int) -> np.ndarray:
        """[until - r_j] bool: slots r_j .. until - 1 in which some edge server j may use has a free PS."""
        r = int(self.arrival[j])
        out = np.zeros(max(0, until - r), dtype=bool)
        if out.size == 0:
            return out
        for s in self.edge_servers:
            if self.ps_cap[s] <= 0:
                continue
            lo = int(self.arrival[j] + self.delay[j, s])
            if lo < until:
                out[lo - r:] |= self.ps_used[s, lo:until] < self.ps_cap[s]
        return out

    def earliest(self, j: int) -> Placement | None:
        """Job j at its earliest completion in what is left (module docstring), or None when it fits nowhere
        within the horizon."""
        inst = self.inst
        D, p, r = int(inst.jobs[j].chunks), int(self.p_edge[j]), int(self.arrival[j])
        cs = self.cloud_start(j)
        colo = None
        if cs is not None and cs + int(self.p_colo[j]) <= self.T:
            colo = cs + int(self.p_colo[j])
        cloud_chunk = cs + p if cs is not None and cs + p <= self.T else None
        while True:
            fin, wk, free_of = self._edge_finishes(j, D, p, cs)
            # the D earliest of the edge finishes and the cloud's (unlimited), at most what storage lets a
            # server hold (a server's chunks are skipped from its first one that does not fit, so each worker
            # keeps a prefix of its chunks)
            order = np.argsort(np.asarray(fin, dtype=np.int64), kind="stable")
            take: list[int] = []
            room = self._storage_room(j)
            per_server: dict[int, int] = {}
            for o in order:
                if len(take) == D or (cloud_chunk is not None and fin[o] > cloud_chunk):
                    break
                s = int(self.w_server[wk[o]])
                if per_server.get(s, 0) < room[s]:
                    take.append(int(o))
                    per_server[s] = per_server.get(s, 0) + 1
            n_cloud = D - len(take)
            last_edge = max((fin[o] for o in take), default=0)
            # every finish the arrays cannot show is >= H: enough when none of them could be taken
            if self.H >= self.T or (last_edge < self.H and (n_cloud == 0 or (cloud_chunk is not None and cloud_chunk < self.H))):
                break
            self._grow(self.H + GROW)
        if n_cloud and cloud_chunk is None:
            edge_end = None
        else:
            edge_end = max(last_edge, cloud_chunk if n_cloud else 0)
        if colo is not None and (edge_end is None or colo <= edge_end or not take):
            return Placement(j, (), D, cs, True, (), colo)
        if edge_end is None:
            return None
        return self._build(j, [wk[o] for o in take], free_of, n_cloud, cs, p, r, int(edge_end))

    def _storage_room(self, j: int) -> dict[int, float]:
        """Per edge server, how many chunks of j it may still store from r_j on (inf without a limit)."""
        u = self.inst.jobs[j].chunk_size_mb
        r = int(self.arrival[j])
        out: dict[int, float] = {}
        for s in self.edge_servers:
            cap = self.store_cap[s]
            if u is None or not math.isfinite(cap):
                out[int(s)] = math.inf
            else:
                free = cap - float(self.stored[s, r:].max(initial=0.0))
                out[int(s)] = max(0, math.floor((free + 1e-9) / u))
        return out

    def _usable(self, j: int, cs: int | None) -> np.ndarray:
        """[H] bool: slots where job j could hold a PS (after the cloud's start, or a free edge PS)."""
        ok = np.ones(self.H, dtype=bool)
        r = int(self.arrival[j])
        ok[:r] = False
        until = self.H if cs is None else min(cs, self.H)
        if until > r:
            ok[r:until] = self._ps_open(j, until)
        return ok

    def _edge_finishes(self, j: int, D: int, p: int, cs: int | None
                       ) -> tuple[list[int], list[int], dict[int, np.ndarray]]:
        """Per eligible worker, the finish of its 1st, 2nd, ... chunk of j (at most D each) within the
        occupancy arrays: (finishes, their workers, each worker's free usable slots from j's release there on,
        which `_build` cuts the chunks from)."""
        typ = int(self.inst.jobs[j].worker_type)
        usable = self._usable(j, cs)
        fin: list[int] = []
        wk: list[int] = []
        free_of: dict[int, np.ndarray] = {}
        for k in np.flatnonzero(self.w_type == typ).tolist():
            lo = int(self.arrival[j] + self.delay[j, self.w_server[k]])
            if lo >= self.T:
                continue
            free = free_of[k] = np.flatnonzero(~self.occ[k, lo:] & usable[lo:]) + lo
            ends = (free[p - 1::p][:D] + 1).tolist()  # the i-th chunk ends after the (i p)-th free slot
            fin += ends
            wk += [k] * len(ends)
        return fin, wk, free_of

    def _build(self, j: int, workers: list[int], free_of: dict[int, np.ndarray], n_cloud: int, cs: int | None,
               p: int, r: int, end: int) -> Placement:
        """The placement of j with one edge chunk per entry of ``workers`` (each worker's chunks in its first
        free usable slots, `_edge_finishes`), ``n_cloud`` chunks on the cloud and a free edge PS in each of its
        slots before the cloud may hold it."""
        edge = []
        for k, n in sorted(Counter(workers).items()):
            free = free_of[k]
            for i in range(n):
                edge.append((k, tuple(int(t) for t in free[i * p:(i + 1) * p])))
        ps = []
        if cs is None or cs > r:
            trains = sorted({t for _, slots in edge for t in slots if cs is None or t < cs})
            for t in trains:
                best_s, best_free = -1, 0
                for s in self.edge_servers:
                    if self.arrival[j] + self.delay[j, s] <= t:
                        free_ps = int(self.ps_cap[s] - self.ps_used[s, t])
                        if free_ps > best_free:
                            best_s, best_free = int(s), free_ps
                assert best_s >= 0, "a slot without a free PS was usable"
                ps.append((t, best_s))
        return Placement(j, tuple(edge), n_cloud, -1 if cs is None else cs, False, tuple(ps), end)

    def _book(self, pl: Placement, sign: int) -> None:
        u = self.inst.jobs[pl.job].chunk_size_mb
        r = int(self.arrival[pl.job])
        for k, slots in pl.edge:
            self.occ[k, list(slots)] = sign > 0
            if u is not None and math.isfinite(self.store_cap[self.w_server[k]]):
                self.stored[self.w_server[k], r:max(slots) + 1] += sign * u
        for t, s in pl.ps:
            self.ps_used[s, t] += sign

    def put(self, j: int, pl: Placement) -> None:
        self._book(pl, +1)

    def take_out(self, j: int, pl: Placement) -> None:
        self._book(pl, -1)


def fill(instance: Instance, order: Sequence[int]) -> tuple[dict[int, Placement], list[int]]:
    """One pass: the jobs of ``order`` placed one at a time at their earliest completion."""
    held = Held(instance)
    placed: dict[int, Placement] = {}
    rejected: list[int] = []
    for j in order:
        pl = held.earliest(j)
        if pl is None:
            rejected.append(j)
            continue
        held.put(j, pl)
        placed[j] = pl
    return placed, rejected


def improve(instance: Instance, placed: dict[int, Placement], sweeps: int) -> tuple[dict[int, Placement], int]:
    """Improvement sweeps (module docstring), latest completion first."""
    held = Held(instance)
    for j, pl in placed.items():
        held.put(j, pl)
    order = sorted(placed, key=lambda j: (-placed[j].end, j))
    return sweep(placed, order, take_out=held.take_out, earliest=held.earliest, put=held.put,
                 end=lambda pl: pl.end, sweeps=sweeps)


def placements_of(instance: Instance, schedule: Schedule) -> dict[int, Placement] | None:
    """The placements of a complete schedule at speed 1 (None otherwise), each job no later than in it: its edge
    chunks and, in its slots before r_j + Delta_jc, its edge PSs as they are; its cloud chunks from r_j +
    Delta_jc (the cloud is unlimited, so no chunk there need wait) and its PS there from then on; a job with
    every chunk on the cloud wholly colocated (p_j^c <= p_j)."""
    if schedule.rejected or schedule.speed != 1.0 or len(schedule.jobs) != len(instance.jobs):
        return None
    held = Held(instance)
    cloud = instance.cloud
    out: dict[int, Placement] = {}
    for js in schedule.jobs:
        j = int(js.job)
        cs = held.cloud_start(j)
        edge = tuple((held.index[(c.server, c.worker)], tuple(sorted(int(t) for t in c.slots)))
                     for c in sorted(js.chunks, key=lambda c: c.chunk) if c.server != cloud)
        n_cloud = len(js.chunks) - len(edge)
        if n_cloud and cs is None:
            return None
        if not edge:
            assert cs is not None
            out[j] = Placement(j, (), n_cloud, cs, True, (), cs + int(held.p_colo[j]))
            continue
        ps = tuple(sorted((t, int(run.server)) for run in js.ps if run.server != cloud
                          for t in range(run.start, run.end) if cs is None or t < cs))
        end = max(max(slots) + 1 for _, slots in edge)
        if n_cloud:
            end = max(end, cs + int(held.p_edge[j]))
        out[j] = Placement(j, edge, n_cloud, -1 if cs is None else cs, False, ps, int(end))
    return out


def recreate(instance: Instance, schedule: Schedule, deadline, *, seed: int = 0, size: int | Sequence[int] = 12,
             patience: int | None = None, max_iterations: int = MAX_RUIN_ITERATIONS
             ) -> tuple[Schedule | None, RuinLog]:
    """``schedule`` improved by ruin and recreate (`edgeopt.core.listsched.ruin_recreate`) until ``deadline``: a
    dozen jobs are taken out together and placed again one by one at their earliest completion
    (`Held.earliest`, shortest edge run first, perturbed). A move is kept only when the total JCT falls.

    Jobs of different worker types share only the edge PSs, so the ruins that pick jobs close in time ("time"
    and "related") pick them among one type: each job's time is read on an axis where every type has its own
    stretch (type x (T + 1) + slot). On the `paper` preset with ``far_cloud`` (seed 0, from `offline_fill`'s
    37,940, 120 s) this reached 37,334, against 37,546 with the types mixed.

    Returns (the schedule, or None when nothing improved or the schedule leaves jobs out; the log)."""
    placed = placements_of(instance, schedule)
    if placed is None or len(placed) < 2:
        return None, RuinLog()
    held = Held(instance)
    for j, pl in placed.items():
        held.put(j, pl)
    alone = _alone(instance)
    axis = int(instance.horizon) + 1
    typ = {j: int(instance.jobs[j].worker_type) * axis for j in placed}

    def start(pl: Placement) -> int:
        first = min(min(slots) for _, slots in pl.edge) if pl.edge else pl.cloud_from
        return typ[pl.job] + int(first)

    placed, log = ruin_recreate(
        placed, take_out=held.take_out, earliest=held.earliest, put=held.put, start=start,
        end=lambda pl: typ[pl.job] + pl.end, cost=lambda j, pl: float(pl.end - instance.jobs[j].arrival),
        urgency=lambda j: 1.0 / alone[j], deadline=deadline, seed=seed, size=size, patience=patience,
        max_iterations=max_iterations)
    return (to_schedule(instance, placed, []) if log.accepted else None), log


def total(instance: Instance, placed: dict[int, Placement]) -> float:
    """Total JCT sum_j (c_j - r_j) of the placed jobs."""
    return float(sum(pl.end - instance.jobs[j].arrival for j, pl in placed.items()))


def to_schedule(instance: Instance, placed: dict[int, Placement], rejected: Sequence[int]) -> Schedule:
    """The placements as a `Schedule`: edge chunks on their workers, cloud chunks each on its own cloud worker
    label, PS indices per (server, slot) numbered in job order."""
    cloud = instance.cloud
    held = Held(instance)
    label = 0
    ps_next: dict[tuple[int, int], int] = {}
    jobs = []
    for j in sorted(placed):
        pl = placed[j]
        p = int(held.p_colo[j] if pl.colocated else held.p_edge[j])
        runs = []
        for d, (k, slots) in enumerate(pl.edge):
            s, w = held.workers[k]
            runs.append(ChunkRun(chunk=d, server=s, worker=w, slots=list(slots)))
        for d in range(len(pl.edge), len(pl.edge) + pl.cloud):
            runs.append(ChunkRun(chunk=d, server=int(cloud), worker=label, slots=list(range(pl.cloud_from,
                                                                                      pl.cloud_from + p))))
            label += 1
        slots = sorted({t for r in runs for t in r.slots})
        ps_of = dict(pl.ps)
        ps_runs: list[PsRun] = []
        for t in slots:
            if t in ps_of:
                s = ps_of[t]
                q = ps_next.get((s, t), 0)
                ps_next[(s, t)] = q + 1
            else:
                s, q = int(cloud), j
            last = ps_runs[-1] if ps_runs else None
            if last is not None and last.server == s and last.ps == q and last.end == t:
                last.end = t + 1
            else:
                ps_runs.append(PsRun(server=s, ps=q, start=t, end=t + 1))
        jobs.append(JobSchedule(job=j, chunks=runs, ps=ps_runs))
    return Schedule(jobs=jobs, rejected=sorted(int(j) for j in rejected))


def _alone(instance: Instance) -> dict[int, int]:
    """Per job, ceil(D_j / its type's edge workers) p_j: its edge run alone (at least 1)."""
    n_type: dict[int, int] = {}
    for sv in instance.servers:
        if not sv.is_cloud:
            for typ in sv.workers:
                n_type[typ] = n_type.get(typ, 0) + 1
    p = instance.chunk_slots_array(False)
    return {j: max(1, -(-job.chunks // max(1, n_type.get(job.worker_type, 0))) * int(p[j]))
            for j, job in enumerate(instance.jobs)}


def _order(instance: Instance, order: str) -> list[int]:
    p = instance.chunk_slots_array(False)
    jobs = instance.jobs
    if order == "spt":
        alone = _alone(instance)
        key = lambda j: (alone[j], jobs[j].arrival, j)
    elif order == "work":
        key = lambda j: (jobs[j].chunks * int(p[j]), jobs[j].arrival, j)
    else:
        key = lambda j: (jobs[j].arrival, j)
    return sorted(range(len(jobs)), key=key)


@register("preemptive", "offline_fill", kind="offline", ranges={"repairs": ">= 0", "sweeps": ">= 0"},
          summary="NOT in the paper (ours): offline list scheduling of chunks at the earliest completion, "
                  "then improvement sweeps; an upper end for the certified interval")
def offline_fill(instance: Instance, *, seed: int = 0, repairs: int = 3, sweeps: int = 3) -> Result:
    """Offline list scheduling (see the module docstring): 3 job orders, each repaired by moving its rejected
    jobs to the front, then improvement sweeps; the best result is returned. Deterministic.

    Args:
        repairs: how many times each pass is repeated with its rejected jobs moved to the front.
        sweeps: at most this many improvement sweeps (each job re-placed at its earliest completion).
    """
    check_counts(repairs=repairs, sweeps=sweeps)
    with stopwatch() as el:
        variants = [(order, _order(instance, order), lambda ids: fill(instance, ids)) for order in ORDERS]
        out = best_of_passes(variants, lambda placed: improve(instance, placed, sweeps),
                             lambda placed: total(instance, placed), repairs)
        sched = to_schedule(instance, out.placed, out.rejected)
    return FAMILY.algorithm_result(instance, "offline_fill", sched, el[0], rejected=out.rejected,
                                   extra={"chosen": out.label, "passes": out.passes, "repairs": repairs,
                                          "sweeps": sweeps, "moves": out.moves,
                                          "preemptions": count_preemptions(instance, sched)})


__all__ = ["ORDERS", "Held", "Placement", "fill", "improve", "offline_fill", "placements_of", "recreate",
           "to_schedule", "total"]
