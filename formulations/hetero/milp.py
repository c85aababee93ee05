"""Time-indexed MILP (Pyomo, solved by HiGHS) of Zhou et al.'s program (2), (15) and their batch forms.

Configurations k = (m, p, q, N) with their durations d_k come from ``data.py``. Variables:

* colocated configurations (q = 1) are indexed by their host: ``xc[j, k, h, t]`` binary, job j
  starts at t in configuration k with all N_k workers and one PS on server h. One PS is enough:
  (2i) is void when nothing sits elsewhere, so more PSs only use capacity (dominance; the
  validator accepts them, the optimum never needs them). Their load is a constant, so capacity
  rows are linear in xc;
* distributed configurations (q = 0): ``x[j, k, t]`` binary (x_jt with d_j = d_k) and one placement
  per job, ``y[j, h, m]`` / ``s[j, h, p]`` integers (2k, 2l), zero unless m / p is the chosen type
  (2b, 2c), sum y = N_k (2f, 2g), sum s >= 1 (2e); (2d)/(15a): no server holds all workers and PSs
  of a distributed job, so two or more servers are used; (2i) with a binary ``hasps[j, h]``
  switching the bandwidth row on where a PS sits. At most max(1, ceil(D_j b_max / B_p)) PSs per
  server (``data.ps_bound``, dominance);
* ``o[j, h, r, t]`` >= 0: occupancy of a distributed job, o >= load_jhr - C_h^r (1 - run_jt), with
  load = sum_m e y + sum_p z s and run_jt = sum_{k, t' in (t - d_k, t]} x[j, k, t']. This is x * load
  exactly because load <= C_h^r when the job runs (``c2h_load_fits``).

(2h)/(15b): sum_j o + sum of running colocated loads <= C_h^r per (h, r, t). (``occupancy="nodes"``
replaces o by per-slot worker / PS counts yt = y * run, st = s * run with the running count pinned to
N_k: a tighter LP relaxation, but HiGHS solved the small preset about twice as slowly with it.) A pooled copy of (2h)
summed over servers (a valid inequality) tightens the LP relaxation.

Objectives: ``wct`` program (2)/(15), sum_j w_j (t + d_j), every job scheduled; ``weight``
program (7)/(16), max sum_j w_j x_jt, a job may stay unscheduled (7a) and completes in the window
(7b); ``cost`` problem (12)/(20), min sum_t,h,r delta_h^r(t) (e y + z s) (with delta >= 0 the
occupancy equals the load on every running slot at an optimum).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pyomo.core as pyo

from formulations.common import SolverOutcome, solve_pyomo
from formulations.hetero.data import ModelData, colocated_hosts, colocated_load, identical_servers, ps_bound
from formulations.hetero.schedule_io import Placement
from formulations.strengthen import consecutive_pairs

Objective = Literal["wct", "weight", "cost"]


def build_milp(
    data: ModelData,
    *,
    objective: Objective = "wct",
    prices: np.ndarray | None = None,
    relax: bool = False,
    occupancy: Literal["nodes", "load"] = "load",
    strengthen: bool = False,
) -> pyo.ConcreteModel:
    """Build the time-indexed model (never solves).

    Args:
        data: `prepare`'s arrays (window, capacities, configurations).
        objective: ``wct`` (2)/(15), ``weight`` (7)/(16) or ``cost`` (12)/(20).
        prices: ``[H, R, length]`` delta_h^r(t) for ``cost``.
        relax: LP relaxation (every integer variable continuous).
        occupancy: how a distributed job's placement is held over time: ``load`` (default: the
            per-slot load o, fewer variables; solved about twice as fast on the small preset) or
            ``nodes`` (per-slot worker / PS counts pinned to N_k: tighter LP, slower here).
        strengthen: add the symmetry-breaking rows over identical servers (``valid_symmetry_servers``).
    """
    if objective == "cost" and prices is None:
        raise ValueError("objective 'cost' needs prices")
    L, H, R = data.length, data.n_servers, data.n_resources
    M, P = data.n_worker_types, data.n_ps_types
    ring = data.ring
    e, zz = data.worker_demand, data.ps_demand
    dom_b = pyo.UnitInterval if relax else pyo.Binary
    dom_i = pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers
    m_ = pyo.ConcreteModel(name=f"hetero_{objective}")
    m_.data = data  # kept for extract (not a Pyomo component)

    # A job without a configuration that fits cannot be scheduled: (7) leaves it out, (2) is infeasible.
    jobs = [jd for jd in data.jobs if jd.configs]
    J = [jd.index for jd in jobs]
    jd_of = {jd.index: jd for jd in jobs}
    hosts = {}
    for jd in jobs:
        for k, cf in enumerate(jd.configs):
            if cf.colocated:
                hosts[jd.index, k] = [int(h) for h in colocated_hosts(data, cf)]
    xs = [(jd.index, k, t) for jd in jobs for k, cf in enumerate(jd.configs) if not cf.colocated
          for t in jd.config_starts(k, L)]
    xcs = [(jd.index, k, h, t) for jd in jobs for k, cf in enumerate(jd.configs) if cf.colocated
           for h in hosts[jd.index, k] for t in jd.config_starts(k, L)]
    x_keys = set(xs)  # reduced-cost fixing (JobData.allowed) may leave gaps in a configuration's starts
    Jd = sorted({key[0] for key in xs})  # jobs with a distributed configuration
    ys = [(j, h, mm) for j in Jd for h in range(H) for mm in range(M) if data.worker_cap[h, mm] > 0]
    ss = [] if ring else [(j, h, p) for j in Jd for h in range(H) for p in range(P) if data.ps_cap[h, p] > 0]
    jh = [(j, h) for j in Jd for h in range(H)]
    os_ = [(j, h, r, t) for j in Jd for h in range(H) for r in range(R) for t in range(L)]

    m_.x = pyo.Var(xs, domain=dom_b, doc="x[j,k,t]: j starts at t in distributed configuration k (x_jt, d_j = d_k)")
    m_.xc = pyo.Var(xcs, domain=dom_b, doc="xc[j,k,h,t]: j starts at t in colocated configuration k on host h")
    m_.y = pyo.Var(
        ys, domain=dom_i, bounds=lambda _, j, h, mm: (0, min(jd_of[j].max_workers, int(data.worker_cap[h, mm]))),
        doc="y_jhm: type-m workers of a distributed job j on server h (2k)",
    )
    m_.s = pyo.Var(ss, domain=dom_i, bounds=lambda _, j, h, p: (0, ps_bound(data, jd_of[j], h, p)),
                   doc="s_jhp: type-p PSs of a distributed job j on server h (2l)")
    if not ring:
        m_.hasps = pyo.Var(jh, domain=dom_b, doc="hasps[j,h]: job j has a PS on server h")
    if occupancy == "load":
        m_.o = pyo.Var(os_, domain=pyo.NonNegativeReals, doc="o[j,h,r,t]: occupancy x_jt' * load_jhr")
    else:
        os_ = []

    x_of: dict[int, list] = {j: [] for j in J}
    xk_of: dict[tuple[int, int], list] = {}
    for key in xs:
        x_of[key[0]].append(key)
        xk_of.setdefault(key[:2], []).append(key)
    xc_of: dict[int, list] = {j: [] for j in J}
    for key in xcs:
        xc_of[key[0]].append(key)
    y_of: dict[tuple[int, int], list] = {}
    for key in ys:
        y_of.setdefault((key[0], key[1]), []).append(key)
    s_of: dict[tuple[int, int], list] = {}
    for key in ss:
        s_of.setdefault((key[0], key[1]), []).append(key)

    def distributed(j):
        return sum(m_.x[key] for key in x_of[j])

    def scheduled(j):
        return distributed(j) + sum(m_.xc[key] for key in xc_of[j])

    def n_workers(j, h=None):
        hs = range(H) if h is None else [h]
        return sum(m_.y[key] for hh in hs for key in y_of.get((j, hh), []))

    def n_ps(j, h=None):
        hs = range(H) if h is None else [h]
        return sum(m_.s[key] for hh in hs for key in s_of.get((j, hh), []))

    def chosen(j, k):
        """Job j runs distributed configuration k (sum_t x[j, k, t])."""
        return sum(m_.x[key] for key in xk_of.get((j, k), []))

    def chosen_m(j, mm):
        return sum(chosen(j, k) for k, cf in enumerate(jd_of[j].configs) if cf.worker_type == mm)

    def chosen_p(j, p):
        return sum(chosen(j, k) for k, cf in enumerate(jd_of[j].configs) if cf.ps_type == p)

    # ---- (2a) / (7a): one start (and configuration) per job -------------------------------------
    if objective != "weight" and len(jobs) < len(data.jobs):
        # (2a) cannot hold for a job with no configuration: let the solver prove it (1 == 0).
        m_.unschedulable = pyo.Var(domain=pyo.NonNegativeReals, bounds=(0, 0))
        m_.c2a_unschedulable = pyo.Constraint(expr=m_.unschedulable == 1, doc="(2a) for a job that fits nowhere")
    if objective == "weight":
        m_.c2a_one_start = pyo.Constraint(J, rule=lambda _, j: scheduled(j) <= 1, doc="(7a) sum_t x_jt <= 1")
    else:
        m_.c2a_one_start = pyo.Constraint(J, rule=lambda _, j: scheduled(j) == 1, doc="(2a) sum_t x_jt = 1")

    # ---- distributed placement: (2b) (2c) (2e) (2f) (2g) ------------------------------------------
    m_.c2b_worker_type = pyo.Constraint(
        ys, rule=lambda _, j, h, mm: m_.y[j, h, mm] <= min(jd_of[j].max_workers, int(data.worker_cap[h, mm]))
        * chosen_m(j, mm), doc="(2b) y_jhm > 0 only for the one chosen type m",
    )
    if not ring:
        m_.c2c_ps_type = pyo.Constraint(
            ss, rule=lambda _, j, h, p: m_.s[j, h, p] <= ps_bound(data, jd_of[j], h, p) * chosen_p(j, p),
            doc="(2c) s_jhp > 0 only for the one chosen type p",
        )
        m_.c2e_one_ps = pyo.Constraint(Jd, rule=lambda _, j: n_ps(j) >= distributed(j),
                                       doc="(2e) sum_h,p s_jhp >= 1")
    m_.c2f_workers = pyo.Constraint(
        Jd, rule=lambda _, j: n_workers(j) == sum(
            cf.workers * chosen(j, k) for k, cf in enumerate(jd_of[j].configs) if not cf.colocated),
        doc="(2f)(2g) sum_h,m y_jhm = N_k <= D_j of the chosen configuration (d_j = d_k)",
    )

    # ---- (2d)/(15a): a distributed job spreads over two or more servers ---------------------------
    m_.c2d_spread = pyo.Constraint(
        jh, rule=lambda _, j, h: n_workers(j, h) + n_ps(j, h) <= n_workers(j) + n_ps(j) - distributed(j),
        doc="(2d)/(15a) q_j = 0 => every server holds fewer than all workers (and PSs) of j",
    )

    # ---- (2i): PS bandwidth covers the workers on other servers ----------------------------------
    if not ring:
        bmax = float(data.worker_bw.max(initial=0.0))

        def bw_rule(_, j, h):
            ps_bw = sum(float(data.ps_bw[k[2]]) * m_.s[k] for k in s_of.get((j, h), []))
            remote = sum(float(data.worker_bw[k[2]]) * m_.y[k] for hh in range(H) if hh != h
                         for k in y_of.get((j, hh), []))
            return ps_bw >= remote - jd_of[j].max_workers * bmax * (1 - m_.hasps[j, h])

        def big_s(j, h):
            return max((ps_bound(data, jd_of[j], h, p) for p in range(P) if data.ps_cap[h, p] > 0), default=0)

        m_.c2i_ps_bandwidth = pyo.Constraint(
            jh, rule=bw_rule, doc="(2i) sum_{h' != h} sum_m y_jh'm b_m <= sum_p s_jhp B_p if s_jh > 0",
        )
        m_.c2i_has_ps = pyo.Constraint(
            jh, rule=lambda _, j, h: n_ps(j, h) <= max(1, big_s(j, h)) * m_.hasps[j, h],
            doc="hasps_jh = 1 whenever server h holds a PS of j",
        )

    # ---- (2h)/(15b): capacity per server, resource and slot -------------------------------------
    def load(j, h, r):
        lw = sum(float(e[k[2], r]) * m_.y[k] for k in y_of.get((j, h), []) if e[k[2], r] != 0)
        lp = sum(float(zz[k[2], r]) * m_.s[k] for k in s_of.get((j, h), []) if zz[k[2], r] != 0)
        return lw + lp

    def run_k(j, k, t):
        """Whether j runs distributed configuration k at slot t: sum_{t' in (t - d_k, t]} x[j, k, t']."""
        jd = jd_of[j]
        d = jd.configs[k].duration
        return sum(m_.x[j, k, t2] for t2 in range(max(jd.earliest, t - d + 1), min(t, L - d) + 1)
                   if (j, k, t2) in x_keys)

    # run[j, t] as its own variable keeps the occupancy rows short (one term instead of every start)
    m_.run = pyo.Var([(j, t) for j in Jd for t in range(L)], bounds=(0, 1), doc="run[j,t]: distributed j runs at t")
    m_.c2h_running = pyo.Constraint(
        [(j, t) for j in Jd for t in range(L)],
        rule=lambda _, j, t: m_.run[j, t] == sum(run_k(j, k, t) for k, cf in enumerate(jd_of[j].configs)
                                                 if not cf.colocated),
        doc="run_jt = sum_{t' in (t - d_j, t]} x_jt'",
    )

    def run(j, t):
        return m_.run[j, t]

    loads = {(j, h, r): load(j, h, r) for j in Jd for h in range(H) for r in range(R)}
    const = (int, float)
    m_.c2h_load_fits = pyo.Constraint(
        [(j, h, r) for j in Jd for h in range(H) for r in range(R)],
        rule=lambda _, j, h, r: pyo.Constraint.Skip if isinstance(loads[j, h, r], const)
        else loads[j, h, r] <= float(data.capacity[h, r]),
        doc="load_jhr <= C_h^r (implied by (2h) for a running job; makes the big-M below valid)",
    )
    if occupancy == "load":
        m_.c2h_occupancy = pyo.Constraint(
            os_, rule=lambda _, j, h, r, t: pyo.Constraint.Skip if isinstance(loads[j, h, r], const)
            else m_.o[j, h, r, t] >= loads[j, h, r] - float(data.capacity[h, r]) * (1 - run(j, t)),
            doc="o_jhrt >= x_jt' * load_jhr for t' in (t - d_j, t]",
        )
    else:
        # yt = y * run and st = s * run per slot (McCormick, exact since run is binary in a solution);
        # the running worker count is pinned to N_k, which keeps the LP relaxation tight.
        yts = [(*key, t) for key in ys for t in range(L)]
        sts = [(*key, t) for key in ss for t in range(L)]
        ub_y = {key: min(jd_of[key[0]].max_workers, int(data.worker_cap[key[1], key[2]])) for key in ys}
        ub_s = {key: ps_bound(data, jd_of[key[0]], key[1], key[2]) for key in ss}
        m_.yt = pyo.Var(yts, bounds=lambda _, j, h, mm, t: (0, ub_y[j, h, mm]),
                        doc="yt[j,h,m,t] = y_jhm while j runs at t, else 0")
        m_.st = pyo.Var(sts, bounds=lambda _, j, h, p, t: (0, ub_s[j, h, p]),
                        doc="st[j,h,p,t] = s_jhp while j runs at t, else 0")
        m_.c2h_yt_le = pyo.Constraint(yts, rule=lambda _, j, h, mm, t: m_.yt[j, h, mm, t] <= m_.y[j, h, mm],
                                      doc="yt <= y")
        m_.c2h_yt_ge = pyo.Constraint(
            yts, rule=lambda _, j, h, mm, t: m_.yt[j, h, mm, t] >= m_.y[j, h, mm] - ub_y[j, h, mm] * (1 - run(j, t)),
            doc="yt >= y - U (1 - run_jt)")
        m_.c2h_yt_run = pyo.Constraint(
            yts, rule=lambda _, j, h, mm, t: m_.yt[j, h, mm, t] <= ub_y[j, h, mm] * run(j, t), doc="yt <= U run_jt")
        m_.c2h_yt_count = pyo.Constraint(
            [(j, t) for j in Jd for t in range(L)],
            rule=lambda _, j, t: sum(m_.yt[j, h, mm, t] for (jj, h, mm) in ys if jj == j) == sum(
                cf.workers * run_k(j, k, t) for k, cf in enumerate(jd_of[j].configs) if not cf.colocated),
            doc="(2f) running workers = N_k of the running configuration",
        )
        if sts:
            m_.c2h_st_le = pyo.Constraint(sts, rule=lambda _, j, h, p, t: m_.st[j, h, p, t] <= m_.s[j, h, p],
                                          doc="st <= s")
            m_.c2h_st_ge = pyo.Constraint(
                sts, rule=lambda _, j, h, p, t: m_.st[j, h, p, t] >= m_.s[j, h, p] - ub_s[j, h, p] * (1 - run(j, t)),
                doc="st >= s - U (1 - run_jt)")
            m_.c2h_st_run = pyo.Constraint(
                sts, rule=lambda _, j, h, p, t: m_.st[j, h, p, t] <= ub_s[j, h, p] * run(j, t), doc="st <= U run_jt")
            m_.c2h_st_count = pyo.Constraint(
                [(j, t) for j in Jd for t in range(L)],
                rule=lambda _, j, t: sum(m_.st[j, h, p, t] for (jj, h, p) in ss if jj == j) >= run(j, t),
                doc="(2e) at least one PS while running",
            )

    def held(j, h, r, t):
        """Resource r of server h held by distributed job j at slot t (a linear expression)."""
        if occupancy == "load":
            return m_.o[j, h, r, t]
        lw = sum(float(e[mm, r]) * m_.yt[j, h, mm, t] for mm in range(M) if (j, h, mm) in m_.y and e[mm, r])
        lp = sum(float(zz[p, r]) * m_.st[j, h, p, t] for p in range(P) if (j, h, p) in m_.s and zz[p, r])
        return lw + lp
    # colocated starts active at each slot, per host
    col_active: dict[tuple[int, int], list] = {}
    for key in xcs:
        j, k, h, t0 = key
        for t in range(t0, t0 + jd_of[j].configs[k].duration):
            col_active.setdefault((h, t), []).append(key)
    col_load = {(j, k): colocated_load(data, jd_of[j].configs[k]) for (j, k) in hosts}

    def cap_rule(_, h, r, t):
        terms = [held(j, h, r, t) for j in Jd]
        terms = [x for x in terms if not isinstance(x, const)]
        terms += [float(col_load[key[0], key[1]][r]) * m_.xc[key] for key in col_active.get((h, t), [])
                  if col_load[key[0], key[1]][r] != 0]
        if not terms:
            return pyo.Constraint.Skip
        return sum(terms) <= float(data.free[h, r, t])

    m_.c2h_capacity = pyo.Constraint(
        [(h, r, t) for h in range(H) for r in range(R) for t in range(L)], rule=cap_rule,
        doc="(2h)/(15b) sum_{j: t' in (t-d_j, t]} x_jt' (sum_m e_m^r y_jhm + sum_p z_p^r s_jhp) <= C_h^r",
    )

    # A valid inequality implied by (2h), (2e), (2f): pooled over the servers, the running jobs'
    # N_k workers and at least one PS fit in the total capacity. It tightens the LP relaxation
    # (the big-M rows of distributed jobs are weak) without cutting any schedule.
    def pooled_rule(_, r, t):
        lhs = sum(float(colocated_load(data, cf)[r]) * run_k(j, k, t) for j in Jd
                  for k, cf in enumerate(jd_of[j].configs) if not cf.colocated and colocated_load(data, cf)[r] != 0)
        lhs = lhs + sum(float(col_load[key[0], key[1]][r]) * m_.xc[key] for h in range(H)
                        for key in col_active.get((h, t), []) if col_load[key[0], key[1]][r] != 0)
        if isinstance(lhs, const):
            return pyo.Constraint.Skip
        return lhs <= float(data.free[:, r, t].sum())

    m_.c2h_pooled = pyo.Constraint(
        [(r, t) for r in range(R) for t in range(L)], rule=pooled_rule,
        doc="(2h) summed over h: sum_j running (N_k e_m^r + z_p^r) <= sum_h C_h^r (valid inequality)",
    )

    # ---- valid inequalities of the strengthened model ---------------------------------------------
    if strengthen:
        # Symmetry breaking over identical servers h < h' (equal capacity, free profile and type limits;
        # nothing else names a server): swapping everything on h and h' maps a schedule to one with the
        # same objective, so sorting a class by sum_j c_j (workers + PSs of j on the server),
        # c_j = J - j, keeps one optimal schedule of every orbit. A colocated start counts its N_k workers
        # and its PS on its host.
        nj = len(data.jobs)

        def placed(h):
            terms = [(nj - key[0]) * m_.y[key] for j in Jd for key in y_of.get((j, h), [])]
            terms += [(nj - key[0]) * m_.s[key] for j in Jd for key in s_of.get((j, h), [])]
            terms += [(nj - j) * (jd_of[j].configs[k].workers + (0 if ring else 1)) * m_.xc[j, k, hh, t]
                      for (j, k, hh, t) in xcs if hh == h]
            return sum(terms)

        pairs = consecutive_pairs(identical_servers(data))
        m_.valid_symmetry_servers = pyo.Constraint(
            pairs, rule=lambda _, h, h2: placed(h) >= placed(h2),
            doc="valid inequality (symmetry breaking): identical servers sorted by weighted placement count")

    # ---- objective ----------------------------------------------------------------------------
    def dur(j, k):
        return jd_of[j].configs[k].duration

    if objective == "wct":
        m_.obj = pyo.Objective(
            expr=sum(jd_of[j].weight * (data.t0 + t + dur(j, k)) * m_.x[j, k, t] for (j, k, t) in xs)
            + sum(jd_of[j].weight * (data.t0 + t + dur(j, k)) * m_.xc[j, k, h, t] for (j, k, h, t) in xcs),
            sense=pyo.minimize, doc="(2)/(15) sum_j w_j sum_t x_jt (t + d_j)",
        )
    elif objective == "weight":
        m_.obj = pyo.Objective(
            expr=sum(jd_of[j].weight * m_.x[key] for key in xs for j in [key[0]])
            + sum(jd_of[j].weight * m_.xc[key] for key in xcs for j in [key[0]]),
            sense=pyo.maximize, doc="(7)/(16) sum_j sum_t w_j x_jt",
        )
    else:
        pr = np.asarray(prices, dtype=float)
        terms = [float(pr[h, r, t]) * held(j, h, r, t) for j in Jd for h in range(H) for r in range(R)
                 for t in range(L) if pr[h, r, t] != 0]
        terms = [x for x in terms if not isinstance(x, const)]
        for (j, k, h, t0) in xcs:
            c = float(pr[h, :, t0:t0 + dur(j, k)].sum(axis=1) @ col_load[j, k])
            if c:
                terms.append(c * m_.xc[j, k, h, t0])
        m_.obj = pyo.Objective(expr=sum(terms) if terms else 0.0, sense=pyo.minimize,
                               doc="(12)/(20) sum_t sum_h sum_r delta_h^r(t) (e y + z s)")
    return m_


def extract_milp(model: pyo.ConcreteModel) -> list[Placement]:
    """Read the placements of the scheduled jobs from a solved model."""
    data: ModelData = model.data
    out = []
    for key in model.xc:
        if pyo.value(model.xc[key]) > 0.5:
            j, k, h, t = key
            cf = next(jd for jd in data.jobs if jd.index == j).configs[k]
            out.append(Placement(job=j, start=data.t0 + t, duration=cf.duration, worker_type=cf.worker_type,
                                 ps_type=cf.ps_type, colocated=True, workers={h: cf.workers},
                                 ps={} if data.ring else {h: 1}))
    for key in model.x:
        if pyo.value(model.x[key]) > 0.5:
            j, k, t = key
            cf = next(jd for jd in data.jobs if jd.index == j).configs[k]
            workers = {h: round(pyo.value(model.y[j, h, cf.worker_type]))
                       for h in range(data.n_servers) if (j, h, cf.worker_type) in model.y}
            ps = {}
            if not data.ring:
                ps = {h: round(pyo.value(model.s[j, h, cf.ps_type]))
                      for h in range(data.n_servers) if (j, h, cf.ps_type) in model.s}
            out.append(Placement(
                job=j, start=data.t0 + t, duration=cf.duration, worker_type=cf.worker_type,
                ps_type=cf.ps_type, colocated=False,
                workers={h: n for h, n in workers.items() if n > 0}, ps={h: n for h, n in ps.items() if n > 0},
            ))
    return sorted(out, key=lambda p: p.job)


def solve_model(model: pyo.ConcreteModel, *, time_limit: float = 60.0, threads: int = 1,
                rel_gap: float | None = None) -> SolverOutcome:
    """Solve a model built by `build_milp` (any objective) with HiGHS."""
    from formulations.common import REL_GAP

    return solve_pyomo(model, time_limit=time_limit, rel_gap=REL_GAP if rel_gap is None else rel_gap,
                       threads=threads)
