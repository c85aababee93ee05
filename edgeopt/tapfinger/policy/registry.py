"""Registers the learned policy as tapfinger's ``online`` algorithm, the ablation ``vanilla_marl``, and
``online_bc``, the same network trained by our ``reduced_bc`` recipe (cloning, then MAPPO).

Registration imports no torch (so importing the family stays fast and works without the ``rl``
extra): it happens only when torch, PyTorch Geometric and safetensors are installed and the shipped
checkpoints exist; the algorithms load their checkpoint on first use. Both run through the family's
shared environment loop (`edgeopt.tapfinger.loop.run_policy`), which validates every schedule.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from edgeopt.core import Result, register
from edgeopt.tapfinger.instance import Instance

CHECKPOINTS = Path(__file__).parent / "checkpoints"
SHIPPED = {"online": CHECKPOINTS / "tapfinger", "vanilla_marl": CHECKPOINTS / "vanilla_marl",
           "online_bc": CHECKPOINTS / "tapfinger_bc"}
EXTRA_MODULES = ("torch", "torch_geometric", "safetensors")
#: algorithm -> inference milliseconds per decision of its last run (graph building + network)
LAST_INFERENCE: dict[str, float] = {}
#: the same in CPU milliseconds of the process (what a loaded machine does not inflate)
LAST_INFERENCE_CPU: dict[str, float] = {}


def requirements() -> tuple[tuple[str, ...], list[Path]]:
    """(modules, files) that `available` needs: the rl extra and both shipped checkpoints (also read by
    `edgeopt.catalog`, which lists the algorithms without importing the family)."""
    return EXTRA_MODULES, [d / f for d in SHIPPED.values() for f in ("model.safetensors", "card.json")]


def available() -> bool:
    """Whether the rl extra is installed and both shipped checkpoints are present."""
    modules, files = requirements()
    try:
        if any(importlib.util.find_spec(m) is None for m in modules):
            return False
    except (ImportError, ValueError):  # a module blocked or half-installed counts as missing
        return False
    return all(f.exists() for f in files)


@functools.lru_cache(maxsize=8)
def _load(directory: str, architecture: str, backend: str = "dense"):
    from edgeopt.core import InputError
    from edgeopt.tapfinger.policy import checkpoint

    net, cfg, _card = checkpoint.load(directory, backend=backend)
    if cfg.architecture != architecture:
        raise InputError("param.checkpoint", f"{directory} holds a {cfg.architecture} policy, not {architecture}")
    return net, cfg


def run_learned(instance: Instance, name: str, architecture: str, directory: str, *, seed: int,
                sample: bool, threads: int = 1, backend: str = "dense") -> Result:
    """Run a stored policy through the shared env loop (``threads`` torch CPU threads, HAN ``backend``
    ``dense`` or the PyG reference ``pyg``); adds the inference time per decision."""
    from edgeopt.core import InputError
    from edgeopt.tapfinger.loop import run_policy
    from edgeopt.tapfinger.policy.runner import LearnedPolicy, torch_threads

    if int(threads) < 1:
        raise InputError("param.threads", f"must be >= 1, got {threads}")
    if backend not in ("dense", "pyg"):
        raise InputError("param.backend", f"must be 'dense' or 'pyg', got {backend!r}")
    with torch_threads(threads):
        net, cfg = _load(str(Path(directory).resolve()), architecture, backend)
        policy = LearnedPolicy(net, cfg, sample=sample)
        res = run_policy(instance, policy, name, seed=seed)
    res.extra["decisions"] = policy.decisions
    res.extra["checkpoint"] = "shipped" if Path(directory) == SHIPPED.get(name) else str(directory)
    # a timing would make equal-seed results differ: it goes beside the result, not into it
    LAST_INFERENCE[name] = 1000 * policy.seconds / max(1, policy.decisions)
    LAST_INFERENCE_CPU[name] = 1000 * policy.cpu_seconds / max(1, policy.decisions)
    return res


def register_all() -> bool:
    """Register ``online``, ``vanilla_marl`` and ``online_bc`` if `available`; returns whether it did.

    Otherwise both are marked unavailable, so asking for them names the extra that provides them.
    """
    if not available():
        from edgeopt.core.registry import mark_unavailable

        why = ("the learned TapFinger policy needs the rl extra (torch, torch-geometric, safetensors): "
               "pip install 'edgeopt[rl]'")
        for name in SHIPPED:
            mark_unavailable("tapfinger", name, why)
        return False

    @register("tapfinger", "online", kind="online", paper=True,
              summary="TapFinger: HAN + pointer network + Bayes conflict resolution, trained by masked MAPPO")
    def online(instance: Instance, *, seed: int = 0, sample: bool = False, checkpoint: str = "", threads: int = 1,
               backend: str = "dense") -> Result:
        """The learned TapFinger policy (Li et al., Sec. IV), from the shipped CPU-trained checkpoint.

        Args:
            sample: sample actions from the policy (seeded) instead of taking the most likely ones.
            checkpoint: a checkpoint directory to use instead of the shipped one.
            threads: torch CPU threads for inference (fixed: decisions can depend on it).
            backend: HAN implementation, ``dense`` (padded, default) or ``pyg`` (PyTorch Geometric's
                sparse reference); same weights, same decisions.
        """
        return run_learned(instance, "online", "tapfinger", checkpoint or str(SHIPPED["online"]),
                           seed=seed, sample=sample, threads=threads, backend=backend)

    @register("tapfinger", "vanilla_marl", kind="baseline",
              summary="Fig. 7 ablation: stacked features, FIFO task, masked MLP allocation, MAPPO-trained")
    def vanilla_marl(instance: Instance, *, seed: int = 0, sample: bool = False, checkpoint: str = "",
                     threads: int = 1) -> Result:
        """The vanilla MARL ablation of Fig. 7 (no HAN, no pointer network, FIFO task choice).

        Args:
            sample: sample allocations from the policy (seeded) instead of taking the most likely ones.
            checkpoint: a checkpoint directory to use instead of the shipped one.
            threads: torch CPU threads for inference (fixed: decisions can depend on it).
        """
        return run_learned(instance, "vanilla_marl", "vanilla_marl", checkpoint or str(SHIPPED["vanilla_marl"]),
                           seed=seed, sample=sample, threads=threads)

    @register("tapfinger", "online_bc", kind="online",
              summary="ours: the TapFinger network with task-type profiles, cloned from greedy_ordered (DAgger), "
                      "then MAPPO fine-tuned; runs on any number of task types")
    def online_bc(instance: Instance, *, seed: int = 0, sample: bool = False, checkpoint: str = "", threads: int = 1,
                  backend: str = "dense") -> Result:
        """The TapFinger network trained by the ``reduced_bc`` recipe (ours, not the paper's training).

        Behaviour cloning of ``greedy_ordered`` with DAgger rounds, then MAPPO fine-tuning with a decaying
        cloning term (`edgeopt.tapfinger.policy.imitation`). Its task types are encoded by their profile
        (timesteps at the minimum and on a full cluster), so it also runs on trace-driven instances with many
        types. Decides like ``online``: one independent choice per agent, conflicts settled by eq. (11).

        Args:
            sample: sample actions from the policy (seeded) instead of taking the most likely ones.
            checkpoint: a checkpoint directory to use instead of the shipped one.
            threads: torch CPU threads for inference (fixed: decisions can depend on it).
            backend: HAN implementation, ``dense`` (padded, default) or ``pyg``; same weights, same decisions.
        """
        return run_learned(instance, "online_bc", "tapfinger", checkpoint or str(SHIPPED["online_bc"]),
                           seed=seed, sample=sample, threads=threads, backend=backend)

    return True
