"""Large-neighbourhood search (LNS) over a complete schedule: fix most jobs, re-optimise a few exactly.

The loop is family-independent. A family plugs in a `Neighbourhood`: the order in which its jobs
are taken into windows (by the incumbent's start slot, so a window is a stretch of time) and
``reoptimise(instance, schedule, free, time_limit)``, which keeps every job outside ``free`` as
it is in ``schedule``, re-solves the jobs of ``free`` with the family's exact model over the
capacity the others leave (a MIP start / hints from ``schedule`` make the incumbent its first
solution) and returns the merged schedule, or None when it found nothing.

Every schedule a neighbourhood returns is checked here with the family's validator and its
objective recomputed; it replaces the incumbent only when it is valid and strictly better, so the
incumbent is never worse than the starting schedule, whatever a sub-model does. Windows slide
over the job order, each overlapping the previous one by half; a window whose sub-solve proved its
optimum quickly grows the next one (more freedom), a window whose sub-solve hit its own limit
shrinks it. The deadline bounds the whole loop: each sub-solve gets at most what is left.

A model-size budget (``max_nonzeros``, ``solve --lns --max-model-size``) bounds each window's model:
``reoptimise`` estimates the window's model before building it and refuses one above the budget
(`SubSolve.refused`, `refuse_above`); the next window is smaller, and when one-job windows are refused
for a whole pass over the jobs the search stops (``SearchLog.stop``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from edgeopt.core.family import FamilySpec
from edgeopt.core.limits import Deadline, ModelSize


@dataclasses.dataclass(frozen=True)
class SubSolve:
    """What one sub-solve of a neighbourhood returned.

    Attributes:
        schedule: the whole schedule (fixed jobs as they were, free ones re-solved), or None.
        proved: whether the sub-model was solved to optimality (the window can grow).
        refused: why the window's model was not built (its estimate is above the size budget), or None.
    """

    schedule: Any | None
    proved: bool
    refused: str | None = None


def refuse_above(size: ModelSize, max_nonzeros: int | None) -> SubSolve | None:
    """The refusal of a window whose estimated model is above ``max_nonzeros`` (None: no budget)."""
    if max_nonzeros is None or size.nonzeros <= max_nonzeros:
        return None
    return SubSolve(None, False, refused=f"{size.describe()}, above the budget of {max_nonzeros:,} nonzeros")


@dataclasses.dataclass(frozen=True)
class Neighbourhood:
    """A family's plug-in for `search`.

    Attributes:
        order: ``(instance, schedule) -> job indices`` in the order windows take them.
        reoptimise: ``(instance, schedule, free job indices, time_limit) -> SubSolve``; under a size
            budget it is also given ``max_nonzeros=`` and refuses a window whose model it estimates
            above it, before building it (`refuse_above`).
        window: jobs in the first window.
        max_window: the most jobs a window grows to.
        polish: ``(instance, schedule) -> schedule or None``, a cheap improvement of the whole schedule
            tried once before the windows (e.g. a move every job gains from, whatever the others do);
            checked and kept like any neighbour: only if valid, complete and strictly better.
        rebuild: ``(instance, deadline) -> schedule or None``, a whole schedule built from nothing by the
            family's own constructive method (e.g. okita's jobs planned one by one by its single-job
            solver), tried once before the polish within at most `REBUILD_SHARE` of the time left; under a
            size budget it is also given ``max_nonzeros=`` and refuses (None) where a window would be
            refused. None also when it does not finish. Checked and kept like any neighbour.
    """

    order: Callable[[Any, Any], Sequence[int]]
    reoptimise: Callable[[Any, Any, Sequence[int], float], SubSolve]
    window: int = 6
    max_window: int = 16
    polish: Callable[[Any, Any], Any | None] | None = None
    rebuild: Callable[[Any, Deadline], Any | None] | None = None
    #: the rebuild replaces the start only when better by at least this fraction of the start's objective:
    #: its schedule is another basin, which the windows may improve less than the start's
    rebuild_margin: float = 0.0
    #: ``(instance, schedule, deadline) -> schedule or None``: a local search from the incumbent by the family's
    #: own constructive method (e.g. hetero's ruin and recreate), run once after the polish within at most
    #: ``local_share`` of the time left, before the windows; None when it found nothing better. Checked and kept
    #: like any neighbour.
    local: Callable[[Any, Any, Deadline], Any | None] | None = None
    local_share: float = 0.5


#: Most of the time left that a neighbourhood's ``rebuild`` may take (the windows get the rest).
REBUILD_SHARE = 0.5


@dataclasses.dataclass
class SearchLog:
    """What the search did (``extra["lns"]`` of the result)."""

    iterations: int = 0
    improvements: int = 0
    proved_windows: int = 0
    failed_windows: int = 0
    start_objective: float = 0.0
    objective: float = 0.0
    history: list[tuple[float, float]] = dataclasses.field(default_factory=list)
    refused_windows: int = 0
    stop: str | None = None
    #: what the neighbourhood's ``rebuild`` gave: "kept", "not better" (or "not better by the margin") or
    #: "no schedule" (not finished, or refused by the size budget); None: no rebuild tried. Not counted in
    #: ``iterations`` (windows and the polish).
    rebuild: str | None = None
    #: what the neighbourhood's ``local`` search gave: "kept", "not better" or "no schedule"; None: not run
    local: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {"iterations": self.iterations, "improvements": self.improvements,
               "proved_windows": self.proved_windows, "failed_windows": self.failed_windows,
               "start_objective": self.start_objective, "objective": self.objective,
               "history": [[round(t, 3), v] for t, v in self.history]}
        if self.refused_windows:
            out["refused_windows"] = self.refused_windows
        if self.stop is not None:
            out["stop"] = self.stop
        if self.rebuild is not None:
            out["rebuild"] = self.rebuild
        if self.local is not None:
            out["local"] = self.local
        return out


def complete_and_valid(spec: FamilySpec, instance: Any, schedule: Any) -> bool:
    """Whether ``schedule`` passes the family's validator and schedules every job exactly once."""
    try:
        if spec.validate(instance, schedule):
            return False
    except Exception:  # noqa: BLE001 - a schedule the validator cannot read is not accepted
        return False
    if spec.listed_jobs is None:
        return True
    scheduled, rejected = spec.listed_jobs(schedule)
    return not rejected and sorted(scheduled) == sorted(spec.ids_of_jobs(instance))


def meets(bound: float | None, objective: float | None) -> bool:
    """Whether a certified lower bound reaches the objective of a complete, validated schedule, up to float
    error: no schedule is better, so the schedule is optimal and the bound's certificate is the proof."""
    return bound is not None and objective is not None and bound >= objective - 1e-9 * max(1.0, abs(objective))


def search(spec: FamilySpec, instance: Any, schedule: Any, hood: Neighbourhood, *, deadline: Deadline,
           sub_limit: float = 10.0, min_sub_limit: float = 0.5, max_passes: int | None = None,
           max_nonzeros: int | None = None, lower: float | None = None) -> tuple[Any, float, SearchLog]:
    """Improve the complete, valid ``schedule`` until the deadline; returns (schedule, objective, log).

    ``sub_limit``: seconds per sub-solve (less when less is left; no sub-solve starts with less than
    ``min_sub_limit`` left). ``max_passes``: stop after this many sweeps over the job order without
    an improvement (None: only the deadline stops it). ``max_nonzeros``: the size budget of each
    window's model (module docstring; None: none). ``lower``: a certified lower bound on the objective; the
    search stops once the incumbent reaches it (up to float error), since no schedule is better.
    """
    t0 = time.perf_counter()
    best = schedule
    best_obj = float(spec.objective(instance, schedule))
    log = SearchLog(start_objective=best_obj, objective=best_obj)
    log.history.append((0.0, best_obj))

    def measure(candidate: Any) -> float | None:
        """``candidate``'s objective when it is valid and complete; None (a failed window) otherwise."""
        if candidate is None or not complete_and_valid(spec, instance, candidate):
            log.failed_windows += 1
            return None
        return float(spec.objective(instance, candidate))

    def take(candidate: Any, obj: float | None) -> bool:
        """Make ``candidate`` (objective ``obj``, None: not valid) the incumbent if strictly better."""
        nonlocal best, best_obj
        if obj is not None and obj < best_obj - 1e-9 * max(1.0, abs(best_obj)):
            best, best_obj = candidate, obj
            log.improvements += 1
            log.history.append((time.perf_counter() - t0, best_obj))
            return True
        return False

    def offer(candidate: Any) -> bool:
        """Take ``candidate`` as the incumbent if it is valid, complete and strictly better."""
        return take(candidate, measure(candidate))

    budget = {} if max_nonzeros is None else {"max_nonzeros": int(max_nonzeros)}
    if (hood.rebuild is not None and not meets(lower, best_obj) and not deadline.expired()
            and deadline.remaining(floor=0.0) >= min_sub_limit):
        built = hood.rebuild(instance, Deadline(max(1e-3, REBUILD_SHARE * deadline.remaining(floor=0.0))), **budget)
        obj = None if built is None else measure(built)
        if built is None:
            log.rebuild = "no schedule"
        elif obj is not None and hood.rebuild_margin > 0 and obj > best_obj - hood.rebuild_margin * abs(best_obj):
            log.rebuild = "not better by the margin"
        else:
            log.rebuild = "kept" if take(built, obj) else "not better"
    # the polish has no limit of its own (a pass over every job, then a validation): only with the time a
    # sub-solve would be given, so that a call whose warm start used up its time ends at once; and not at
    # all when the start already meets the bound
    if hood.polish is not None and not meets(lower, best_obj) and deadline.remaining(floor=0.0) >= min_sub_limit:
        polished = hood.polish(instance, best)
        if polished is not None:  # None: nothing to polish
            log.iterations += 1
            offer(polished)
    if hood.local is not None and not meets(lower, best_obj) and deadline.remaining(floor=0.0) >= min_sub_limit:
        found = hood.local(instance, best, Deadline(max(1e-3, hood.local_share * deadline.remaining(floor=0.0))))
        if found is None:
            log.local = "no schedule"
        else:
            log.local = "kept" if offer(found) else "not better"
    size = max(1, hood.window)
    pos = 0
    idle_passes = 0
    improved_this_pass = False
    refused_single = 0  # one-job windows refused in a row
    while not meets(lower, best_obj) and not deadline.expired() and deadline.remaining(floor=0.0) >= min_sub_limit:
        order = list(hood.order(instance, best))
        if not order:
            break
        if pos >= len(order):
            pos = 0
            idle_passes = 0 if improved_this_pass else idle_passes + 1
            improved_this_pass = False
            if max_passes is not None and idle_passes >= max_passes:
                break
        free = order[pos:pos + size]
        if len(free) < size and len(order) > size:
            free = order[-size:]
        pos += max(1, size // 2)
        log.iterations += 1
        sub = hood.reoptimise(instance, best, free, min(sub_limit, deadline.remaining(floor=0.0)), **budget)
        if sub.refused is not None:
            log.refused_windows += 1
            if sub.schedule is not None and offer(sub.schedule):  # what needed no model (a cheap move)
                improved_this_pass = True
            refused_single = refused_single + 1 if len(free) == 1 else 0
            if refused_single >= len(order):
                log.stop = f"every one-job window's model is above the size budget (the last: {sub.refused})"
                break
            size = max(1, size - 1)  # a smaller window next: a smaller model
            continue
        refused_single = 0
        if sub.proved:
            log.proved_windows += 1
            size = min(hood.max_window, size + 1, len(order))
        else:
            size = max(1, size - 1)
        if offer(sub.schedule):
            improved_this_pass = True
    log.objective = best_obj
    return best, best_obj, log
