"""LP-guided job orders (`edgeopt.core.lporder`) and the master LP's fractional schedule they read."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgeopt.core.colgen import JobModes, TimeIndexedRelaxation, column_generation
from edgeopt.core.lporder import LP_ORDERS, column_spans, lp_modes, lp_orders, lp_times


def _rel() -> TimeIndexedRelaxation:
    """Three jobs on one row of capacity 1 over 10 slots; job 2 has two modes."""
    jobs = [JobModes(weight=1.0, offset=0.0, latest=10, duration=[3], earliest=[0], run=[[1.0]]),
            JobModes(weight=1.0, offset=0.0, latest=10, duration=[2], earliest=[1], run=[[1.0]]),
            JobModes(weight=2.0, offset=0.0, latest=10, duration=[1, 4], earliest=[0, 0], run=[[1.0], [0.5]])]
    return TimeIndexedRelaxation(jobs, np.ones((1, 10)))


def test_spans_are_first_slot_and_one_past_the_last() -> None:
    rel = _rel()
    spans = column_spans(rel, [(0, (0, 2), 1.0), (2, (1, 3), 0.25), (2, (0, 0), 0.75)])
    assert spans == {0: [(2.0, 5.0, 1.0)], 2: [(3.0, 7.0, 0.25), (0.0, 1.0, 0.75)]}


def test_means_and_alpha_points_by_hand() -> None:
    # job 0: starts 0 (w 0.2), 4 (w 0.5), 8 (w 0.3), each ends 2 later; job 1 has no column
    spans = {0: [(4.0, 6.0, 0.5), (0.0, 2.0, 0.2), (8.0, 10.0, 0.3)]}
    assert lp_times(spans, 2, "start", None)[0] == pytest.approx(0.2 * 0 + 0.5 * 4 + 0.3 * 8)
    assert lp_times(spans, 2, "end", None)[0] == pytest.approx(4.4 + 2)
    assert lp_times(spans, 2, "mid", None)[0] == pytest.approx(4.4 + 1)
    # cumulative weights by start: 0.2 (start 0), 0.7 (start 4), 1.0 (start 8)
    assert [lp_times(spans, 2, "start", a)[0] for a in (0.0, 0.2, 0.25, 0.7, 0.75, 1.0)] == [0, 0, 4, 4, 8, 8]
    assert math.isinf(lp_times(spans, 2, "start", 0.5)[1])
    with pytest.raises(ValueError, match="point"):
        lp_times(spans, 2, "begin", None)


def test_orders_list_every_job_once_jobs_without_columns_last() -> None:
    rel = _rel()
    orders = lp_orders(rel, [(0, (0, 5), 1.0), (2, (0, 0), 1.0)])
    assert [label for label, _ in orders] == [label for label, _, _ in LP_ORDERS]
    for _, order in orders:
        assert sorted(order) == [0, 1, 2] and order[-1] == 1  # job 1 has no column
        assert order[:2] == [2, 0]  # job 2 at slot 0, job 0 at slot 5
    assert lp_orders(rel, []) == []


def test_column_generation_keeps_a_fractional_schedule_of_every_job() -> None:
    """The master LP's positive columns: per job their weights sum to 1, and their cost is the master LP's
    value (the artificial columns have left the basis at convergence)."""
    rng = np.random.default_rng(3)
    T = 30
    jobs = [JobModes(weight=float(rng.integers(1, 4)), offset=0.0, latest=T, duration=rng.integers(1, 6, 3),
                     earliest=rng.integers(0, 5, 3), run=rng.integers(1, 3, (3, 2)).astype(float)) for _ in range(8)]
    rel = TimeIndexedRelaxation(jobs, np.full((2, T), 3.0))
    cg = column_generation(rel, bucket=1)
    assert cg.converged and cg.primal
    mass = np.zeros(rel.n_jobs)
    cost = 0.0
    for j, key, w in cg.primal:
        mass[j] += w
        cost += w * rel.column(j, key)[0]
    assert mass == pytest.approx(np.ones(rel.n_jobs), abs=1e-7)
    assert cost == pytest.approx(cg.master_lp, rel=1e-7)


def test_lp_modes_take_the_heaviest_mode_summed_over_starts_ties_to_the_lower() -> None:
    primal = [(0, (1, 2), 0.3), (0, (0, 4), 0.4), (0, (1, 5), 0.3),  # mode 1: 0.6 over two starts
              (2, (1, 0), 0.5), (2, (0, 3), 0.5)]  # a tie
    assert lp_modes(primal) == {0: 1, 2: 0}
    assert lp_modes([]) == {}


def test_a_relaxation_that_says_where_its_columns_lie_is_asked_instead_of_its_rows() -> None:
    """``span(j, key)``: a column that occupies no capacity row (a job wholly on an unlimited cloud) still has a
    place in the orders."""

    class Spans:
        horizon, n_jobs = 10, 2

        def column(self, j, key):
            raise AssertionError("not read when the relaxation has span")

        def span(self, j, key):
            return key

    spans = column_spans(Spans(), [(0, (3.0, 7.0), 0.5), (0, (1.0, 2.0), 0.5), (1, (0.0, 9.0), 1.0)])
    assert spans == {0: [(3.0, 7.0, 0.5), (1.0, 2.0, 0.5)], 1: [(0.0, 9.0, 1.0)]}
