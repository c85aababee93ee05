"""Baselines of Sec. V-A of the TapFinger paper, their non-preemptive variants, and a greedy bar.

All are policies run by `edgeopt.tapfinger.loop` on the same environment. Shared conventions
(the same for every policy here, so none is favoured):

* Conflicts: the learned agents' rule. Each agent chooses without seeing the other agents'
  picks of the same timestep; when several pick the same task the environment's eq. (11) gives it
  to one of them (with the documented fallback Pr(j|n) = 1 / |P_{n,t}|, since a baseline has no
  pointer probabilities) and the others start nothing in that timestep, exactly as a learned agent
  that loses a conflict. The ``*_ordered`` variants keep the earlier rule: agents choose in index
  order and skip a task an earlier agent chose in the same timestep, so no pick is ever lost (an
  advantage the learned agents do not have).
* A policy knows the task types' noise-free progress models only where its paper says it profiles
  them: Optimus (pre-run profiling, then online fitting), Tiresias (its threshold), greedy (ours,
  model-based). Random and minimum know nothing.

Policies:

* ``random`` / ``minimum``: a uniformly random valid pending task with a uniformly random valid
  allocation / its minimum allocation.
* ``optimus`` (relaxed, preemptive): every timestep each cluster admits the earliest pending task
  whose minimum fits beside the minima of its running tasks, then re-allocates all its tasks:
  each starts at its minimum and gets one more CPU or GPU at a time, whichever unit gives the
  largest positive reduction of its estimated remaining time (per unit of that resource's
  capacity share), until no unit helps. The speed model per task type is Optimus's
  inverse-linear form ``1/gain = th0 + th1/g + th2*g + th3/c + th4*c`` (CPU and GPU in place of
  PSs and workers, batch size fixed), fitted by non-negative least squares to pre-run profiles
  at progress 0 and then to every observed (allocation, gain) of its tasks. A changed or resumed
  allocation pays the switch overhead.
* ``optimus_np``: the same admission and marginal-gain allocation for the admitted task alone in
  the free capacity, fixed until it ends (directly comparable with the non-preemptive optimum).
* ``tiresias`` (relaxed, preemptive): a 2-level feedback queue on attained GPU time (GPU x
  timesteps), threshold = the median over the instance's tasks of the GPU time of a run at the
  minimum allocation (the profile the paper's implementation reads from its trace). Every
  timestep each cluster ranks its tasks (running, paused, and the earliest unclaimed pending
  task) queue 1 before queue 2, FIFO by first start (not-yet-started last) within a queue, and
  runs the longest prefix that fits at minimum allocation; the rest are paused (preempted).
* ``tiresias_np``: without preemption the two queues never demote a waiting task, so Tiresias
  reduces to FIFO at the minimum allocation.
* ``greedy`` (ours, the non-learned bar): shortest estimated completion first with an efficient
  allocation. For each valid pending task, among its Pareto-optimal allocations (from the
  noise-free progress model) that fit in a share ``free // min(queue length, share_cap)`` of the
  free resources (never below the minimum), take the fastest whose dominant-share work (max_r
  a_r / C_r times duration) is within ``1 + efficiency_slack`` of the least; start the task with
  the shortest resulting duration (ties: earliest arrival). The default ``share_cap = 1`` offers
  the whole free capacity: measured on the paper presets (3 seeds each of 3 clusters at rate 2
  and 6 at rate 4), sharing among 2 or 4 queued tasks raised the total completion time by 29% and
  48%, because the synthetic sensitive task does about the same GPU work at 1 to 10 GPUs, so
  finishing it fast costs nothing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from edgeopt.core import Result, register
from edgeopt.tapfinger.env import TapFingerEnv
from edgeopt.tapfinger.instance import Instance
from edgeopt.tapfinger.loop import Decision, none_action, run_policy

FAMILY = "tapfinger"


class Claims:
    """Tasks claimed by earlier agents in this timestep. Under the agents' rule (``ordered`` False)
    nothing counts as claimed: every agent chooses as if alone and eq. (11) settles conflicts."""

    def __init__(self, ordered: bool) -> None:
        self.ordered = ordered
        self.tasks: set[int] = set()

    def add(self, j: int) -> None:
        if self.ordered:
            self.tasks.add(j)

    def __contains__(self, j: object) -> bool:
        return j in self.tasks


def _free_picks(env: TapFingerEnv, obs: dict[str, Any], infos: dict[str, Any], n: int, claimed: Claims) -> list[int]:
    """Pending slots of agent n whose task fits at minimum and is not claimed this timestep."""
    a = env.possible_agents[n]
    if a not in obs:
        return []
    pend = infos[a]["pending_tasks"]
    mask = obs[a]["task_mask"]
    return [k for k, j in enumerate(pend) if mask[k] and j not in claimed]


class RandomPolicy:
    """``random`` / ``minimum`` (see the module docstring)."""

    preemptive = False

    def __init__(self, minimum: bool, ordered: bool = False) -> None:
        self.minimum, self.ordered = minimum, ordered

    def reset(self, env: TapFingerEnv, rng: np.random.Generator) -> None:
        self.rng = rng

    def act(self, env: TapFingerEnv, obs: dict, infos: dict) -> Decision:
        actions, claimed = {}, Claims(self.ordered)
        for n, a in enumerate(env.possible_agents):
            if a not in obs:
                continue
            ks = _free_picks(env, obs, infos, n, claimed)
            if not ks:
                actions[a] = none_action(env)
                continue
            k = ks[int(self.rng.integers(len(ks)))]
            j = infos[a]["pending_tasks"][k]
            claimed.add(j)
            if self.minimum:
                c, g = (int(x) for x in env._mins[j, :2])
            else:
                cells = np.argwhere(obs[a]["alloc_mask"][k])
                c, g = (int(x) for x in cells[int(self.rng.integers(len(cells)))])
            actions[a] = np.array([k, c, g], dtype=np.int64)
        return Decision(actions)


class GreedyPolicy:
    """``greedy`` (see the module docstring)."""

    preemptive = False

    def __init__(self, share_cap: int, efficiency_slack: float, ordered: bool = False) -> None:
        self.share_cap, self.ordered = share_cap, ordered
        self.slack = efficiency_slack

    def reset(self, env: TapFingerEnv, rng: np.random.Generator) -> None:
        self.options: dict[tuple[int, int], list[tuple[int, int, int]]] = {}

    def _pareto(self, inst: Instance, typ: int, n: int, b: tuple[int, int]) -> list[tuple[int, int, int]]:
        key = (typ, n, *b)
        if key not in self.options:
            cap = inst.clusters[n].capacity
            grid = sorted((inst.type_duration(typ, c, g), c, g)
                          for c in range(b[0], cap[0] + 1) for g in range(b[1], cap[1] + 1))
            kept: list[tuple[int, int, int]] = []
            for d, c, g in grid:
                if d <= inst.horizon and not any(c2 <= c and g2 <= g for _, c2, g2 in kept):
                    kept.append((d, c, g))
            self.options[key] = kept
        return self.options[key]

    def act(self, env: TapFingerEnv, obs: dict, infos: dict) -> Decision:
        inst = env.instance
        actions, claimed = {}, Claims(self.ordered)
        for n, a in enumerate(env.possible_agents):
            if a not in obs:
                continue
            ks = _free_picks(env, obs, infos, n, claimed)
            best = None
            free = env.free[n]
            cap = env.capacity[n]
            share = free // max(1, min(len(env.queues[n]), self.share_cap))
            for k in ks:
                j = infos[a]["pending_tasks"][k]
                b = (int(env._mins[j, 0]), int(env._mins[j, 1]))
                lim = np.maximum(share[:2], b)
                opts = [o for o in self._pareto(inst, int(env._types[j]), n, b)
                        if o[1] <= min(lim[0], free[0]) and o[2] <= min(lim[1], free[1])]
                if not opts:
                    continue
                work = [d * max(c / max(cap[0], 1), g / max(cap[1], 1)) for d, c, g in opts]
                ok = min(work) * (1 + self.slack)
                d, c, g = min((o for o, w in zip(opts, work, strict=True) if w <= ok + 1e-12))
                key = (d, inst.tasks[j].arrival, j)
                if best is None or key < best[0]:
                    best = (key, k, c, g, j)
            if best is None:
                actions[a] = none_action(env)
            else:
                claimed.add(best[4])
                actions[a] = np.array([best[1], best[2], best[3]], dtype=np.int64)
        return Decision(actions)


class SpeedModel:
    """Optimus's fitted speed model per task type: ``1/gain = th . [1, 1/g, g, 1/c, c]``."""

    def __init__(self) -> None:
        self.rows: dict[int, list[tuple[float, float, float]]] = {}
        self.theta: dict[int, np.ndarray] = {}

    @staticmethod
    def _features(c: float, g: float) -> np.ndarray:
        return np.array([1.0, 1.0 / max(g, 1e-9), g, 1.0 / max(c, 1e-9), c])

    def add(self, typ: int, c: int, g: int, gain: float) -> None:
        if gain > 0:
            rows = self.rows.setdefault(typ, [])
            rows.append((c, g, 1.0 / gain))
            if len(rows) > 400:
                del rows[:100]
            self.theta.pop(typ, None)

    def time_per_progress(self, typ: int, c: int, g: int) -> float:
        th = self.theta.get(typ)
        if th is None:
            rows = self.rows.get(typ, [])
            if not rows:
                return 1.0
            X = np.array([self._features(c_, g_) for c_, g_, _ in rows])
            y = np.array([v for _, _, v in rows])
            from scipy.optimize import nnls  # here, not at the top: scipy.optimize costs 0.3 s to import

            th, _ = nnls(X, y)
            self.theta[typ] = th
        return float(max(1e-6, self._features(c, g) @ th))


class OptimusPolicy:
    """``optimus`` (preemptive, relaxed) and ``optimus_np`` (see the module docstring)."""

    def __init__(self, preemptive: bool, ordered: bool = False) -> None:
        self.preemptive, self.ordered = preemptive, ordered

    def reset(self, env: TapFingerEnv, rng: np.random.Generator) -> None:
        inst = env.instance
        self.model = SpeedModel()
        self.last: dict[int, tuple[float, tuple[int, ...], int]] = {}
        cmax, gmax = env.cmax, env.gmax
        for typ, tt in enumerate(inst.task_types):  # pre-run profiling at progress 0
            from edgeopt.tapfinger.speedup import step_gain

            for c in sorted({2, 4, 8, cmax}):
                for g in sorted({1, 2, 4, 8, gmax}):
                    self.model.add(typ, c, g, step_gain(tt.progress, c, g, 0.0, inst.timestep_seconds))

    def _observe_progress(self, env: TapFingerEnv) -> None:
        seen = {}
        for j, run in env.runs.items():
            if run.paused:
                continue
            prev = self.last.get(j)
            if prev is not None and prev[1] == run.alloc and prev[2] == run.steps - 1 and run.seg_start < env.t - 1:
                self.model.add(int(env._types[j]), run.alloc[0], run.alloc[1], run.progress - prev[0])
            seen[j] = (run.progress, run.alloc, run.steps)
        self.last = seen

    def _allocate(self, env: TapFingerEnv, n: int, tasks: list[tuple[int, float]], free: np.ndarray) -> dict:
        """Marginal-gain allocation of ``tasks = [(task, remaining progress)]`` within ``free`` (CPU, GPU)."""
        alloc = {j: [int(env._mins[j, 0]), int(env._mins[j, 1])] for j, _ in tasks}
        left = free[:2] - sum((np.array(a) for a in alloc.values()), np.zeros(2, dtype=np.int64))
        cap = env.capacity[n]
        rem = dict(tasks)
        while True:
            best, best_gain = None, 1e-12
            for j, a in alloc.items():
                typ = int(env._types[j])
                now = self.model.time_per_progress(typ, a[0], a[1])
                for r in (0, 1):
                    if left[r] <= 0:
                        continue
                    b = list(a)
                    b[r] += 1
                    gain = rem[j] * (now - self.model.time_per_progress(typ, b[0], b[1])) * cap[r]
                    if gain > best_gain:
                        best, best_gain = (j, r), gain
            if best is None:
                return {j: tuple(a) for j, a in alloc.items()}
            alloc[best[0]][best[1]] += 1
            left[best[1]] -= 1

    def act(self, env: TapFingerEnv, obs: dict, infos: dict) -> Decision:
        self._observe_progress(env)
        actions, claimed, plans = {}, Claims(self.ordered), {}
        for n, a in enumerate(env.possible_agents):
            if a not in obs:
                continue
            running = list(env.on_cluster[n].values())
            base = env.capacity[n] if self.preemptive else env.free[n]
            used_min = sum((env._mins[r.task] for r in running), np.zeros(env.R, dtype=np.int64)) \
                if self.preemptive else np.zeros(env.R, dtype=np.int64)
            new = None
            for k, j in enumerate(infos[a]["pending_tasks"]):
                if j not in claimed and (used_min + env._mins[j] <= base).all():
                    new = (k, j)
                    break
            if new is not None:
                claimed.add(new[1])
            if self.preemptive:
                tasks = [(r.task, 1.0 - r.progress) for r in running] + ([(new[1], 1.0)] if new else [])
                target = self._allocate(env, n, tasks, env.capacity[n].copy())
                plan = {r.task: target[r.task] for r in running if r.paused or target[r.task] != r.alloc[:2]}
                if plan:
                    plans[a] = plan
            elif new is not None:
                target = self._allocate(env, n, [(new[1], 1.0)], env.free[n].copy())
            if new is None:
                actions[a] = none_action(env)
            else:
                c, g = target[new[1]]
                actions[a] = np.array([new[0], c, g], dtype=np.int64)
        return Decision(actions, reallocations=plans or None)


class TiresiasPolicy:
    """``tiresias`` (preemptive, relaxed) and ``tiresias_np`` (see the module docstring)."""

    def __init__(self, preemptive: bool, ordered: bool = False) -> None:
        self.preemptive, self.ordered = preemptive, ordered

    def reset(self, env: TapFingerEnv, rng: np.random.Generator) -> None:
        inst = env.instance
        gpu_time = [inst.type_duration(t.task_type, t.min_resources[0], t.min_resources[1]) * t.min_resources[1]
                    for t in inst.tasks]
        self.threshold = float(np.median(gpu_time)) if gpu_time else 0.0
        self.attained: dict[int, float] = {}
        self.first_start: dict[int, int] = {}

    def act(self, env: TapFingerEnv, obs: dict, infos: dict) -> Decision:
        for j, run in env.runs.items():  # attained GPU time, counted from the runs of the last timestep
            self.first_start.setdefault(j, run.start)
            if not run.paused and run.start < env.t:
                self.attained[j] = self.attained.get(j, 0.0) + run.alloc[1]
        actions, claimed, plans = {}, Claims(self.ordered), {}
        for n, a in enumerate(env.possible_agents):
            if a not in obs:
                continue
            ks = _free_picks(env, obs, infos, n, claimed) if not self.preemptive else [
                k for k, j in enumerate(infos[a]["pending_tasks"]) if j not in claimed
                and (env._mins[j] <= env.capacity[n]).all()]
            new = (ks[0], infos[a]["pending_tasks"][ks[0]]) if ks else None
            if not self.preemptive:
                if new is None:
                    actions[a] = none_action(env)
                else:
                    claimed.add(new[1])
                    c, g = (int(x) for x in env._mins[new[1], :2])
                    actions[a] = np.array([new[0], c, g], dtype=np.int64)
                continue
            runs = list(env.on_cluster[n].values())
            order = sorted(
                [(self.attained.get(r.task, 0.0) >= self.threshold, self.first_start.get(r.task, r.start), r.task)
                 for r in runs] + ([(False, math.inf, new[1])] if new else []))
            left = env.capacity[n].copy()
            keep = set()
            for _, _, j in order:
                if (env._mins[j] <= left).all():
                    keep.add(j)
                    left -= env._mins[j]
            plan: dict[int, tuple[int, ...] | None] = {}
            for r in runs:
                mins = tuple(int(x) for x in env._mins[r.task])
                if r.task in keep and (r.paused or r.alloc != mins):
                    plan[r.task] = mins
                elif r.task not in keep and not r.paused:
                    plan[r.task] = None
            if plan:
                plans[a] = plan
            if new is not None and new[1] in keep:
                claimed.add(new[1])
                c, g = (int(x) for x in env._mins[new[1], :2])
                actions[a] = np.array([new[0], c, g], dtype=np.int64)
            else:
                actions[a] = none_action(env)
        return Decision(actions, reallocations=plans or None)


@register(FAMILY, "random", kind="baseline", randomized=True,
          summary="random pending task, random valid allocation (Sec. V-A)")
def random_policy(instance: Instance, *, seed: int = 0) -> Result:
    """Random baseline: a random valid pending task with a random valid (CPU, GPU) allocation."""
    return run_policy(instance, RandomPolicy(minimum=False), "random", seed=seed)


@register(FAMILY, "minimum", kind="baseline", randomized=True,
          summary="random pending task at its minimum allocation (Sec. V-A)")
def minimum_policy(instance: Instance, *, seed: int = 0) -> Result:
    """Minimum-allocation baseline: a random valid pending task at its minimum allocation."""
    return run_policy(instance, RandomPolicy(minimum=True), "minimum", seed=seed)


@register(FAMILY, "optimus", kind="baseline", relaxed=True,
          summary="Optimus: fitted speed model, marginal-gain re-allocation every timestep (preemptive)")
def optimus(instance: Instance, *, seed: int = 0) -> Result:
    """Optimus (Peng et al., EuroSys 2018) as the TapFinger paper adapts it; re-allocates (relaxed)."""
    return run_policy(instance, OptimusPolicy(preemptive=True), "optimus", seed=seed)


@register(FAMILY, "optimus_np", kind="baseline",
          summary="Optimus's admission and marginal-gain allocation, fixed once started (non-preemptive)")
def optimus_np(instance: Instance, *, seed: int = 0) -> Result:
    """Non-preemptive Optimus: the admitted task's marginal-gain allocation is kept until it ends."""
    return run_policy(instance, OptimusPolicy(preemptive=False), "optimus_np", seed=seed)


@register(FAMILY, "tiresias", kind="baseline", relaxed=True,
          summary="Tiresias: 2-level feedback queue on GPU time, minimum allocation, preemptive")
def tiresias(instance: Instance, *, seed: int = 0) -> Result:
    """Tiresias (Gu et al., NSDI 2019) with 2 queues and the median GPU time as threshold (relaxed)."""
    return run_policy(instance, TiresiasPolicy(preemptive=True), "tiresias", seed=seed)


@register(FAMILY, "tiresias_np", kind="baseline",
          summary="Tiresias without preemption: FIFO at the minimum allocation")
def tiresias_np(instance: Instance, *, seed: int = 0) -> Result:
    """Non-preemptive Tiresias: FIFO at the minimum allocation (what its queues reduce to)."""
    return run_policy(instance, TiresiasPolicy(preemptive=False), "tiresias_np", seed=seed)


@register(FAMILY, "greedy", kind="baseline", ranges={"share_cap": ">= 1", "efficiency_slack": ">= 0"},
          summary="ours: shortest estimated completion first with an efficient fair-share allocation")
def greedy(instance: Instance, *, seed: int = 0, share_cap: int = 1, efficiency_slack: float = 0.1) -> Result:
    """Greedy bar for the learned policy (ours, see the module docstring).

    Args:
        share_cap: most queued tasks a cluster's free resources are shared among.
        efficiency_slack: allowed excess of dominant-share work over the least, to run faster.
    """
    if share_cap < 1:
        from edgeopt.core import InputError

        raise InputError("param.share_cap", f"must be >= 1, got {share_cap}")
    if efficiency_slack < 0:
        from edgeopt.core import InputError

        raise InputError("param.efficiency_slack", f"must be >= 0, got {efficiency_slack}")
    return run_policy(instance, GreedyPolicy(share_cap, efficiency_slack), "greedy", seed=seed)


#: the earlier conflict rule's variants: name -> (policy factory, relaxed, randomized)
ORDERED_VARIANTS = {
    "random": (lambda: RandomPolicy(minimum=False, ordered=True), False, True),
    "minimum": (lambda: RandomPolicy(minimum=True, ordered=True), False, True),
    "optimus": (lambda: OptimusPolicy(preemptive=True, ordered=True), True, False),
    "optimus_np": (lambda: OptimusPolicy(preemptive=False, ordered=True), False, False),
    "tiresias": (lambda: TiresiasPolicy(preemptive=True, ordered=True), True, False),
    "tiresias_np": (lambda: TiresiasPolicy(preemptive=False, ordered=True), False, False),
    "greedy": (lambda: GreedyPolicy(share_cap=1, efficiency_slack=0.1, ordered=True), False, False),
}


def _register_ordered(base: str, make: Any, relaxed: bool, randomized: bool) -> None:
    name = f"{base}_ordered"

    @register(FAMILY, name, kind="baseline", relaxed=relaxed, randomized=randomized,
              summary=f"{base} with the earlier conflict rule: agents claim tasks in index order, none lost")
    def variant(instance: Instance, *, seed: int = 0) -> Result:
        return run_policy(instance, make(), name, seed=seed)

    variant.__doc__ = (f"``{base}`` under the earlier conflict rule: agents choose in index order and skip tasks "
                       "an earlier agent claimed in the same timestep (no pick is lost to eq. (11)).")
    variant.__name__ = variant.__qualname__ = f"{base}_ordered"


for _base, (_make, _relaxed, _randomized) in ORDERED_VARIANTS.items():
    _register_ordered(_base, _make, _relaxed, _randomized)
