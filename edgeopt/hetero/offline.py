"""``offline_fill`` (ours, NOT in Zhou et al.): an offline list scheduler that sees every job in advance.

It exists to give the certified interval [lower bound, best schedule] an upper end where the paper's
online algorithm and its baselines reject jobs (the congested presets): a complete schedule, whatever its
quality, is what `edgeopt solve --warm-start best` and the LNS start from. It is of kind ``offline``
(it knows the future), so it is never a fair competitor of the online algorithms and is not one of the
paper's baselines.

How it schedules (each step deterministic):

* Jobs are placed one at a time, each at the best placement that still fits the capacity left by the
  jobs placed before it, among *every* configuration of the job (worker and PS types, N, colocated or
  distributed; `edgeopt.hetero.mincost.job_configs`) and every start in [a_j, T). The placement is found by
  the same exact search that A_online uses (`edgeopt.hetero.mincost.search`), under one of two price
  rules:

  - ``"completion"``: all prices 0, so the search returns the placement that completes earliest (ties:
    fewest nodes, then configuration order);
  - ``"footprint"``: one unit of resource r on server h costs 1 / C_h^r per slot, so the search returns
    the placement that holds the smallest share of the cluster over its run, completing earliest among
    those (it leaves room for the jobs after it).

* Three job orders: largest w_j / shortest duration first (Smith's rule for weighted completion),
  least slack first (T - a_j - shortest duration), and arrival order.
* For every (rule, order) pair the jobs it rejected are moved to the front and the pass is repeated, up
  to ``repairs`` times (a job that fits nowhere late often fits when placed first).
* Improvement sweeps (`improve`): every job in turn, heaviest first, is taken out and re-placed at its
  earliest completion while every other job stays; a move is kept only if the job completes earlier, so
  no sweep makes the objective worse.

The passes run through `edgeopt.core.listsched.best_of_passes`: for every (rule, order) pair the repaired
pass with the fewest rejected jobs (then the smallest objective) is kept; the sweeps run on each of those
that rejects as few jobs as the best one, and the best result after the sweeps is returned. Rejected jobs
are listed (status ``partial``) exactly as for every other algorithm. Measured on the ``paper`` preset
(300 jobs, seed 0): 37,376,472 in about 25 s CPU, against 45,318,448 for the best baseline
(``antman_np``); on ``paper_congested``, where every online algorithm rejects 10 or more jobs, a complete
schedule of 56,759,443 in about 45 s.
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
from edgeopt.hetero.instance import Instance, Job
from edgeopt.hetero.mincost import Configs, Placement, PricedWindow, check_search_size, job_configs, search
from edgeopt.hetero.schedule import Schedule
from edgeopt.hetero.spec import FAMILY

RULES = ("completion", "footprint")
ORDERS = ("smith", "slack", "arrival")


def _rule_prices(instance: Instance, rule: str) -> np.ndarray:
    """[H, R, T] unit prices of a price rule (constant over time)."""
    cap = np.asarray(instance.capacity, dtype=float)
    H, R, T = cap.shape[0], cap.shape[1], instance.horizon
    if rule == "completion":
        return np.zeros((H, R, T))
    share = np.where(cap > 0, 1.0 / np.where(cap > 0, cap, 1.0), 0.0)
    return np.repeat(share[:, :, None], T, axis=2)


def _order(instance: Instance, configs: dict[int, Configs], order: str) -> list[Job]:
    T = instance.horizon
    shortest = {j.id: (int(configs[j.id].d.min()) if len(configs[j.id]) else T + 1) for j in instance.jobs}
    if order == "smith":
        key = lambda j: (-j.weight / shortest[j.id], j.arrival, j.id)
    elif order == "slack":
        key = lambda j: (T - j.arrival - shortest[j.id], j.arrival, j.id)
    else:
        key = lambda j: (j.arrival, j.id)
    return sorted(instance.jobs, key=key)


class _Held:
    """Free capacity [H, R, T] after the placements it holds, with its `PricedWindow` kept current."""

    def __init__(self, instance: Instance, rule: str) -> None:
        check_search_size(instance)  # before the [H, R, T] arrays below
        self.inst = instance
        self.price = _rule_prices(instance, rule)
        self.free = np.repeat(np.asarray(instance.capacity, dtype=float)[:, :, None], instance.horizon, axis=2)
        self.window: PricedWindow | None = None
        self.pending: list[tuple[np.ndarray, int, int]] = []  # changes the window has not seen yet

    def change(self, pl: Placement, sign: int) -> None:
        """Hold (``sign`` 1) or release (-1) ``pl``'s resources over its run. The window sees the change at the
        next search (`sync`): ruin and recreate puts back the jobs of a ruin in a row, one update instead of several."""
        rows = np.array(sorted(set(pl.workers) | set(pl.ps)), dtype=np.int64)
        self.free[rows, :, pl.start:pl.end] -= sign * pl.demand(self.inst)[rows, :, None]
        if self.window is not None:
            self.pending.append((rows, pl.start, pl.end))

    def sync(self) -> None:
        """Bring the window up to date with the pending changes: one update over their servers and slots
        (`PricedWindow.update` recomputes what it covers from the arrays, so a larger box gives the same window)."""
        if self.window is not None and self.pending:
            rows = np.unique(np.concatenate([r for r, _, _ in self.pending]))
            start, end = min(a for _, a, _ in self.pending), max(b for _, _, b in self.pending)
            self.pending.clear()
            self.window.update(self.price, self.free, start, end, rows)

    def best(self, job: Job, configs: Configs) -> Placement | None:
        """The search's placement of ``job`` under this rule's prices in the free capacity."""
        if self.window is None:
            self.window = PricedWindow(self.inst, self.price, self.free, 0, self.inst.horizon)
        self.sync()
        return search(self.inst, job, self.price, self.free, (0, self.inst.horizon), configs=configs,
                      ctx=self.window)


def fill(instance: Instance, jobs: Sequence[Job], rule: str, configs: dict[int, Configs]
         ) -> tuple[dict[int, Placement], list[int]]:
    """One pass: place ``jobs`` in this order; returns (placements, rejected ids in order)."""
    held = _Held(instance, rule)
    placed: dict[int, Placement] = {}
    rejected: list[int] = []
    for job in jobs:
        pl = held.best(job, configs[job.id])
        if pl is None:
            rejected.append(job.id)
            continue
        placed[job.id] = pl
        held.change(pl, 1)
    return placed, rejected


def _moves(instance: Instance, placed: dict[int, Placement], configs: dict[int, Configs]) -> dict:
    """The callbacks `sweep` and `ruin_recreate` move jobs with: the capacity ``placed`` holds, each job taken
    out, re-placed at its earliest completion (the search under zero prices) and put back."""
    held = _Held(instance, "completion")
    for pl in placed.values():
        held.change(pl, 1)
    return {"take_out": lambda k, pl: held.change(pl, -1),
            "earliest": lambda k: held.best(instance.jobs[k], configs[k]),
            "put": lambda k, pl: held.change(pl, 1), "end": lambda pl: pl.end}


def improve(instance: Instance, placed: dict[int, Placement], configs: dict[int, Configs], sweeps: int
            ) -> tuple[dict[int, Placement], int]:
    """Improvement sweeps (`edgeopt.core.listsched.sweep`) under the earliest-completion rule, heaviest job
    first; returns (placements, moves). A job's own placement is free again while it is re-placed, so the
    search always finds a completion at least as early: a move never makes the objective worse."""
    return sweep(placed, sorted(placed, key=lambda k: (-instance.jobs[k].weight, k)),
                 **_moves(instance, placed, configs), sweeps=sweeps)


#: Jobs one ruin takes out: 3 or 12, chosen per iteration by their recent gain (`listsched.RuinSizes`). Measured
#: alone from `offline_fill`'s schedule, 240 s, seed 0: on `paper` (from 37,376,472) 2 jobs -> 37,318,024, 3 ->
#: 37,215,939, 6 -> 37,235,532, 12 -> 37,354,879, (3, 12) -> 37,236,153; in the ITP busiest week (from 47,790,642)
#: 3 -> 46,605,012, 12 -> 45,186,400, (3, 12) drawn uniformly -> 45,141,123, (3, 12) -> 44,836,946. Small ruins
#: are cheap (their searches are most of an iteration) and swap neighbours; the long jobs of a trace week need
#: larger ones.
RUIN_SIZE = (3, 12)


def recreate(instance: Instance, schedule: Schedule, deadline, *, seed: int = 0,
             size: int | tuple[int, ...] = RUIN_SIZE, patience: int | None = None,
             max_iterations: int = MAX_RUIN_ITERATIONS) -> tuple[Schedule | None, RuinLog]:
    """``schedule`` improved by ruin and recreate (`edgeopt.core.listsched.ruin_recreate`) until ``deadline``:
    a few jobs (`RUIN_SIZE`) that run near one another are taken out together and placed again one by one at
    their earliest completion by the search `offline_fill` uses (most urgent first: w_j over the job's shortest
    duration, perturbed). A move is kept only when the total weighted completion time falls. Returns (the schedule, or
    None when nothing improved or the schedule is not one this search can take: it rejects jobs or has
    preemptive segments; the log)."""
    if schedule.rejected or any(js.segments for js in schedule.jobs) or len(schedule.jobs) < 2:
        return None, RuinLog()
    configs = {js.job: job_configs(instance, instance.jobs[js.job]) for js in schedule.jobs}
    shortest = {k: (int(c.d.min()) if len(c) else instance.horizon) for k, c in configs.items()}
    placed = {js.job: Placement(js.job, js.start, js.duration, js.worker_type, js.ps_type, js.colocated,
                                dict(js.workers), dict(js.ps), 0.0) for js in schedule.jobs}
    placed, log = ruin_recreate(
        placed, **_moves(instance, placed, configs), start=lambda pl: pl.start,
        cost=lambda k, pl: instance.jobs[k].weight * pl.end, urgency=lambda k: instance.jobs[k].weight / shortest[k],
        deadline=deadline, seed=seed, size=size, patience=patience, max_iterations=max_iterations)
    if not log.accepted:
        return None, log
    return Schedule(jobs=[placed[k].to_schedule() for k in sorted(placed)], rejected=[]), log


def total(instance: Instance, placed: dict[int, Placement]) -> float:
    """The total weighted completion time of ``placed``."""
    return float(sum(instance.jobs[k].weight * pl.end for k, pl in placed.items()))


@register("hetero", "offline_fill", kind="offline", ranges={"repairs": ">= 0", "sweeps": ">= 0"},
          summary="NOT in the paper (ours): offline list scheduling over every configuration; "
                  "a complete schedule where online algorithms reject jobs")
def offline_fill(instance: Instance, *, seed: int = 0, repairs: int = 3, sweeps: int = 5) -> Result:
    """Offline list scheduling (see the module docstring): 2 price rules x 3 job orders, each repaired by
    moving its rejected jobs to the front; the best pass is returned. Deterministic.

    Args:
        repairs: how many times each pass is repeated with its rejected jobs moved to the front.
        sweeps: at most this many improvement sweeps over the chosen pass (each job re-placed at its earliest completion with the others fixed).
    """
    check_counts(repairs=repairs, sweeps=sweeps)
    with stopwatch() as el:
        configs = {j.id: job_configs(instance, j) for j in instance.jobs}

        def filler(rule: str):
            return lambda ids: fill(instance, [instance.jobs[k] for k in ids], rule, configs)

        variants = [(f"{rule}/{order}", [j.id for j in _order(instance, configs, order)], filler(rule))
                    for rule in RULES for order in ORDERS]
        out = best_of_passes(variants, lambda placed: improve(instance, placed, configs, sweeps),
                             lambda placed: total(instance, placed), repairs)
        sched = Schedule(jobs=[out.placed[k].to_schedule() for k in sorted(out.placed)], rejected=out.rejected)
    extra = {"chosen": out.label, "passes": out.passes, "repairs": repairs, "sweeps": sweeps, "moves": out.moves}
    return FAMILY.algorithm_result(instance, "offline_fill", sched, el[0], rejected=out.rejected, extra=extra)


__all__ = ["ORDERS", "RULES", "fill", "improve", "offline_fill", "recreate", "total"]
