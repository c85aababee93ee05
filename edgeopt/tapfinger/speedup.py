"""The task speed-up model of TapFinger: how much of a task one timestep completes under an allocation.

A task finishes when its progress reaches 1. One function, `step_gain`, says what a timestep adds;
the environment, the validator and the exact models (through `run_duration`) all call it, so they
cannot disagree on when a task ends.

Models (``ProgressModel.kind``):

* ``insensitive``: ``rate`` (0.25) per timestep once the minimum is met: 4 timesteps (the paper's
  resource-insensitive synthetic task, Sec. V-A).
* ``sensitive``: ``tanh(g / gpu_scale) * sqrt(offset - progress)`` per timestep with ``g`` GPUs,
  ``gpu_scale = 16``, ``offset = 1.2``; CPU above the minimum has no effect. This is the function of
  the authors' public code; it gives 2 timesteps at 16 GPUs and 21 at 1 GPU (the paper's text says
  2-17).
* ``cpu_sensitive`` (ours, for Fig. 2's CPU effect): the ``sensitive`` gain times
  ``0.5 + 0.5 * min(c, cpu_saturation) / cpu_saturation``: CPUs help up to a saturation point and
  are flat after it.
* ``table``: measured completion times ``seconds(c, g)`` per allocation (a CSV, see
  `read_progress_table`); a timestep adds ``timestep_seconds / seconds(c, g)``. An allocation
  missing from the table uses the fastest listed allocation it covers componentwise (extra
  resources may idle), and is invalid when it covers none.

Noise (optional, Sec. V-B's "+/-0.1 randomness on normalised progress gains"): read as a
multiplicative factor ``1 + u`` with ``u ~ U[-noise, noise]``, drawn per task and per timestep of
its run from a generator seeded by ``(noise_seed, task id)``. The noise is thus a fixed,
reproducible scenario of the instance: the validator and the exact models see the same realisation
as the environment, while policies only observe it through progress.

Switch overhead: a timestep in which a running task's allocation changed, or in which it resumed
after a pause, adds ``(1 - switch_overhead)`` of its gain (0.5 by default: 5 s of a 10 s timestep,
from the pause/resume measurements the paper cites). Only preemptive (relaxed) schedules pay it.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from edgeopt.core import InputError

#: Progress counts as complete from this value on (guards float sums such as 4 x 0.25).
DONE = 1.0 - 1e-9

ProgressKind = Literal["insensitive", "sensitive", "cpu_sensitive", "table"]


class TableEntry(BaseModel):
    """One measured allocation: ``cpu`` cores and ``gpu`` GPUs finish the task in ``seconds``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    cpu: int = Field(ge=0, le=1024)
    gpu: int = Field(ge=0, le=1024)
    seconds: float = Field(gt=0, le=1e7)


class ProgressModel(BaseModel):
    """How fast a task type progresses under an allocation (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: ProgressKind
    rate: float = Field(default=0.25, gt=0, le=1, description="insensitive: progress per timestep")
    gpu_scale: float = Field(default=16.0, gt=0, le=1e4, description="sensitive: tanh(g / gpu_scale)")
    offset: float = Field(default=1.2, gt=1, le=10, description="sensitive: sqrt(offset - progress)")
    cpu_saturation: float = Field(default=8.0, gt=0, le=1e4, description="cpu_sensitive: CPUs past it are flat")
    table: list[TableEntry] = Field(default_factory=list, description="table: measured seconds per allocation")

    @model_validator(mode="after")
    def _table(self) -> ProgressModel:
        if self.kind == "table" and not self.table:
            raise ValueError("a 'table' progress model needs at least one table entry")
        if self.kind != "table" and self.table:
            raise ValueError(f"a {self.kind!r} progress model takes no table")
        return self


def table_seconds(model: ProgressModel, cpu: int, gpu: int) -> float:
    """Seconds of the fastest table entry that ``(cpu, gpu)`` covers; ``inf`` when none."""
    best = math.inf
    for e in model.table:
        if e.cpu <= cpu and e.gpu <= gpu and e.seconds < best:
            best = e.seconds
    return best


def step_gain(model: ProgressModel, cpu: int, gpu: int, progress: float, timestep_seconds: float) -> float:
    """Noise-free progress one timestep adds at ``progress`` under ``(cpu, gpu)`` (minimum already met)."""
    kind = model.kind
    if kind == "insensitive":
        return model.rate
    if kind == "table":
        return timestep_seconds / table_seconds(model, cpu, gpu)
    gain = math.tanh(gpu / model.gpu_scale) * math.sqrt(max(0.0, model.offset - progress))
    if kind == "cpu_sensitive":
        gain *= 0.5 + 0.5 * min(cpu, model.cpu_saturation) / model.cpu_saturation
    return gain


def run_duration(
    model: ProgressModel,
    cpu: int,
    gpu: int,
    timestep_seconds: float,
    noise: tuple[float, ...] | None = None,
    max_steps: int = 100_000,
) -> int:
    """Timesteps a task needs when it runs from progress 0 under a fixed ``(cpu, gpu)``.

    ``noise[k]`` is the factor offset ``u`` of the ``k``-th timestep of the run (None: noise-free).
    Returns ``max_steps + 1`` when the task would not finish within ``max_steps``.
    """
    p = 0.0
    for k in range(max_steps):
        gain = step_gain(model, cpu, gpu, p, timestep_seconds)
        if gain <= 0:
            return max_steps + 1
        if noise is not None and k < len(noise):
            gain *= 1.0 + noise[k]
        p += gain
        if p >= DONE:
            return k + 1
    return max_steps + 1


def read_progress_table(path: str | Path) -> ProgressModel:
    """A ``table`` progress model from a CSV with header ``cpu,gpu,seconds`` (one row per allocation)."""
    field = f"progress_table({path})"
    try:
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise InputError(field, f"cannot read: {exc.strerror}") from None
    if not rows:
        raise InputError(field, "no rows")
    if set(rows[0]) != {"cpu", "gpu", "seconds"}:
        raise InputError(field, f"header must be cpu,gpu,seconds, got {','.join(rows[0])}")
    entries = []
    for i, row in enumerate(rows, start=2):
        try:
            entries.append(TableEntry(cpu=int(row["cpu"]), gpu=int(row["gpu"]), seconds=float(row["seconds"])))
        except (TypeError, ValueError) as exc:
            raise InputError(f"{field}.line{i}", f"bad row {row}: {str(exc).splitlines()[0]}") from None
    return ProgressModel(kind="table", table=entries)
