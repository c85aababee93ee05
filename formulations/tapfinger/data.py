"""What both exact models of the tapfinger family share: allocation options, start windows, sizes.

For task j on cluster n in D_j the options are the Pareto-optimal allocations of
`Instance.pareto_allocations` (every allocation in [b_j, C_n] that no componentwise smaller
allocation matches in duration, durations from the progress model with the instance's noise
realisation). Dropping dominated options loses no optimum: the smaller allocation finishes as
early and leaves more capacity. A start s is allowed in ``[arrival_j, T - d]``.
"""

from __future__ import annotations

import dataclasses

from edgeopt.core import Deadline, ModelSize
from edgeopt.tapfinger.instance import Instance


@dataclasses.dataclass(frozen=True)
class Option:
    """Task ``task`` on ``cluster`` with allocation ``alloc`` for ``duration`` timesteps."""

    task: int
    cluster: int
    alloc: tuple[int, ...]
    duration: int

    def starts(self, instance: Instance) -> range:
        return range(instance.tasks[self.task].arrival, instance.horizon - self.duration + 1)


def options(instance: Instance, deadline: Deadline | None = None) -> list[Option]:
    """Every (task, cluster, Pareto allocation) option with at least one allowed start."""
    out = []
    for t in instance.tasks:
        if deadline is not None:
            deadline.check("listing allocation options")
        for n in t.reachable_clusters:
            for alloc, d in instance.pareto_allocations(t.id, n):
                o = Option(t.id, n, tuple(alloc), d)
                if len(o.starts(instance)):
                    out.append(o)
    return out


def identical_tasks(instance: Instance, opts: list[Option]) -> list[list[int]]:
    """Classes of interchangeable tasks: same arrival and the same (cluster, allocation, duration) options.

    Nothing else in (1)-(8) tells two such tasks apart (the objective charges each its end minus its
    arrival), so swapping their placements maps a schedule to one with the same objective: the
    strengthened models order their starts.
    """
    from formulations.strengthen import identical_classes

    by_task: dict[int, list] = {t.id: [] for t in instance.tasks}
    for o in opts:
        by_task[o.task].append((o.cluster, o.alloc, o.duration))
    return identical_classes((t.arrival, tuple(sorted(by_task[t.id]))) for t in instance.tasks)


def _milp_size(instance: Instance, starts: list[tuple[Option, int]], note: str) -> ModelSize:
    """The MILP's size with ``n`` start binaries for each ``(option, n)`` of ``starts``: a binary's column has
    its task's assignment row, the objective and R rows per slot it runs; rows: one per task, and per cluster
    and slot one per resource plus one."""
    R = len(instance.resources)
    nvars = sum(n for _, n in starts)
    nnz = sum(n * (2 + R * o.duration) for o, n in starts)
    rows = len(instance.tasks) + len(instance.clusters) * instance.horizon * (1 + R)
    return ModelSize(nvars, rows, nnz, note)


def milp_size(instance: Instance) -> ModelSize:
    """Size of the time-indexed MILP: one binary per (task, cluster, allocation, start)."""
    return _milp_size(instance, [(o, len(o.starts(instance))) for o in options(instance)],
                      "binaries per (task, cluster, allocation, start slot)")


def milp_size_of_keys(instance: Instance, keys: list[tuple[Option, int]]) -> ModelSize:
    """`milp_size` of the model built on ``keys`` (what reduced-cost fixing left, ``fixing.py``)."""
    return _milp_size(instance, [(o, 1) for o, _ in keys],
                      "binaries per (task, cluster, allocation, start slot) after fixing")


def cpsat_size(instance: Instance) -> ModelSize:
    """Size of the CP-SAT model: one optional interval per (task, cluster, allocation)."""
    opts = options(instance)
    R = len(instance.resources)
    return ModelSize(len(opts) + 2 * len(instance.tasks), len(instance.tasks) * 3 + len(instance.clusters) * (R + 1),
                     len(opts) * (R + 3), "optional intervals per (task, cluster, allocation)")
