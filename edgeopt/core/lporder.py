"""Job orders read from a time-indexed master LP's fractional schedule, for offline list schedulers.

`edgeopt.core.colgen.column_generation` keeps the last master LP's positive columns (``primal``): each job
is a mix of (mode, start) columns whose weights sum to 1. Listing jobs by where that mix places them and
then placing each at its earliest completion is the classic LP-guided list scheduling for total (weighted)
completion time: Hall, Schulz, Shmoys and Wein, "Scheduling to minimize average completion time: off-line
and on-line approximation algorithms", Math. Oper. Res. 22 (1997) 513-544 (mean completions), and the
alpha-points of Goemans, Queyranne, Schulz, Skutella and Wang, "Single machine scheduling with release
dates", SIAM J. Discrete Math. 15 (2002) 165-192.

A column's start is the first slot it occupies and its end one past the last (read from its capacity-row
entries, so it holds for every family's relaxation). `LP_ORDERS` are the points tried; which is best
depends on the instance, so a caller tries each and keeps the best schedule. On edgecloud's
``paper_compact`` preset (seed 0) the offline list scheduler's best fixed order gave 21,413 and these
orders 18,693-19,927 (best: the start's 0.5-point; `formulations/edgecloud/lpfill.py`).

Nothing here is certified: the orders only steer heuristics whose schedules are validated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from edgeopt.core.colgen import column_generation
from edgeopt.core.limits import BuildTimeLimit, Deadline
from edgeopt.core.listsched import ListOutcome, best_of_passes

#: (label, which point of a column, alpha): alpha None is the weighted mean over the job's columns, else
#: the point by which a share alpha of the job's weight has been reached (columns sorted by that point).
LP_ORDERS: tuple[tuple[str, str, float | None], ...] = (
    ("lp_start_0.5", "start", 0.5), ("lp_start_mean", "start", None), ("lp_start_0.25", "start", 0.25),
    ("lp_start_0.75", "start", 0.75), ("lp_end_mean", "end", None), ("lp_end_0.5", "end", 0.5),
    ("lp_mid_mean", "mid", None),
)


def column_spans(rel: Any, primal: Sequence[tuple[int, Any, float]]) -> dict[int, list[tuple[float, float, float]]]:
    """Per job, its master columns as (start, end, weight): first slot occupied, one past the last. A relaxation
    whose columns need not occupy a capacity row (e.g. a job wholly on an unlimited cloud) says where each one
    lies itself, with ``span(j, key) -> (start, end)``."""
    T = int(rel.horizon)
    own = getattr(rel, "span", None)
    out: dict[int, list[tuple[float, float, float]]] = {}
    for j, key, w in primal:
        if callable(own):
            start, end = own(j, key)
        else:
            _, ci, _ = rel.column(j, key)
            slots = np.asarray(ci, dtype=np.int64) % T
            start, end = float(slots.min()), float(slots.max()) + 1.0
        out.setdefault(int(j), []).append((float(start), float(end), float(w)))
    return out


def lp_times(spans: dict[int, list[tuple[float, float, float]]], n_jobs: int, point: str,
             alpha: float | None) -> np.ndarray:
    """Per job, the ``point`` ("start", "end" or "mid") of its columns: their weighted mean (``alpha``
    None) or their alpha-point. A job with no column gets +inf (listed last)."""
    if point not in ("start", "end", "mid"):
        raise ValueError(f"point must be start, end or mid, got {point!r}")
    out = np.full(n_jobs, np.inf)
    for j, cols in spans.items():
        s, e, w = (np.array(x, dtype=float) for x in zip(*cols, strict=True))
        v = s if point == "start" else e if point == "end" else (s + e) / 2.0
        if w.sum() <= 0:
            continue
        if alpha is None:
            out[j] = float((v * w).sum() / w.sum())
        else:
            o = np.argsort(v, kind="stable")
            cum = np.cumsum(w[o]) / w.sum()
            out[j] = float(v[o][min(int(np.searchsorted(cum, alpha - 1e-12)), v.size - 1)])
    return out


def lp_modes(primal: Sequence[tuple[int, Any, float]]) -> dict[int, int]:
    """Per job index, the mode k (of the relaxation's column keys ``(k, t)``) that holds the most of the job's
    LP weight; ties to the lower k. Jobs without a column are absent."""
    weight: dict[int, dict[int, float]] = {}
    for j, (k, _), w in primal:
        per = weight.setdefault(int(j), {})
        per[int(k)] = per.get(int(k), 0.0) + float(w)
    return {j: min(per, key=lambda k: (-per[k], k)) for j, per in weight.items()}


def lp_orders(rel: Any, primal: Sequence[tuple[int, Any, float]]) -> list[tuple[str, list[int]]]:
    """(label, job indices) for every point of `LP_ORDERS`; ties by job index. Empty when ``primal`` is."""
    if not primal:
        return []
    spans = column_spans(rel, primal)
    J = int(rel.n_jobs)
    out = []
    for label, point, alpha in LP_ORDERS:
        t = lp_times(spans, J, point, alpha)
        out.append((label, sorted(range(J), key=lambda j: (t[j], j))))
    return out


#: share of an LP-guided build's time the master LP may take (the orders' passes get the rest)
LP_SHARE = 0.7
#: the master's nonzeros when no size budget is given (the ``bound`` command's default)
MASTER_NONZEROS = 2_000_000


def lp_guided_passes(relax: Callable[[], Any], starting_nonzeros: int, deadline: Any,
                     fill: Callable[[Sequence[int]], tuple[dict[int, Any], list[int]]],
                     improve: Callable[[dict[int, Any]], tuple[dict[int, Any], int]],
                     objective: Callable[[dict[int, Any]], float], *, ids: Sequence[int], repairs: int,
                     max_nonzeros: int | None = None,
                     mode_fill: Callable[[Sequence[int], dict[int, int]], tuple[dict[int, Any], list[int]]]
                     | None = None) -> ListOutcome | None:
    """The best complete list schedule over the orders of `lp_orders`, or None.

    ``relax()`` builds the family's time-indexed relaxation (under ``deadline``'s guard); its master LP
    (`edgeopt.core.colgen.column_generation`, at most ``max_nonzeros``, default `MASTER_NONZEROS`) gets
    `LP_SHARE` of the time left. Each order (job indices, mapped to the family's ids by ``ids``) then runs
    through `edgeopt.core.listsched.best_of_passes` with the family's ``fill`` and ``improve`` while time is
    left. ``mode_fill(order, modes)``, where given, is a second pass per order: each job (by id) first tried
    in the mode the LP gives most weight (`lp_modes`, ``modes``: id -> k), the family falling back to its
    other modes when that one fits nowhere; the better of the two passes after ``improve`` is kept. None: the
    master's starting size (``starting_nonzeros``) is above ``max_nonzeros``, the deadline
    passed before the first pricing pass ended, or no order placed every job.
    """
    if max_nonzeros is not None and starting_nonzeros > max_nonzeros:
        return None
    try:
        with deadline.guard("the LP-guided build's relaxation"):
            rel = relax()
        cg = column_generation(rel, deadline=Deadline(max(1e-3, LP_SHARE * deadline.remaining(floor=0.0))),
                               max_nonzeros=max_nonzeros or MASTER_NONZEROS)
    except BuildTimeLimit:
        return None
    best: tuple[float, ListOutcome] | None = None
    modes = {ids[j]: k for j, k in lp_modes(cg.primal).items()} if mode_fill is not None else {}
    for label, order in lp_orders(rel, cg.primal):
        if deadline.expired():
            break
        first = [ids[j] for j in order]
        variants = [(label, first, fill)]
        if mode_fill is not None:
            variants.append((f"{label}/lp_mode", first, lambda jobs: mode_fill(jobs, modes)))
        out = best_of_passes(variants, improve, objective, repairs)
        if out.rejected:
            continue
        value = objective(out.placed)
        if best is None or value < best[0]:
            best = (value, out)
    return None if best is None else best[1]


__all__ = ["LP_ORDERS", "LP_SHARE", "MASTER_NONZEROS", "column_spans", "lp_guided_passes", "lp_modes", "lp_orders",
           "lp_times"]
