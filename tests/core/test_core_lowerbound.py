"""The family-free bound machinery: weak-duality checks of LP duals and of Lagrangian prices."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from edgeopt.core import ModelError
from edgeopt.core.colgen import JobModes, TimeIndexedRelaxation, column_generation, lagrangian, undominated
from edgeopt.core.lpbound import LinearProgram, dual_bound, round_up, solve_lp
from tests.reliability_helpers import PROOF_CLOCK


def _random_lp(rng: np.random.Generator, m: int = 6, n: int = 9) -> LinearProgram:
    """A feasible, bounded LP: covering rows A x >= b with A >= 0, some <= rows, boxed columns."""
    A = rng.integers(0, 4, size=(m, n)).astype(float)
    A[:, 0] = 1.0
    x0 = rng.uniform(0.5, 2.0, n)
    lo = np.where(np.arange(m) % 2 == 0, A @ x0 * 0.5, -np.inf)
    hi = np.where(np.arange(m) % 2 == 1, A @ x0 * 1.5, np.inf)
    return LinearProgram(rng.uniform(0.1, 3.0, n), sp.csr_matrix(A), lo, hi, np.zeros(n), np.full(n, 10.0))


@pytest.mark.parametrize("seed", range(5))
def test_dual_bound_recomputes_the_lp_optimum_and_never_exceeds_it(seed: int) -> None:
    rng = np.random.default_rng(seed)
    lp = _random_lp(rng)
    sol = solve_lp(lp, time_limit=PROOF_CLOCK)  # an LP (no work limit reaches it): the clock never stops it
    assert sol.status == "Optimal" and sol.value is not None
    lb = dual_bound(lp, sol.row_dual)
    assert lb <= sol.value + 1e-9
    assert lb == pytest.approx(sol.value, rel=1e-6)
    for _ in range(20):  # any multipliers, even wrong-signed or wild ones, give a valid number
        y = rng.normal(0, 3, lp.shape[0])
        assert dual_bound(lp, y) <= sol.value + 1e-9


def test_dual_bound_refuses_multipliers_that_certify_nothing() -> None:
    lp = LinearProgram(np.array([1.0]), sp.csr_matrix(np.array([[1.0]])), np.array([1.0]), np.array([np.inf]),
                       np.array([0.0]), np.array([np.inf]))
    assert dual_bound(lp, [1.0]) == pytest.approx(1.0)
    with pytest.raises(ModelError, match="certify no finite bound"):
        dual_bound(lp, [2.0])  # reduced cost -1 on a column unbounded above


def test_round_up_is_the_least_multiple_above() -> None:
    assert round_up(7.2, 1.0) == 8.0
    assert round_up(8.0, 1.0) == 8.0
    assert round_up(9.5, 3.0) == 12.0
    assert round_up(1.5, None) == 1.5


def _tiny_relaxation(rng: np.random.Generator, J: int = 3, T: int = 6, R: int = 2) -> TimeIndexedRelaxation:
    jobs = []
    for _ in range(J):
        K = int(rng.integers(1, 3))
        jobs.append(JobModes(weight=float(rng.integers(1, 4)), offset=-float(rng.integers(0, 2)), latest=T,
                             duration=rng.integers(1, 3, K), earliest=rng.integers(0, 2, K),
                             run=rng.integers(0, 3, (K, R)).astype(float),
                             at_start=rng.integers(0, 2, (K, R)).astype(float)))
    return TimeIndexedRelaxation(jobs, np.full((R, T), 3.0))


def _brute_force(rel: TimeIndexedRelaxation) -> float:
    """Least cost of an integer choice of one column per job within capacity (inf when none)."""
    T = rel.horizon
    cols = []
    for jm in rel.jobs:
        opts = []
        for k in range(jm.n_modes):
            d = int(jm.duration[k])
            for t in range(int(jm.earliest[k]), jm.latest - d + 1):
                use = np.zeros((rel.n_rows, T))
                use[:, t:t + d] += jm.run[k][:, None]
                use[:, t] += jm.at_start[k]
                opts.append((jm.weight * (t + d) + jm.offset + jm.extra[k], use))
        cols.append(opts)
    best = np.inf
    for combo in itertools.product(*cols):
        if (sum(u for _, u in combo) <= rel.capacity + 1e-9).all():
            best = min(best, sum(c for c, _ in combo))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_lagrangian_is_below_the_integer_optimum_for_any_prices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rel = _tiny_relaxation(rng)
    opt = _brute_force(rel)
    cg = column_generation(rel)
    assert cg.value <= opt + 1e-9
    assert lagrangian(rel, cg.prices).value == pytest.approx(cg.value, rel=1e-12, abs=1e-12)
    assert cg.value >= lagrangian(rel, np.zeros((rel.n_rows, rel.horizon))).value - 1e-9
    for _ in range(10):
        pi = rng.exponential(1.0, (rel.n_rows, rel.horizon)) * rng.integers(0, 2, (rel.n_rows, rel.horizon))
        assert lagrangian(rel, pi).value <= opt + 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_breakpoint_pricing_equals_full_enumeration_on_bucket_constant_prices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    T, B = 40, 8
    jobs = [JobModes(weight=float(rng.integers(1, 4)), offset=0.0, latest=T, duration=rng.integers(1, 15, 4),
                     earliest=rng.integers(0, 10, 4), run=rng.integers(0, 3, (4, 3)).astype(float),
                     at_start=rng.integers(0, 2, (4, 3)).astype(float)) for _ in range(5)]
    rel = TimeIndexedRelaxation(jobs, np.full((3, T), 4.0))
    starts = np.arange(0, T, B)
    pi = np.repeat(rng.exponential(1.0, (3, starts.size)), B, axis=1)
    full, fast = lagrangian(rel, pi), lagrangian(rel, pi, starts)
    assert fast.value == pytest.approx(full.value, rel=1e-12)
    assert [v for _, v in fast.best] == pytest.approx([v for _, v in full.best], rel=1e-12)


def test_undominated_drops_worse_modes_and_duplicates() -> None:
    keep = undominated(np.array([3, 2, 3, 2]), np.array([[1.0], [2.0], [1.0], [1.0]]))
    assert keep.tolist() == [3]


@pytest.mark.parametrize("seed", range(3))
def test_bucketed_column_generation_gives_valid_prices_evaluated_alike_both_ways(seed: int) -> None:
    from edgeopt.core.lowerbound import _evaluate

    rng = np.random.default_rng(seed)
    rel = _tiny_relaxation(rng, J=3, T=8)
    opt = _brute_force(rel)
    cg = column_generation(rel, bucket=3)
    assert cg.bucket == 3 and cg.value <= opt + 1e-9
    full = _evaluate(rel, cg.prices)
    assert _evaluate(rel, cg.prices, 3) == pytest.approx(full, rel=1e-12, abs=1e-12)
    noisy = cg.prices + rng.uniform(0, 0.1, cg.prices.shape)  # not bucket-constant: falls back to enumeration
    assert _evaluate(rel, noisy, 3) == pytest.approx(_evaluate(rel, noisy), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_finer_buckets_after_convergence_keep_the_best_certified_level(seed: int) -> None:
    """Long horizon (T > 512: default buckets of 3 slots): with a deadline, the converged level is refined
    (buckets of 1), started from its columns; the result is the best level, its prices are constant on that
    level's buckets, and the solver-free L at them is the value stated. Without a deadline, or with an
    explicit bucket, nothing is refined. (The deadline is an hour: the levels take milliseconds.)"""
    from edgeopt.core.limits import Deadline
    from edgeopt.core.lowerbound import _evaluate

    rng = np.random.default_rng(seed)
    T = 1100
    jobs = [JobModes(weight=float(rng.integers(1, 4)), offset=0.0, latest=T, duration=rng.integers(50, 400, 3),
                     earliest=rng.integers(0, 300, 3), run=rng.integers(1, 3, (3, 2)).astype(float),
                     at_start=np.zeros((3, 2))) for _ in range(6)]
    rel = TimeIndexedRelaxation(jobs, np.full((2, T), 3.0))
    plain = column_generation(rel)
    assert plain.bucket == 3 and not plain.levels
    assert not column_generation(rel, bucket=3, deadline=Deadline(PROOF_CLOCK)).levels
    fine = column_generation(rel, bucket=1)
    refined = column_generation(rel, deadline=Deadline(PROOF_CLOCK))
    assert [b for b, _, _ in refined.levels] == [3, 1]
    assert refined.levels[0][1] == pytest.approx(plain.value, rel=1e-9)
    assert refined.value == max(v for _, v, _ in refined.levels) >= plain.value
    assert refined.value == pytest.approx(fine.value, rel=1e-3)  # both converged on the same full LP
    assert refined.value <= fine.master_lp + 1e-6 * abs(fine.master_lp)
    assert lagrangian(rel, refined.prices).value == pytest.approx(refined.value, rel=1e-12)
    assert _evaluate(rel, refined.prices, refined.bucket) == pytest.approx(refined.value, rel=1e-12)


def test_highs_time_limit_counts_from_the_run_time_so_far() -> None:
    """HiGHS's ``time_limit`` bounds a ``Highs`` object's cumulative run time: the limit set for a re-solve is
    the run time so far plus the seconds given (a master LP re-solved after every pricing round keeps the
    caller's time instead of what is left of it after all earlier solves)."""
    import highspy

    from edgeopt.core.lpbound import highs_time_limit

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVars(2, np.zeros(2), np.ones(2))
    h.changeColsCost(2, np.arange(2, dtype=np.int32), np.array([-1.0, -2.0]))
    h.addRow(-highspy.kHighsInf, 1.0, 2, np.arange(2, dtype=np.int32), np.ones(2))
    for _ in range(3):
        highs_time_limit(h, 5.0)
        assert h.getOptionValue("time_limit")[1] == pytest.approx(h.getRunTime() + 5.0)
        h.run()
        assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    highs_time_limit(h, -1.0)  # never below a small positive allowance
    assert h.getOptionValue("time_limit")[1] == pytest.approx(h.getRunTime() + 0.01)
