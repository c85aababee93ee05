"""program (2) of Han et al. as a MILP indexed by each job's completion slot (``solve_milp``'s default model).

The slot model of ``milp.py`` pays a job's latency through one binary per completion slot z[i, c] and lets
its workers run in any slot t with u[i, t] <= sum_{c >= t} z[i, c]. In its LP relaxation a small share of a
late completion keeps every later slot open, so the latency is mixed away (at the 10-job rung of the
`small` ladder its LP is 9 % below the optimum and HiGHS proves it in about 200 s). Here every variable of
job i also carries the completion c it belongs to: the job's plan for "it ends in slot c" lives in its
own copy of the variables, switched on by z[i, c]. This is the disjunctive (convex hull) form of the choice
of c: the LP can still mix completions, but only as whole plans, each paying its own latency.

Index sets: job i, its completions c (those whose slots a_i .. c hold enough worker-slots for its chunks,
as `milp.c2b_worker_slots` counts them), slots t in a_i .. c, PS sites p where the PS fits the site's
capacity, worker sites r (Y_ir > 0, `bounds.worker_bounds`). Variables:

* ``z[i, c]`` binary: the job completes in slot c;
* ``u[i, c, t, p]`` binary: with completion c, slot t has its PS at p (the slot model's s, with u folded in);
* ``y[i, c, t, p, r]`` integer workers at r in slot t while the PS is at p: the workers disaggregated by PS
  site, so the exchange cost pi q^{r p} y is linear and needs no product w = y s;
* ``n[i, c, t, r]`` integer chunks trained at r in slot t; ``x[i, c, r, r2]`` integer chunks moved from r
  to r2 over the whole plan (only the totals carry a cost, and `edgeopt.okita.schedule.split_transfers` gives them slots).

Constraints (names carry the equations of the slot model they replace):

* ``c2e_one_completion[i]``: sum_c z = 1; ``c2c_one_ps[i, c, t]``: sum_p u <= z;
  ``c2e_completion_active[i, c]``: z <= sum_p u[i, c, c, p] (slot c has workers, so c is the last active slot);
* ``c2c_active_ub``: y <= Y_ir u; ``c2c_active_lb``: u <= sum_r y (a slot with a PS has a worker);
* ``c2b_process[i, c, t, r]``: E_i n <= rho_i sum_p y (2b);
* ``c2a_data[i, c, r]``: sum_r2 x = D_i^r z (every chunk trained once, in the chosen plan (2a));
  ``c2a_trained[i, c, r2]``: sum_r x[r, r2] = sum_t n[t, r2];
* ``c2b_worker_slots[i, c]``: sum y >= ceil(E_i D_i / rho_i) z (the slot model's valid cut, per plan);
* ``c2d_capacity[r, k, t]``: sum over jobs and completions c >= t of m y + n u <= C (2d).

Objective (2) with (1): sum f_i(c - a_i + 1) z + sum q delta x + sum q pi y.

Every schedule of the slot model is one of this model with the same cost (its completion picks c, its PS
sites u, its workers y at that PS, its trained chunks n and transfer totals x), and back
(`extract_milp_completion`), so the two have the same optimum; a test checks that on random instances.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyomo.core as pyo

from edgeopt.core import Deadline, ModelSize
from edgeopt.okita.instance import Instance
from edgeopt.okita.schedule import Schedule, entry, group_entries, split_transfers
from formulations.okita.bounds import latency_floors, worker_bounds, worker_slots


def completion_windows(instance: Instance, upper: float) -> list[int]:
    """Per job the last completion slot a schedule of total cost at most ``upper`` can give it: job i ending in
    slot c pays at least f_i(c - a_i + 1), and every other job j at least its latency floor
    (`bounds.latency_floors`), so c is kept only while f_i(c - a_i + 1) + sum_{j != i} floor_j <= upper
    (plus float noise). Reduced-cost fixing with one bound per job, as preemptive's windows."""
    floors = latency_floors(instance)
    total = float(floors.sum())
    slack = 1e-9 * max(1.0, abs(upper))
    out = []
    for i, job in enumerate(instance.jobs):
        lat = instance.latency_table(i)
        room = upper + slack - (total - floors[i])
        keep = np.flatnonzero(lat[job.arrival:] <= room)
        out.append(job.arrival + int(keep[-1]) if keep.size else job.arrival - 1)
    return out


def _sets(instance: Instance, upper: float | None = None) -> dict[str, Any]:
    """The index data shared by the size estimate and the builder: per job its completions (those that can
    hold its worker-slots, and with ``upper`` those of `completion_windows`), PS sites and worker sites, its
    Y row and the worker-slots it needs."""
    R, T = len(instance.sites), instance.horizon
    C = instance.capacity
    Y = worker_bounds(instance)
    last = completion_windows(instance, upper) if upper is not None else [T - 1] * len(instance.jobs)
    out = []
    for i, job in enumerate(instance.jobs):
        need = worker_slots(job)
        per_slot = int(Y[i].sum())
        ps = [p for p in range(R) if np.all(np.asarray(job.ps_demand, float) <= C[p] + 1e-9)]
        workers = [r for r in range(R) if Y[i, r] > 0]
        ends = [c for c in range(job.arrival, last[i] + 1) if (c - job.arrival + 1) * per_slot >= need] if ps else []
        out.append({"need": need, "ps": ps, "workers": workers, "ends": ends,
                    "origins": [r for r in range(R) if job.data_chunks[r] > 0]})
    return {"Y": Y, "jobs": out}


def completion_count(instance: Instance, upper: float | None = None) -> int:
    """The completions (z variables) `build_milp_completion` builds."""
    return sum(len(js["ends"]) for js in _sets(instance, upper)["jobs"])


def model_size(instance: Instance, upper: float | None = None) -> ModelSize:
    """Variables, rows and nonzeros of `build_milp_completion`, counted from its index sets before building."""
    R, K = len(instance.sites), len(instance.resources)
    sets = _sets(instance, upper)
    nv = nc = nz = 0
    for i, js in enumerate(sets["jobs"]):
        a = instance.jobs[i].arrival
        P, W, O = len(js["ps"]), len(js["workers"]), len(js["origins"])
        for c in js["ends"]:
            slots = c - a + 1
            nv += 1 + slots * (P + P * W + W) + O * R
            nc += 2 + slots * (1 + P + P * W + W) + O + R
            nz += (slots * (P + 1) + P + 1 + slots * P * W * (2 + 1 + K) + slots * P * (1 + K)
                   + slots * W * (1 + P) + O * (R + 1) + O * R + slots * W + slots * P * W + 1)
        nc += 1
        nz += max(1, len(js["ends"]))
    nv += not all(js["ends"] for js in sets["jobs"])  # no_plan
    nc += R * K * instance.horizon
    return ModelSize(nv, nc, nz, note="the y variables grow as jobs x completions x slots x sites^2")


def build_milp_completion(instance: Instance, *, relax: bool = False, deadline: Deadline | None = None,
                          upper: float | None = None) -> pyo.ConcreteModel:
    """Build the completion-indexed MILP (never solves). ``relax`` gives its LP relaxation (a lower bound).
    ``upper``: the cost of a feasible schedule; only the completions of `completion_windows` are built, which
    keeps every schedule of cost at most ``upper``, so the optimum."""
    R, K, T = len(instance.sites), len(instance.resources), instance.horizon
    C, q = instance.capacity, instance.q
    jobs = instance.jobs
    sets = _sets(instance, upper)
    Y = sets["Y"]

    def check() -> None:
        if deadline is not None:
            deadline.check()

    IC, ICT, ICTP, ICTPR, ICTR, ICRR = [], [], [], [], [], []
    for i, js in enumerate(sets["jobs"]):
        a = jobs[i].arrival
        for c in js["ends"]:
            IC.append((i, c))
            for t in range(a, c + 1):
                ICT.append((i, c, t))
                ICTP.extend((i, c, t, p) for p in js["ps"])
                ICTPR.extend((i, c, t, p, r) for p in js["ps"] for r in js["workers"])
                ICTR.extend((i, c, t, r) for r in js["workers"])
            ICRR.extend((i, c, r, r2) for r in js["origins"] for r2 in range(R))
        check()
    m = pyo.ConcreteModel(name="okita_program_2_by_completion")
    integer = pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers
    binary = pyo.UnitInterval if relax else pyo.Binary
    m.z = pyo.Var(IC, domain=binary)
    m.u = pyo.Var(ICTP, domain=binary)
    m.y = pyo.Var(ICTPR, domain=integer, bounds=lambda _m, i, c, t, p, r: (0, int(Y[i, r])))
    m.n = pyo.Var(ICTR, domain=integer, bounds=lambda _m, i, c, t, r: (0, int(jobs[i].total_chunks)))
    m.x = pyo.Var(ICRR, domain=integer, bounds=lambda _m, i, c, r, r2: (0, int(jobs[i].data_chunks[r])))
    check()
    ends = {i: js["ends"] for i, js in enumerate(sets["jobs"])}
    ps_of = {i: js["ps"] for i, js in enumerate(sets["jobs"])}
    workers_of = {i: js["workers"] for i, js in enumerate(sets["jobs"])}
    # a job without a completion (too few worker-slots by the horizon, or no site holds its PS) has no plan:
    # its row reads 0 = 1 through a variable fixed at 0, which HiGHS proves infeasible
    if not all(ends.values()):
        m.no_plan = pyo.Var(bounds=(0, 0))
    m.c2e_one_completion = pyo.Constraint(
        range(len(jobs)), rule=lambda _m, i: (sum(_m.z[i, c] for c in ends[i]) if ends[i] else _m.no_plan) == 1,
        doc="(2e): one completion slot per job")
    m.c2c_one_ps = pyo.Constraint(ICT, rule=lambda _m, i, c, t: sum(_m.u[i, c, t, p] for p in ps_of[i]) <= _m.z[i, c],
                                  doc="(2c): one PS per slot of the chosen plan")
    m.c2e_completion_active = pyo.Constraint(
        IC, rule=lambda _m, i, c: _m.z[i, c] <= sum(_m.u[i, c, c, p] for p in ps_of[i]),
        doc="(2e): the completion slot has workers")
    m.c2c_active_ub = pyo.Constraint(ICTPR, rule=lambda _m, i, c, t, p, r: _m.y[i, c, t, p, r]
                                     <= int(Y[i, r]) * _m.u[i, c, t, p])
    m.c2c_active_lb = pyo.Constraint(ICTP, rule=lambda _m, i, c, t, p: _m.u[i, c, t, p]
                                     <= sum(_m.y[i, c, t, p, r] for r in workers_of[i]))
    check()
    m.c2b_process = pyo.Constraint(
        ICTR, rule=lambda _m, i, c, t, r: jobs[i].epochs * _m.n[i, c, t, r]
        <= jobs[i].worker_chunks_per_slot * sum(_m.y[i, c, t, p, r] for p in ps_of[i]),
        doc="(2b): E_i chunks trained <= rho_i workers, per slot and site")
    origins_of = {i: js["origins"] for i, js in enumerate(sets["jobs"])}
    m.c2a_data = pyo.Constraint(
        [(i, c, r) for (i, c) in IC for r in origins_of[i]],
        rule=lambda _m, i, c, r: sum(_m.x[i, c, r, r2] for r2 in range(R)) == int(jobs[i].data_chunks[r]) * _m.z[i, c],
        doc="(2a): every chunk of every origin moved once in the chosen plan")
    m.c2a_trained = pyo.Constraint(
        [(i, c, r2) for (i, c) in IC for r2 in range(R)],
        rule=lambda _m, i, c, r2: sum(_m.x[i, c, r, r2] for r in origins_of[i])
        == sum(_m.n[i, c, t, r2] for t in range(jobs[i].arrival, c + 1) if (i, c, t, r2) in _m.n),
        doc="(2a): the chunks moved to a site are the chunks trained there")
    m.c2b_worker_slots = pyo.Constraint(
        IC, rule=lambda _m, i, c: sum(_m.y[i, c, t, p, r] for t in range(jobs[i].arrival, c + 1)
                                      for p in ps_of[i] for r in workers_of[i])
        >= sets["jobs"][i]["need"] * _m.z[i, c],
        doc="valid cut from (2a)+(2b): sum y >= ceil(E_i D_i / rho_i) z, per plan")
    check()
    on: dict[tuple[int, int, int], list] = {}
    for (i, c, t, p, r) in ICTPR:
        for k in range(K):
            if jobs[i].worker_demand[k] > 0:
                on.setdefault((r, k, t), []).append(float(jobs[i].worker_demand[k]) * m.y[i, c, t, p, r])
    for (i, c, t, p) in ICTP:
        for k in range(K):
            if jobs[i].ps_demand[k] > 0:
                on.setdefault((p, k, t), []).append(float(jobs[i].ps_demand[k]) * m.u[i, c, t, p])
    check()
    m.c2d_capacity = pyo.Constraint(
        [(r, k, t) for r in range(R) for k in range(K) for t in range(T) if (r, k, t) in on],
        rule=lambda _m, r, k, t: sum(on[r, k, t]) <= float(C[r, k]),
        doc="(2d): sum_i m y + n s <= C per site, resource, slot")
    check()
    lat = {i: instance.latency_table(i) for i in range(len(jobs))}
    m.obj = pyo.Objective(
        expr=sum(float(lat[i][c]) * m.z[i, c] for (i, c) in IC)
        + sum(float(q[r, r2]) * jobs[i].chunk_size_mb * m.x[i, c, r, r2] for (i, c, r, r2) in ICRR
              if r != r2 and q[r, r2] > 0)
        + sum(float(q[r, p]) * jobs[i].param_size_mb * m.y[i, c, t, p, r] for (i, c, t, p, r) in ICTPR
              if r != p and q[r, p] > 0),
        sense=pyo.minimize)
    return m


def extract_milp_completion(model: pyo.ConcreteModel, instance: Instance) -> Schedule:
    """The schedule of the loaded solution: per job its chosen completion's plan, the transfer totals split
    over the slots that train the chunks (`edgeopt.okita.schedule.split_transfers`)."""
    R = len(instance.sites)
    chosen = {i: c for (i, c) in model.z if pyo.value(model.z[i, c]) > 0.5}
    workers: dict[int, dict[int, np.ndarray]] = {i: {} for i in chosen}
    ps_at: dict[int, dict[int, int]] = {i: {} for i in chosen}
    trained: dict[int, dict[int, np.ndarray]] = {i: {} for i in chosen}
    totals = {i: np.zeros((R, R), dtype=np.int64) for i in chosen}
    for (i, c, t, p, r), var in model.y.items():
        if chosen.get(i) == c and (v := round(pyo.value(var))) > 0:
            workers[i].setdefault(t, np.zeros(R, dtype=np.int64))[r] += v
            ps_at[i][t] = p
    for (i, c, t, r), var in model.n.items():
        if chosen.get(i) == c and (v := round(pyo.value(var))) > 0:
            trained[i].setdefault(t, np.zeros(R, dtype=np.int64))[r] += v
    for (i, c, r, r2), var in model.x.items():
        if chosen.get(i) == c:
            totals[i][r, r2] += round(pyo.value(var))
    entries: dict[int, list] = {}
    for i in chosen:
        # chunks "trained" in a slot without workers would break (2b); the validator in finish() rejects them
        slots = sorted(set(workers[i]) | set(trained[i]))
        for t in slots:
            trained[i].setdefault(t, np.zeros(R, dtype=np.int64))
        g = split_transfers(totals[i], trained[i])
        entries[i] = [entry(t, workers[i].get(t, np.zeros(R, dtype=np.int64)), ps_at[i].get(t), g[t]) for t in slots]
    return Schedule(jobs=group_entries(entries))


def start_milp_completion(model: Any, schedule: Any) -> Any:
    """Values of `build_milp_completion`'s discrete variables that encode ``schedule`` (nonzeros; a
    ``ComponentMap``): per job its completion's z, the PS site and workers of each slot, the trained chunks
    and the transfer totals. A job whose completion, PS site or worker site the model does not have is left
    out (HiGHS completes or rejects the start)."""
    from pyomo.common.collections import ComponentMap

    out = ComponentMap()
    for js in schedule.jobs:
        i, c = int(js.job), js.completion
        if c is None or (i, c) not in model.z:
            continue
        out[model.z[i, c]] = 1.0
        for e in js.slots:
            t = int(e.slot)
            if e.n_workers > 0 and e.ps_site is not None and (i, c, t, int(e.ps_site)) in model.u:
                p = int(e.ps_site)
                out[model.u[i, c, t, p]] = 1.0
                for r, k in e.workers.items():
                    if (i, c, t, p, int(r)) in model.y:
                        out[model.y[i, c, t, p, int(r)]] = float(k)
            for r, k in e.trained.items():
                if (i, c, t, int(r)) in model.n:
                    out[model.n[i, c, t, int(r)]] = out.get(model.n[i, c, t, int(r)], 0.0) + float(k)
            for a, b, k in e.transfers:
                if (i, c, int(a), int(b)) in model.x:
                    out[model.x[i, c, int(a), int(b)]] = out.get(model.x[i, c, int(a), int(b)], 0.0) + float(k)
    return out
