"""The one environment loop that runs any tapfinger policy and returns a validated `Result`.

A policy sees what the agents see (observations, infos, and the environment's `entities`) and
answers a `Decision` per timestep. The loop steps the environment to the end of the episode,
takes the schedule of the finished tasks, checks it with the family's validator (a violation is a
defect: `ModelError`), and lists unfinished tasks as rejected (status ``partial``).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Protocol

import numpy as np

from edgeopt.core import ModelError, Result, progress
from edgeopt.tapfinger.env import TapFingerEnv
from edgeopt.tapfinger.instance import Instance
from edgeopt.tapfinger.spec import FAMILY


@dataclasses.dataclass
class Decision:
    """What all agents do in one timestep (see `TapFingerEnv.step`)."""

    actions: dict[str, np.ndarray]
    selection_probs: dict[str, np.ndarray] | None = None
    reallocations: dict[str, dict[int, tuple[int, ...] | None]] | None = None


class Policy(Protocol):
    """A tapfinger policy: ``preemptive`` says whether it sends reallocations."""

    preemptive: bool

    def reset(self, env: TapFingerEnv, rng: np.random.Generator) -> None: ...

    def act(self, env: TapFingerEnv, obs: dict[str, Any], infos: dict[str, Any]) -> Decision: ...


def none_action(env: TapFingerEnv) -> np.ndarray:
    return np.array([env.P, 0, 0], dtype=np.int64)


def run_episode(instance: Instance, policy: Policy, *, seed: int = 0) -> tuple[TapFingerEnv, dict[str, float]]:
    """Run ``policy`` on ``instance`` to the end; returns the finished env and episode statistics."""
    env = TapFingerEnv(instance, preemptive=policy.preemptive)
    obs, infos = env.reset(seed=seed)
    policy.reset(env, np.random.default_rng(seed))
    steps = conflicts = invalid = 0
    total_reward = 0.0
    while env.agents:
        d = policy.act(env, obs, infos)
        obs, rewards, _, _, infos = env.step(d.actions, d.selection_probs, d.reallocations)
        steps += 1
        progress.report(min(steps, instance.horizon), instance.horizon)
        total_reward += sum(rewards.values())
        conflicts += sum(bool(i.get("conflict_lost")) for i in infos.values())
        invalid += sum(bool(i.get("invalid_action") or i.get("invalid_reallocation")) for i in infos.values())
    progress.report(instance.horizon, instance.horizon)
    return env, {"timesteps": steps, "conflicts_lost": conflicts, "invalid_actions": invalid,
                 "total_reward": total_reward}


def run_policy(instance: Instance, policy: Policy, algorithm: str, *, seed: int = 0) -> Result:
    """Run ``policy`` through the environment and return its validated result."""
    t0 = time.perf_counter()
    env, stats = run_episode(instance, policy, seed=seed)
    runtime = time.perf_counter() - t0
    schedule = env.schedule()
    violations = FAMILY.validate(instance, schedule)
    if violations:
        raise ModelError(f"tapfinger/{algorithm}: the environment's schedule fails the validator: "
                         + "; ".join(map(str, violations[:5])))
    return FAMILY.algorithm_result(instance, algorithm, schedule, runtime, rejected=env.unfinished(),
                                   extra={**stats, "preemptive": policy.preemptive})
