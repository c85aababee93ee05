"""The environments of one rollout, stepped in lockstep: in this process, or spread over worker processes.

A rollout steps every live environment once per timestep, after one batched forward pass for all of
them (`trainer.rollouts`). What happens per environment between two forward passes (turn the
network's choices into actions, `TapFingerEnv.step`, build the next timestep's network inputs with
`model.prepare`) needs no network and costs about 0.4 ms of CPU per decision, which caps one process
near 2,500 decisions/s however fast the forward pass is (on a GPU it is the bottleneck).

`LocalEnvs` does this work in the calling process (the reference). `EnvPool` keeps ``workers``
processes alive for a whole training run; `EnvPool.start` hands each one a contiguous share of the
rollout's environments, and every step sends each worker its environments' choices and gets back
their transitions, so the workers step their shares at the same time. The environments are
deterministic and the actions are drawn in the main process (from the run's seeded generator, in the
same order), so both give the same transitions, hence the same training run (a test compares them).

Both return, per environment and timestep, a `Transition`: the agents' rewards, the two flags a
rollout records per agent (``conflict_lost``, ``invalid_action``), and the next timestep's
`model.StepInputs` (None once the environment has no live agent).
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
from typing import Any

import numpy as np

from edgeopt.tapfinger.env import TapFingerEnv
from edgeopt.tapfinger.instance import Instance
from edgeopt.tapfinger.policy.config import PolicyConfig
from edgeopt.tapfinger.policy.model import StepInputs, check_env, prepare
from edgeopt.tapfinger.policy.runner import to_decision

FLAGS = ("conflict_lost", "invalid_action")


@dataclasses.dataclass
class Transition:
    rewards: dict[str, float]
    flags: dict[str, dict[str, bool]]  # agent -> {conflict_lost, invalid_action}
    next: StepInputs | None  # None: the episode is over


def choices(out: dict) -> dict[str, Any]:
    """The part of `model.decide_many`'s output an environment needs (numpy, cheap to send)."""
    if not out:
        return {}
    return {"agents": list(out["agents"]), "k": np.asarray(out["k"]), "cell": np.asarray(out["cell"]),
            "probs": np.asarray(out["probs"])}


class LocalEnvs:
    """The rollout's environments in this process."""

    def __init__(self, instances: list[Instance], cfg: PolicyConfig) -> None:
        self.cfg = cfg
        self.envs = [TapFingerEnv(inst) for inst in instances]
        for env in self.envs:
            check_env(env, cfg)
        self.state: list[list] = []

    @property
    def agents(self) -> list[list[str]]:
        return [list(env.possible_agents) for env in self.envs]

    def reset(self) -> list[StepInputs | None]:
        self.state = [list(env.reset(seed=0)) for env in self.envs]
        return [self._inputs(e) for e in range(len(self.envs))]

    def _inputs(self, e: int) -> StepInputs | None:
        env = self.envs[e]
        return prepare(env, self.state[e][0], self.state[e][1], self.cfg) if env.agents else None

    def step(self, outs: dict[int, dict]) -> dict[int, Transition]:
        """Step environment e with its `choices` ``outs[e]``, in the order of ``outs``."""
        done = {}
        for e, out in outs.items():
            env = self.envs[e]
            d = to_decision(env, out, self.cfg)
            obs, rewards, _, _, infos = env.step(d.actions, d.selection_probs)
            self.state[e] = [obs, infos]
            flags = {a: {f: bool(infos.get(a, {}).get(f)) for f in FLAGS} for a in env.possible_agents}
            done[e] = Transition({a: float(r) for a, r in rewards.items()}, flags, self._inputs(e))
        return done

    def unfinished(self) -> list[int]:
        return [len(env.unfinished()) for env in self.envs]

    def close(self) -> None:
        pass


def _serve(conn, cfg_json: str) -> None:
    """A worker: holds a share of the environments and answers the main process's commands."""
    cfg = PolicyConfig.model_validate_json(cfg_json)
    local: LocalEnvs | None = None
    offset = 0
    while True:
        cmd, arg = conn.recv()
        try:
            if cmd == "close":
                return
            if cmd == "start":
                offset, instances = arg
                local = LocalEnvs(instances, cfg)
                conn.send(("ok", (local.agents, local.reset())))
            elif cmd == "step":
                got = local.step({e - offset: out for e, out in arg.items()})
                conn.send(("ok", {e + offset: t for e, t in got.items()}))
            elif cmd == "unfinished":
                conn.send(("ok", local.unfinished()))
        except Exception as exc:  # noqa: BLE001 - any error is sent back and raised in the main process
            conn.send(("error", exc))


class EnvPool:
    """``workers`` processes that step a rollout's environments in parallel; reusable across rollouts."""

    def __init__(self, workers: int, cfg: PolicyConfig) -> None:
        ctx = mp.get_context("spawn")  # no fork of a process that holds torch's thread pools
        self.conns, self.procs = [], []
        for _ in range(workers):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_serve, args=(child, cfg.model_dump_json()), daemon=True)
            p.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(p)
        self.share: list[range] = []

    def _ask(self, which: list[int]) -> list:
        """The answers of workers ``which`` (all are read, so the pipes stay in step; then the first error
        is raised)."""
        answers = [self.conns[w].recv() for w in which]
        for status, value in answers:
            if status == "error":
                raise value
        return [value for _, value in answers]

    def start(self, instances: list[Instance]) -> EnvPool:
        """Hand out ``instances`` (contiguous shares) and reset them; `reset` returns their first inputs."""
        n, w = len(instances), min(len(self.conns), len(instances))
        bounds = [round(i * n / w) for i in range(w + 1)] if w else [0]  # no instances: no share, no worker asked
        self.share = [range(bounds[i], bounds[i + 1]) for i in range(w)]
        for i, r in enumerate(self.share):
            self.conns[i].send(("start", (r.start, instances[r.start:r.stop])))
        got = self._ask(list(range(w)))
        self._agents = [a for agents, _ in got for a in agents]
        self._first = [s for _, first in got for s in first]
        return self

    @property
    def agents(self) -> list[list[str]]:
        return self._agents

    def reset(self) -> list[StepInputs | None]:
        return self._first

    def step(self, outs: dict[int, dict]) -> dict[int, Transition]:
        busy = []
        for i, r in enumerate(self.share):
            mine = {e: out for e, out in outs.items() if e in r}
            if mine:
                self.conns[i].send(("step", mine))
                busy.append(i)
        merged: dict[int, Transition] = {}
        for got in self._ask(busy):
            merged.update(got)
        return {e: merged[e] for e in outs}

    def unfinished(self) -> list[int]:
        for i in range(len(self.share)):
            self.conns[i].send(("unfinished", None))
        return [u for got in self._ask(list(range(len(self.share)))) for u in got]

    def close(self) -> None:
        """Stop the workers (also done when the process exits: they are daemons)."""
        for conn in self.conns:
            try:
                conn.send(("close", None))
            except (BrokenPipeError, OSError):
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
        self.conns, self.procs = [], []
