"""The passes of an offline list scheduler, shared by the families' ``offline_fill`` algorithms.

A family supplies how to place jobs in a given order (``fill``: a greedy pass over the capacity the
jobs placed before leave) and how to improve a finished pass (``improve``: e.g. re-place each job with
the others fixed); this module runs the passes the same way for every family:

1. every variant (a label, a first job order and its ``fill``) is run; the jobs a pass could not place
   are moved to the front of the order and the pass is repeated, up to ``repairs`` times, keeping the
   pass with the fewest rejected jobs, then the smallest objective;
2. ``improve`` runs on each variant's kept pass that rejects as few jobs as the best one (a pass's
   objective before improvement says little about its objective after it);
3. the best result after improvement is returned, with a log of every pass.

`sweep` is the improvement both families use: each job in turn is taken out and re-placed at its
earliest completion, the others fixed, and a move is kept only when the job completes earlier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from edgeopt.core.errors import InputError

Placed = dict[int, Any]
Fill = Callable[[Sequence[int]], tuple[Placed, list[int]]]


@dataclasses.dataclass
class ListOutcome:
    """The chosen pass: placements by job id, rejected ids, its label, the moves ``improve`` made, the log."""

    placed: Placed
    rejected: list[int]
    label: str
    moves: int
    passes: list[dict[str, Any]]


def check_counts(**counts: int) -> None:
    """`InputError` naming the first of ``counts`` (e.g. ``repairs=``, ``sweeps=``) that is negative: the
    check every family's ``offline_fill`` makes before its passes, also when called directly."""
    for name, value in counts.items():
        if value < 0:
            raise InputError(name, f"must be >= 0, got {value}")


def best_of_passes(variants: Sequence[tuple[str, Sequence[int], Fill]],
                   improve: Callable[[Placed], tuple[Placed, int]],
                   objective: Callable[[Placed], float], repairs: int) -> ListOutcome:
    """Run ``variants`` (label, first order of job ids, fill) with repairs, improve the finalists and return
    the best (fewest rejected, then smallest objective; ties to the earlier variant)."""
    passes: list[dict[str, Any]] = []
    finalists = []
    for label, order, fill in variants:
        jobs = list(order)
        kept = None
        for attempt in range(repairs + 1):
            placed, rejected = fill(jobs)
            key = (len(rejected), objective(placed))
            passes.append({"variant": label, "repair": attempt, "rejected": len(rejected), "objective": key[1]})
            if kept is None or key < kept[0]:
                kept = (key, placed, rejected, f"{label}/{attempt}", len(passes) - 1)
            if not rejected:
                break
            first = set(rejected)
            jobs = list(rejected) + [j for j in jobs if j not in first]
        assert kept is not None
        finalists.append(kept)
    fewest = min(f[0][0] for f in finalists)
    best = None
    for key, placed, rejected, label, index in finalists:
        if key[0] != fewest:
            continue
        placed, moves = improve(placed)
        swept = (key[0], objective(placed))
        passes[index]["objective_after_improvement"] = swept[1]
        if best is None or swept < best[0]:
            best = (swept, ListOutcome(placed, sorted(rejected), label, moves, passes))
    assert best is not None
    return best[1]


def sweep(placed: Placed, order: Sequence[int], *, take_out: Callable[[int, Any], None],
          earliest: Callable[[int], Any | None], put: Callable[[int, Any], None], end: Callable[[Any], int],
          sweeps: int) -> tuple[Placed, int]:
    """Improvement sweeps over ``placed`` (job id -> placement, whose capacity the caller holds): each job of
    ``order`` is taken out (``take_out``), re-placed at its ``earliest`` completion with the others fixed
    (None: no place) and put back (``put``) where it completes earlier, else where it was. At most
    ``sweeps`` sweeps, stopping after one that moves nothing; returns (placements, moves). A job never
    completes later than before, so a completion-time objective never gets worse."""
    placed = dict(placed)
    moves = 0
    for _ in range(sweeps):
        moved = 0
        for k in order:
            old = placed[k]
            take_out(k, old)
            new = earliest(k)
            keep = new if new is not None and end(new) < end(old) else old
            moved += keep is not old
            put(k, keep)
            placed[k] = keep
        moves += moved
        if not moved:
            break
    return placed, moves
