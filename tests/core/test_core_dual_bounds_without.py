"""`edgeopt.core.lpbound.dual_bounds_without`: per owner, a weak-duality bound on the LP without that owner's
columns and the rows only they hold, at the full LP's multipliers. Checked against HiGHS on the reduced LPs, for
optimal and for arbitrary multipliers, and against `dual_bound` on the reduced LP itself."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from edgeopt.core.lpbound import LinearProgram, dual_bound, dual_bounds_without, solve_lp


def _random_lp(rng: np.random.Generator, owners: int, shared_rows: int) -> tuple[LinearProgram, np.ndarray]:
    """A covering LP: per owner a few columns and two covering rows of its own, plus capacity rows shared by
    columns of several owners (a time-indexed relaxation in miniature)."""
    col_owner = np.repeat(np.arange(owners), 4)
    n = col_owner.size
    rows, lower, upper = [], [], []
    for o in range(owners):
        for _ in range(2):
            a = np.where(col_owner == o, rng.integers(0, 3, n), 0).astype(float)
            a[np.flatnonzero(col_owner == o)[0]] += 1.0
            rows.append(a)
            lower.append(float(rng.integers(1, 4)))
            upper.append(np.inf)
    for _ in range(shared_rows):
        rows.append(rng.integers(0, 2, n).astype(float))
        lower.append(-np.inf)
        upper.append(float(rng.integers(12, 20)))
    lp = LinearProgram(rng.uniform(0.5, 3.0, n), sp.csr_matrix(np.array(rows)), np.array(lower), np.array(upper),
                       np.zeros(n), np.full(n, 5.0))
    return lp, col_owner


def _without(lp: LinearProgram, col_owner: np.ndarray, o: int) -> tuple[LinearProgram, np.ndarray]:
    """The LP with owner o's columns and the rows holding only them removed (solved by HiGHS in the test), and
    which rows were removed."""
    A = lp.A.toarray()
    keep_cols = col_owner != o
    own = (A[:, ~keep_cols] != 0).any(axis=1) & ~(A[:, keep_cols] != 0).any(axis=1)
    return LinearProgram(lp.cost[keep_cols], sp.csr_matrix(A[~own][:, keep_cols]), lp.row_lower[~own],
                         lp.row_upper[~own], lp.col_lower[keep_cols], lp.col_upper[keep_cols]), own


@pytest.mark.parametrize("seed", range(6))
def test_leave_one_out_dual_bound_is_below_the_lp_without_the_owner(seed):
    rng = np.random.default_rng(seed)
    lp, owner = _random_lp(rng, owners=5, shared_rows=4)
    sol = solve_lp(lp)
    assert sol.status == "Optimal"
    for y in (sol.row_dual, rng.uniform(-1.0, 2.0, lp.shape[0])):  # optimal duals, and arbitrary multipliers
        values = dual_bounds_without(lp, y, owner)
        assert values.shape == (5,)
        for o in range(5):
            reduced, own = _without(lp, owner, o)
            rest = solve_lp(reduced)
            assert rest.status == "Optimal"
            assert values[o] <= rest.value + 1e-9, (o, values[o], rest.value)
            # the same number as dual_bound on the reduced LP at the same multipliers (its rows' multipliers)
            assert values[o] == pytest.approx(dual_bound(reduced, np.asarray(y)[~own]), abs=1e-9)


def test_without_shared_rows_the_optimal_duals_give_each_rest_exactly():
    rng = np.random.default_rng(11)
    lp, owner = _random_lp(rng, owners=4, shared_rows=0)
    sol = solve_lp(lp)
    values = dual_bounds_without(lp, sol.row_dual, owner)
    for o in range(4):
        assert values[o] == pytest.approx(solve_lp(_without(lp, owner, o)[0]).value, abs=1e-7)
