"""Configurations of the learned TapFinger policy and its MAPPO training.

`PolicyConfig` fixes the network's shapes (a checkpoint is only valid for the configuration it was
trained with); `TrainConfig` adds the training budget and the environments trained on. Two named
configurations ship as TOML files next to this module:

* ``reduced`` (CPU): 2 HAN layers, 2 heads, hidden 64, pointer encoder of 1 layer and 2 heads, a few
  episodes per update. This is what the shipped checkpoint was trained with.
* ``mid`` (CPU, the paper's architecture variants): hidden 128, 3 HAN layers of 4 heads, a
  pointer encoder of 2 layers and 4 heads, one actor per agent, the centralised critic, 64 tasks
  per cluster; what the long CPU run trains.
* ``reduced_bc`` (ours): ``reduced``'s sizes with type-profile features (`PolicyConfig.task_features`),
  trained by cloning ``greedy_ordered`` with DAgger rounds, then MAPPO fine-tuning (``init = "bc"``).
* ``full`` (the paper's Sec. V-A, for an accelerator): 6 HAN layers, 4 heads, hidden 256, pointer
  encoder of 2 layers and 4 heads, 32 parallel environments, lr 1e-4, batch 256, discount 1.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from edgeopt.core import InputError
from edgeopt.core.jsonio import loads, read_bytes

CONFIG_DIR = Path(__file__).parent / "configs"


class PolicyConfig(BaseModel):
    """Network shapes. Two policies with equal `PolicyConfig` can load each other's weights."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    architecture: Literal["tapfinger", "vanilla_marl"] = "tapfinger"
    hidden: int = Field(64, ge=4)
    han_layers: int = Field(2, ge=1)
    han_heads: int = Field(2, ge=1)
    pointer_layers: int = Field(1, ge=1)
    pointer_heads: int = Field(2, ge=1)
    mlp_hidden: int = Field(128, ge=4)
    pending_size: int = Field(10, ge=1)
    max_cpu: int = Field(16, ge=1)  # the allocation grid is (max_cpu + 1) x (max_gpu + 1)
    max_gpu: int = Field(16, ge=1)
    max_running: int = Field(16, ge=1)  # vanilla_marl's stacked running-task slots
    max_clusters: int = Field(6, ge=1)  # vanilla_marl's stacked visibility columns
    #: one actor (pointer + resource head) per agent index, as the paper trains; False: one shared actor
    actor_per_agent: bool = False
    #: "local": the critic reads the agent's own pending set; "central" (the paper's): the flattened
    #: embeddings of every agent's pending set (padded to max_clusters), plus the agent's cluster
    critic: Literal["local", "central"] = "local"
    #: task-type features: "onehot" (the paper's; at most 2 types), or "profile" (each type's noise-free
    #: timesteps at its minimum and on a full cluster, `edgeopt.tapfinger.env.type_profile`: runs on any
    #: number of types, trace-driven instances included; the tapfinger architecture only)
    task_features: Literal["onehot", "profile"] = "onehot"
    #: add the agent's index / max_clusters to its cluster node's features (ours, not in eq. 9): identical
    #: clusters can then act by their order, as the ``greedy_ordered`` expert's agents claim tasks
    agent_index: bool = False
    feature_scale: float = Field(16.0, gt=0)  # resource amounts are divided by it
    time_scale: float = Field(10.0, gt=0)  # elapsed and waiting times are divided by it

    @model_validator(mode="after")
    def _features_known(self) -> PolicyConfig:
        if self.architecture != "tapfinger" and (self.task_features == "profile" or self.agent_index):
            raise ValueError("task_features 'profile' and agent_index need the tapfinger architecture (vanilla_marl "
                             "stacks its own features)")
        return self

    def key(self) -> str:
        """Canonical JSON of the configuration (compared when loading a checkpoint)."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True)


class ImitationConfig(BaseModel):
    """Phase 1 of the ``bc`` recipe (`edgeopt.tapfinger.policy.imitation`) and its term in fine-tuning."""

    model_config = ConfigDict(extra="forbid")

    expert: Literal["greedy_ordered", "greedy"] = "greedy_ordered"
    #: round 0 rolls out the expert, rounds 1.. the learner (DAgger); 1 = pure cloning
    rounds: int = Field(8, ge=1, le=1000)
    episodes_per_round: int = Field(16, ge=1, le=10_000)
    epochs: int = Field(6, ge=1, le=1000)  # passes over the aggregate dataset after each round
    batch_size: int = Field(256, ge=1)  # timesteps per cloning minibatch
    lr: float = Field(1e-3, gt=0)
    value_coef: float = Field(0.5, ge=0)  # the critic's regression on the acting policy's returns
    #: weight of the cloning loss (on the expert's own demonstrations, round 0) added to every MAPPO
    #: minibatch in fine-tuning, multiplied by ``bc_decay`` after each update (0: plain MAPPO)
    bc_coef: float = Field(0.0, ge=0)
    bc_decay: float = Field(0.95, gt=0, le=1)
    bc_batch: int = Field(64, ge=1)  # demonstration timesteps per MAPPO minibatch
    #: the actors' (pointer and resource heads') learning rate in fine-tuning, as a multiple of ``lr``
    actor_lr_scale: float = Field(1.0, gt=0, le=1)


class TrainConfig(BaseModel):
    """A training run: the network, the environments, MAPPO's hyperparameters, the budget."""

    model_config = ConfigDict(extra="forbid")

    name: str = "reduced"
    policy: PolicyConfig = PolicyConfig()
    seed: int = 0
    #: training instances: ``paper`` preset settings drawn in turn, as (clusters, arrival rate)
    settings: list[tuple[int, float]] = [(3, 2.0), (6, 4.0)]
    jobs_per_cluster: int = Field(32, ge=1)  # the paper uses 64; fewer keeps CPU episodes short
    noise: float = Field(0.1, ge=0, le=0.5)
    #: durations of the resource-sensitive task: "code" (the authors' code, tanh(g/16): 2-21 timesteps)
    #: or "paper" (Sec. V-A's 2-17 timesteps: tanh(g/13), the same curve otherwise)
    sensitive_durations: Literal["code", "paper"] = "code"
    num_envs: int = Field(4, ge=1)  # episodes collected per update (one environment each)
    total_steps: int = Field(40_000, ge=1)  # agent decisions (idle timesteps skipped)
    lr: float = Field(3e-4, gt=0)
    gamma: float = Field(1.0, gt=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip: float = Field(0.2, gt=0)
    epochs: int = Field(4, ge=1)
    batch_size: int = Field(256, ge=1)  # timesteps per minibatch
    value_coef: float = Field(0.5, ge=0)
    entropy_coef: float = Field(0.01, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    # rewards -R_{n,t} are multiplied by it: keeps returns (hundreds of alive-task timesteps) near 1, so
    # the critic's loss does not swamp the policy's gradient in the shared encoder and the clipped norm
    reward_scale: float = Field(0.005, gt=0)
    eval_every: int = Field(5, ge=1)  # updates between evaluations
    eval_seeds: list[int] = [900_000, 900_001]  # validation seeds (never the benchmark's held-out seeds)
    #: validate on the first training setting only (False, the shipped runs') or on every setting (the mean)
    eval_all_settings: bool = False
    checkpoint_every: int = Field(1, ge=1)  # updates between checkpoints
    threads: int = Field(1, ge=1)  # torch CPU threads (fixed for reproducibility)
    #: torch CPU threads of the rollout's forward passes (None: ``threads``). Their batches are small, so
    #: a second thread mostly waits: 1 here and 2 in the update is how 2 cores are used best
    rollout_threads: int | None = Field(None, ge=1)
    #: HAN implementation: padded dense (default, faster at these graph sizes) or PyG's sparse HANConv
    backend: Literal["dense", "pyg"] = "dense"
    device: Literal["cpu", "cuda"] = "cpu"  # cuda: network and minibatches on the GPU (dense backend)
    #: worker processes that step the rollout's environments (0: this process); the run is the same,
    #: only faster where the forward pass is cheap next to the environments (a GPU, many cores)
    workers: int = Field(0, ge=0)

    #: "scratch": MAPPO from random weights (the paper's); "bc": clone ``imitation.expert`` first (with DAgger
    #: rounds), then fine-tune with MAPPO (ours, the ``reduced_bc`` configuration)
    init: Literal["scratch", "bc"] = "scratch"
    imitation: ImitationConfig = ImitationConfig()

    #: training instance seeds start here; benchmark seeds are small integers, never this large
    train_seed_base: int = 1_000_000

    @property
    def rollout_thread_count(self) -> int:
        """The torch CPU threads the rollout runs at (``rollout_threads``, or ``threads`` when unset)."""
        return self.rollout_threads or self.threads


def load_config(path: str | Path) -> TrainConfig:
    """A `TrainConfig` from a TOML or JSON file, or a shipped name (``reduced``, ``reduced_bc``, ``mid``,
    ``full``, ``vanilla_marl``)."""
    p = Path(path)
    if not p.exists() and (CONFIG_DIR / f"{path}.toml").exists():
        p = CONFIG_DIR / f"{path}.toml"
    if not p.exists():
        raise InputError("config", f"no such configuration file: {path}")
    text = read_bytes(p, what="config").decode(errors="replace")  # a regular file, within the input cap
    try:
        data = tomllib.loads(text) if p.suffix == ".toml" else loads(text, what="config", name=str(p))
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise InputError("config", f"{p}: cannot parse: {exc}") from exc
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(x) for x in first["loc"])
        raise InputError(f"config.{field}", first["msg"]) from exc
