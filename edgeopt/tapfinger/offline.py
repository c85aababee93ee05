"""``offline_fill`` (ours, NOT in Li et al.): an offline list scheduler that sees every task in advance.

Like edgecloud's and hetero's ``offline_fill`` it gives the certified interval [lower bound, best schedule]
an upper end and the LNS a start (through the LP-guided orders of ``formulations.tapfinger.lpfill``); it is
of kind ``offline`` (it knows the future), so it is never a fair competitor of the online policies and is
not one of the paper's baselines.

How it schedules (each step deterministic):

* Tasks are placed one at a time, each at the option that completes earliest in the capacity the tasks
  placed before it leave: every reachable cluster n in D_j, every Pareto allocation of the task there
  (`Instance.pareto_allocations`, durations by the validator's progress rule, noise included: a task's
  duration does not depend on its start) and every start t >= t_hat_j with its allocation within C_{r,n}
  over [t, t + d) (5) and no other task starting on n at t (2). Ties: the smaller allocation (its sum),
  then the lower cluster index.
* Three task orders: shortest possible run first, least slack first (T - t_hat_j - shortest run), and
  arrival order. Tasks a pass could not place are moved to the front and the pass is repeated, up to
  ``repairs`` times.
* Improvement sweeps (`improve`): every task in turn, longest run first, is taken out and re-placed at
  its earliest completion while every other task stays; a move is kept only if the task completes
  earlier, so no sweep makes the objective worse.

The passes and sweeps run through `edgeopt.core.listsched`, as for the siblings. Rejected tasks are
listed (status ``partial``) exactly as for every other algorithm.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from edgeopt.core import Result, register, stopwatch
from edgeopt.core.listsched import (
    MAX_RUIN_ITERATIONS,
    RuinLog,
    best_of_passes,
    check_counts,
    ruin_recreate,
    sweep,
)
from edgeopt.tapfinger.instance import Instance, Task
from edgeopt.tapfinger.schedule import Placement, Schedule
from edgeopt.tapfinger.spec import FAMILY

ORDERS = ("spt", "slack", "arrival")

#: (cluster, start, end, allocation) of a placed task
Run = tuple[int, int, int, tuple[int, ...]]


def _shortest(instance: Instance, task: Task) -> int:
    ds = [d for n in task.reachable_clusters for _, d in instance.pareto_allocations(task.id, n)]
    return min(ds) if ds else instance.horizon + 1


def _order(instance: Instance, order: str) -> list[Task]:
    T = instance.horizon
    if order == "spt":
        key = lambda t: (_shortest(instance, t), t.arrival, t.id)
    elif order == "slack":
        key = lambda t: (T - t.arrival - _shortest(instance, t), t.arrival, t.id)
    else:
        key = lambda t: (t.arrival, t.id)
    return sorted(instance.tasks, key=key)


class Held:
    """Free capacity [R, T] per cluster and the timesteps a task starts on it (constraint (2))."""

    def __init__(self, instance: Instance) -> None:
        T = instance.horizon
        self.inst = instance
        self.free = [np.repeat(np.asarray(c.capacity, dtype=np.int64)[:, None], T, axis=1) for c in instance.clusters]
        self.started = [np.zeros(T, dtype=bool) for _ in instance.clusters]

    def change(self, run: Run, sign: int) -> None:
        """Hold (``sign`` 1) or release (-1) ``run``'s allocation and its start slot."""
        n, s, e, alloc = run
        self.free[n][:, s:e] -= sign * np.asarray(alloc, dtype=np.int64)[:, None]
        self.started[n][s] = sign > 0

    def earliest(self, task: Task, only: tuple[int, tuple[int, ...]] | None = None) -> Run | None:
        """The option completing earliest (module docstring), or None when nothing fits before T; ``only``
        (cluster, allocation): that option alone."""
        T, a = self.inst.horizon, int(task.arrival)
        best: tuple[tuple[int, int, int], Run] | None = None
        for n in task.reachable_clusters:
            if only is not None and n != only[0]:
                continue
            for alloc, d in self.inst.pareto_allocations(task.id, n):  # by duration
                if a + d > T or (best is not None and a + d > best[0][0]):
                    break  # no later option of this cluster can complete earlier
                if only is not None and tuple(int(x) for x in alloc) != only[1]:
                    continue
                ok = (self.free[n][:, a:] >= np.asarray(alloc)[:, None]).all(axis=0)
                bad = np.concatenate([[0], np.cumsum(~ok)])
                span = ok.size - d + 1  # starts a .. T - d
                fits = (bad[d:d + span] - bad[:span] == 0) & ~self.started[n][a:a + span]
                hit = np.flatnonzero(fits)
                if hit.size == 0:
                    continue
                s = a + int(hit[0])
                key = (s + d, sum(alloc), n)
                if best is None or key < best[0]:
                    best = (key, (n, s, s + d, tuple(int(x) for x in alloc)))
        return None if best is None else best[1]


def fill(instance: Instance, tasks: Sequence[Task], prefer: dict[int, tuple[int, tuple[int, ...]]] | None = None
         ) -> tuple[dict[int, Run], list[int]]:
    """One pass: place ``tasks`` in this order; returns (runs by task id, rejected ids in order). ``prefer``
    (task id -> (cluster, allocation)): such a task is placed at that option's earliest start, at its
    earliest completion over every option only when that one fits nowhere (the LP-guided pass of
    ``formulations.tapfinger.lpfill``)."""
    held = Held(instance)
    runs: dict[int, Run] = {}
    rejected: list[int] = []
    for task in tasks:
        only = None if prefer is None else prefer.get(task.id)
        run = held.earliest(task, only) if only is not None else None
        run = held.earliest(task) if run is None else run
        if run is None:
            rejected.append(task.id)
            continue
        held.change(run, 1)
        runs[task.id] = run
    return runs, rejected


def _moves(instance: Instance, runs: dict[int, Run]) -> dict:
    """The callbacks `sweep` and `ruin_recreate` move tasks with: the capacity ``runs`` hold, each task taken
    out, re-placed at its earliest completion and put back."""
    held = Held(instance)
    for run in runs.values():
        held.change(run, 1)
    return {"take_out": lambda k, run: held.change(run, -1),
            "earliest": lambda k: held.earliest(instance.tasks[k]),
            "put": lambda k, run: held.change(run, 1), "end": lambda run: run[2]}


def improve(instance: Instance, runs: dict[int, Run], sweeps: int) -> tuple[dict[int, Run], int]:
    """Improvement sweeps (`edgeopt.core.listsched.sweep`), longest run first; returns (runs, moves). The
    task's own run is free again while it is re-placed, so the search matches or beats it."""
    return sweep(runs, sorted(runs, key=lambda k: (-(runs[k][2] - runs[k][1]), k)), **_moves(instance, runs),
                 sweeps=sweeps)


def recreate(instance: Instance, schedule: Schedule, deadline, *, seed: int = 0, size: int = 12,
             patience: int | None = None, max_iterations: int = MAX_RUIN_ITERATIONS
             ) -> tuple[Schedule | None, RuinLog]:
    """``schedule`` improved by ruin and recreate (`edgeopt.core.listsched.ruin_recreate`) until ``deadline``:
    a dozen tasks that run near one another are taken out together and placed again one by one at their
    earliest completion (`Held.earliest`, shortest possible run first, perturbed). A move is kept only when
    the total completion time falls. Returns (the schedule, or None when nothing improved or the schedule
    leaves tasks out; the log)."""
    ids = sorted(int(p.task) for p in schedule.placements)
    if len(instance.tasks) < 2 or ids != [t.id for t in instance.tasks]:
        return None, RuinLog()
    runs = {int(p.task): (int(p.cluster), int(p.start), int(p.end),
                          tuple(int(p.allocation[r]) for r in instance.resources)) for p in schedule.placements}
    shortest = {k: _shortest(instance, instance.tasks[k]) for k in runs}
    runs, log = ruin_recreate(
        runs, **_moves(instance, runs), start=lambda run: run[1], cost=lambda k, run: float(run[2]),
        urgency=lambda k: 1.0 / shortest[k], deadline=deadline, seed=seed, size=size, patience=patience,
        max_iterations=max_iterations)
    return (to_schedule(instance, runs) if log.accepted else None), log


def total(instance: Instance, runs: dict[int, Run]) -> float:
    """Total completion time sum_j (end_j - t_hat_j) of the placed runs."""
    return float(sum(run[2] - instance.tasks[k].arrival for k, run in runs.items()))


def to_schedule(instance: Instance, runs: dict[int, Run]) -> Schedule:
    """The runs as a `Schedule` (placements by task id)."""
    return Schedule(placements=[
        Placement(task=k, cluster=n, start=s, end=e, allocation=dict(zip(instance.resources, alloc, strict=True)))
        for k, (n, s, e, alloc) in sorted(runs.items())])


@register("tapfinger", "offline_fill", kind="offline", ranges={"repairs": ">= 0", "sweeps": ">= 0"},
          summary="NOT in the paper (ours): offline list scheduling at the earliest completion, then "
                  "improvement sweeps; an upper end for the certified interval")
def offline_fill(instance: Instance, *, seed: int = 0, repairs: int = 3, sweeps: int = 5) -> Result:
    """Offline list scheduling (see the module docstring): 3 task orders, each repaired by moving its rejected
    tasks to the front, then improvement sweeps; the best result is returned. Deterministic.

    Args:
        repairs: how many times each pass is repeated with its rejected tasks moved to the front.
        sweeps: at most this many improvement sweeps (each task re-placed at its earliest completion with the others fixed).
    """
    check_counts(repairs=repairs, sweeps=sweeps)
    with stopwatch() as el:
        variants = [(order, [t.id for t in _order(instance, order)],
                     lambda ids: fill(instance, [instance.tasks[k] for k in ids])) for order in ORDERS]
        out = best_of_passes(variants, lambda runs: improve(instance, runs, sweeps),
                             lambda runs: total(instance, runs), repairs)
        sched = to_schedule(instance, out.placed)
    return FAMILY.algorithm_result(instance, "offline_fill", sched, el[0], rejected=out.rejected,
                                   extra={"chosen": out.label, "passes": out.passes, "repairs": repairs,
                                          "sweeps": sweeps, "moves": out.moves})


__all__ = ["ORDERS", "Held", "fill", "improve", "offline_fill", "recreate", "to_schedule", "total"]
