"""A_online (Alg. 1) of Wang et al.: A_greedy (Alg. 2-4) dispatches every chunk
of an arriving job to one worker, each edge worker trains its chunks by HAPRF
with preemption, the cloud trains without preemption; A_ps (Alg. 5) gives each
running job one PS per slot.

Interpretations (see also the module docstrings of `instance` and `schedule`):

* HAPRF: gamma_jd = n_jsw / (E_j D_j B_j) = 1 / (D_j P_j) with P_j the chunk's
  whole-slot processing time; the highest gamma trains first, FIFO on ties
  (earlier dispatch first). Identical for all chunks of a job.
* Q_jdsw (eq. 5) is "the increment in total average training time" of
  dispatching chunk d to worker w. On an edge worker it is computed exactly
  by simulating the worker's HAPRF queue with and without the chunk
  (`queues.WorkerQueue.insertion`): mu (c_jd - r_j) of the chunk (upload
  delay + waiting behind higher-gamma work + processing, terms 1-3) plus the
  extra mu (c - r) of every lower-gamma chunk it postpones (term 4). This is
  eq. (5) exactly when the worker's pending chunks are already uploaded; with
  uploads still running, (5)'s terms are only an estimate and the simulation
  is kept (so Lemma 4 holds exactly, by telescoping).
* Cloud (Alg. 3 lines 2-8): Q = (Delta_{j,c} + P_j)/D_j, with the colocated
  P_j (zeta_j = 1) for the first chunk; once a first chunk goes to an edge
  worker, the cloud's Q is recomputed with zeta_j = 0 (Alg. 2 lines 17-20).
  If the first chunk goes to the cloud, all chunks go there (lines 12-16).
  Cloud chunks train contiguously from r_j + Delta_{j,c}, each on its own
  cloud worker label.
* Dual values (Sec. IV-C): alpha_jd = min Q at dispatch; beta_sw(t) = sum of
  mu_jd = 1/D_j over chunks on (s, w) with r_j <= t < c_jd (final c_jd),
  as in Alg. 4 line 8 and the proof of Lemma 4. The terms come from the
  policy's own log (dispatch, and the completion its worker reported), not
  from the schedule, so Lemma 4 can be checked against the schedule. Returned as
  ``extra["duals"] = {"alpha": [[alpha_jd]], "beta_terms": [[s, w, r_j, c_jd, 1/D_j]]}``
  (cloud chunks included with their labels).
* Speed augmentation: ``speed = 1 + eps`` shortens P_j to
  ``ceil(E_j B_j tau_j / speed)``; the schedule records ``speed`` and the
  validator checks it at that speed.
* Storage (Sec. VI): a server is a candidate only if its free storage (U_s
  minus u of the chunks stored there that are not yet complete) holds u_j.
* A_ps (Alg. 5), see `assign_ps`: a job training at t keeps the PS it had at
  t-1 if that PS is on the cloud or on an edge server where the job trains at
  t (an edge PS is released as soon as the job trains only elsewhere, e.g. only
  its cloud chunks run). Otherwise it takes the cloud PS if it trains on the
  cloud at t (so a job entirely on the cloud keeps zeta_j = 1), else a PS drawn
  uniformly (seeded) on a uniformly drawn edge server where it trains at t with
  a free PS (o_jsp = 1), else (fallback) the cloud if (2i) allows, its previous
  PS if free, or any edge server it may use (2i) with a free PS. With
  ps_s >= W_s on every edge server no job is ever rejected by A_ps. A_ps is run
  slot by slot after the driver has passed those slots: its decision at t reads
  only where jobs train at t and t-1, which is final by then, so this equals
  running it in each slot. Which PS serves a job changes no objective (Sec. IV-D).
* Jobs the algorithm cannot place (no eligible worker, no storage, or a
  chunk that cannot finish before the horizon) are rejected; so is a job for
  which A_ps finds no free PS when it must draw one (Lemma 3 assumes this
  never happens; impossible when ps_s >= W_s on every edge server; see
  `assign_ps`).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from edgeopt.core import InputError, OnlinePolicy, register, run_online, stopwatch
from edgeopt.preemptive.instance import Instance, Job
from edgeopt.preemptive.queues import QChunk, WorkerQueue
from edgeopt.preemptive.schedule import (
    ChunkRun,
    JobSchedule,
    PsRun,
    Schedule,
    count_preemptions,
    job_preemptions,
)
from edgeopt.preemptive.spec import FAMILY

FAMILY_NAME = "preemptive"


class GreedyPolicy(OnlinePolicy[Job]):
    """A_greedy run online: dispatch at arrival, HAPRF execution, completions at wake-ups.

    Args:
        instance: static data (servers, horizon); jobs are only read when revealed.
        speed: 1 + eps.
        use_cloud: False gives A_online-E (edge servers only).
    """

    def __init__(self, instance: Instance, *, speed: float = 1.0, use_cloud: bool = True) -> None:
        super().__init__()
        self.inst = instance
        self.speed = speed
        self.cloud = instance.cloud if use_cloud else None
        self.queues: dict[tuple[int, int], WorkerQueue] = {}
        self.by_type: dict[int, list[tuple[int, int]]] = {}
        for s, sv in enumerate(instance.servers):
            if sv.is_cloud:
                continue
            for w, typ in enumerate(sv.workers):
                self.queues[(s, w)] = WorkerQueue(s, w)
                self.by_type.setdefault(typ, []).append((s, w))
        self.storage_free = [sv.storage_mb for sv in instance.servers]
        self.stored: dict[int, list[tuple[QChunk, float]]] = {}  # server -> chunks holding storage
        self.cloud_chunks: dict[int, list[tuple[int, int, int, int]]] = {}  # job -> (chunk, label, start, end)
        self.alpha: dict[int, list[float]] = {}
        self.rejected: list[int] = []
        self.seq = 0
        self.cloud_label = 0
        self.heap: list[tuple[int, int, int]] = []  # (planned completion, server, worker)
        self.wake: dict[tuple[int, int], int] = {}  # the heap entry of each worker that is current
        # The algorithm's own dual bookkeeping (Alg. 4 line 8): beta_sw(t) gains mu_jd = 1/D_j from r_j
        # when chunk (j, d) is dispatched to (s, w) and loses it when the worker reports the chunk done.
        # Kept apart from the schedule (built later from the queues' executed intervals), so Lemma 4
        # can be checked against the schedule.
        self.beta_open: dict[tuple[int, int], tuple[int, int, int, float]] = {}  # (j, d) -> (s, w, r_j, mu)
        self.beta_close: dict[tuple[int, int], int] = {}  # (j, d) -> slot its worker reported it done

    # ---- driver hooks ----
    def on_arrival(self, t: int, jobs: Sequence[Job]) -> None:
        for job in jobs:
            self._dispatch(t, job)

    def on_slot(self, t: int) -> None:
        while self.heap and self.heap[0][0] <= t:
            when, s, w = heapq.heappop(self.heap)
            if self.wake.get((s, w)) != when:
                continue  # stale: the worker was replanned since
            del self.wake[(s, w)]
            q = self.queues[(s, w)]
            for c in self._advance(q, t):
                self.commit(c.job, {"completed": c.chunk, "slot": c.planned_end})
            self._push(q)

    def next_wakeup(self, t: int) -> int | None:
        while self.heap and (self.heap[0][0] <= t or self.wake.get(self.heap[0][1:]) != self.heap[0][0]):
            heapq.heappop(self.heap)
        return self.heap[0][0] if self.heap else None

    def _advance(self, q: WorkerQueue, t: int) -> list[QChunk]:
        """``q.advance(t)``, recording each reported completion in the dual bookkeeping."""
        done = q.advance(t)
        for c in done:
            self.beta_close[(c.job, c.chunk)] = c.planned_end
        return done

    def _push(self, q: WorkerQueue) -> None:
        """(Re)schedule the wake-up of ``q`` at its next planned completion."""
        nxt = q.next_completion()
        key = (q.server, q.worker)
        if nxt is None:
            self.wake.pop(key, None)
        elif self.wake.get(key) != nxt:
            self.wake[key] = nxt
            heapq.heappush(self.heap, (nxt, q.server, q.worker))

    # ---- A_greedy (Alg. 2) ----
    def _storage_ok(self, s: int, t: int, need: float | None) -> bool:
        cap = self.inst.servers[s].storage_mb
        if cap is None or need is None:
            return True
        held = self.stored.get(s, [])
        held[:] = [(c, u) for c, u in held if c.planned_end > t]  # plans are exact: done by t iff end <= t
        return sum(u for _, u in held) + need <= cap + 1e-9

    def _dispatch(self, t: int, job: Job) -> None:
        inst = self.inst
        j = job.id
        p_edge = inst.chunk_slots(j, False, self.speed)
        p_colo = inst.chunk_slots(j, True, self.speed)
        mu = 1.0 / job.chunks
        u = job.chunk_size_mb
        cands = [sw for sw in self.by_type.get(job.worker_type, []) if sw[1] >= 0]
        for sw in cands:
            self._advance(self.queues[sw], t)
        horizon = inst.horizon

        def edge_q(sw: tuple[int, int], d: int) -> tuple[float, QChunk] | None:
            s, _w = sw
            if not self._storage_ok(s, t, u):
                return None
            chunk = QChunk(key=(job.chunks * p_edge, self.seq), job=j, chunk=d, arrival=job.arrival,
                           release=inst.release(j, s), remaining=p_edge, weight=mu)
            inc, end, _ = self.queues[sw].insertion(chunk)
            if end > horizon:
                return None
            return inc, chunk

        def cloud_q(colocated: bool) -> float | None:
            if self.cloud is None:
                return None
            p = p_colo if colocated else p_edge
            if inst.release(j, self.cloud) + p > horizon:
                return None
            return mu * (job.upload_delay_slots[self.cloud] + p)

        qs: dict[tuple[int, int], tuple[float, QChunk] | None] = {sw: edge_q(sw, 0) for sw in cands}
        q_cloud = cloud_q(True)
        alphas: list[float] = []
        placed: list[tuple[int, int, int]] = []
        for d in range(job.chunks):
            best_sw, best = None, math.inf
            for sw in cands:  # edge workers in index order, then the cloud: ties go to the edge
                e = qs[sw]
                if e is not None and e[0] < best - 1e-12:
                    best_sw, best = sw, e[0]
            if q_cloud is not None and q_cloud < best - 1e-12:
                best_sw, best = None, q_cloud
            if best == math.inf:
                self._reject(j, placed)
                return
            if best_sw is None:
                assert self.cloud is not None
                colocated = d == 0
                p = p_colo if colocated else p_edge
                start = inst.release(j, self.cloud)
                todo = range(job.chunks) if colocated else [d]
                for dd in todo:
                    self.cloud_chunks.setdefault(j, []).append((dd, self.cloud_label, start, start + p))
                    self.beta_open[(j, dd)] = (self.cloud, self.cloud_label, job.arrival, mu)
                    self.beta_close[(j, dd)] = start + p  # the cloud never preempts
                    placed.append((dd, self.cloud, self.cloud_label))
                    self.cloud_label += 1
                    alphas.append(best)
                if colocated:
                    break
            else:
                e = qs[best_sw]
                assert e is not None
                chunk = e[1]
                chunk.chunk = d
                self.seq += 1
                q = self.queues[best_sw]
                q.insert(chunk)
                self._push(q)
                self.beta_open[(j, d)] = (best_sw[0], best_sw[1], job.arrival, mu)
                if u is not None and inst.servers[best_sw[0]].storage_mb is not None:
                    self.stored.setdefault(best_sw[0], []).append((chunk, u))
                placed.append((d, best_sw[0], best_sw[1]))
                alphas.append(best)
                if u is not None:  # storage on that server changed: other workers there too
                    for sw in cands:
                        if sw[0] == best_sw[0] and sw != best_sw:
                            qs[sw] = edge_q(sw, d + 1)
                qs[best_sw] = edge_q(best_sw, d + 1)
            if d == 0:
                q_cloud = cloud_q(False)  # Alg. 2 lines 17-20: zeta_j = 0 from now on
        self.alpha[j] = alphas
        self.commit(j, {"dispatch": [list(x) for x in placed]})

    def _reject(self, j: int, placed: list[tuple[int, int, int]]) -> None:
        # Chunks already queued for this job stay out: remove them (nothing of them ran: all slots >= now).
        for _d, s, w in placed:
            if (s, w) in self.queues:
                q = self.queues[(s, w)]
                q.pending = [c for c in q.pending if c.job != j]
                rest = list(q.pending)
                q.pending = []
                for c in rest:
                    c.plan = []
                    q.insert(c)
                self._push(q)
        for lst in self.stored.values():
            lst[:] = [(c, u) for c, u in lst if c.job != j]
        self.cloud_chunks.pop(j, None)
        for key in [k for k in self.beta_open if k[0] == j]:
            del self.beta_open[key]
            self.beta_close.pop(key, None)
        self.rejected.append(j)
        self.commit(j, {"rejected": True})

    # ---- after the driver ----
    def finish(self) -> None:
        """Run every worker's plan to its end (no job arrives any more)."""
        for q in self.queues.values():
            self._advance(q, max(q.clock, max((c.planned_end for c in q.pending), default=q.clock)))


def _chunk_runs(policy: GreedyPolicy) -> dict[int, list[ChunkRun]]:
    runs: dict[int, list[ChunkRun]] = {}
    for (s, w), q in policy.queues.items():
        assert not q.pending
        for c in q.finished:
            slots = [t for a, b in c.done for t in range(a, b)]
            runs.setdefault(c.job, []).append(ChunkRun(chunk=c.chunk, server=s, worker=w, slots=slots))
    for j, lst in policy.cloud_chunks.items():
        for d, label, a, b in lst:
            runs.setdefault(j, []).append(
                ChunkRun(chunk=d, server=policy.cloud if policy.cloud is not None else -1, worker=label,
                         slots=list(range(a, b))))
    for lst in runs.values():
        lst.sort(key=lambda c: c.chunk)
    return runs


def _segments(arrs: list[tuple[int, np.ndarray]]) -> list[tuple[int, int, frozenset[int], bool]]:
    """A job's training slots cut into maximal ``[a, b)`` on which the set of servers it trains on is constant.

    ``arrs`` holds (server, sorted slots) per chunk. Returns (a, b, servers, first) with ``first``
    True when the job does not train at a - 1 (a new run of training slots starts at a).
    """
    by_server: dict[int, list[np.ndarray]] = {}
    for s, a in arrs:
        by_server.setdefault(s, []).append(a)
    intervals: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for s, lst in by_server.items():
        intervals[s] = _runs(np.unique(np.concatenate(lst)))
    cuts = np.unique(np.concatenate([np.concatenate(v) for v in intervals.values()]))
    starts, ends = _runs(np.unique(np.concatenate([a for _, a in arrs])))
    out: list[tuple[int, int, frozenset[int], bool]] = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        inner = cuts[np.searchsorted(cuts, a, side="right"):np.searchsorted(cuts, b, side="left")].tolist()
        pts = [a, *inner, b]
        for u, v in itertools.pairwise(pts):
            here = frozenset(s for s, (st, en) in intervals.items() if _in_runs(st, en, u))
            out.append((u, v, here, u == a))
    return out


def _runs(slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximal runs [start, end) of consecutive integers in sorted unique ``slots``."""
    br = np.flatnonzero(np.diff(slots) > 1)
    starts = np.concatenate([slots[:1], slots[br + 1]])
    ends = np.concatenate([slots[br], slots[-1:]]) + 1
    return starts, ends


def _in_runs(starts: np.ndarray, ends: np.ndarray, t: int) -> bool:
    i = int(np.searchsorted(starts, t, side="right")) - 1
    return i >= 0 and int(ends[i]) > t


def assign_ps(
    instance: Instance, runs: dict[int, list[ChunkRun]], rng: np.random.Generator
) -> tuple[dict[int, list[PsRun]], list[int]]:
    """A_ps (Alg. 5) in increasing t: one PS per job and training slot. Returns (PS runs, rejected jobs).

    Alg. 5 keeps a job's PS while the job trains in consecutive slots (lines 3-4, "to
    save server switching overhead") and otherwise draws one with o_jsp = 1 (line 6);
    which PS serves a job changes neither objective (Sec. IV-D) and the model lets
    z_jsp(t) change from slot to slot: (2e)/(4c) ask for exactly one PS in each slot
    the job trains (none in others), (2f)/(4d) for one job per PS and slot, (2i) for
    t >= r_j + Delta_js on the PS's server, and zeta_j = 1 (2g)/(2h) for a job whose
    chunks and PSs are all on the cloud. Interpretation (o_jsp = 1 on every server
    the job may use by (2i)):

    * Keep (lines 3-4): a job training at t - 1 and t keeps its PS if it is on the
      cloud (unlimited, so keeping it never blocks anyone) or on an edge server
      where the job trains at t. An edge PS is NOT kept while the job trains only
      elsewhere, e.g. only its cloud chunks train at t, or its chunk on that server
      is done or preempted while another one trains: the PS is released and a new
      one drawn at t (lines 5-6). Holding it would pin an edge PS the job does not
      need; with jobs mixing edge and cloud chunks this let more jobs than PSs pin
      every edge PS and rejected jobs on instances with ps_s > W_s everywhere.
      The price is more PS switches, which cost nothing in (2) or (4).
    * Draw (line 6), at the first slot of a run or after such a release: the cloud
      PS if the job trains on the cloud at t (a job entirely on the cloud thus
      keeps zeta_j = 1, and a job training on the cloud takes no edge PS), else a
      uniformly (seeded) drawn server among the edge servers where the job trains
      at t with a free PS, and a uniform free PS there. Else (fallback, only when
      those servers' PSs are all taken): the cloud if (2i) allows it at t, else the
      PS it held at t - 1 if still free, else a uniform server with a free PS among
      the edge servers it may use (2i).
    * In each slot the keeps are applied before the draws, so a kept PS is never
      drawn by another job at that slot; draws go in job order.

    Guarantee: without a fallback, every edge PS of server s at t serves a job
    that trains on a worker of s at t, so at most W_s - 1 other jobs hold one when
    a job training on s draws. Hence if ps_s >= W_s on every edge server, A_ps
    never falls back and never rejects, for any worker schedule (this is the
    "enough PSs" Lemma 3 assumes). When PSs are scarcer and no free PS exists at a
    draw, the job is rejected there: its PSs are released from that slot on and
    its chunks are dropped from the schedule by the caller (the worker slots it
    held stay idle, so nothing decided for other jobs changes).

    The decision at t reads only which jobs train where at t and t - 1 (final
    once the driver has passed t), so running it after the driver equals running
    it in each slot.
    """
    cloud = instance.cloud
    events: dict[int, list[tuple[int, int, frozenset[int], bool]]] = {}
    for j, lst in runs.items():
        arrs = [(c.server, np.asarray(sorted(c.slots), dtype=np.int64)) for c in lst if c.slots]
        if arrs:
            for a, b, here, first in _segments(arrs):
                events.setdefault(a, []).append((j, b, here, first))
    busy_until = {s: np.zeros(sv.ps, dtype=np.int64) for s, sv in enumerate(instance.servers) if not sv.is_cloud}
    held: dict[int, tuple[int, int]] = {}  # job -> (server, ps) of its last PS run
    taken: dict[int, list[list[int]]] = {j: [] for j in runs}  # job -> [server, ps, start, end]
    rejected: set[int] = set()

    def has_free(s: int, t: int) -> bool:
        return s == cloud or bool(np.any(busy_until[s] <= t))

    def take(j: int, s: int, p: int, t: int, end: int) -> None:
        if s != cloud:
            busy_until[s][p] = end
        runs_j = taken[j]
        if runs_j and runs_j[-1][0] == s and runs_j[-1][1] == p and runs_j[-1][3] == t:
            runs_j[-1][3] = end
        else:
            runs_j.append([s, p, t, end])
        held[j] = (s, p)

    def draw_on(cand: list[int], t: int) -> tuple[int, int]:
        s = cand[int(rng.integers(len(cand)))]
        f = np.flatnonzero(busy_until[s] <= t)
        return s, int(f[int(rng.integers(f.size))])

    for t in sorted(events):
        todo = []
        for j, end, here, first in sorted(events[t], key=lambda e: e[0]):
            if j in rejected:
                continue
            prev = None if first else held.get(j)
            if prev is not None and (prev[0] == cloud or prev[0] in here):
                take(j, prev[0], prev[1], t, end)  # lines 3-4
            else:
                todo.append((j, end, here, prev))
        for j, end, here, prev in todo:  # line 6
            if cloud is not None and cloud in here:
                take(j, cloud, j, t, end)
                continue
            cand = sorted(s for s in here if has_free(s, t))
            if cand:
                take(j, *draw_on(cand, t), t, end)
                continue
            if cloud is not None and instance.release(j, cloud) <= t:
                take(j, cloud, j, t, end)
                continue
            if prev is not None and busy_until[prev[0]][prev[1]] <= t:
                take(j, prev[0], prev[1], t, end)
                continue
            cand = [s for s in busy_until if instance.release(j, s) <= t and has_free(s, t)]
            if cand:
                take(j, *draw_on(cand, t), t, end)
                continue
            rejected.add(j)  # no free PS: release its PSs from t on (their past use is void anyway)
            for s, p, _a, _b in taken.pop(j):
                if s != cloud:
                    busy_until[s][p] = min(int(busy_until[s][p]), t)
            held.pop(j, None)
    out = {j: [PsRun(server=s, ps=p, start=a, end=b) for s, p, a, b in lst] for j, lst in taken.items()}
    return out, sorted(rejected)


def run_greedy(instance: Instance, *, seed: int, speed: float, use_cloud: bool, name: str) -> Any:
    """A_online with or without the cloud; returns the family Result with duals and preemption counts."""
    if not speed > 0 or not math.isfinite(speed):
        raise InputError("speed", f"must be a finite number > 0, got {speed}")
    with stopwatch() as el:
        policy = GreedyPolicy(instance, speed=speed, use_cloud=use_cloud)
        late = run_online(policy, instance.jobs, instance.horizon)
        policy.finish()
        runs = _chunk_runs(policy)
        ps, no_ps = assign_ps(instance, runs, np.random.default_rng(seed))
        rejected = sorted(set(policy.rejected) | {int(j) for j in late} | set(no_ps))  # type: ignore[arg-type]
        jobs = [JobSchedule(job=j, chunks=runs[j], ps=ps[j]) for j in sorted(runs) if j not in rejected]
        sched = Schedule(speed=speed, jobs=jobs, rejected=rejected)
    alpha = [policy.alpha.get(j, []) if j not in rejected else [] for j in range(len(instance.jobs))]
    beta = [[s, w, r, policy.beta_close[key], mu] for key, (s, w, r, mu) in sorted(policy.beta_open.items())
            if key[0] not in rejected]
    from edgeopt.preemptive.schedule import fractional_flow_time

    extra = {
        "speed": speed,
        "duals": {"alpha": alpha, "beta_terms": beta},
        "preemptions": count_preemptions(instance, sched),
        "job_preemptions": job_preemptions(instance, sched),
        "fractional_flow_time": fractional_flow_time(instance, sched),
        "cloud_chunks": sum(1 for js in sched.jobs for c in js.chunks if c.server == instance.cloud),
    }
    return FAMILY.algorithm_result(instance, name, sched, el[0], rejected=rejected, extra=extra)


@register(FAMILY_NAME, "online", kind="online", paper=True, ranges={"speed": "> 0"},
          params={"speed": "1 + eps: work per slot relative to the optimum's (Theorem 3); 1 is the paper's A_online"},
          summary="A_online (Alg. 1): A_greedy (HAPRF per worker, min-Q dispatch) + A_ps; speed = 1 + eps",
          randomized=True)
def online(instance: Instance, *, seed: int = 0, speed: float = 1.0) -> Any:
    """A_online of Wang et al. (Alg. 1-5). ``speed`` is 1 + eps (Theorem 3)."""
    return run_greedy(instance, seed=seed, speed=speed, use_cloud=True, name="online")
