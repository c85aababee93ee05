"""Sizes of the edgecloud exact models, estimated before they are built (``SIZES`` in ``__init__``).

The MILP's runs x[j, k, h] (job, mode, start slot) each carry per-server worker and PS variables,
and every run appears in the capacity rows of the slots it covers; counted before `with_deadlines`
tightens the time windows (an upper estimate: the list schedule that tightening needs costs as
much as a small solve, too slow for a guard). The CP-SAT model has one interval
per job and mode choice. ``*_size_of`` count the model that reduced-cost fixing leaves
(`edgeopt.core.limits.guard_built`).
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import ModelSize


def _runs(instance: Any) -> tuple[Any, int, int]:
    from formulations.edgecloud.data import prepare

    data = prepare(instance)
    return (data, *_count(data, int(instance.horizon)))


def _count(data: Any, T: int) -> tuple[int, int]:
    """(runs, slots the runs cover) of ``data``: its starts, less what reduced-cost fixing removed."""
    runs = cover = 0
    for jd in data.jobs:
        for md in jd.modes:
            n = len(jd.starts(md, T))
            runs += n
            cover += n * md.duration
    return runs, cover


def milp_size(instance: Any) -> ModelSize:
    """Variables, rows and nonzeros of the time-indexed MILP of MINLP (2)."""
    if not instance.jobs:
        return ModelSize(0, 0, 0, "no jobs")
    _, runs, cover = _runs(instance)
    return _milp(instance, runs, cover)


def milp_size_of(instance: Any, data: Any) -> ModelSize:
    """`milp_size` counted on prepared (e.g. fixed, ``fixing.py``) model data."""
    if not data.jobs:
        return ModelSize(0, 0, 0, "no jobs")
    return _milp(instance, *_count(data, int(instance.horizon)))


def _milp(instance: Any, runs: int, cover: int) -> ModelSize:
    J, S = len(instance.jobs), len(instance.servers)
    var = runs * (1 + 2 * S) + 2 * J * S
    rows = J + runs * (2 + 2 * S) + 2 * J * S + 2 * S * int(instance.horizon)
    nnz = runs * (1 + 6 * S) + 2 * cover * S
    return ModelSize(int(var), int(rows), int(nnz),
                     f"{runs:,} (job, mode, start) runs over T = {int(instance.horizon):,} slots and {S} servers")


def cpsat_size(instance: Any) -> ModelSize:
    """Variables, constraints and literals of the CP-SAT interval model."""
    if not instance.jobs:
        return ModelSize(0, 0, 0, "no jobs")
    data, _, _ = _runs(instance)
    return cpsat_size_of(instance, data)


def cpsat_size_of(instance: Any, data: Any) -> ModelSize:
    """`cpsat_size` counted on prepared model data (a mode whose starts fixing removed has no interval)."""
    J, S = len(instance.jobs), len(instance.servers)
    if J == 0:
        return ModelSize(0, 0, 0, "no jobs")
    T = int(instance.horizon)
    modes = sum(1 for jd in data.jobs for md in jd.modes if len(jd.starts(md, T)))
    return ModelSize(int(modes + J * S * 6), int(J * (S * 4 + 4) + 2 * S), int(modes * 4 + J * S * 16),
                     f"{modes:,} modes over {S} servers")


SIZES = {"milp": milp_size, "cpsat": cpsat_size}
