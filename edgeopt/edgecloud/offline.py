"""``offline_fill`` (ours, NOT in She et al.): an offline list scheduler that sees every job in advance.

It gives the certified interval [lower bound, best schedule] a tighter upper end at the papers' scale: a
complete schedule for `edgeopt solve --warm-start best` and the LNS to start from. It is of kind
``offline`` (it knows the future), so it is never a fair competitor of the online algorithms and is not
one of the paper's baselines.

How it schedules (each step deterministic):

* Jobs are placed one at a time at the option that completes earliest (ties: fewer workers, then
  colocated) among every worker count, colocated or distributed placement and candidate start in
  [a_j + Delta_js, T), in the capacity the jobs placed before it leave. The search is the one A_maxsche
  uses (`edgeopt.edgecloud.online.best_option`), here with every price 0 (theta = 1 in (7)-(8)), so cost
  ties everywhere and the earliest completion decides.
* Three job orders: shortest possible run first (Smith's rule with unit weights), least slack first
  (T - a_j - shortest run), and arrival order. Jobs a pass could not place are moved to the front and the
  pass is repeated, up to ``repairs`` times.
* Improvement sweeps (`improve`): every job in turn, longest run first, is taken out and re-placed at its
  earliest completion while every other job stays; a move is kept only if the job completes earlier, so
  no sweep makes the objective worse. The sweeps run on every pass that rejects as few jobs as the best
  one, and the best result after them is returned (`edgeopt.core.listsched.best_of_passes`).

Rejected jobs are listed (status ``partial``) exactly as for every other algorithm.
"""

from __future__ import annotations

from collections.abc import Sequence

from edgeopt.core import CapacityLedger, Result, register, stopwatch
from edgeopt.core.listsched import (
    MAX_RUIN_ITERATIONS,
    RuinLog,
    best_of_passes,
    check_counts,
    ruin_recreate,
    sweep,
)
from edgeopt.edgecloud.instance import Instance, Job, durations
from edgeopt.edgecloud.online import Prices, WindowCache, best_option, finish, place
from edgeopt.edgecloud.schedule import JobRun, Schedule
from edgeopt.edgecloud.state import make_ledger, reserve_run

ORDERS = ("spt", "slack", "arrival")
#: every price 0: theta ** (used / capacity) - 1 = 0 for theta = 1
ZERO = Prices(1.0, 1.0)


def _shortest(instance: Instance, job: Job) -> int:
    return int(durations(instance, job).min())


def _order(instance: Instance, order: str) -> list[Job]:
    T = instance.horizon
    if order == "spt":
        key = lambda j: (_shortest(instance, j), j.arrival, j.id)
    elif order == "slack":
        key = lambda j: (T - j.arrival - _shortest(instance, j), j.arrival, j.id)
    else:
        key = lambda j: (j.arrival, j.id)
    return sorted(instance.jobs, key=key)


def _reserve(instance: Instance, ledger: CapacityLedger, cache: WindowCache, job: Job, run: JobRun,
             sign: int) -> None:
    reserve_run(ledger, instance, job, run, sign=sign)
    for seg in run.pieces():
        cache.update([*seg.workers, seg.ps_server], seg.start, seg.end,
                     (job.worker_type, instance.n_worker_types + job.ps_type))


def _earliest(instance: Instance, job: Job, ledger: CapacityLedger, cache: WindowCache) -> JobRun | None:
    opt = best_option(instance, job, ledger, ZERO, 0, instance.horizon, cache=cache)
    return None if opt is None else place(instance, job, ledger, ZERO, opt).run(job.id)


def fill(instance: Instance, jobs: Sequence[Job]) -> tuple[dict[int, JobRun], list[int]]:
    """One pass: place ``jobs`` in this order; returns (runs, rejected ids in order)."""
    ledger = make_ledger(instance)
    cache = WindowCache(instance, ledger, ZERO, 0, instance.horizon)
    runs: dict[int, JobRun] = {}
    rejected: list[int] = []
    for job in jobs:
        run = _earliest(instance, job, ledger, cache)
        if run is None:
            rejected.append(job.id)
            continue
        _reserve(instance, ledger, cache, job, run, 1)
        runs[job.id] = run
    return runs, rejected


def _moves(instance: Instance, runs: dict[int, JobRun]) -> dict:
    """The callbacks `sweep` and `ruin_recreate` move jobs with: the capacity ``runs`` hold, each job taken
    out, re-placed at its earliest completion and put back."""
    ledger = make_ledger(instance)
    cache = WindowCache(instance, ledger, ZERO, 0, instance.horizon)
    for k, run in runs.items():
        _reserve(instance, ledger, cache, instance.jobs[k], run, 1)
    return {"take_out": lambda k, run: _reserve(instance, ledger, cache, instance.jobs[k], run, -1),
            "earliest": lambda k: _earliest(instance, instance.jobs[k], ledger, cache),
            "put": lambda k, run: _reserve(instance, ledger, cache, instance.jobs[k], run, 1),
            "end": lambda run: run.end}


def improve(instance: Instance, runs: dict[int, JobRun], sweeps: int) -> tuple[dict[int, JobRun], int]:
    """Improvement sweeps (`edgeopt.core.listsched.sweep`), longest run first; returns (runs, moves).
    Candidate starts include every slot where capacity frees up, so the job's own run, free again while it
    is re-placed, is matched or beaten: a move never delays a job."""
    return sweep(runs, sorted(runs, key=lambda k: (-_shortest(instance, instance.jobs[k]), k)),
                 **_moves(instance, runs), sweeps=sweeps)


def recreate(instance: Instance, schedule: Schedule, deadline, *, seed: int = 0, size: int = 12,
             patience: int | None = None, max_iterations: int = MAX_RUIN_ITERATIONS
             ) -> tuple[Schedule | None, RuinLog]:
    """``schedule`` improved by ruin and recreate (`edgeopt.core.listsched.ruin_recreate`) until ``deadline``:
    a dozen jobs that run near one another are taken out together and placed again one by one at their
    earliest completion (the search of `fill`, shortest possible run first, perturbed). A move is kept only
    when the total JCT falls. Returns (the schedule, or None when nothing improved or the schedule is not one
    this search can take: it rejects jobs or has preemptive segments; the log)."""
    if (schedule.rejected or schedule.preemptive or any(r.segments for r in schedule.jobs)
            or len(schedule.jobs) < 2 or sorted(r.job for r in schedule.jobs) != [j.id for j in instance.jobs]):
        return None, RuinLog()
    runs = {r.job: r for r in schedule.jobs}
    shortest = {k: _shortest(instance, instance.jobs[k]) for k in runs}
    runs, log = ruin_recreate(
        runs, **_moves(instance, runs), start=lambda run: run.start, cost=lambda k, run: float(run.end),
        urgency=lambda k: 1.0 / max(1, shortest[k]), deadline=deadline, seed=seed, size=size,
        patience=patience, max_iterations=max_iterations)
    if not log.accepted:
        return None, log
    return Schedule(jobs=[runs[k] for k in sorted(runs)], rejected=[]), log


def total(instance: Instance, runs: dict[int, JobRun]) -> float:
    """Total JCT sum_j (c_j - a_j) of the placed runs (the objective of MINLP (2) over them)."""
    return float(sum(run.end - instance.jobs[k].arrival for k, run in runs.items()))


@register("edgecloud", "offline_fill", kind="offline", ranges={"repairs": ">= 0", "sweeps": ">= 0"},
          summary="NOT in the paper (ours): offline list scheduling at the earliest completion, then "
                  "improvement sweeps; an upper end for the certified interval")
def offline_fill(instance: Instance, *, seed: int = 0, repairs: int = 3, sweeps: int = 5) -> Result:
    """Offline list scheduling (see the module docstring): 3 job orders, each repaired by moving its rejected
    jobs to the front, then improvement sweeps; the best result is returned. Deterministic.

    Args:
        repairs: how many times each pass is repeated with its rejected jobs moved to the front.
        sweeps: at most this many improvement sweeps (each job re-placed at its earliest completion with the others fixed).
    """
    check_counts(repairs=repairs, sweeps=sweeps)
    with stopwatch() as el:
        variants = [(order, [j.id for j in _order(instance, order)],
                     lambda ids: fill(instance, [instance.jobs[k] for k in ids])) for order in ORDERS]
        out = best_of_passes(variants, lambda runs: improve(instance, runs, sweeps),
                             lambda runs: total(instance, runs), repairs)
    return finish(instance, "offline_fill", out.placed, el[0],
                  extra={"chosen": out.label, "passes": out.passes, "repairs": repairs, "sweeps": sweeps,
                         "moves": out.moves})


__all__ = ["ORDERS", "fill", "improve", "offline_fill", "recreate", "total"]
