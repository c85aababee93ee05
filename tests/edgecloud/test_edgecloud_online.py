"""A_online and its pieces: COST_C / COST_D against brute force, A_maxsche's admission rule,
the vectorised search against the scalar cost functions, the geometric rounds, validity."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from edgeopt.core import Status, run_online
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud.instance import duration_slots
from edgeopt.edgecloud.online import (
    OnlineScheduler,
    Prices,
    best_option,
    cost_colocated,
    cost_distributed,
    max_schedule,
    online,
)
from edgeopt.edgecloud.state import make_ledger, reserve_run


@pytest.mark.parametrize("seed", range(40))
def test_online_valid_on_small(seed):
    inst = generate("small", seed=seed)
    res = online(inst)
    assert res.status == Status.FEASIBLE
    assert FAMILY.check_result(inst, res) == []


@pytest.mark.parametrize("seed", range(2))
def test_online_valid_on_paper_preset(seed):
    inst = generate("paper", seed=seed, jobs=150)
    res = online(inst)
    assert res.status == Status.FEASIBLE, res.extra.get("rejected")
    assert FAMILY.check_result(inst, res) == []
    assert res.runtime_s > 0


# ---- COST_C / COST_D against brute force ---------------------------------------------------
def _random_state(seed, S=3, T=12, cap_w=3, cap_p=2):
    rng = np.random.default_rng(seed)
    price_w = rng.uniform(0, 1, (S, T)).round(3)
    price_p = rng.uniform(0, 1, (S, T)).round(3)
    free_w = rng.integers(0, cap_w + 1, (S, T)).astype(float)
    free_p = rng.integers(0, cap_p + 1, (S, T)).astype(float)
    return price_w, price_p, free_w, free_p


def _brute(inst, job, w, start, pw, pp, fw, fp, colocated):
    """Enumerate every placement of w workers over S servers and every PS server."""
    S = pw.shape[0]
    d = duration_slots(inst, job, w, colocated)
    end = start + d
    if end > pw.shape[1]:
        return math.inf
    rel = inst.release(job.id)
    best = math.inf
    for counts in itertools.product(range(w + 1), repeat=S):
        if sum(counts) != w:
            continue
        used = [s for s in range(S) if counts[s] > 0]
        for ps in range(S):
            together = used == [ps]
            if together != colocated:
                continue
            if any(rel[s] > start for s in used + [ps]):
                continue
            if any(fw[s, start:end].min() < counts[s] for s in used) or fp[ps, start:end].min() < 1:
                continue
            c = sum(counts[s] * pw[s, start:end].sum() for s in used) + pp[ps, start:end].sum()
            best = min(best, c)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_cost_functions_are_exact_minimisers(seed):
    inst = generate("small", seed=seed, horizon=12)
    pw, pp, fw, fp = _random_state(seed)
    checked = 0
    for job in inst.jobs:
        for w in range(1, job.chunks + 1):
            for start in range(8):
                for fn, coloc in ((cost_colocated, True), (cost_distributed, False)):
                    cost, pl = fn(inst, job, workers=w, start=start, price_w=pw, price_p=pp, free_w=fw, free_p=fp)
                    ref = _brute(inst, job, w, start, pw, pp, fw, fp, coloc)
                    assert math.isclose(cost, ref, rel_tol=1e-9) or cost == ref == math.inf, (job.id, w, start)
                    if pl is not None:
                        checked += 1
                        assert pl.colocated == coloc and sum(pl.workers.values()) == w
                        assert pl.end - pl.start == duration_slots(inst, job, w, coloc)
                        assert (set(pl.workers) == {pl.ps_server}) == coloc
    assert checked > 0


def test_cost_functions_respect_t0_offset():
    inst = generate("small", seed=2)
    job = inst.jobs[0]
    pw, pp, fw, fp = _random_state(7, T=24)
    full = cost_distributed(inst, job, workers=1, start=6, price_w=pw, price_p=pp, free_w=fw, free_p=fp)
    part = cost_distributed(inst, job, workers=1, start=6, price_w=pw[:, 4:], price_p=pp[:, 4:],
                            free_w=fw[:, 4:], free_p=fp[:, 4:], t0=4)
    assert full[0] == part[0]


# ---- the vectorised search -----------------------------------------------------------------
def _filled_ledger(inst, seed, n=3):
    """A ledger with some jobs of the instance already reserved by A_online's own rule."""
    ledger = make_ledger(inst)
    prices = Prices.for_instance(inst)
    max_schedule(inst, [j.id for j in inst.jobs[:n]], (2, inst.horizon), ledger, prices)
    return ledger, prices


def _event_starts(inst, job, ledger, lo, hi):
    """Independent re-derivation of the starts A_maxsche evaluates (see online.py's docstring)."""
    U = inst.n_worker_types
    starts = {lo}
    starts |= {int(r) for r in inst.release(job.id) if lo < r < hi}
    for r in (job.worker_type, U + job.ps_type):
        for s in range(len(inst.servers)):
            if ledger.capacity[s, r] == 0:
                continue
            for t in range(lo + 1, hi):
                if ledger.usage[s, r, t] < ledger.usage[s, r, t - 1]:
                    starts.add(t)
    return sorted(starts)


@pytest.mark.parametrize("seed", range(15))
def test_best_option_is_the_cheapest_over_its_starts(seed):
    inst = generate("small", seed=seed, jobs=7)
    ledger, prices = _filled_ledger(inst, seed)
    lo, hi = 4, inst.horizon
    for job in inst.jobs[3:]:
        opt = best_option(inst, job, ledger, prices, lo, hi)
        pw, pp, fw, fp = prices.arrays(inst, ledger, job, 0, hi)
        costs = []
        for start in _event_starts(inst, job, ledger, lo, hi):
            for w in range(1, job.chunks + 1):
                for fn, coloc in ((cost_colocated, True), (cost_distributed, False)):
                    c, pl = fn(inst, job, workers=w, start=start, price_w=pw, price_p=pp, free_w=fw, free_p=fp)
                    if pl is not None:
                        costs.append((c, pl.end, w, not coloc))
        if not costs:
            assert opt is None
            continue
        ref = min(costs)
        assert opt is not None
        assert math.isclose(opt.cost, ref[0], rel_tol=1e-9, abs_tol=1e-12)
        # ties resolved by earliest completion, then fewer workers, then colocated
        ties = [c for c in costs if math.isclose(c[0], ref[0], rel_tol=1e-9, abs_tol=1e-12)]
        assert (opt.start + opt.duration, opt.workers, not opt.colocated) == min(c[1:] for c in ties)


@pytest.mark.parametrize("seed", range(10))
def test_on_idle_servers_online_takes_the_earliest_completion(seed):
    """All prices are 0 on an empty ledger, so A_maxsche's first job gets the earliest completion
    possible in the window over every start, worker count and placement (brute force)."""
    inst = generate("small", seed=seed)
    ledger, prices = make_ledger(inst), Prices.for_instance(inst)
    job = inst.jobs[0]
    lo, hi = 2, inst.horizon
    opt = best_option(inst, job, ledger, prices, lo, hi)
    pw, pp, fw, fp = prices.arrays(inst, ledger, job, 0, hi)
    ends = []
    for start in range(lo, hi):
        for w in range(1, job.chunks + 1):
            for coloc in (True, False):
                if _brute(inst, job, w, start, pw, pp, fw, fp, coloc) < math.inf:
                    ends.append(start + duration_slots(inst, job, w, coloc))
    assert opt.cost == 0.0
    assert opt.start + opt.duration == min(ends)


def test_max_schedule_admits_only_positive_utility():
    """A job is accepted iff its cheapest option costs < 1 (eta_j = 1 - cost > 0, eq. (6))."""
    inst = generate("small", seed=4, jobs=8)
    ledger, prices = make_ledger(inst), Prices.for_instance(inst)
    window = (8, 16)
    accepted = max_schedule(inst, [j.id for j in inst.jobs], window, ledger, prices)
    fresh = make_ledger(inst)
    for j in sorted(accepted):  # replay in the same order: each accepted job's cost was < 1
        job = inst.jobs[j]
        opt = best_option(inst, job, fresh, prices, *window)
        assert opt is not None and opt.cost < 1
        reserve_run(fresh, inst, job, accepted[j])
        run = accepted[j]
        assert window[0] <= run.start and run.end <= window[1]
    # the waiting ones: with everything accepted reserved, nothing cheap is left for them
    for job in inst.jobs:
        if job.id not in accepted:
            opt = best_option(inst, job, ledger, prices, *window)
            assert opt is None or opt.cost >= 1


def test_max_schedule_defers_when_prices_are_high():
    """Every resource with capacity >= 2 has all but one unit taken (price theta**(1/2)-1 >> 1), the
    others are full: a job still fits somewhere but costs >= 1, so A_maxsche defers it (eta <= 0)."""
    inst = generate("small", seed=1)
    prices = Prices.for_instance(inst)
    busy = make_ledger(inst)
    cap = busy.capacity[:, :, None]
    busy.usage[:] = np.where(cap >= 2, cap - 1, cap)
    priced_out = 0
    for job in inst.jobs:
        opt = best_option(inst, job, busy, prices, 8, 24)
        if opt is not None:
            assert opt.cost >= 1
            priced_out += 1
        assert max_schedule(inst, [job.id], (8, 24), busy, prices) == {}
        # on an idle ledger the same job is taken at cost 0
        assert job.id in max_schedule(inst, [job.id], (8, 24), make_ledger(inst), prices)
    assert priced_out > 0


@pytest.mark.parametrize("seed", range(10))
def test_online_runs_each_job_inside_its_round(seed):
    """Alg. 1: a job decided at tau_i runs inside [tau_i, tau_{i+1}) and tau_i >= its arrival."""
    inst = generate("small", seed=seed, jobs=6)
    policy = OnlineScheduler(inst, Prices.for_instance(inst))
    run_online(policy, inst.jobs, inst.horizon)
    assert len(policy.decisions) == len(policy.runs)
    for d in policy.decisions:
        tau = d.slot
        assert tau & (tau - 1) == 0  # a power of two
        assert inst.jobs[d.job].arrival <= tau <= d.payload.start
        assert d.payload.end <= min(2 * tau, inst.horizon)


def test_higher_price_bound_changes_admission():
    """F enters theta: a huge F makes shared resources dearer, so fewer jobs share a round."""
    inst = generate("small", seed=3, jobs=8)
    low, high = online(inst, f1=1e-6, f2=1e-6), online(inst, f1=1e6, f2=1e6)
    for r in (low, high):
        assert FAMILY.check_result(inst, r) == []
    assert Prices.for_instance(inst, 1e6, 1e6).theta1 > Prices.for_instance(inst).theta1


def test_reserve_run_refuses_to_overbook():
    from edgeopt.edgecloud.schedule import JobRun

    inst = generate("small", seed=0)
    ledger = make_ledger(inst)
    job = inst.jobs[0]
    cap = int(ledger.capacity[0, job.worker_type])
    run = JobRun(job=0, start=5, end=7, workers={0: cap}, ps_server=0, colocated=True)
    reserve_run(ledger, inst, job, run)
    with pytest.raises(RuntimeError, match="exceeds capacity"):
        reserve_run(ledger, inst, job, run.model_copy(update={"workers": {0: 1}}))
