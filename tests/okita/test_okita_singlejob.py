"""The single-job problem of okita (``formulations/okita/singlejob.py``) against brute force on tiny cases:
the exact MILP equals the exhaustive optimum, the Lagrangian is below it for any multipliers, and every
plan is feasible and costs what it says."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from edgeopt.okita.instance import generate
from edgeopt.okita.schedule import JobSchedule, Schedule, job_parts, validate
from formulations.okita import singlejob as sj
from tests.reliability_helpers import PROOF_CLOCK


def _transport(job: sj.SingleJob, room: tuple[int, ...]) -> float | None:
    """Least transfer cost of sending every origin's chunks to sites with ``room`` chunks, by enumeration."""
    R = job.n_sites
    best = [math.inf]

    def origin(r: int, left: list[int], acc: float) -> None:
        if acc >= best[0]:
            return
        if r == R:
            best[0] = acc
            return
        for split in itertools.product(*(range(int(job.chunks[r]) + 1) for _ in range(R))):
            if sum(split) != job.chunks[r] or any(split[j] > left[j] for j in range(R)):
                continue
            origin(r + 1, [left[j] - split[j] for j in range(R)], acc + sum(job.dq[r, j] * split[j] for j in range(R)))

    origin(0, list(room), 0.0)
    return None if math.isinf(best[0]) else best[0]


def brute_force(job: sj.SingleJob, w: np.ndarray, P: np.ndarray) -> float:
    """The least priced cost over every plan: per slot nothing or (PS site, workers), by a DP over (chunks
    the slots can train per site, last active slot), then the transfers by enumeration."""
    R, L = job.n_sites, job.slots
    cm = job.cap_matrix()
    D = job.total_chunks
    states: dict[tuple[tuple[int, ...], int], float] = {(tuple([0] * R), -1): 0.0}
    for s in range(L):
        options: list[tuple[float, list[int]] | None] = [None]
        for p in range(R):
            if job.cap_ps[s, p] < 0:
                continue
            for ys in itertools.product(*(range(int(cm[s, p, r]) + 1) for r in range(R))):
                if sum(ys) == 0:
                    continue
                cost = P[s, p] + sum((w[s, r] + job.xq[p, r]) * ys[r] for r in range(R))
                options.append((cost, [int(job.trainable(ys[r])) for r in range(R)]))
        nxt: dict[tuple[tuple[int, ...], int], float] = {}
        for (room, last), value in states.items():
            for o in options:
                key, v = ((room, last), value) if o is None else (
                    (tuple(min(D, room[r] + o[1][r]) for r in range(R)), s), value + o[0])
                if v < nxt.get(key, math.inf):
                    nxt[key] = v
        states = nxt
    best = math.inf
    for (room, last), value in states.items():
        if last >= 0 and (tc := _transport(job, room)) is not None:
            best = min(best, value + tc + float(job.latency[last]))
    return best


def tiny_job(rng: np.random.Generator, R: int, L: int) -> sj.SingleJob:
    q = np.round(rng.uniform(0.02, 0.08, (R, R)), 3)
    q = np.triu(q, 1)
    q = q + q.T
    E = int(rng.integers(1, 3))
    rho = E * int(rng.integers(1, 3)) + (0.5 if rng.random() < 0.3 else 0.0)  # k not always an integer
    if rng.random() < 0.5:  # equal slots (a bound's pricing) or slots of their own (beside other jobs)
        cap_alone = np.repeat(rng.integers(1, 3, (1, R)), L, axis=0)
        cap_ps = np.minimum(cap_alone, np.repeat(rng.integers(-1, 3, (1, R)), L, axis=0))
    else:
        cap_alone = rng.integers(0, 3, (L, R))
        cap_ps = np.minimum(cap_alone, rng.integers(-1, 3, (L, R)))
    D = rng.integers(0, 3, R)
    D[int(rng.integers(R))] += 1
    latency = (np.cumsum(rng.integers(0, 40, L)) + 20).astype(float)
    return sj.SingleJob(0, 0, L - 1, latency, E, float(rho), D, np.ones(1), np.ones(1), float(rng.integers(30, 300)),
                        float(rng.integers(20, 60)), q, cap_alone, cap_ps)


def tiny_cases(n: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        R = int(rng.integers(1, 4))
        L = int(rng.integers(1, 5 if R < 3 else 4))
        job = tiny_job(rng, R, L)
        priced = rng.random() < 0.7
        w = rng.uniform(0, 10, (L, R)) * priced
        P = rng.uniform(0, 10, (L, R)) * priced
        yield rng, job, w, P


def solved_cases(n: int, seed: int):
    """The cases of `tiny_cases` that have a plan, each with its brute-force optimum."""
    for rng, job, w, P in tiny_cases(n, seed):
        truth = brute_force(job, w, P)
        if math.isfinite(truth):
            yield rng, job, w, P, truth


def test_exact_milp_equals_brute_force_on_tiny_cases() -> None:
    feasible = 0
    for _, job, w, P in tiny_cases(60, seed=1):
        truth = brute_force(job, w, P)
        got = sj.exact(job, w, P, time_limit=PROOF_CLOCK)  # direct highspy: no work limit reaches it
        if math.isinf(truth):
            assert got.plan is None
            continue
        feasible += 1
        assert got.optimal
        assert got.value == pytest.approx(truth, rel=1e-9, abs=1e-9)
        assert sj.priced_cost(job, got.plan, w, P) == pytest.approx(truth, rel=1e-9, abs=1e-9)
    assert feasible >= 20


def test_lagrangian_is_below_the_optimum_for_any_multipliers() -> None:
    checked = 0
    for rng, job, w, P, truth in solved_cases(80, seed=2):
        checked += 1
        for mu in (np.zeros(job.n_sites), rng.uniform(0, 60, job.n_sites), None):
            value = (sj.improve_multipliers(job, w, P, None, steps=60)[1].value if mu is None
                     else sj.lagrangian(job, w, P, mu).value)
            assert value <= truth + 1e-9
    assert checked >= 30


def test_the_improved_lagrangian_is_close_on_tiny_cases() -> None:
    """Not vacuous: on average within a few percent of the optimum."""
    gaps = [(truth - sj.improve_multipliers(job, w, P, None, steps=80)[1].value) / max(1.0, truth)
            for _, job, w, P, truth in solved_cases(80, seed=3)]
    assert np.mean(gaps) < 0.08


def test_best_multipliers_keeps_the_best_run_and_stays_below_the_optimum() -> None:
    """`best_multipliers` runs the ascent towards each target with the short patience and towards the lowest
    with the long one: its value is the largest of those runs, its mu gives that value, and it is never above
    the brute-force optimum; without a finite target it is the plain ascent."""
    checked = 0
    for _, job, w, P, truth in solved_cases(60, seed=5):
        checked += 1
        targets = [truth * 1.5 + 5.0, truth * 1.05 + 1.0]  # costs of plans: at least the optimum
        runs = [sj.improve_multipliers(job, w, P, None, target=t, steps=20, patience=p)[1].value
                for t, p in ((targets[0], sj.STALL_PATIENCE), (targets[1], sj.STALL_PATIENCE),
                             (targets[1], sj.LONG_PATIENCE))]
        mu, lag = sj.best_multipliers(job, w, P, None, targets=targets, steps=20)
        assert lag.value == max(runs)
        assert sj.lagrangian(job, w, P, mu).value == pytest.approx(lag.value, rel=1e-12, abs=1e-9)
        assert lag.value <= truth + 1e-9
        plain = sj.improve_multipliers(job, w, P, None, steps=20)[1].value
        assert sj.best_multipliers(job, w, P, None, targets=[math.inf], steps=20)[1].value == plain
    assert checked >= 20


def test_length_grid() -> None:
    assert sj.length_grid(0, 40) == []
    assert sj.length_grid(5, 40) == [1, 2, 3, 4, 5]  # every length when there are few
    grid = sj.length_grid(1123, 40)
    assert grid[0] == 1 and grid[-1] == 1123 and len(grid) <= 40
    assert grid == sorted(set(grid))


def equal_slots_job(rng: np.random.Generator, R: int, L: int) -> sj.SingleJob:
    """A `tiny_job` whose slots all have the first slot's caps (a tail repeats the last modelled slot)."""
    job = tiny_job(rng, R, L)
    job.cap_alone[:] = job.cap_alone[0]
    job.cap_ps[:] = job.cap_ps[0]
    return job


def first_two_slots(job: sj.SingleJob) -> sj.SingleJob:
    """``job`` modelled over its first two slots only; its later completions go to a ``tail``."""
    return sj.SingleJob(0, 0, 1, job.latency[:2], job.epochs, job.rho, job.chunks, job.m, job.n, job.param_mb,
                        job.chunk_mb, job.q, job.cap_alone[:2], job.cap_ps[:2])


def test_the_tail_bound_is_below_the_full_model() -> None:
    """Completions past the modelled slots are bounded by the zero-price slot problem: still below."""
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(40):
        R, L = int(rng.integers(1, 3)), 4
        job = equal_slots_job(rng, R, L)
        w, P = rng.uniform(0, 10, (L, R)), rng.uniform(0, 10, (L, R))
        truth = brute_force(job, w, P)
        if math.isinf(truth):
            continue
        cut = first_two_slots(job)
        mu = rng.uniform(0, 40, R)
        assert sj.lagrangian(cut, w[:2], P[:2], mu, tail=job.latency[2:]).value <= truth + 1e-9
        checked += 1
    assert checked >= 10


def test_plans_are_feasible_and_never_below_the_optimum() -> None:
    for _, job, w, P in tiny_cases(50, seed=5):
        truth = brute_force(job, w, P)
        plan, cost, lag, _ = sj.best_plan(job, w, P, exact_workers=True, steps=20)
        if math.isinf(truth):
            assert plan is None
            continue
        assert plan is not None and cost >= truth - 1e-9 and lag.value <= truth + 1e-9
        assert cost == pytest.approx(sj.priced_cost(job, plan, w, P))


@pytest.mark.parametrize("seed", range(4))
def test_plans_of_a_real_job_pass_the_validator_and_cost_what_they_say(seed: int) -> None:
    inst = generate("small", seed=seed, jobs=1, servers=3, horizon=6)
    job = sj.of_instance(inst, 0)
    plan, cost, _, _ = sj.best_plan(job, exact_workers=True)
    assert plan is not None
    sched = Schedule(jobs=[JobSchedule(job=0, slots=sj.plan_entries(job, plan))])
    assert validate(inst, sched) == []
    assert sum(job_parts(inst, sched.jobs[0]).values()) == pytest.approx(cost)
    exact = sj.exact(job, time_limit=PROOF_CLOCK)
    assert exact.optimal and exact.value <= cost + 1e-9
    grouped = sj.exact_grouped(job, time_limit=PROOF_CLOCK)
    sched = Schedule(jobs=[JobSchedule(job=0, slots=sj.plan_entries(job, grouped.plan))])
    assert validate(inst, sched) == []
    assert sum(job_parts(inst, sched.jobs[0]).values()) == pytest.approx(grouped.value)
    if float(job.k).is_integer():
        assert grouped.optimal and grouped.value == pytest.approx(exact.value, rel=1e-9)
    else:
        assert grouped.bound <= exact.value + 1e-9 <= grouped.value + 2e-9


def test_other_jobs_usage_lowers_the_caps() -> None:
    inst = generate("small", seed=0, jobs=2, servers=3, horizon=6)
    used = np.zeros((inst.horizon, len(inst.sites), len(inst.resources)))
    used[:, 0] = inst.capacity[0]  # site 0 full in every slot
    job = sj.of_instance(inst, 0, used=used)
    assert (job.cap_alone[:, 0] == 0).all() and (job.cap_ps[:, 0] == -1).all()


def test_the_subgradient_is_a_supergradient_also_when_the_minimum_lies_in_the_tail() -> None:
    """L(mu) is concave and chunks - bought (the purchases of its minimising completion) a supergradient:
    L(mu') <= L(mu) + g (mu' - mu) for every mu' >= 0. Checked where the minimum is a completion past the
    modelled slots (`tail`), whose purchases were once left out: the ascent then stalled (config_lp's quiet-week
    floors summed 114,162 instead of 123,907)."""
    rng = np.random.default_rng(6)
    in_tail = 0
    for _ in range(200):
        R, L = int(rng.integers(1, 4)), 5
        job = equal_slots_job(rng, R, L)
        job.latency[:] = job.latency[0] + np.arange(L)  # nearly flat: long completions are cheap
        cut = first_two_slots(job)
        zero = np.zeros((2, R))
        mu = rng.uniform(0, 80, R)
        lag = sj.lagrangian(cut, zero, zero, mu, tail=job.latency[2:], want_subgradient=True)
        if not (math.isfinite(lag.value) and lag.completion >= cut.slots):
            continue
        in_tail += 1
        g = job.chunks - lag.bought
        for _ in range(20):
            other = rng.uniform(0, 120, R)
            value = sj.lagrangian(cut, zero, zero, other, tail=job.latency[2:]).value
            assert value <= lag.value + g @ (other - mu) + 1e-7 * (1.0 + abs(lag.value))
    assert in_tail >= 20


def test_the_vectorised_packing_makes_the_reference_loops_decisions() -> None:
    """`build_plan` packs each site's chunks into its cheapest slots by a cumulative sum and assembles the
    plan from whole arrays; the slot-by-slot loops (``reference=True``) are the reference. Same plans on random
    tiny cases and on a real job's windows (ties in the prices, full sites, needs that do not fit)."""
    rng = np.random.default_rng(11)
    for _, job, w, _P in tiny_cases(60, seed=9):
        for L in range(1, job.slots + 1):
            slots = list(range(job.slots - L, job.slots))
            ps = [int(rng.integers(job.n_sites)) for _ in slots]
            assert sj.build_plan(job, slots, ps, w) == sj.build_plan(job, slots, ps, w, reference=True)
    inst = generate("small", seed=1, jobs=3, servers=4, horizon=10)
    used = np.zeros((inst.horizon, len(inst.sites), len(inst.resources)))
    used[::3, 1] = inst.capacity[1]  # site 1 full every third slot
    job = sj.of_instance(inst, 0, used=used)
    compared = 0
    for _ in range(80):
        L = int(rng.integers(1, job.slots + 1))
        start = int(rng.integers(0, job.slots - L + 1))
        slots = list(range(start, start + L))
        ps = [int(rng.integers(job.n_sites)) for _ in slots]
        w = np.round(rng.uniform(0, 3, (job.slots, job.n_sites)))  # whole prices: many ties
        fast, ref = sj.build_plan(job, slots, ps, w), sj.build_plan(job, slots, ps, w, reference=True)
        assert fast == ref
        compared += fast is not None
    assert compared >= 10
    for _ in range(300):  # the packing alone, needs above what the slots hold included
        A, R = int(rng.integers(1, 7)), int(rng.integers(1, 4))
        cap_y = rng.integers(0, 4, (A, R))
        need = rng.integers(0, 3 * int(job.trainable(np.array(4))) + 2, R)
        alpha = np.round(rng.uniform(0, 2, (A, R)))
        fast, ref = sj._pack(job, need, cap_y, alpha), sj._pack_reference(job, need, cap_y, alpha)
        assert (fast is None) == (ref is None)
        if fast is not None:
            assert all(np.array_equal(a, b) for a, b in zip(fast, ref, strict=True))
    built = 0
    for _ in range(300):  # the assembly alone, numbers that do not add up included
        A, R = int(rng.integers(1, 6)), job.n_sites
        N = rng.integers(0, 3, (A, R)) * (rng.random((A, R)) < 0.5)
        n = np.minimum(job.trainable(N), rng.integers(0, 4, (A, R)))
        if rng.random() < 0.2:  # chunks trained in a slot without workers
            n[int(rng.integers(A)), int(rng.integers(R))] += 1
        X = np.diag(n.sum(axis=0))  # each site trains its own chunks
        if rng.random() < 0.1:
            X[0, 0] += 1  # moves that do not add up
        mine = dataclasses.replace(job, chunks=n.sum(axis=0))
        sl = np.sort(rng.choice(job.slots, A, replace=False))
        psa = rng.integers(0, R, A)
        fast, ref = sj._assemble(mine, sl, psa, X, N, n), sj._assemble_reference(mine, sl, psa, X, N, n)
        assert fast == ref
        built += fast is not None
    assert built >= 100


@pytest.mark.parametrize("exact_workers", [False, True])
def test_pruning_the_windows_that_cannot_train_every_chunk_keeps_the_same_plans(exact_workers: bool) -> None:
    inst = generate("small", seed=2, jobs=3, servers=4, horizon=12)
    used = np.zeros((inst.horizon, len(inst.sites), len(inst.resources)))
    used[:6, :2] = inst.capacity[:2]  # sites 0 and 1 full in the first slots: short windows cannot train it all
    rng = np.random.default_rng(3)
    pruned_some = False
    for i in range(len(inst.jobs)):
        job = sj.of_instance(inst, i, used=used)
        w = np.round(rng.uniform(0, 2, (job.slots, job.n_sites)))
        P = rng.uniform(0, 2, (job.slots, job.n_sites))
        ends = [job.slots - 1]
        kw = {"exact_workers": exact_workers, "ends": ends}
        assert sj.candidate_plans(job, w, P, **kw) == sj.candidate_plans(job, w, P, prune=False, **kw)
        most = job.trainable(job.cap_matrix()).sum(axis=2).max(axis=1)
        pruned_some |= bool(most[0] < job.total_chunks)
    assert pruned_some


def _check_plan(job: sj.SingleJob, plan: sj.Plan) -> None:
    """The plan keeps the single-job rules on its own: one PS per slot where it fits, at most the caps of
    workers, a worker in every slot, floor(k y) chunks trained per slot and site (2b), every chunk moved once
    from its origin to where it is trained."""
    cm = job.cap_matrix()
    seen = set()
    room = {}
    for t, p, ys in plan.slots:
        s = t - job.arrival
        assert 0 <= s < job.slots and t not in seen and job.cap_ps[s, p] >= 0
        seen.add(t)
        assert sum(y for _, y in ys) >= 1
        for r, y in ys:
            assert 0 < y <= cm[s, p, r]
            room[t, r] = int(job.trainable(y))
    trained = np.zeros(job.n_sites, dtype=np.int64)
    for t, r, c in plan.trained:
        assert 0 < c <= room.get((t, r), 0)
        trained[r] += c
    moved = np.zeros((job.n_sites, job.n_sites), dtype=np.int64)
    for r, r2, c in plan.moves:
        moved[r, r2] += c
    assert np.array_equal(moved.sum(axis=1), job.chunks) and np.array_equal(moved.sum(axis=0), trained)


def test_the_grouped_model_equals_brute_force_where_k_is_an_integer_and_bounds_it_otherwise() -> None:
    """`exact_grouped` counts the slots of equal caps and prices instead of naming them: exact when k = rho / E
    is an integer (its plan costs the brute-force optimum and is proven), a lower bound with a feasible plan
    otherwise; never a plan below the optimum or a bound above it."""
    exact_k = proven = 0
    for _, job, w, P, truth in solved_cases(80, seed=5):
        got = sj.exact_grouped(job, w, P, time_limit=PROOF_CLOCK)
        assert got.bound <= truth + 1e-9 * max(1.0, truth)
        assert got.plan is not None
        assert sj.priced_cost(job, got.plan, w, P) == pytest.approx(got.value, rel=1e-12, abs=1e-9)
        assert got.value >= truth - 1e-9 * max(1.0, truth)
        _check_plan(job, got.plan)
        if float(job.k).is_integer():
            exact_k += 1
            assert got.optimal
            assert got.value == pytest.approx(truth, rel=1e-9, abs=1e-9)
        proven += got.optimal
    assert exact_k >= 15 and proven >= exact_k


def test_the_fixed_ps_model_by_site_finds_the_optimum_of_the_model_by_slot() -> None:
    """With whole chunks per worker (k = rho / E) `fixed_ps_plan` solves one integer per site
    (`fixed_ps_plan_by_site`); the model by slot, with two integers per (slot, site), is the reference. On random
    tiny jobs and on real jobs beside other jobs' usage, for random slots and PS sites and prices: both find a plan
    or neither, at the same cost (the models' objective: bandwidth plus the workers' prices; the latency and the
    PS's own price are the caller's), every plan valid; for k not a whole number `fixed_ps_plan` is the model by
    slot."""
    def model_cost(job: sj.SingleJob, plan: sj.Plan, w: np.ndarray) -> float:
        return sum(sj.bandwidth(job, plan)) + sum(float(w[t - job.arrival, r]) * y for t, _, ys in plan.slots
                                                  for r, y in ys)

    rng = np.random.default_rng(21)
    compared = fractional = 0
    jobs = [job for _, job, _, _ in tiny_cases(120, seed=13)]
    inst = generate("small", seed=3, jobs=4, servers=4, horizon=10)
    used = np.zeros((inst.horizon, len(inst.sites), len(inst.resources)))
    used[::2, 2] = inst.capacity[2]  # site 2 full every other slot
    jobs += [sj.of_instance(inst, i, used=used) for i in range(len(inst.jobs))] * 10
    for job in jobs:
        L = int(rng.integers(1, job.slots + 1))
        start = int(rng.integers(0, job.slots - L + 1))
        slots = list(range(start, start + L))
        ps = [int(rng.integers(job.n_sites)) for _ in slots]
        w = np.round(rng.uniform(0, 3, (job.slots, job.n_sites))) * (rng.random() < 0.7)  # ties included
        ref = sj.fixed_ps_plan_by_slot(job, slots, ps, w, time_limit=PROOF_CLOCK)
        got = sj.fixed_ps_plan(job, slots, ps, w, time_limit=PROOF_CLOCK)
        if not sj.whole_chunks_per_worker(job):
            fractional += 1
            assert got == ref
            continue
        assert (got is None) == (ref is None)
        if got is None:
            continue
        compared += 1
        _check_plan(job, got)
        assert {t - job.arrival for t, _, _ in got.slots} <= set(slots)
        assert all(p == ps[slots.index(t - job.arrival)] for t, p, _ in got.slots)
        assert model_cost(job, got, w) == pytest.approx(model_cost(job, ref, w), rel=1e-9, abs=1e-9)
    assert compared >= 40 and fractional >= 10
