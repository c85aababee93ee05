"""The learned policy as a `edgeopt.tapfinger.loop.Policy`: runs through the family's shared env loop.

`torch_threads` fixes torch's CPU thread count for a block and restores it after. Inference and
training both run under it: left unset, torch uses every core, and on a machine shared with other
jobs its threads wait on each other (a 192-task run measured 15 s of CPU at 2 threads under load
against 0.4 s at 1 thread); the thread count also changes float reduction order, hence, rarely, an
argmax, so a fixed count is part of reproducing a run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import torch

from edgeopt.tapfinger.env import TapFingerEnv
from edgeopt.tapfinger.loop import Decision, none_action
from edgeopt.tapfinger.policy.config import PolicyConfig
from edgeopt.tapfinger.policy.model import check_env, decide, prepare


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(n)``; the previous count is restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def cell_to_alloc(cell: int, cfg: PolicyConfig) -> tuple[int, int]:
    """Grid cell index -> (CPU, GPU)."""
    return divmod(int(cell), cfg.max_gpu + 1)


def to_decision(env: TapFingerEnv, out: dict, cfg: PolicyConfig) -> Decision:
    """Env actions and eq. (11)'s selection probabilities from `decide`'s output."""
    actions = {a: none_action(env) for a in env.agents}
    probs = {}
    for i, n in enumerate(out.get("agents", [])):
        a = env.possible_agents[n]
        c, g = cell_to_alloc(int(out["cell"][i]), cfg)
        actions[a] = np.array([int(out["k"][i]), c, g], dtype=np.int64)
        probs[a] = out["probs"][i]
    return Decision(actions, selection_probs=probs or None)


class LearnedPolicy:
    """A trained network deciding for every agent (argmax, or sampled with the run's seed)."""

    preemptive = False

    def __init__(self, net: torch.nn.Module, cfg: PolicyConfig, *, sample: bool = False) -> None:
        self.net, self.cfg, self.sample = net.eval(), cfg, sample

    def reset(self, env: TapFingerEnv, rng: np.random.Generator) -> None:
        check_env(env, self.cfg)
        self.gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
        self.decisions = 0
        self.seconds = 0.0
        self.cpu_seconds = 0.0  # CPU time of this process (the figure to read on a shared machine)

    def act(self, env: TapFingerEnv, obs: dict, infos: dict) -> Decision:
        import time

        t0, c0 = time.perf_counter(), time.process_time()
        step = prepare(env, obs, infos, self.cfg)
        out = decide(self.net, step, sample=self.sample, generator=self.gen)
        self.seconds += time.perf_counter() - t0
        self.cpu_seconds += time.process_time() - c0
        self.decisions += int(bool(step.agents))
        return to_decision(env, out, self.cfg)
