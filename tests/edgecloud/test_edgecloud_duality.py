"""Batch problem (3)/(4) of one A_online round, its LP relaxation and dual (5), on numbers.

Weak duality chain checked on seeded rounds (windows are half-open slot ranges):

    OPT of ILP (3) = ILP (4)  <=  LP (4) by column generation  =  dual (5) at the CG prices
                                  LP (4)  <=  dual (5) at ANY prices lambda, mu >= 0

with eta from eq. (6) (eta_j = max(0, 1 - cheapest schedule's cost)), which
is what makes (5a) hold for every schedule l. The pricing oracle used for
the certificate (`price_exact`) is itself checked against brute force.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from edgeopt.core import exponential_price, price_base
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud.instance import duration_slots
from edgeopt.edgecloud.online import Prices, max_schedule
from edgeopt.edgecloud.schedule import JobRun, Schedule
from edgeopt.edgecloud.state import make_ledger
from formulations.edgecloud.batch import (
    BatchProblem,
    column_cost,
    column_generation,
    dual_value,
    paper_oracle,
    price_exact,
    solve_batch_ilp,
)
from tests.reliability_helpers import prove

# (seed, jobs, edge servers, window, busy): windows are A_online rounds [tau_i, tau_{i+1}) and wider ones;
# ``busy``: earlier rounds left part of the capacity used. The congested cases were picked (by running
# the models) because not every job fits (LP < |J_i|) and three have an integrality gap (ILP < LP).
ROUNDS = [
    (0, 6, 2, (4, 8), False),
    (4, 8, 2, (4, 16), False),
    (1, 12, 1, (4, 8), True),
    (5, 12, 1, (4, 8), True),
    (3, 14, 2, (4, 8), True),
    (0, 14, 2, (4, 8), True),
    (2, 14, 2, (4, 8), True),
]


def _problem(seed: int, jobs: int, servers: int, window: tuple[int, int], *, busy: bool = False) -> BatchProblem:
    inst = generate("small", seed=seed, jobs=jobs, servers=servers)
    waiting = [j.id for j in inst.jobs if j.arrival < window[0]]
    pb = BatchProblem.fresh(inst, waiting, window)
    if busy:  # earlier rounds left some capacity used (f_su(t), g_sv(t) > 0)
        rng = np.random.default_rng(seed)
        pb.free_workers = np.maximum(0, pb.free_workers - rng.integers(0, 2, pb.free_workers.shape))
        pb.free_ps = np.maximum(0, pb.free_ps - rng.integers(0, 2, pb.free_ps.shape))
    return pb


@functools.cache
def _ilp(case: tuple) -> tuple[str, float, tuple]:
    """Optimum of (3) for a round (cached: two tests use it), proved by work (`prove`), not by the clock."""
    *args, busy = case
    outcome, runs = prove(solve_batch_ilp, _problem(*args, busy=busy))
    return str(outcome.status), float(outcome.objective), tuple(runs)


def _single_job_schedule(pb: BatchProblem, run) -> Schedule:
    others = [j.id for j in pb.instance.jobs if j.id != run.job]
    return Schedule(jobs=[JobRun(job=run.job, start=run.start, end=run.end, workers=run.workers,
                                 ps_server=run.ps_server, colocated=run.colocated)], rejected=others)


def _fits(pb: BatchProblem, runs) -> bool:
    used_w = np.zeros_like(pb.free_workers)
    used_p = np.zeros_like(pb.free_ps)
    for r in runs:
        job = pb.instance.jobs[r.job]
        for s, n in r.workers.items():
            used_w[s, job.worker_type, r.start:r.end] += n
        used_p[r.ps_server, job.ps_type, r.start:r.end] += 1
    return bool((used_w <= pb.free_workers + 1e-9).all() and (used_p <= pb.free_ps + 1e-9).all())


GAPS: dict[tuple, tuple[float, float, int]] = {}


@pytest.mark.parametrize("case", ROUNDS)
def test_weak_and_strong_duality(case) -> None:
    *args, busy = case
    pb = _problem(*args, busy=busy)
    status, ilp, runs = _ilp(case)
    assert status == "optimal"
    # The ILP's runs are real schedules: in the window, within the free capacity, valid for (2).
    assert len(runs) == round(ilp)
    assert _fits(pb, runs)
    for r in runs:
        assert pb.window[0] <= r.start and r.end <= pb.window[1]
        assert FAMILY.validate(pb.instance, _single_job_schedule(pb, r)) == []

    cg = column_generation(pb)
    assert cg.certified
    GAPS[case] = (ilp, cg.lp_value, len(pb.jobs))
    assert ilp <= cg.lp_value + 1e-7
    assert cg.lp_value <= len(pb.jobs) + 1e-9
    # Strong duality at the LP optimum: dual (5) at the master's prices equals the LP value.
    assert cg.dual_value == pytest.approx(cg.lp_value, abs=1e-6)
    # Every column is a feasible schedule l in L_j (alone within the free capacity: 9a, 9b).
    for col, chi in cg.columns:
        assert 0 <= chi <= 1 + 1e-9
        assert _fits(pb, [col])
        assert FAMILY.validate(pb.instance, _single_job_schedule(pb, col)) == []

    # Weak duality at arbitrary prices, and at the paper's exponential prices (7)-(8).
    rng = np.random.default_rng(case[0])
    for scale in (0.01, 0.1, 1.0):
        lam = rng.uniform(0, scale, pb.free_workers.shape)
        mu = rng.uniform(0, scale, pb.free_ps.shape)
        value, eta = dual_value(pb, lam, mu)
        assert value >= cg.lp_value - 1e-9
        assert all(e >= 0 for e in eta.values())
    inst = pb.instance
    W, P = inst.W().astype(float), inst.P().astype(float)
    used_w = W[:, :, None] - pb.free_workers
    used_p = P[:, :, None] - pb.free_ps
    theta1 = price_base(inst.horizon, len(inst.servers), inst.n_worker_types, 1.0)
    theta2 = price_base(inst.horizon, len(inst.servers), inst.n_ps_types, 1.0)
    lam = exponential_price(used_w, W[:, :, None], theta1)
    mu = exponential_price(used_p, P[:, :, None], theta2)
    lam = np.where(np.isfinite(lam), lam, 1e6)
    mu = np.where(np.isfinite(mu), mu, 1e6)
    assert dual_value(pb, lam, mu)[0] >= cg.lp_value - 1e-9


def test_rounds_are_not_trivial() -> None:
    """The chain above is not vacuous: some rounds cannot take every job, some have ILP < LP."""
    for case in ROUNDS:
        if case not in GAPS:
            test_weak_and_strong_duality(case)
    assert sum(lp < n - 0.5 for _, lp, n in GAPS.values()) >= 3
    assert sum(ilp < lp - 0.1 for ilp, lp, _ in GAPS.values()) >= 2


@pytest.mark.parametrize("case", ROUNDS)
def test_paper_oracle_and_maxsche_against_the_bounds(case) -> None:
    """COST_C/COST_D (looped as in Alg. 2) as the pricing oracle reach the LP optimum of (4);
    A_maxsche's batch is a feasible packing of (3), so it takes at most the ILP optimum, and dual (5)
    at the prices (7)-(8) it ends with bounds the LP (the paper's primal-dual argument, on numbers)."""
    *args, busy = case
    pb = _problem(*args, busy=busy)
    cg = column_generation(pb, oracle=paper_oracle)
    assert cg.certified
    exact = column_generation(pb)
    assert cg.oracle_value == pytest.approx(exact.lp_value, abs=1e-6)
    assert cg.lp_value == pytest.approx(exact.lp_value, abs=1e-6)

    inst = pb.instance
    U = inst.n_worker_types
    ledger = make_ledger(inst)
    ledger.usage[:, :U, :] = ledger.capacity[:, :U, None] - pb.free_workers
    ledger.usage[:, U:, :] = ledger.capacity[:, U:, None] - pb.free_ps
    prices = Prices.for_instance(inst)
    runs = max_schedule(inst, pb.jobs, pb.window, ledger, prices)
    assert _fits(pb, list(runs.values()))
    for run in runs.values():
        assert pb.window[0] <= run.start and run.end <= pb.window[1]
        assert FAMILY.validate(inst, _single_job_schedule(pb, run)) == []
    assert len(runs) <= _ilp(case)[1] + 1e-9
    lam = np.zeros_like(pb.free_workers)
    mu = np.zeros_like(pb.free_ps)
    for j in pb.jobs:
        job = inst.jobs[j]
        pw, pp, _, _ = prices.arrays(inst, ledger, job, 0, inst.horizon)
        lam[:, job.worker_type, :] = np.where(np.isfinite(pw), pw, 1e6)
        mu[:, job.ps_type, :] = np.where(np.isfinite(pp), pp, 1e6)
    assert dual_value(pb, lam, mu)[0] >= exact.lp_value - 1e-9


def _brute_force_min_cost(pb: BatchProblem, j: int, lam: np.ndarray, mu: np.ndarray) -> float:
    """Cheapest valid schedule of job j in the window by enumerating every placement (tiny cases only)."""
    inst = pb.instance
    job = inst.jobs[j]
    S = len(inst.servers)
    lo, hi = pb.window
    best = np.inf
    caps = [range(min(job.chunks, int(pb.free_workers[s, job.worker_type].max())) + 1) for s in range(S)]
    for y in itertools.product(*caps):
        w = sum(y)
        if not 1 <= w <= job.chunks:
            continue
        for p in range(S):
            coloc = all(s == p for s in range(S) if y[s] > 0)
            d = duration_slots(inst, job, w, coloc)
            for h in range(lo, hi - d + 1):
                run = JobRun(job=j, start=h, end=h + d, workers={s: n for s, n in enumerate(y) if n},
                             ps_server=p, colocated=coloc)
                if not _fits(pb, [run]):
                    continue
                if FAMILY.validate(inst, _single_job_schedule(pb, run)):
                    continue
                cost = sum(n * lam[s, job.worker_type, h:h + d].sum() for s, n in enumerate(y))
                best = min(best, cost + mu[p, job.ps_type, h:h + d].sum())
    return best


@pytest.mark.parametrize("seed", range(4))
def test_exact_pricing_matches_brute_force(seed: int) -> None:
    pb = _problem(seed, 4, 2, (3, 11), busy=seed % 2 == 1)
    rng = np.random.default_rng(100 + seed)
    lam = rng.uniform(0, 1, pb.free_workers.shape)
    mu = rng.uniform(0, 1, pb.free_ps.shape)
    for j in range(len(pb.instance.jobs)):
        col = price_exact(pb, j, lam, mu)
        brute = _brute_force_min_cost(pb, j, lam, mu)
        if col is None:
            assert brute == np.inf
            continue
        assert col.cost == pytest.approx(brute, rel=1e-9, abs=1e-12)
        assert col.cost == pytest.approx(column_cost(pb, col, lam, mu), rel=1e-9, abs=1e-12)
        assert FAMILY.validate(pb.instance, _single_job_schedule(pb, col)) == []
