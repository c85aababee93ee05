"""Okita and the baselines: valid schedules, declared parameters, online information discipline,
and the subroutines (PA of Alg. 2, DTA of Alg. 3, DRF's progressive filling) checked against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from edgeopt import api
from edgeopt.core import Status
from edgeopt.okita import FAMILY, generate
from edgeopt.okita.baselines import drf_counts, fixed_run
from edgeopt.okita.placement import JobArrays, dta, metric_q, pa_fill, source_orders, workload

ALGOS = ["online", "fifo", "drf", "oasis", "oasis_latency"]


def test_registry_lists_the_algorithms_with_declared_parameters():
    algos = api.algorithms("okita")
    assert set(ALGOS) <= set(algos)
    assert algos["online"].kind == "online"
    params = {p.name: p for p in algos["online"].params}
    assert {"alpha1", "alpha2", "beta1", "beta2", "beta3", "delay_rule"} <= set(params)
    assert all(params[n].default == 1.0 and params[n].help for n in ("alpha1", "alpha2", "beta1", "beta2", "beta3"))
    assert params["delay_rule"].choices == ("listing", "tentative")


@pytest.mark.parametrize("name", ALGOS)
@pytest.mark.parametrize("preset", ["small", "testbed"])
def test_schedules_validate_and_objective_parts_are_reported(name, preset):
    for seed in range(3):
        inst = generate(preset, seed=seed)
        res = api.run(name, inst, seed=seed)
        assert not FAMILY.check_result(inst, res)
        ex = res.extra
        assert ex["total"] == pytest.approx(res.objective)
        assert ex["bandwidth"] == pytest.approx(ex["transfer"] + ex["exchange"])
        if res.status == Status.PARTIAL:
            assert ex["rejected_count"] == len(ex["rejected"]) > 0


def test_parameters_change_okita_and_stay_valid():
    inst = generate("testbed", seed=1)
    base = api.run("online", inst)
    for params in ({"alpha1": 2.0, "alpha2": 0.5}, {"beta2": 0.0}, {"delay_rule": "tentative"},
                   {"piecewise_priority": "literal"}, {"piecewise_priority": "off"}):
        res = api.run("online", inst, **params)
        assert not FAMILY.check_result(inst, res), params
    assert api.run("online", inst, beta2=0.0, beta3=5.0).schedule != base.schedule


def test_online_decisions_before_an_arrival_ignore_that_job():
    """Changing the data of the last-arriving job changes nothing decided before its arrival."""
    inst = generate("testbed", seed=2)
    last = max(inst.jobs, key=lambda j: j.arrival)
    data = inst.model_dump(mode="json")
    data["jobs"][last.id]["data_chunks"] = [c + 3 for c in last.data_chunks]
    other = FAMILY.parse_instance(data)
    def before(sched):
        return [(js["job"], e) for js in sched["jobs"] for e in js["slots"] if e["slot"] < last.arrival]

    for name in ("online", "oasis_latency"):
        a, b = api.run(name, inst), api.run(name, other)
        assert before(a.schedule) == before(b.schedule), name
    # oasis: Bao et al. take the price bounds U, L as known in advance (they depend on every job); with the
    # bounds fixed, nothing decided before the arrival depends on the job.
    from edgeopt.okita.oasis import OasisPrimalDual

    runs = []
    for x in (inst, other):
        sch = OasisPrimalDual(x)
        ref = OasisPrimalDual(inst)
        sch.Uk, sch.Lk = ref.Uk, ref.Lk
        runs.append(sch.run().model_dump(mode="json"))
    assert before(runs[0]) == before(runs[1])


def test_pa_fill_matches_a_brute_force_of_alg_2():
    inst = generate("small", seed=3, servers=4)
    C, q = inst.capacity, inst.q
    ja = JobArrays.of(inst.jobs[0])
    U = C * np.array([1.0, 0.5, 1.0, 0.75])[:, None]
    Q = metric_q(U, C, q, ja.D, ja.D, ja.pi, (1.0, 1.0, 1.0))
    fill = pa_fill(ja, U, Q, q, 50)
    order = np.argsort(-Q, kind="stable")
    for N in range(1, 8):
        costs = fill.costs(np.array([N]))[0]
        for ps in range(4):
            y = np.zeros(4, dtype=int)
            avail = [int(min(np.floor((U[r, k] - (ja.n[k] if r == ps else 0)) / ja.m[k]) for k in range(4)
                             if ja.m[k] > 0)) for r in range(4)]
            fits_ps = bool(np.all(U[ps] >= ja.n))
            left = N
            for r in order:
                y[r] = max(0, min(avail[r], left))
                left -= y[r]
            expect = ja.pi * float(q[:, ps] @ y) if left == 0 and fits_ps else np.inf
            assert costs[ps] == pytest.approx(expect), (N, ps)
            if np.isfinite(expect):
                assert np.array_equal(fill.workers(ps, N), y)


def test_dta_gathers_cheapest_first_without_over_provisioning():
    rng = np.random.default_rng(0)
    R = 5
    q = np.round(rng.uniform(0.02, 0.08, (R, R)), 3)
    np.fill_diagonal(q, 0)
    orders = source_orders(q)
    for _ in range(50):
        M = rng.integers(0, 6, R)
        d = rng.integers(0, 8, R)
        g = dta(M, d, orders)
        assert np.all(g >= 0) and np.all(g.sum(axis=1) <= M)  # never more than a site holds
        assert np.all(g.sum(axis=0) <= np.maximum(d, 0))  # never more than the workload
        assert g.sum() == min(M.sum(), d.sum())  # every lack is met while some site has data to spare
        np.testing.assert_array_equal(np.diag(g), np.minimum(M, d))  # local data first
        for r in range(R):  # the first deficit site takes from its cheapest sources
            lack = d[r] - min(M[r], d[r])
            if lack > 0:
                srcs = [s for s in orders[r] if s != r]
                spare = {s: M[s] - min(M[s], d[s]) for s in srcs}
                exp, need = {}, lack
                for s in srcs:
                    take = min(spare[s], need)
                    exp[s] = take
                    need -= take
                assert all(g[s, r] == exp[s] for s in srcs), (M, d, r)
                break


def test_fixed_run_dispatches_evenly_and_trains_everything():
    inst = generate("testbed", seed=0)
    ja = JobArrays.of(inst.jobs[0])
    y = np.zeros(9, dtype=np.int64)
    y[[0, 3, 5]] = [2, 1, 1]
    run = fixed_run(ja, y, source_orders(inst.q))
    total = sum(g for g in run)
    assert total.sum() == ja.D.sum() and np.array_equal(total.sum(axis=1), ja.D)
    cap = workload(y, ja.k)
    assert all(np.all(g.sum(axis=0) <= cap) for g in run)
    assert len(run) == int(np.ceil(ja.D.sum() / cap.sum())) or len(run) == int(np.ceil(ja.D.sum() / cap.sum())) + 1


def test_drf_progressive_filling_equalises_dominant_shares():
    inst = generate("small", seed=0, jobs=2)
    jas = [JobArrays.of(j) for j in inst.jobs]
    total = inst.capacity.sum(axis=0)
    N = drf_counts(jas, total.copy(), total)
    used = sum(N[j.id] * j.m + (j.n if N[j.id] else 0) for j in jas)
    assert np.all(used <= total + 1e-9)
    need = {j.id: j.worker_slots(int(j.D.sum())) for j in jas}
    for j in jas:  # nobody can take one more worker (fits and still useful)
        assert N[j.id] == need[j.id] or np.any(used + j.m > total + 1e-9)


def test_fifo_counts_are_in_the_papers_range():
    inst = generate("testbed", seed=3)
    for seed in range(3):
        res = api.run("fifo", inst, seed=seed)
        for j, n in res.extra["worker_counts"].items():
            assert 1 <= n <= max(1, 9 * 12 // 2)
            need = JobArrays.of(inst.jobs[int(j)]).worker_slots(inst.jobs[int(j)].total_chunks)
            assert n <= need


def test_paper_preset_runs_every_algorithm_validly():
    inst = generate("paper", seed=0, jobs=30, servers=20, horizon=60)
    for name in ALGOS:
        res = api.run(name, inst)
        assert not FAMILY.check_result(inst, res), name


def test_brute_force_enumeration_equals_pruned_osf():
    """The pruned enumeration of Alg. 1 lines 5-9 returns the plan that evaluating every N returns."""
    from edgeopt.okita.online import OkitaScheduler
    from edgeopt.okita.placement import dta_cost

    inst = generate("testbed", seed=4)
    sch = OkitaScheduler(inst, alpha1=1, alpha2=1, betas=(1, 1, 1), delay_rule="listing", piecewise_priority="step")
    for ja in sch.jobs[:5]:
        t = ja.arrival
        plan = sch.preprocess(ja, t)
        W = ja.worker_slots(int(ja.D.sum()))
        best = None
        for N, in itertools.product(range(1, W + 1)):
            l = int(np.ceil(W / N))
            p = sch.osf(ja, t, sch.C, np.array([N]), np.array([l]), None)
            if p is None:
                continue
            total = p.bcost + float(ja.f(t + l - ja.arrival))
            assert p.bcost >= dta_cost(ja, sch.q, ja.D, workload(p.y, ja.k), sch.src_order) - 1e-9
            if best is None or total < best[0] - 1e-12:
                best = (total, N)
        assert plan.N == best[1] and plan.total == pytest.approx(best[0])


# on each of these, 1-9 jobs need more workers (W) than the sites hold
@pytest.mark.parametrize(("preset", "options"), [("testbed", {}), ("paper", {"jobs": 20, "servers": 8, "horizon": 40})])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_candidates_up_to_the_workers_the_sites_hold_take_the_same_decisions_as_every_n_up_to_w(
        monkeypatch, preset, options, seed):
    """`preprocess` enumerates N only up to the workers the sites hold: Okita's schedule is the one of the
    reference enumeration over every N of 1..W (the larger N have no fill)."""
    from edgeopt.okita import online

    inst = generate(preset, seed=seed, **options)
    fast = api.run("online", inst)
    monkeypatch.setattr(online, "most_workers", lambda C, ja, W: W)  # the reference: every N up to W
    ref = api.run("online", inst)
    assert fast.schedule == ref.schedule and fast.objective == ref.objective
    assert not FAMILY.check_result(inst, fast)


def test_a_job_of_millions_of_chunks_is_decided_without_enumerating_millions_of_workers(monkeypatch):
    """A job whose data needs far more workers than the sites hold: the candidates stop at what the sites hold
    (counted by a spy on `osf`), and the decisions are those of the enumeration up to W."""
    from edgeopt.okita import online

    inst = generate("small", seed=0)
    data = inst.model_dump(mode="json")
    data["jobs"][0]["data_chunks"] = [10**5] * len(data["sites"])
    inst = type(inst).model_validate(data)
    widest = []
    real = online.OkitaScheduler.osf
    monkeypatch.setattr(online.OkitaScheduler, "osf", lambda self, ja, t, U, Ns, *a: widest.append(len(Ns))
                        or real(self, ja, t, U, Ns, *a))
    fast = api.run("online", inst)
    sch = online.OkitaScheduler(inst, alpha1=1, alpha2=1, betas=(1, 1, 1), delay_rule="listing",
                                piecewise_priority="step")
    held = max(online.most_workers(sch.C, ja, 10**9) for ja in sch.jobs)
    assert 0 < max(widest) <= held < 10**4
    monkeypatch.setattr(online, "most_workers", lambda C, ja, W: W)
    ref = api.run("online", inst)
    assert fast.schedule == ref.schedule and not FAMILY.check_result(inst, fast)


def test_gantt_usage_and_job_rows_adapters_describe_the_schedule():
    inst = generate("small", seed=2)
    res = api.run("online", inst)
    sched = FAMILY.parse_schedule(res.schedule)
    bars = FAMILY.gantt(inst, sched)
    worker_bars = {(b.job, b.start, int(b.row.split()[1])) for b in bars if "w" in b.label.split()[-1]}
    expect = {(js.job, e.slot, r) for js in sched.jobs for e in js.slots for r, y in e.workers.items() if y}
    assert worker_bars == expect and all(b.end == b.start + 1 for b in bars)
    usage = FAMILY.usage(inst, sched)
    from edgeopt.okita.schedule import usage_per_slot

    u = usage_per_slot(inst, sched).sum(axis=1)
    assert [s.resource for s in usage] == inst.resources
    assert all(np.allclose(s.used, u[:, k]) and s.capacity == inst.capacity[:, k].sum() for k, s in enumerate(usage))
    rows = FAMILY.job_rows(inst, sched)
    assert sum(r.objective for r in rows) == pytest.approx(res.objective)
    assert all(r.end == js.completion + 1 for r, js in zip(rows, sched.jobs, strict=True))
