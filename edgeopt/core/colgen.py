"""Time-indexed multi-mode relaxations, their Lagrangian bound, and column generation for the prices.

A `TimeIndexedRelaxation` is the common shape of every non-preemptive family's bound: each job
picks one *column* (mode k, start t) with

* ``earliest[k] <= t`` and ``t + duration[k] <= latest`` (the job's own horizon),
* cost ``weight * (t + duration[k]) + offset + extra[k]`` (a weighted completion time plus constants),
* demand ``run[k, r]`` on capacity row r in every slot of [t, t + duration[k]) and ``at_start[k, r]``
  in slot t only (e.g. "one start per cluster and slot"),

and per row and slot the demands sum to at most ``capacity[r, t]``. The family proves that every
schedule of its program maps to such a choice (a relaxation), so any lower bound of this program is
one of the family's optimum over complete schedules.

Bound (Lagrangian relaxation of the capacity rows; Fisher, "The Lagrangian relaxation method for
solving integer programming problems", Management Science 27 (1981) 1-18): for ANY prices
pi[r, t] >= 0,

    L(pi) = sum_j min_{(k, t) of j} ( cost + sum_r run[k, r] sum_{s in [t, t+d)} pi[r, s] + sum_r at_start[k, r] pi[r, t] )
            - sum_{r, t} capacity[r, t] pi[r, t]

is at most the cost of every feasible choice (weak duality). `lagrangian` evaluates it by
enumeration with prefix sums -- no solver -- and subtracts a bound on its float rounding error, so
it is the certificate check. ``L(0) = sum_j min (cost)`` is the "each job alone" bound.

`column_generation` finds good prices: the restricted master LP (Dyer & Wolsey 1990 time-indexed
LP over the generated columns) is solved by HiGHS (highspy, columns added in batches); its capacity
duals are smoothed (Wentges, Int. Trans. Oper. Res. 4 (1997) 151-162, alpha = 0.5) and priced by
the same enumeration. At convergence L(pi) equals the LP relaxation; stopped early (deadline,
model-size budget) it is still a valid bound, just weaker.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from edgeopt.core.limits import BuildTimeLimit
from edgeopt.core.lpbound import UNIT_ROUNDOFF, highs_time_limit


@dataclasses.dataclass
class JobModes:
    """One job's columns (see the module docstring). Arrays are per mode k."""

    weight: float
    offset: float
    latest: int
    duration: np.ndarray
    earliest: np.ndarray
    run: np.ndarray
    at_start: np.ndarray | None = None
    extra: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.duration = np.asarray(self.duration, dtype=np.int64).reshape(-1)
        K = self.duration.size
        self.earliest = np.broadcast_to(np.asarray(self.earliest, dtype=np.int64), (K,)).copy()
        run = np.asarray(self.run, dtype=float)
        # a job without modes keeps its row count when given as [0, R] (reshape(0, -1) is ambiguous)
        self.run = run.reshape(0, run.shape[-1] if run.ndim == 2 else 0) if K == 0 else run.reshape(K, -1)
        R = self.run.shape[1]
        self.at_start = np.zeros((K, R)) if self.at_start is None else np.asarray(self.at_start, float).reshape(K, R)
        self.extra = np.zeros(K) if self.extra is None else np.asarray(self.extra, dtype=float).reshape(K)
        if K and (self.duration.min() < 1 or self.run.min() < 0 or self.at_start.min() < 0):
            raise ValueError("durations must be >= 1 and demands >= 0")

    @property
    def n_modes(self) -> int:
        return int(self.duration.size)

    def n_columns(self) -> int:
        """How many (mode, start) columns the job has."""
        return int(np.maximum(0, self.latest - self.duration - self.earliest + 1).sum())


@dataclasses.dataclass
class TimeIndexedRelaxation:
    """Jobs' columns plus the capacity rows ``capacity[r, t]`` (R rows x T slots)."""

    jobs: list[JobModes]
    capacity: np.ndarray
    row_names: Sequence[str] = ()

    def __post_init__(self) -> None:
        self.capacity = np.asarray(self.capacity, dtype=float)
        if self.capacity.ndim != 2:
            raise ValueError("capacity must be [rows, slots]")

    @property
    def horizon(self) -> int:
        return int(self.capacity.shape[1])

    @property
    def n_rows(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    def price(self, pi: np.ndarray, buckets: np.ndarray | None = None, *, deadline: Any = None,
              ) -> tuple[list[tuple[Any, float]], float]:
        return price_time_indexed(self, pi, buckets, deadline=deadline)

    def column(self, j: int, key: Any) -> tuple[float, np.ndarray, np.ndarray]:
        return column_time_indexed(self, j, key)

    def empty_jobs(self) -> list[int]:
        """Indices of jobs without any column (no complete schedule exists)."""
        return [j for j, jm in enumerate(self.jobs) if jm.n_columns() == 0]

    def fingerprint(self) -> str:
        """sha256 of every number of the relaxation (a certificate names what it was computed for)."""
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.capacity).tobytes())
        for jm in self.jobs:
            h.update(np.array([jm.weight, jm.offset, jm.latest], dtype=float).tobytes())
            for arr in (jm.duration, jm.earliest, jm.run, jm.at_start, jm.extra):
                h.update(np.ascontiguousarray(arr).tobytes())
        return h.hexdigest()


@dataclasses.dataclass
class Pricing:
    """L(pi) (safe), and per job its minimising column (an opaque key for `column`, its priced cost)."""

    value: float
    best: list[tuple[Any, float]]


def _window_sums(prefix: np.ndarray, duration: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
    """``[R, K, T]`` sums of the prices over [t, t + d_k) (0 where the window leaves [0, T)), and the
    ``[K, T]`` end slots."""
    tt = np.arange(T)
    ends = tt[None, :] + duration[:, None]
    return prefix[:, np.minimum(ends, T)] - prefix[:, tt][:, None, :], ends


def undominated(duration: np.ndarray, demand: np.ndarray, earliest: np.ndarray | None = None) -> np.ndarray:
    """Indices (sorted) of the modes no other mode dominates: no longer, no more demand on any row, no
    later earliest start, and strictly better in one. Dropping a dominated mode changes no bound
    (its columns cost at least as much at every pi >= 0). Exact duplicates keep their first copy."""
    D = np.asarray(duration, dtype=float).reshape(-1)
    if D.size == 0:  # a job with no mode at all: nothing to prune (its relaxation reports it unschedulable)
        return np.zeros(0, dtype=np.int64)
    R = np.asarray(demand, dtype=float).reshape(D.size, -1)
    E = np.zeros(D.size) if earliest is None else np.asarray(earliest, dtype=float)
    X = np.column_stack([D, E, R])
    le = (X[None, :, :] <= X[:, None, :]).all(axis=2)  # [k, k']: k' no worse than k
    lt = (X[None, :, :] < X[:, None, :]).any(axis=2)
    same = (X[None, :, :] == X[:, None, :]).all(axis=2) & (np.arange(D.size)[None, :] < np.arange(D.size)[:, None])
    return np.flatnonzero(~((le & lt) | same).any(axis=1))


def _gamma(k: int) -> float:
    """gamma_k = k u / (1 - k u): the relative error bound of k float operations (Higham 2002, eq. 3.5)."""
    return k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)


def price_time_indexed(rel: TimeIndexedRelaxation, pi: np.ndarray, buckets: np.ndarray | None = None, *,
                       deadline: Any = None) -> tuple[list[tuple[Any, float]], float]:
    """Per job the cheapest column at prices ``pi`` (key ``(k, t)``) and a bound on the rounding error.

    ``buckets``: the first slots of buckets within which ``pi`` is constant (the caller's promise;
    column generation prices only such points). A window's priced cost is then piecewise linear in
    the start t, with breaks only where t or t + d crosses a bucket start, so its minimum over
    the integer starts is at a break or at an end of the start range: only those are evaluated.
    The certificate check never passes ``buckets`` (it enumerates every start, for any pi).
    ``deadline`` (a `Deadline` or None) is checked before each job: one pass costs jobs x modes x
    slots, which a long horizon makes longer than any time limit (`BuildTimeLimit` when it passes).
    """
    R, T = rel.n_rows, rel.horizon
    prefix = np.concatenate([np.zeros((R, 1)), np.cumsum(pi, axis=1)], axis=1)
    row_mass = prefix[:, -1]
    pmax = pi.max(axis=1) if T else np.zeros(R)
    best, margin = [], 0.0
    for j, jm in enumerate(rel.jobs):
        if deadline is not None:
            deadline.check("pricing")
        if jm.n_modes == 0:
            raise ValueError(f"job {j} has no column")
        used = np.flatnonzero(jm.run.any(axis=0))  # window sums only for the rows the job uses
        if buckets is None:
            cost = _priced_columns(jm, prefix, pi, T)
            k, t = np.unravel_index(int(np.argmin(cost)), cost.shape)
        else:
            lo, hi = jm.earliest, jm.latest - jm.duration  # start range per mode
            cand = np.concatenate([np.broadcast_to(buckets, (jm.n_modes, buckets.size)),
                                   buckets[None, :] - jm.duration[:, None], lo[:, None], hi[:, None]], axis=1)
            cand = np.clip(cand, lo[:, None], np.maximum(hi, lo)[:, None])
            ends = cand + jm.duration[:, None]
            sums = prefix[used][:, ends] - prefix[used][:, cand]
            cost = np.einsum("kr,rkc->kc", jm.run[:, used], sums) + np.einsum("kr,rkc->kc", jm.at_start, pi[:, cand])
            cost += jm.weight * ends + jm.offset + jm.extra[:, None]
            cost[hi < lo] = np.inf
            k, c = np.unravel_index(int(np.argmin(cost)), cost.shape)
            t = cand[k, c]
        v = float(cost[k, t] if buckets is None else cost[k, c])
        if not math.isfinite(v):
            raise ValueError(f"job {j} has no column")
        best.append(((int(k), int(t)), v))
        margin += _job_error(jm, T, R, row_mass, pmax)
    return best, margin


def _priced_columns(jm: JobModes, prefix: np.ndarray, pi: np.ndarray, T: int) -> np.ndarray:
    """``[K, T]``: the priced cost of every column (k, t) of one job at prices ``pi`` (``prefix``: their
    prefix sums per row); ``inf`` where (k, t) is no column (before its earliest start, past its latest end)."""
    used = np.flatnonzero(jm.run.any(axis=0))  # window sums only for the rows the job uses
    sums, ends = _window_sums(prefix[used], jm.duration, T)
    cost = np.einsum("kr,rkt->kt", jm.run[:, used], sums) + jm.at_start @ pi
    cost += jm.weight * ends + jm.offset + jm.extra[:, None]
    cost[(np.arange(T)[None, :] < jm.earliest[:, None]) | (ends > jm.latest)] = np.inf
    return cost


def _job_error(jm: JobModes, T: int, R: int, row_mass: np.ndarray, pmax: np.ndarray) -> float:
    """A bound on the float rounding error of any one priced cost of the job (`_priced_columns`)."""
    # prefix sums (T additions), the window difference, R products and sums, the cost terms
    scale = (abs(jm.weight) * (T + float(jm.duration.max())) + abs(jm.offset) + float(np.abs(jm.extra).max())
             + float(jm.run.max(axis=0) @ (2.0 * row_mass)) + float(jm.at_start.max(axis=0) @ pmax))
    return 4.0 * _gamma(T + 2 * R + 8) * scale


@dataclasses.dataclass
class ReducedCosts:
    """The Lagrangian reduced costs of every column at one price vector (`reduced_costs`).

    For a feasible choice of one column c_j per job, its cost is at least ``value + rc[j][c_j]`` for
    every single job j (the other jobs' reduced costs are >= 0): the basis of reduced-cost fixing.
    """

    value: float
    rc: list[np.ndarray]
    error: np.ndarray


def reduced_costs(rel: TimeIndexedRelaxation, pi: Any) -> ReducedCosts:
    """L(pi) (safe, as `lagrangian`) and per job the ``[K, T]`` reduced costs ``rc[j][k, t]`` = priced cost of
    column (k, t) minus the job's cheapest priced column (``inf`` where (k, t) is no column), with
    ``error[j]``, a bound on the float rounding error of every ``rc[j]`` entry.

    Why it bounds: for prices pi >= 0 and any choice (c_1, ..., c_n) that satisfies the capacity rows,
    sum_j cost(c_j) >= sum_j priced(c_j) - sum capacity * pi = L(pi) + sum_j rc_j(c_j) >= L(pi) + rc_j(c_j).
    So a column with L(pi) + rc > UB is in no choice of cost <= UB (Fisher 1981; reduced-cost fixing).
    Prices are clipped to finite values >= 0 first, as in `lagrangian`.
    """
    R, T = rel.n_rows, rel.horizon
    pi = np.maximum(np.nan_to_num(np.asarray(pi, dtype=float).reshape(R, T), nan=0.0, posinf=0.0, neginf=0.0), 0.0)
    value = lagrangian(rel, pi).value
    prefix = np.concatenate([np.zeros((R, 1)), np.cumsum(pi, axis=1)], axis=1)
    row_mass = prefix[:, -1]
    pmax = pi.max(axis=1) if T else np.zeros(R)
    rc, err = [], []
    for jm in rel.jobs:
        cost = _priced_columns(jm, prefix, pi, T)
        low = float(cost.min()) if cost.size else math.inf
        if not math.isfinite(low):
            raise ValueError("a job has no column")
        rc.append(cost - low)
        e = _job_error(jm, T, R, row_mass, pmax)
        err.append(2.0 * e + 4.0 * UNIT_ROUNDOFF * float(np.abs(cost[np.isfinite(cost)]).max()))
    return ReducedCosts(value, rc, np.array(err))


def column_time_indexed(rel: TimeIndexedRelaxation, j: int, key: Any) -> tuple[float, np.ndarray, np.ndarray]:
    """Cost and the (row * T + slot) entries of job j's column ``key = (k, t)``."""
    k, t = key
    jm, T = rel.jobs[j], rel.horizon
    d = int(jm.duration[k])
    rows_run = np.flatnonzero(jm.run[k] > 0)
    rows_st = np.flatnonzero(jm.at_start[k] > 0)
    idx = [(rows_run[:, None] * T + np.arange(t, t + d)[None, :]).ravel(), rows_st * T + t]
    val = [np.repeat(jm.run[k, rows_run], d), jm.at_start[k, rows_st]]
    return jm.weight * (t + d) + jm.offset + float(jm.extra[k]), np.concatenate(idx), np.concatenate(val)


def constant_buckets(pi: np.ndarray, bucket: int) -> np.ndarray | None:
    """The bucket starts (every ``bucket`` slots) when ``pi`` is exactly constant on each bucket, else None:
    then, and only then, `lagrangian` may evaluate only the breakpoints (same value, much faster)."""
    T = pi.shape[1]
    if bucket <= 1 or T == 0:
        return None
    starts = np.arange(0, T, int(bucket))
    expanded = np.repeat(pi[:, starts], np.diff(np.append(starts, T)), axis=1)
    return starts if np.array_equal(expanded, pi) else None


def lagrangian(rel: Any, pi: Any, buckets: np.ndarray | None = None, *, deadline: Any = None) -> Pricing:
    """L(pi) by enumeration, with its float rounding error subtracted (module docstring).

    ``rel`` is a `TimeIndexedRelaxation` or any object with the same ``capacity``, ``n_rows``,
    ``horizon`` and ``price(pi) -> (per job (key, min priced cost), rounding error bound)``.
    Negative or non-finite prices are clipped to 0 first: the bound is valid for every pi >= 0, so a
    certificate can only lose strength, never validity. Every job must have a column.
    ``deadline``: handed to ``price``, which checks it in its loops and raises `BuildTimeLimit`
    when it passes (no value: a pricing pass cut short certifies nothing).
    """
    R, T = rel.n_rows, rel.horizon
    pi = np.nan_to_num(np.asarray(pi, dtype=float).reshape(R, T), nan=0.0, posinf=0.0, neginf=0.0)
    pi = np.maximum(pi, 0.0)
    kw = {} if deadline is None else {"deadline": deadline}
    best, margin = rel.price(pi, **kw) if buckets is None else rel.price(pi, buckets, **kw)
    mins = [v for _, v in best]
    cap_term = rel.capacity * pi
    value = math.fsum(mins) - math.fsum(cap_term.ravel())
    margin += 4.0 * UNIT_ROUNDOFF * float(np.abs(cap_term).sum()) + 2.0 * UNIT_ROUNDOFF * math.fsum(map(abs, mins))
    return Pricing(value - 1.01 * margin, best)


@dataclasses.dataclass
class ColumnGenerationResult:
    """Best certified prices found and how the search went."""

    value: float
    prices: np.ndarray
    master_lp: float | None
    iterations: int
    columns: int
    converged: bool
    stop_reason: str
    seconds: float
    bucket: int = 1
    #: (bucket, certified L, seconds) of each level when finer buckets were tried (`column_generation`)
    levels: list[tuple[int, float, float]] = dataclasses.field(default_factory=list)
    #: the last solved master LP's positive columns, (job, key, weight): a fractional schedule whose
    #: per-job weights sum to 1 once no artificial column is left (`edgeopt.core.lporder` orders jobs by it).
    #: Not part of the certificate; empty when the master was never solved.
    primal: list[tuple[int, Any, float]] = dataclasses.field(default_factory=list)


#: Finer buckets on long horizons: after column generation converges with buckets of B > 1 slots, and only
#: when the time left is at least REFINE_FACTOR times what that level took, it is run again with buckets of
#: ceil(B / REFINE_DIVISOR) slots, started from the coarser level's columns; the best certified L is kept.
#: (tapfinger, ITP busiest week, T = 14,686: B = 29 gave 30,866 in 11.5 s of CPU, B = 8 gave 31,501 in 99 s.)
REFINE_FACTOR = 6.0
REFINE_DIVISOR = 4


def column_generation(
    rel: Any,
    *,
    deadline: Any = None,
    rel_tol: float = 1e-4,
    max_iterations: int = 500,
    max_nonzeros: int | None = None,
    alpha: float = 0.5,
    bucket: int | None = None,
) -> ColumnGenerationResult:
    """Prices pi >= 0 with a large L(pi), by column generation on the master LP (module docstring).

    Args:
        rel: a `TimeIndexedRelaxation` (or an object with its ``price``/``column``/``capacity``/``n_jobs``).
        deadline: an `edgeopt.core.limits.Deadline` (or None); the loop stops in time to evaluate the
            final prices before it, keeping the best prices found so far (L(0) at worst). Every
            pricing pass checks it too (a pass over a long horizon can outlast the whole limit): a
            pass it cuts short is dropped and the best prices priced before it are kept.

    Raises:
        BuildTimeLimit: the deadline passed before even L(0) was priced (nothing is certified).
        rel_tol: stop when (master LP - best L) <= rel_tol * |master LP|.
        max_nonzeros: stop adding columns when the master would exceed this many nonzeros.
        bucket: slots per master row (default: at most 512 buckets over the horizon). The master sums
            the capacity rows of each bucket (a surrogate relaxation), so its duals are prices that
            are constant within a bucket: a special case of pi >= 0, hence still a valid L(pi), and
            the certificate keeps the full [R, T] prices. Bucketing costs strength, never validity.
            With the default and a deadline, a converged level is refined while the time allows
            (`REFINE_FACTOR`): the result's ``bucket`` is that of the best level, ``levels`` lists
            (bucket, L, seconds) of each.

    A relaxation with its own ``column_generation(deadline=, rel_tol=, max_iterations=, max_nonzeros=)``
    (a master this loop cannot build, e.g. columns that are whole schedules and multipliers of its own
    stored in extra rows) is handed to it: it returns the same `ColumnGenerationResult`.
    """
    own = getattr(rel, "column_generation", None)
    if callable(own):
        return own(deadline=deadline, rel_tol=rel_tol, max_iterations=max_iterations, max_nonzeros=max_nonzeros)
    B = max(1, int(bucket) if bucket else math.ceil(rel.horizon / 512))
    kw = {"deadline": deadline, "rel_tol": rel_tol, "max_iterations": max_iterations, "max_nonzeros": max_nonzeros,
          "alpha": alpha}
    best, keys = _generate(rel, B, **kw)
    level = best
    levels = [(B, best.value, round(best.seconds, 3))]
    while (bucket is None and deadline is not None and level.converged and B > 1
           and deadline.remaining(floor=0.0) >= REFINE_FACTOR * level.seconds):
        B = max(1, math.ceil(B / REFINE_DIVISOR))
        try:
            level, keys = _generate(rel, B, start=keys, **kw)
        except BuildTimeLimit:
            break  # not even the finer L(0) was priced: the coarser levels stand
        levels.append((B, level.value, round(level.seconds, 3)))
        if level.value > best.value:
            best = level
    if len(levels) > 1:
        best = dataclasses.replace(best, seconds=sum(t for _, _, t in levels), levels=levels)
    return best


def _generate(rel: Any, B: int, *, deadline: Any, rel_tol: float, max_iterations: int, max_nonzeros: int | None,
              alpha: float, start: set[tuple[int, Any]] | None = None,
              ) -> tuple[ColumnGenerationResult, set[tuple[int, Any]]]:
    """One level of `column_generation`: buckets of ``B`` slots; ``start``: (job, key) columns of a coarser
    level added to the first master (they are columns of every level: rows are summed per bucket).
    Returns the result and every (job, key) column the master holds."""
    import highspy

    t_start = time.perf_counter()
    R, T, J = rel.n_rows, rel.horizon, rel.n_jobs
    starts_b = np.arange(0, T, B)
    nb = starts_b.size
    widths = np.diff(np.append(starts_b, T))
    inf = highspy.kHighsInf
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    empty_i, empty_v = np.zeros(0, np.int32), np.zeros(0)
    h.addRows(J, np.ones(J), np.ones(J), 0, empty_i, empty_i, empty_v)
    cap_b = np.add.reduceat(rel.capacity, starts_b, axis=1)
    h.addRows(R * nb, np.full(R * nb, -inf), cap_b.ravel(), 0, empty_i, empty_i, empty_v)
    t0 = time.perf_counter()
    first = lagrangian(rel, np.zeros((R, T)), starts_b if B > 1 else None, deadline=deadline)
    price_s = time.perf_counter() - t0
    # artificial columns keep the master feasible; priced far above any real column, they leave the basis
    big = np.array([10.0 * abs(v) + 1e6 for _, v in first.best])
    h.addCols(J, big, np.zeros(J), np.full(J, inf), J, np.arange(J, dtype=np.int32),
              np.arange(J, dtype=np.int32), np.ones(J))
    best_pi, best_val = np.zeros((R, T)), first.value
    pi_rmp = np.zeros((R, T))
    lp_val: float | None = None
    columns, nnz, it, converged, reason = J, J, 0, False, "iteration limit"
    seen: set[tuple[int, Any]] = set()
    order: list[tuple[int, Any]] = []  # the master's real columns, in the order they were added
    primal: list[tuple[int, Any, float]] = []

    def entries(j: int, key: Any) -> tuple[float, np.ndarray, np.ndarray]:
        """Column (j, key): its cost and its master rows (job row, then bucket rows summed) and values."""
        cost, ci, cv = rel.column(j, key)
        ci = np.asarray(ci, dtype=np.int64)
        ci = np.concatenate([[j], J + (ci // T) * nb + (ci % T) // B])
        cv = np.concatenate([[1.0], np.asarray(cv, dtype=float)])
        ci, inv = np.unique(ci, return_inverse=True)  # a row hit twice (start + run, bucket) is summed
        return cost, ci, np.bincount(inv, weights=cv)

    def add(batch: list[tuple[int, Any]]) -> bool:
        """Add the columns of ``batch`` to the master; False (nothing added) when they pass ``max_nonzeros``."""
        nonlocal columns, nnz
        starts, idx, vals, costs = [0], [], [], []
        for j, key in batch:
            cost, ci, cv = entries(j, key)
            idx.append(ci)
            vals.append(cv)
            starts.append(starts[-1] + ci.size)
            costs.append(cost)
        if max_nonzeros is not None and nnz + starts[-1] > max_nonzeros:
            return False
        h.addCols(len(costs), np.array(costs), np.zeros(len(costs)), np.full(len(costs), inf), starts[-1],
                  np.array(starts[:-1], np.int32), np.concatenate(idx).astype(np.int32), np.concatenate(vals))
        seen.update(batch)
        order.extend(batch)
        columns += len(costs)
        nnz += starts[-1]
        return True

    if start:  # a coarser level's columns: the first master is already near that level's optimum
        add(sorted(start, key=lambda c: c[0]))
    pricing, sep, smooth = first, pi_rmp, alpha
    while it < max_iterations:
        it += 1
        if it > 1:
            if deadline is not None and deadline.remaining(floor=0.0) < 2.5 * price_s + 0.2:
                reason = "time limit"
                break
            sep = smooth * best_pi + (1 - smooth) * pi_rmp
            t0 = time.perf_counter()
            try:
                pricing = lagrangian(rel, sep, starts_b if B > 1 else None, deadline=deadline)
            except BuildTimeLimit:
                reason = "time limit"
                break
            price_s = time.perf_counter() - t0
            if pricing.value > best_val:
                best_val, best_pi = pricing.value, sep.copy()
        mu = np.array(h.getSolution().row_dual[:J]) if it > 1 else np.full(J, np.inf)
        batch = [(j, key) for j, (key, v) in enumerate(pricing.best)
                 if (j, key) not in seen and v - mu[j] < -1e-9 * max(1.0, abs(v))]
        if not batch and lp_val is not None:
            if np.array_equal(sep, pi_rmp):
                converged, reason = True, "no improving column"  # the master LP is the full LP's optimum
                break
            smooth = 0.0  # mispricing at the smoothed point: price the master's own duals next
            continue
        if batch and not add(batch):
            reason = "master size budget"
            break
        smooth = alpha  # (a master never solved, with a coarser level's columns only, is solved first)
        if deadline is not None:
            highs_time_limit(h, max(0.05, deadline.remaining(floor=0.0) - 2.5 * price_s))
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        if status != "Optimal":
            reason = "master LP " + status
            break
        lp_val = float(h.getInfo().objective_function_value)
        sol = h.getSolution()  # one copy of the solution for the columns and the duals
        x = np.asarray(sol.col_value)[J:]
        primal = [(*order[i], float(x[i])) for i in np.flatnonzero(x > 1e-9)]
        duals = np.maximum(0.0, -np.array(sol.row_dual[J:]).reshape(R, nb))
        pi_rmp = np.repeat(duals, widths, axis=1)
        if lp_val - best_val <= rel_tol * abs(lp_val):
            converged, reason = True, "gap below tolerance"
            break
    if reason != "time limit" and not np.array_equal(pi_rmp, best_pi):
        try:
            final = lagrangian(rel, pi_rmp, starts_b if B > 1 else None, deadline=deadline)
        except BuildTimeLimit:
            converged, reason = False, "time limit"  # the best prices priced before it stand
        else:
            if final.value > best_val:
                best_val, best_pi = final.value, pi_rmp
    return ColumnGenerationResult(best_val, best_pi, lp_val, it, columns, converged, reason,
                                  time.perf_counter() - t_start, B, primal=primal), seen

