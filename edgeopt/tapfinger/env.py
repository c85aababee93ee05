"""The TapFinger multi-cluster environment: a PettingZoo ``ParallelEnv`` with one agent per cluster.

Every tapfinger algorithm (the baselines now, the learned policy later) is a policy run on this
environment by `edgeopt.tapfinger.loop`; its schedule then goes through the validator.

One `step` is one timestep t:

1. (preemptive mode only) ``reallocations`` change or pause running tasks and resume paused ones
   on their cluster; a changed or resumed run pays the switch overhead in its first timestep.
2. Each agent's action ``[k, cpu, gpu]`` (a ``MultiDiscrete``) starts the ``k``-th task of its
   pending set with that allocation; ``k = pending_size`` means "none". An action outside the
   observation's masks (no such task, or an allocation below the task's minimum or above the
   cluster's free capacity, eq. (12)) is ignored and flagged ``invalid_action`` in ``infos``.
   Resources beyond the first two (CPU, GPU) are allocated at the task's minimum.
3. Conflicts (eq. (11)): when several agents pick the same task, the agent with the largest
   ``Pr(j|n) Pr(n)`` gets it. ``Pr(j|n)`` is the agent's selection probability of that pending
   entry when ``selection_probs`` are given to `step`, and otherwise the documented fallback
   ``1 / |P_{n,t}|`` (uniform over its real pending entries). ``Pr(n)`` is proportional to how
   many copies of the task's minimum fit in the agent's free resources. Ties go to the lowest
   agent index (scores within a relative 1e-6 count as tied). Losers see ``conflict_lost`` and
   ``conflict_winner`` in ``infos``.
4. The reward of agent n is ``-R_{n,t}``: the tasks associated with n in t (running or paused
   on n, and queued at n including its pending set), counted after the placements of t.
5. Running tasks progress (`edgeopt.tapfinger.speedup`); one whose progress reaches 1 ends at
   ``t + 1`` and frees its resources. Then tasks arriving at ``t + 1`` join the queues of every
   cluster in their D_j.

The episode terminates when every task has finished and truncates at the horizon.

Observations (the paper's raw state s_{n,t} = {O, P, e, q}), as a Gymnasium ``Dict`` of fixed-shape
arrays with masks (``P = pending_size``, ``M`` = most tasks that fit on a cluster at once, ``R``
resources, ``K`` task types, ``N`` clusters, the grid ``(Cmax+1) x (Gmax+1)`` over the largest
CPU and GPU capacities):

* ``running_alloc (M,R)``, ``running_type (M,K)`` one-hot, ``running_elapsed (M,)``, and
  ``running_progress (M,)`` (observed progress, beyond the paper's o_{j,n,t}), ``running_mask``;
* ``pending_min (P,R)``, ``pending_type (P,K)``, ``pending_wait (P,)``, ``pending_visible (P,N)``
  (which clusters have the task in their queue), ``pending_mask (P,)``;
* ``free (R,)`` (e_{n,t}) and ``queue (1,)`` (q_{n,t}: queued tasks beyond the pending set);
* ``task_mask (P+1,)`` (the last entry, "none", is always valid) and ``alloc_mask (P,Cmax+1,Gmax+1)``.

`entities` returns the same state as raw entities over all clusters (cluster, running-task and
pending-task nodes and their edges), from which a HAN encoder builds its heterogeneous graph
without re-simulating; ``infos[agent]`` carries ``pending_tasks`` (task id per pending slot),
``idle`` (no valid start is possible for this observation: trainers skip such timesteps),
``invalid_action`` and the conflict flags.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from edgeopt.core import InputError
from edgeopt.tapfinger.instance import Instance, capacity_bound, generate
from edgeopt.tapfinger.schedule import Placement, Schedule, Segment
from edgeopt.tapfinger.speedup import DONE, step_gain

#: relative tolerance under which two conflict scores of eq. (11) count as equal
TIE_TOL = 1e-6


@dataclasses.dataclass
class Run:
    """A placed, unfinished task."""

    task: int
    cluster: int
    start: int
    alloc: tuple[int, ...]
    progress: float = 0.0
    steps: int = 0
    seg_start: int = 0
    switched: bool = False
    paused: bool = False
    segments: list[Segment] = dataclasses.field(default_factory=list)


def type_profile(inst: Instance) -> np.ndarray:
    """Per task type, ``(K, 2)`` float32: its noise-free timesteps at the smallest minimum any of its tasks
    asks for (componentwise), and at the largest cluster's full CPU and GPU, each capped at the horizon.

    A description of a type by what it does, not by its index: what a type-agnostic policy encodes
    (`PolicyConfig.task_features` ``profile``), so that it runs on instances with any number of types
    (the paper's two synthetic types give (4, 4) and (21, 2) timesteps).
    """
    mins = np.array([t.min_resources[:2] for t in inst.tasks], dtype=np.int64).reshape(-1, 2)
    types = np.array([t.task_type for t in inst.tasks], dtype=np.int64)
    cmax = max(c.capacity[0] for c in inst.clusters)
    gmax = max(c.capacity[1] for c in inst.clusters)
    every = mins.min(axis=0) if len(mins) else np.zeros(2, np.int64)
    out = np.zeros((len(inst.task_types), 2), np.float32)
    for k in range(len(inst.task_types)):
        lo = mins[types == k].min(axis=0) if (types == k).any() else every
        out[k, 0] = min(inst.type_duration(k, int(lo[0]), int(lo[1])), inst.horizon)
        out[k, 1] = min(inst.type_duration(k, int(cmax), int(gmax)), inst.horizon)
    return out


class TapFingerEnv(ParallelEnv):
    """One agent per edge cluster (see the module docstring).

    Args:
        instance: the instance to run (None: ``generate(preset, seed=..., **generator)``).
        preemptive: accept ``reallocations`` in `step` (relaxed baselines only).
        entities_in_infos: also put `entities` under ``infos["cluster_0"]["entities"]`` each step.
    """

    metadata: ClassVar[dict[str, Any]] = {"name": "tapfinger_v0", "is_parallelizable": True, "render_modes": []}

    def __init__(self, instance: Instance, *, preemptive: bool = False, entities_in_infos: bool = False) -> None:
        if len(instance.resources) < 2:
            raise InputError("instance.resources", "the environment needs at least two resources (CPU, GPU)")
        self.instance = instance
        self.preemptive = preemptive
        self.entities_in_infos = entities_in_infos
        inst = instance
        self.N, self.R, self.K = len(inst.clusters), len(inst.resources), len(inst.task_types)
        self.P = inst.pending_size
        self.M = capacity_bound(inst)
        self.capacity = np.array([c.capacity for c in inst.clusters], dtype=np.int64)
        self.cmax, self.gmax = int(self.capacity[:, 0].max()), int(self.capacity[:, 1].max())
        self.possible_agents = [f"cluster_{n}" for n in range(self.N)]
        self.agents: list[str] = []
        self._index = {a: n for n, a in enumerate(self.possible_agents)}
        self._mins = np.array([t.min_resources for t in inst.tasks], dtype=np.int64).reshape(-1, self.R)
        self._types = np.array([t.task_type for t in inst.tasks], dtype=np.int64)
        self._arrival = np.array([t.arrival for t in inst.tasks], dtype=np.int64)
        self._order = sorted(range(len(inst.tasks)), key=lambda j: (inst.tasks[j].arrival, j))
        self._models = [inst.task_types[t.task_type].progress for t in inst.tasks]
        self._reach = [list(t.reachable_clusters) for t in inst.tasks]
        self._vis = np.zeros((len(inst.tasks), self.N), np.float32)
        for j, reach in enumerate(self._reach):
            self._vis[j, reach] = 1.0
        self._cgrid = np.arange(self.cmax + 1)[None, :, None]
        self._ggrid = np.arange(self.gmax + 1)[None, None, :]
        self._eye = np.eye(self.K, dtype=np.float32)
        self.type_profile = type_profile(inst)
        self.t = 0

    # -- spaces ----------------------------------------------------------------------------------
    @functools.cache  # noqa: B019 - one space object per agent, as PettingZoo asks
    def observation_space(self, agent: str) -> spaces.Dict:
        P, M, R, K, N = self.P, self.M, self.R, self.K, self.N
        big = float(max(self.capacity.max(), 1))
        f32 = np.float32
        return spaces.Dict({
            "running_alloc": spaces.Box(0, big, (M, R), f32),
            "running_type": spaces.Box(0, 1, (M, K), f32),
            "running_elapsed": spaces.Box(0, np.inf, (M,), f32),
            "running_progress": spaces.Box(0, np.inf, (M,), f32),
            "running_mask": spaces.MultiBinary(M),
            "pending_min": spaces.Box(0, np.inf, (P, R), f32),
            "pending_type": spaces.Box(0, 1, (P, K), f32),
            "pending_wait": spaces.Box(0, np.inf, (P,), f32),
            "pending_visible": spaces.Box(0, 1, (P, N), f32),
            "pending_mask": spaces.MultiBinary(P),
            "free": spaces.Box(0, big, (R,), f32),
            "queue": spaces.Box(0, np.inf, (1,), f32),
            "task_mask": spaces.MultiBinary(P + 1),
            "alloc_mask": spaces.MultiBinary((P, self.cmax + 1, self.gmax + 1)),
        })

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.MultiDiscrete:
        return spaces.MultiDiscrete([self.P + 1, self.cmax + 1, self.gmax + 1])

    # -- episode ---------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start the episode at timestep 0 (the instance fixes everything; ``seed`` seeds the action spaces)."""
        if seed is not None:
            for n, a in enumerate(self.possible_agents):
                self.action_space(a).seed(seed + n)
        self.agents = list(self.possible_agents)
        self.t = 0
        self.free = self.capacity.copy()
        self.queues: list[list[int]] = [[] for _ in range(self.N)]
        self.runs: dict[int, Run] = {}
        self.on_cluster: list[dict[int, Run]] = [{} for _ in range(self.N)]
        self.done: dict[int, Placement] = {}
        self._next = 0
        self._enqueue_arrivals()
        self._last_infos: dict[str, dict] = {}
        return self._observe(), self._infos({})

    def step(
        self,
        actions: dict[str, Any],
        selection_probs: dict[str, np.ndarray] | None = None,
        reallocations: dict[str, dict[int, tuple[int, ...] | None]] | None = None,
    ) -> tuple[dict, dict, dict, dict, dict]:
        """Advance one timestep (see the module docstring).

        Args:
            actions: agent -> ``[pending index or P, cpu, gpu]``.
            selection_probs: agent -> Pr(j|n) over its pending slots (length P), for eq. (11).
            reallocations: (preemptive mode) agent -> {task: new allocation, or None to pause}.
        """
        if not self.agents:
            raise RuntimeError("step() after the episode ended: call reset()")
        flags: dict[int, dict[str, Any]] = {n: {} for n in range(self.N)}
        if reallocations:
            if not self.preemptive:
                raise InputError("reallocations", "only a preemptive environment accepts reallocations")
            for agent, plan in reallocations.items():
                self._reallocate(self._index[agent], plan, flags)
        picks: dict[int, list[tuple[int, tuple[int, ...], int]]] = {}
        for agent, act in actions.items():
            n = self._index[agent]
            k, cpu, gpu = (int(x) for x in np.asarray(act).reshape(-1)[:3])
            if k >= self.P:
                continue
            q = self.queues[n]
            if k >= len(q) or k < 0:
                flags[n]["invalid_action"] = True
                continue
            j = q[k]
            alloc = (cpu, gpu, *(int(b) for b in self._mins[j, 2:]))
            if any(a < b for a, b in zip(alloc, self._mins[j], strict=True)) or any(
                    a > f for a, f in zip(alloc, self.free[n], strict=True)):
                flags[n]["invalid_action"] = True
                continue
            picks.setdefault(j, []).append((n, alloc, k))
        for j, cands in picks.items():
            if len(cands) > 1:
                winner = self._resolve(j, cands, selection_probs)
                for n, _, _ in cands:
                    if n != winner[0]:
                        flags[n]["conflict_lost"] = True
                        flags[n]["conflict_winner"] = self.possible_agents[winner[0]]
            else:
                winner = cands[0]
            self._start(j, winner[0], winner[1])
        rewards = {a: -float(self._alive_at(n)) for n, a in enumerate(self.possible_agents)}
        self._advance()
        self.t += 1
        self._enqueue_arrivals()
        finished = len(self.done) == len(self.instance.tasks)
        truncated = not finished and self.t >= self.instance.horizon
        obs = self._observe()
        infos = self._infos(flags)
        terms = dict.fromkeys(self.agents, finished)
        truncs = dict.fromkeys(self.agents, truncated)
        if finished or truncated:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    # -- dynamics --------------------------------------------------------------------------------
    def _enqueue_arrivals(self) -> None:
        order, arrival = self._order, self._arrival
        while self._next < len(order) and arrival[order[self._next]] <= self.t:
            j = order[self._next]
            for n in self._reach[j]:
                self.queues[n].append(j)
            self._next += 1

    def _resolve(self, j: int, cands: list, probs: dict[str, np.ndarray] | None) -> tuple:
        """Eq. (11): the candidate with the largest Pr(j|n) Pr(n) (ties: lowest agent index)."""
        b = self._mins[j]
        pos = b > 0
        best, best_score = None, -1.0
        for cand in sorted(cands):
            n, _alloc, k = cand
            # Pr(n): copies of the task's minimum that fit in n's free resources (before this pick)
            fits = float(np.min(self.free[n][pos] // b[pos])) if pos.any() else 1.0
            if probs is not None and self.possible_agents[n] in probs:
                p_j = float(np.asarray(probs[self.possible_agents[n]])[k])
            else:
                p_j = 1.0 / max(1, min(self.P, len(self.queues[n])))
            score = p_j * fits
            # scores within a relative TIE_TOL are equal (ties to the lowest agent index): a policy's
            # probabilities for identical situations differ only in float rounding, which must not decide
            if best is None or score > best_score * (1.0 + TIE_TOL):
                best, best_score = cand, score
        return best

    def _start(self, j: int, n: int, alloc: tuple[int, ...]) -> None:
        for m in self._reach[j]:
            self.queues[m].remove(j)
        run = Run(task=j, cluster=n, start=self.t, alloc=alloc, seg_start=self.t)
        self.runs[j] = run
        self.on_cluster[n][j] = run
        self.free[n] -= np.array(alloc, dtype=np.int64)

    def _close_segment(self, run: Run) -> None:
        if self.t > run.seg_start:
            run.segments.append(Segment(start=run.seg_start, end=self.t, allocation=self._named(run.alloc)))

    def _reallocate(self, n: int, plan: dict[int, tuple[int, ...] | None], flags: dict) -> None:
        """Apply one agent's reallocation plan atomically (all of it, or none if it does not fit)."""
        free = self.free[n].copy()
        new: dict[int, tuple[int, ...] | None] = {}
        for j, alloc in plan.items():
            run = self.on_cluster[n].get(int(j))
            if run is None:
                flags[n]["invalid_reallocation"] = True
                return
            if not run.paused:
                free += np.array(run.alloc, dtype=np.int64)
            if alloc is not None:
                alloc = tuple(int(a) for a in alloc)
                if len(alloc) == 2:
                    alloc = (*alloc, *(int(b) for b in self._mins[j, 2:]))
                if len(alloc) != self.R or any(a < b for a, b in zip(alloc, self._mins[j], strict=True)):
                    flags[n]["invalid_reallocation"] = True
                    return
                free -= np.array(alloc, dtype=np.int64)
            new[int(j)] = alloc
        if (free < 0).any():
            flags[n]["invalid_reallocation"] = True
            return
        for j, alloc in new.items():
            run = self.on_cluster[n][j]
            if alloc is None:
                if not run.paused:
                    self._close_segment(run)
                    run.paused = True
                continue
            if run.paused or alloc != run.alloc:
                if not run.paused:
                    self._close_segment(run)
                run.alloc, run.paused, run.seg_start = alloc, False, self.t
                run.switched = run.start != self.t or bool(run.segments)
        self.free[n] = free

    def _advance(self) -> None:
        inst = self.instance
        ts = inst.timestep_seconds
        ended = []
        for j, run in self.runs.items():
            if run.paused:
                continue
            gain = step_gain(self._models[j], run.alloc[0], run.alloc[1], run.progress, ts)
            noise = inst.noise_of(j)
            if noise is not None and run.steps < len(noise):
                gain *= 1.0 + noise[run.steps]
            if run.switched and run.seg_start == self.t:
                gain *= 1.0 - inst.switch_overhead
            run.progress += gain
            run.steps += 1
            if run.progress >= DONE:
                ended.append(run)
        for run in ended:
            self.t += 1
            self._close_segment(run)
            self.t -= 1
            segs = run.segments if len(run.segments) > 1 else []
            first = run.segments[0]
            self.done[run.task] = Placement(task=run.task, cluster=run.cluster, start=run.start, end=self.t + 1,
                                            allocation=first.allocation, segments=segs)
            del self.runs[run.task]
            del self.on_cluster[run.cluster][run.task]
            self.free[run.cluster] += np.array(run.alloc, dtype=np.int64)

    def _named(self, alloc: tuple[int, ...]) -> dict[str, int]:
        return {r: int(a) for r, a in zip(self.instance.resources, alloc, strict=True)}

    def _alive_at(self, n: int) -> int:
        return len(self.on_cluster[n]) + len(self.queues[n])

    # -- observations ----------------------------------------------------------------------------
    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        return {a: self.observe(a) for a in self.agents}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The fixed-shape observation of ``agent`` now."""
        n = self._index[agent]
        P, M, R, K, N = self.P, self.M, self.R, self.K, self.N
        pend = self.queues[n][:P]
        m = len(pend)
        free = self.free[n]
        obs_pmin = np.zeros((P, R), np.float32)
        obs_ptype = np.zeros((P, K), np.float32)
        obs_wait = np.zeros(P, np.float32)
        obs_vis = np.zeros((P, N), np.float32)
        pmask = np.zeros(P, np.int8)
        amask = np.zeros((P, self.cmax + 1, self.gmax + 1), np.int8)
        if m:
            idx = np.array(pend)
            mins = self._mins[idx]
            obs_pmin[:m] = mins
            obs_ptype[:m] = self._eye[self._types[idx]]
            obs_wait[:m] = self.t - self._arrival[idx]
            obs_vis[:m] = self._vis[idx]
            pmask[:m] = 1
            rest_ok = (mins[:, 2:] <= free[2:]).all(axis=1) if R > 2 else np.ones(m, bool)
            cpu_ok = (self._cgrid >= mins[:, 0, None, None]) & (self._cgrid <= free[0])
            gpu_ok = (self._ggrid >= mins[:, 1, None, None]) & (self._ggrid <= free[1])
            amask[:m] = cpu_ok & gpu_ok & rest_ok[:, None, None]
        tmask = np.zeros(P + 1, np.int8)
        tmask[:P] = amask.reshape(P, -1).any(axis=1)
        tmask[P] = 1
        ralloc = np.zeros((M, R), np.float32)
        rtype = np.zeros((M, K), np.float32)
        rel = np.zeros(M, np.float32)
        rprog = np.zeros(M, np.float32)
        rmask = np.zeros(M, np.int8)
        for i, run in enumerate(list(self.on_cluster[n].values())[:M]):
            if not run.paused:
                ralloc[i] = run.alloc
            rtype[i, self._types[run.task]] = 1.0
            rel[i] = self.t - run.start
            rprog[i] = run.progress
            rmask[i] = 1
        return {
            "running_alloc": ralloc, "running_type": rtype, "running_elapsed": rel, "running_progress": rprog,
            "running_mask": rmask, "pending_min": obs_pmin, "pending_type": obs_ptype, "pending_wait": obs_wait,
            "pending_visible": obs_vis, "pending_mask": pmask, "free": free.astype(np.float32),
            "queue": np.array([max(0, len(self.queues[n]) - P)], np.float32), "task_mask": tmask,
            "alloc_mask": amask,
        }

    def _infos(self, flags: dict[int, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        out = {}
        for a in self.agents:
            n = self._index[a]
            pend = self.queues[n][: self.P]
            idle = not pend or not bool((self._mins[pend] <= self.free[n]).all(axis=1).any())
            out[a] = {"t": self.t, "pending_tasks": list(pend), "idle": idle,
                      "invalid_action": False, "conflict_lost": False, **flags.get(n, {})}
        if self.entities_in_infos and self.agents:
            out[self.agents[0]]["entities"] = self.entities()
        return out

    def entities(self) -> dict[str, np.ndarray]:
        """The raw state of every cluster as graph entities (nodes and edges), for a HAN encoder.

        Returns arrays: ``cluster_free (N,R)``, ``cluster_queue (N,)`` (q_{n,t}),
        ``running_task``, ``running_cluster``, ``running_alloc (k,R)``, ``running_type``,
        ``running_elapsed``, ``running_progress``, ``running_paused``; ``pending_task``,
        ``pending_min (m,R)``, ``pending_type``, ``pending_wait`` (each pending task once), and
        ``pending_edges (2,E)``: (row in the pending arrays, cluster) for every pending set it is in;
        ``type_profile (K,2)`` (`type_profile`, per task type, the same every timestep).
        """
        runs = list(self.runs.values())
        pend_ids: list[int] = []
        row: dict[int, int] = {}
        edges: list[tuple[int, int]] = []
        for n in range(self.N):
            for j in self.queues[n][: self.P]:
                if j not in row:
                    row[j] = len(pend_ids)
                    pend_ids.append(j)
                edges.append((row[j], n))
        pid = np.array(pend_ids, dtype=np.int64)
        return {
            "t": np.array(self.t),
            "cluster_free": self.free.copy(),
            "cluster_capacity": self.capacity.copy(),
            "cluster_queue": np.array([max(0, len(q) - self.P) for q in self.queues], dtype=np.int64),
            "running_task": np.array([r.task for r in runs], dtype=np.int64),
            "running_cluster": np.array([r.cluster for r in runs], dtype=np.int64),
            "running_alloc": np.array([[0] * self.R if r.paused else r.alloc for r in runs],
                                      dtype=np.int64).reshape(-1, self.R),
            "running_type": self._types[[r.task for r in runs]] if runs else np.zeros(0, np.int64),
            "running_elapsed": np.array([self.t - r.start for r in runs], dtype=np.int64),
            "running_progress": np.array([r.progress for r in runs], dtype=np.float64),
            "running_paused": np.array([r.paused for r in runs], dtype=bool),
            "pending_task": pid,
            "pending_min": self._mins[pid].reshape(-1, self.R),
            "pending_type": self._types[pid],
            "pending_wait": self.t - self._arrival[pid],
            "pending_edges": np.array(edges, dtype=np.int64).reshape(-1, 2).T,
            "type_profile": self.type_profile,
        }

    def state(self) -> np.ndarray:
        """A flat global state: free resources and queue lengths of every cluster."""
        return np.concatenate([self.free.reshape(-1), [len(q) for q in self.queues]]).astype(np.float32)

    # -- results ---------------------------------------------------------------------------------
    def schedule(self) -> Schedule:
        """The finished tasks' placements so far, in task order."""
        return Schedule(placements=[self.done[j] for j in sorted(self.done)])

    def unfinished(self) -> list[int]:
        """Tasks not finished (yet): never placed, still running or paused."""
        return [j for j in range(len(self.instance.tasks)) if j not in self.done]

    def render(self) -> None:  # pragma: no cover - no render modes
        return None

    def close(self) -> None:
        return None


def parallel_env(instance: Instance | None = None, **config: Any) -> TapFingerEnv:
    """The environment of ``instance``, or of a generated one.

    Args:
        instance: a tapfinger `Instance`; when None, ``config`` keys ``preset`` (default
            ``small``), ``seed`` and the keyword arguments of `generate` build one.
        config: also ``preemptive`` and ``entities_in_infos`` (see `TapFingerEnv`).
    """
    env_keys = {k: config.pop(k) for k in ("preemptive", "entities_in_infos") if k in config}
    if instance is None:
        preset = config.pop("preset", "small")
        seed = int(config.pop("seed", 0))
        instance = generate(preset, seed=seed, **config)
    elif config:
        raise InputError("config", f"unexpected keys with an instance: {sorted(config)}")
    return TapFingerEnv(instance, **env_keys)
