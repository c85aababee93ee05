"""Checkpoints: weights in safetensors, trainer state in a `torch.save`d dict, a JSON card.

A checkpoint directory holds ``model.safetensors`` (the network's state dict), ``card.json``
(configuration, steps, seed, wall time, hardware, evaluation numbers) and, for resuming,
``trainer.pt`` (optimizer and RNG states, loaded with ``weights_only=True``). Every file is written
to a temporary name in the same directory and moved into place (``os.replace``), so a run killed
mid-write leaves the previous checkpoint intact; a file name that exists as a device, FIFO, socket or
directory is refused, never replaced. Loading compares the card's network
configuration with the expected one and refuses a mismatch with a clear `InputError`.
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from edgeopt.core import InputError
from edgeopt.core.jsonio import atomic_file
from edgeopt.tapfinger.policy.config import PolicyConfig
from edgeopt.tapfinger.policy.model import build_model

SHIPPED = Path(__file__).parent / "checkpoints"


def _atomic(path: Path, write) -> None:
    """Write ``path`` through ``write(tmp)`` and a rename (`edgeopt.core.jsonio.atomic_file`): whole or
    absent, and a path that exists as a device, FIFO, socket or directory is refused, never replaced."""
    with atomic_file(path, what="checkpoint") as tmp:
        write(tmp)


def hardware(device: torch.device | str = "cpu") -> str:
    """Where a run trained: processor, cores, torch, and the GPU when the network ran on one."""
    where = "CPU only"
    if torch.device(device).type == "cuda":
        where = f"GPU {torch.cuda.get_device_name(torch.device(device))}"
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, {where}"


def save(directory: str | Path, net: torch.nn.Module, cfg: PolicyConfig, card: dict[str, Any],
         trainer_state: dict[str, Any] | None = None) -> None:
    """Write weights, card and (optionally) trainer state atomically into ``directory``."""
    d = Path(directory)
    state = {k: v.detach().cpu().contiguous().clone() for k, v in net.state_dict().items()}
    _atomic(d / "model.safetensors", lambda p: save_file(state, p))
    if trainer_state is not None:
        _atomic(d / "trainer.pt", lambda p: torch.save(trainer_state, p))
    device = next(net.parameters()).device
    full = {"policy": cfg.model_dump(mode="json"), "hardware": hardware(device), **card}
    _atomic(d / "card.json", lambda p: Path(p).write_text(json.dumps(full, indent=2, sort_keys=True) + "\n"))


def read_card(directory: str | Path) -> dict[str, Any]:
    p = Path(directory) / "card.json"
    if not p.exists():
        raise InputError("checkpoint", f"no checkpoint card at {p}")
    return json.loads(p.read_text())


def load(directory: str | Path, expected: PolicyConfig | None = None,
         backend: str = "dense") -> tuple[torch.nn.Module, PolicyConfig, dict]:
    """The network stored in ``directory`` (HAN ``backend`` ``dense`` or ``pyg``: same weights); refuses a
    card whose configuration differs from ``expected``."""
    d = Path(directory)
    card = read_card(d)
    try:
        cfg = PolicyConfig.model_validate(card["policy"])
    except Exception as exc:
        raise InputError("checkpoint", f"{d}: unreadable policy configuration in card.json: {exc}") from exc
    if expected is not None and cfg.key() != expected.key():
        a, b = cfg.model_dump(), expected.model_dump()
        diff = ", ".join(f"{k}: checkpoint {a[k]!r} != expected {b[k]!r}" for k in a if a[k] != b[k])
        raise InputError("checkpoint", f"{d}: configuration mismatch ({diff})")
    net = build_model(cfg, backend)
    try:
        net.load_state_dict(load_file(d / "model.safetensors"))
    except (RuntimeError, FileNotFoundError, OSError) as exc:
        raise InputError("checkpoint", f"{d}: weights do not match the configuration: {exc}") from exc
    return net.eval(), cfg, card


def load_trainer_state(directory: str | Path) -> dict[str, Any]:
    return torch.load(Path(directory) / "trainer.pt", weights_only=True, map_location="cpu")  # a GPU run resumes anywhere
