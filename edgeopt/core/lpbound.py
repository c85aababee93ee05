"""Linear programs in matrix form, solved with HiGHS, and a solver-free dual check by weak duality.

A `LinearProgram` is ``min c^T x  s.t.  row_lower <= A x <= row_upper,  col_lower <= x <= col_upper``
(infinite entries allowed). `solve_lp` hands it to HiGHS through highspy's ``passModel`` (no Pyomo:
building a million-nonzero model this way takes a fraction of a second, docs/solvers.md) and returns
the optimum, the primal and the row duals.

`dual_bound` is the independent check: for ANY row multipliers y it returns a number that is at
most the LP optimum, computed without a solver. It is the Lagrangian form of the LP dual
(Neumaier & Shcherbina, "Safe bounds in linear and mixed-integer linear programming",
Math. Programming 99 (2004) 283-296): for every feasible x,

    c^T x = y^T A x + (c - A^T y)^T x
          >= sum_i min(y_i row_lower_i, y_i row_upper_i) + sum_j min(r_j col_lower_j, r_j col_upper_j),

with r = c - A^T y. A multiplier whose row side is infinite in the direction it would need is set
to 0 first (its term would be -inf), and a reduced cost whose column bound is infinite in the
direction it would need makes the bound -inf (`ModelError`: such duals certify nothing). Slightly
infeasible duals (solver tolerances) therefore cost strength, never validity. The float evaluation
is made safe by subtracting a bound on its rounding error (a few units in the last place per term,
`safety_margin`), so the number returned never exceeds the exact value of the expression.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from edgeopt.core.errors import ModelError

if TYPE_CHECKING:  # imported where used: with Pyomo loaded, importing scipy also imports scipy.stats (0.6 s)
    import scipy.sparse as sp

#: Unit roundoff of float64.
UNIT_ROUNDOFF = 2.0**-53


@dataclasses.dataclass
class LinearProgram:
    """``min c^T x  s.t.  row_lower <= A x <= row_upper,  col_lower <= x <= col_upper``."""

    cost: np.ndarray
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray

    def __post_init__(self) -> None:
        import scipy.sparse as sp

        self.A = sp.csr_matrix(self.A, dtype=float)
        self.A.sort_indices()
        m, n = self.A.shape
        self.cost = np.asarray(self.cost, dtype=float).reshape(n)
        self.row_lower = np.asarray(self.row_lower, dtype=float).reshape(m)
        self.row_upper = np.asarray(self.row_upper, dtype=float).reshape(m)
        self.col_lower = np.asarray(self.col_lower, dtype=float).reshape(n)
        self.col_upper = np.asarray(self.col_upper, dtype=float).reshape(n)

    @property
    def shape(self) -> tuple[int, int]:
        return self.A.shape

    def fingerprint(self) -> str:
        """sha256 of every number of the LP: a certificate names the LP it was computed for."""
        h = hashlib.sha256()
        for arr in (np.array(self.A.shape, dtype=np.int64), self.A.indptr.astype(np.int64),
                    self.A.indices.astype(np.int64), self.A.data, self.cost, self.row_lower, self.row_upper,
                    self.col_lower, self.col_upper):
            h.update(np.ascontiguousarray(arr).tobytes())
        return h.hexdigest()


@dataclasses.dataclass
class LPSolution:
    """What HiGHS returned: its model status word, the optimum (None unless optimal), primal and row duals.

    ``row_dual`` follows HiGHS's sign convention (for a minimisation: >= 0 on binding lower sides,
    <= 0 on binding upper sides), which is the one `dual_bound` expects.
    """

    status: str
    value: float | None
    x: np.ndarray | None
    row_dual: np.ndarray | None
    seconds: float


def highs_time_limit(h: Any, seconds: float) -> None:
    """Let the next ``h.run()`` take at most ``seconds`` more (at least 0.01).

    HiGHS's ``time_limit`` bounds the *cumulative* run time of a ``Highs`` object over all its ``run()``
    calls (measured: after one run stopped at a 0.5 s limit, every later run with ``time_limit`` 0.5 ended
    at once with "Time limit reached"). A master LP re-solved after every pricing round would otherwise stop
    once its solves together used the time left, long before the caller's deadline; so the limit set here is
    the run time so far plus ``seconds``."""
    h.setOptionValue("time_limit", float(h.getRunTime()) + float(max(0.01, seconds)))


def solve_lp(lp: LinearProgram, *, time_limit: float = 60.0, threads: int = 1) -> LPSolution:
    """Solve ``lp`` with HiGHS (highspy ``passModel``) within ``time_limit`` seconds."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(max(0.05, time_limit)))
    h.setOptionValue("threads", int(threads))
    m, n = lp.shape
    model = highspy.HighsLp()
    model.num_col_ = int(n)
    model.num_row_ = int(m)
    model.col_cost_ = lp.cost
    model.col_lower_ = np.where(np.isfinite(lp.col_lower), lp.col_lower, -highspy.kHighsInf)
    model.col_upper_ = np.where(np.isfinite(lp.col_upper), lp.col_upper, highspy.kHighsInf)
    model.row_lower_ = np.where(np.isfinite(lp.row_lower), lp.row_lower, -highspy.kHighsInf)
    model.row_upper_ = np.where(np.isfinite(lp.row_upper), lp.row_upper, highspy.kHighsInf)
    A = lp.A.tocsc()
    A.sort_indices()
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_ = A.indptr.astype(np.int32)
    model.a_matrix_.index_ = A.indices.astype(np.int32)
    model.a_matrix_.value_ = A.data.astype(float)
    model.a_matrix_.num_col_ = int(n)
    model.a_matrix_.num_row_ = int(m)
    t0 = time.perf_counter()
    h.passModel(model)
    h.run()
    secs = time.perf_counter() - t0
    status = h.modelStatusToString(h.getModelStatus())
    sol = h.getSolution()
    has = bool(sol.value_valid) and bool(sol.dual_valid)
    x = np.array(sol.col_value, dtype=float) if has else None
    y = np.array(sol.row_dual, dtype=float) if has else None
    value = float(h.getInfo().objective_function_value) if status == "Optimal" else None
    return LPSolution(status, value, x, y, secs)


def repair_duals(lp: LinearProgram, y: Any) -> np.ndarray:
    """``y`` as floats with every multiplier that would multiply an infinite row side set to 0."""
    y = np.nan_to_num(np.asarray(y, dtype=float).reshape(lp.shape[0]), nan=0.0, posinf=0.0, neginf=0.0)
    y = np.where((y > 0) & ~np.isfinite(lp.row_lower), 0.0, y)
    return np.where((y < 0) & ~np.isfinite(lp.row_upper), 0.0, y)


def _dual_terms(lp: LinearProgram, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(repaired y, each row's term, each column's term, the column bound each term is taken at) of the
    weak-duality expression in the module docstring."""
    y = repair_duals(lp, y)
    row_term = np.where(y > 0, y * np.where(np.isfinite(lp.row_lower), lp.row_lower, 0.0),
                        y * np.where(np.isfinite(lp.row_upper), lp.row_upper, 0.0))
    r = lp.cost - lp.A.T @ y
    at = np.where(r > 0, lp.col_lower, lp.col_upper)
    nz = r != 0
    if not np.all(np.isfinite(at[nz])):
        bad = int(np.flatnonzero(nz & ~np.isfinite(at))[0])
        raise ModelError(f"dual check: column {bad} has reduced cost {r[bad]:.3g} and an infinite bound on that "
                         "side: these multipliers certify no finite bound")
    col_term = np.where(nz, r * np.where(np.isfinite(at), at, 0.0), 0.0)
    return y, row_term, col_term, at


def dual_bound(lp: LinearProgram, y: Any) -> float:
    """A lower bound on the optimum of ``lp`` from any row multipliers ``y``, without a solver (module doc).

    Raises:
        ModelError: when the multipliers leave a reduced cost on a column unbounded in the
            direction that would make the bound -inf (they certify nothing).
    """
    y, row_term, col_term, at = _dual_terms(lp, y)
    value = float(math.fsum(row_term)) + float(math.fsum(col_term))
    return value - safety_margin(lp, y, at)


def dual_bounds_without(lp: LinearProgram, y: Any, col_owner: Any) -> np.ndarray:
    """For every owner o, a lower bound on the LP left when o's columns, and the rows that hold only o's
    columns, are removed; by weak duality at the same multipliers ``y``, without a solver.

    ``col_owner[c]`` is the owner of column c (e.g. the job whose variable it is; -1: nobody's). A row whose
    nonzeros all belong to one owner is that owner's; every other row (shared capacity, empty rows) stays.
    The columns left keep their reduced costs (the rows removed hold none of their entries), so the value is
    ``dual_bound``'s expression over what is left, made safe by the same rounding margin.

    What it bounds is the caller's to state: where the remaining LP is a relaxation of the problem without
    owner o (as for a time-indexed relaxation whose shared rows are capacities that do not depend on the jobs),
    every schedule's cost of the other owners is at least ``result[o]``. Used to cut per-job time windows from
    an incumbent (`formulations.preemptive.windows`).

    Raises:
        ModelError: as `dual_bound`.
    """
    col_owner = np.asarray(col_owner, dtype=np.int64).reshape(lp.shape[1])
    y, row_term, col_term, at = _dual_terms(lp, y)
    n_owners = int(col_owner.max()) + 1 if col_owner.size else 0
    A = lp.A.tocsr()
    row_of_entry = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    owner_of_entry = col_owner[A.indices]
    lo = np.full(A.shape[0], np.iinfo(np.int64).max)
    hi = np.full(A.shape[0], -1)
    np.minimum.at(lo, row_of_entry, owner_of_entry)
    np.maximum.at(hi, row_of_entry, owner_of_entry)
    row_owner = np.where((lo == hi) & (hi >= 0), hi, -1)  # empty rows: lo > hi, shared
    per_owner = np.zeros(n_owners)
    parts: list[float] = []
    for owner, terms in ((row_owner, row_term), (col_owner, col_term)):
        parts.append(math.fsum(terms[owner < 0]))
        order = np.argsort(owner, kind="stable")
        sorted_owner = owner[order]
        bounds = np.searchsorted(sorted_owner, np.arange(n_owners + 1))
        for o in range(n_owners):
            per_owner[o] += math.fsum(terms[order[bounds[o]:bounds[o + 1]]])
    # each group sum and the sums of group sums are correctly rounded (fsum): their errors are at most a few
    # units in the last place of the magnitudes involved, added to the margin of the terms themselves
    shared = math.fsum(parts)
    magnitude = abs(shared) + float(np.abs(per_owner).sum())
    margin = safety_margin(lp, y, at) + 8.0 * UNIT_ROUNDOFF * magnitude
    total = math.fsum([shared, *per_owner.tolist()])
    return np.array([math.fsum([total, -per_owner[o]]) for o in range(n_owners)]) - margin


def safety_margin(lp: LinearProgram, y: np.ndarray, at: np.ndarray) -> float:
    """An upper bound on the rounding error of the float evaluation in `dual_bound`.

    r_j = c_j - sum_i A_ij y_i carries an error of at most gamma_k (|c_j| + sum_i |A_ij y_i|), with
    k = the column's nonzeros + 1 and gamma_k = k u / (1 - k u) (Higham, "Accuracy and stability of
    numerical algorithms", 2nd ed., 2002, eq. 3.5); each product and the final sums (``math.fsum``,
    correctly rounded) add a few more units. Doubling gamma covers all of them.
    """
    A = lp.A.tocsc()
    k = np.diff(A.indptr) + 3
    absA_y = abs(A).T @ np.abs(y)
    bound_abs = np.where(np.isfinite(at), np.abs(at), 0.0)
    gamma = 2.0 * k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)
    col_err = float(np.sum(gamma * (np.abs(lp.cost) + absA_y) * bound_abs))
    sides = np.where(y > 0, lp.row_lower, lp.row_upper)
    row_err = float(np.sum(4.0 * UNIT_ROUNDOFF * np.abs(y * np.where(np.isfinite(sides), sides, 0.0))))
    return 1.01 * (col_err + row_err) + 1e-300


def round_up(value: float, step: float | None) -> float:
    """The least multiple of ``step`` that is >= ``value`` (a valid bound when every objective value is
    a multiple of ``step``); ``value`` unchanged when ``step`` is None. The quotient is lowered by a few
    units in the last place first, so float division can never round the bound up past a multiple."""
    if step is None or not math.isfinite(value):
        return value
    q = value / step
    q -= 4.0 * UNIT_ROUNDOFF * max(1.0, abs(q))
    return math.ceil(q) * step
