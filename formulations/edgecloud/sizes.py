"""Sizes of the edgecloud exact models, estimated before they are built (``SIZES`` in ``__init__``).

The MILP's runs x[j, k, h] (job, mode, start slot) each carry per-server worker and PS variables,
and every run appears in the capacity rows of the slots it covers; counted before `with_deadlines`
tightens the time windows (an upper estimate: the list schedule that tightening needs costs as
much as a small solve, too slow for a guard). The CP-SAT model has one interval
per job and mode choice.
"""

from __future__ import annotations

from typing import Any

from edgeopt.core import ModelSize


def _runs(instance: Any, *, tighten: bool = False) -> tuple[Any, int, int]:
    from formulations.edgecloud.data import prepare, with_deadlines

    data = prepare(instance)
    if tighten and not data.unschedulable():
        # the MILP's default: time windows cut at the latest completion an optimum can have
        from edgeopt.edgecloud import FAMILY
        from formulations.edgecloud.milp import greedy_schedule

        greedy = greedy_schedule(instance, data)
        if greedy is not None:
            data = with_deadlines(data, float(FAMILY.objective(instance, greedy)))
    T = int(instance.horizon)
    runs = cover = 0
    for jd in data.jobs:
        for md in jd.modes:
            n = len(jd.starts(md, T))
            runs += n
            cover += n * md.duration
    return data, runs, cover


def milp_size(instance: Any) -> ModelSize:
    """Variables, rows and nonzeros of the time-indexed MILP of MINLP (2)."""
    J, S = len(instance.jobs), len(instance.servers)
    if J == 0:
        return ModelSize(0, 0, 0, "no jobs")
    _, runs, cover = _runs(instance)
    var = runs * (1 + 2 * S) + 2 * J * S
    rows = J + runs * (2 + 2 * S) + 2 * J * S + 2 * S * int(instance.horizon)
    nnz = runs * (1 + 6 * S) + 2 * cover * S
    return ModelSize(int(var), int(rows), int(nnz),
                     f"{runs:,} (job, mode, start) runs over T = {int(instance.horizon):,} slots and {S} servers")


def cpsat_size(instance: Any) -> ModelSize:
    """Variables, constraints and literals of the CP-SAT interval model."""
    J, S = len(instance.jobs), len(instance.servers)
    if J == 0:
        return ModelSize(0, 0, 0, "no jobs")
    data, _, _ = _runs(instance)
    modes = sum(len(jd.modes) for jd in data.jobs)
    return ModelSize(int(modes + J * S * 6), int(J * (S * 4 + 4) + 2 * S), int(modes * 4 + J * S * 16),
                     f"{modes:,} modes over {S} servers")


SIZES = {"milp": milp_size, "cpsat": cpsat_size}
