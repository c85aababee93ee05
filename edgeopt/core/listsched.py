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

`ruin_recreate` is the larger move a search may run after them (ruin and recreate, Schrimpf et al. 2000;
Shaw's related removal, 1998): a few jobs (a dozen by default, or a size drawn per iteration from a family's
list) are taken out together and placed again one by one at their earliest completion, in a perturbed
order; the move is kept only when the objective falls. Single-job sweeps stop at a local optimum where no
job alone can complete earlier; taking out several jobs that run at the same time frees room that none of
them could use alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

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


#: How `ruin_recreate` picks the jobs it takes out, in turn: ``random`` (any jobs), ``time`` (the jobs whose
#: start is nearest a random job's start: a stretch of time) and ``related`` (jobs running at the same time as
#: a random job, Shaw's relatedness by overlap).
RUINS = ("random", "time", "related")
#: Most iterations of one `ruin_recreate` call (the deadline stops it first on every instance measured).
MAX_RUIN_ITERATIONS = 1_000_000
#: The LNS's local step stops after this many iterations per job in a row without a kept move (a work limit,
#: not a clock): ruin and recreate finds most of its gain early (tapfinger, ITP typical week, 300 s from
#: Greedy: 94 % of it within the first 10 % of 141,507 iterations), while the CP-SAT windows keep improving,
#: so a stalled search hands them the rest of its time.
PATIENCE_PER_JOB = 10


#: The adaptive choice of a ruin's size (`RuinSizes`): each size keeps at least this share of the draws ...
MIN_SIZE_SHARE = 0.1
#: ... and its statistics (objective gained, jobs placed) decay by this factor per iteration, so that the
#: choice follows what pays now (about the last thousand iterations).
SIZE_MEMORY = 0.999


class RuinSizes:
    """How many jobs each ruin takes out: a fixed number, or one of a family's sizes drawn per iteration with
    probabilities that follow each size's recent gain per job placed again (the adaptive weights of Ropke and
    Pisinger's adaptive large-neighbourhood search, Transp. Sci. 40 (2006) 455-472), each size at least
    `MIN_SIZE_SHARE` of the draws. Small ruins are cheap and find swaps of neighbours; larger ones find the
    moves that need several jobs out of the way at once, and which pays differs between instances and over a
    run. Deterministic: the statistics count jobs placed, not seconds."""

    def __init__(self, size: int | Sequence[int]) -> None:
        self.sizes = (int(size),) if isinstance(size, int | np.integer) else tuple(int(k) for k in size)
        if not self.sizes or min(self.sizes) < 1:
            raise ValueError(f"size: ruin sizes of at least 1 job, got {size!r}")
        self.gain = np.zeros(len(self.sizes))
        self.work = np.zeros(len(self.sizes))
        self.last = 0

    def draw(self, rng: np.random.Generator) -> int:
        """The size of the next ruin (no draw from ``rng`` when there is one size)."""
        if len(self.sizes) == 1:
            return self.sizes[0]
        rate = self.gain / np.maximum(self.work, 1.0)
        share = rate / rate.sum() if rate.sum() > 0 else np.full(len(rate), 1.0 / len(rate))
        p = MIN_SIZE_SHARE + (1.0 - MIN_SIZE_SHARE * len(rate)) * share
        self.last = int(rng.choice(len(self.sizes), p=p / p.sum()))
        return self.sizes[self.last]

    def record(self, placed: int, gain: float) -> None:
        """What the last ruin did: ``placed`` jobs placed again, the objective fell by ``gain`` (>= 0)."""
        if len(self.sizes) > 1:
            self.gain *= SIZE_MEMORY
            self.work *= SIZE_MEMORY
            self.gain[self.last] += gain
            self.work[self.last] += placed


@dataclasses.dataclass
class RuinLog:
    """What `ruin_recreate` did: iterations, moves kept, the objective change they made (<= 0), why it stopped
    (``"deadline"``, ``"patience"`` or ``"iterations"``) and the (iteration, change so far) of every kept move."""

    iterations: int = 0
    accepted: int = 0
    change: float = 0.0
    stop: str = ""
    history: list[tuple[int, float]] = dataclasses.field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"iterations": self.iterations, "accepted": self.accepted, "change": self.change, "stop": self.stop}


def _ruined(placed: Placed, size: int, how: str, start: Callable[[Any], int], end: Callable[[Any], int],
            rng: np.random.Generator) -> list[int]:
    """The ids `ruin_recreate` takes out in one iteration (``how``: one of `RUINS`)."""
    ids = sorted(placed)
    if how == "random":
        return [int(k) for k in rng.choice(ids, size=min(size, len(ids)), replace=False)]
    pivot = placed[ids[int(rng.integers(len(ids)))]]
    if how == "time":
        centre = start(pivot)
        return sorted(ids, key=lambda k: (abs(start(placed[k]) - centre), k))[:size]
    lo, hi = start(pivot), end(pivot)
    overlap = [k for k in ids if start(placed[k]) < hi and end(placed[k]) > lo]
    rng.shuffle(overlap)
    return overlap[:size]


def ruin_recreate(placed: Placed, *, take_out: Callable[[int, Any], None], earliest: Callable[[int], Any | None],
                  put: Callable[[int, Any], None], start: Callable[[Any], int], end: Callable[[Any], int],
                  cost: Callable[[int, Any], float], urgency: Callable[[int], float], deadline: Any,
                  seed: int = 0, size: int | Sequence[int] = 12, noise: float = 0.3, patience: int | None = None,
                  max_iterations: int = MAX_RUIN_ITERATIONS) -> tuple[Placed, RuinLog]:
    """Ruin and recreate over ``placed`` (job id -> placement, whose capacity the caller holds) until
    ``deadline`` (an `edgeopt.core.limits.Deadline`) expires, ``max_iterations`` have run, or (with
    ``patience``) that many iterations in a row kept no move.

    Each iteration takes out up to ``size`` jobs (chosen by `RUINS` in turn; with a sequence of sizes, one drawn
    per iteration by `RuinSizes`), then places them again one by
    one at their ``earliest`` completion, most urgent first (``urgency(k)`` times a factor drawn uniformly
    from [1 - noise, 1 + noise], so that the order varies between iterations). The move is kept when every job
    found a place and the sum of ``cost(k, placement)`` over the moved jobs fell; otherwise every job is put
    back where it was. So the total cost never rises, and the caller's held capacity always matches the
    returned placements. Deterministic in ``seed`` for a given number of iterations; how many run depends on
    the deadline.
    """
    placed = dict(placed)
    log = RuinLog()
    if len(placed) < 2:
        log.stop = "fewer than two jobs"
        return placed, log
    rng = np.random.default_rng(seed)
    sizes = RuinSizes(size)
    last = 0  # the iteration of the last kept move
    while True:
        if deadline.expired():
            log.stop = "deadline"
            break
        if log.iterations >= max_iterations:
            log.stop = "iterations"
            break
        if patience is not None and log.iterations - last >= patience:
            log.stop = "patience"
            break
        how = RUINS[log.iterations % len(RUINS)]
        log.iterations += 1
        out = _ruined(placed, sizes.draw(rng), how, start, end, rng)
        old = {k: placed[k] for k in out}
        for k in out:
            take_out(k, old[k])
        factor = rng.uniform(1.0 - noise, 1.0 + noise, size=len(out))
        new: dict[int, Any] = {}
        for _, k in sorted(zip((-urgency(k) * f for k, f in zip(out, factor, strict=True)), out, strict=True)):
            pl = earliest(k)
            if pl is None:
                break
            new[k] = pl
            put(k, pl)
        before = sum(cost(k, pl) for k, pl in old.items())
        change = sum(cost(k, pl) for k, pl in new.items()) - before
        kept = len(new) == len(out) and change < -1e-9 * max(1.0, abs(before))
        sizes.record(len(new), -change if kept else 0.0)
        if kept:
            placed.update(new)
            log.accepted += 1
            log.change += change
            log.history.append((log.iterations, log.change))
            last = log.iterations
            continue
        for k, pl in new.items():
            take_out(k, pl)
        for k, pl in old.items():
            put(k, pl)
    return placed, log
