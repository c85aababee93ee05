"""Exact CP-SAT model (OR-Tools) of program (2) of Han et al., written independently of ``milp.py``.

Differences from the MILP, on purpose (two models that agree are evidence both are right):

* the completion slot is an integer ``c[i]`` in [a_i, T-1]: ``c[i] >= t`` for every active slot t, and
  ``act[i][c[i] - a_i] = 1`` by an element constraint, so c[i] is the last slot with workers (2e); the
  latency cost is ``lat[i] = table[c[i] - a_i]`` by a second element constraint;
* the parameter exchange (1) is one integer ``exch[i, t]`` per job and slot with, for each PS site r2,
  ``exch >= sum_r pi q^{r r2} y[i, r, t]`` enforced when ``s[i, r2, t]`` (no product variables);
* the PS: booleans s[i, r, t] with sum_r s = act[i, t] (2c); workers y <= Y act and sum_r y >= act.

Costs must be integers: every cost is multiplied by ``SCALE`` = 10^4 and rounded. The generators
draw q with 3 decimals and integer delta, pi, tau, so the bandwidth part is exact; the exponential
latency table is rounded to 1e-4. The model's objective is therefore the true one only up to
`rounding_error` (the most the rounded coefficients can move any solution's cost; 0 when every cost is
exact): the result's objective is the schedule's, recomputed exactly, and CP-SAT's bound is lowered by
that error so that it bounds the true optimum (`formulations.common.finish`). ``exch`` is an epigraph
variable (``exch >= cost``): an incumbent CP-SAT stopped at its limit may carry slack in it, so its model
value is then only at least its cost (it is tight at a proven optimum). Resource demands, capacities,
rho_i and E_i are scaled by 1000 and must be integral after scaling (checked: InputError otherwise).

`build_cpsat` also builds the sub-model of a large-neighbourhood window (``lns.py``): a subset of the jobs,
the others' entries fixed as constants in (2d), optionally fewer slots and the transfers as totals.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from edgeopt.core import BuildTimeLimit, Deadline, ModelSize, Result, Status
from edgeopt.okita.instance import Instance
from edgeopt.okita.schedule import Schedule, entry, group_entries, objective_parts, split_transfers
from formulations.common import CPSAT_MAX_INT, cpsat_overflow, finish
from formulations.common import solve_cpsat as run_cpsat
from formulations.okita.bounds import worker_bounds
from formulations.okita.milp import no_schedule_result
from formulations.okita.units import SCALE, UNIT, rounded, scaled_int
from formulations.strengthen import add_cpsat_floor, certified_floor, floor_in_model_units


def rounding_error(instance: Instance) -> float:
    """The most the CP-SAT model's objective (divided by SCALE) can differ from the true objective (2) of
    the same schedule: per job, the latency table's largest rounding, plus each data-transfer price's
    rounding times the chunks that can take that route (all of D_i^r from origin r), plus per slot the
    largest exchange rounding over PS sites times the most workers per site."""
    R, T, q = len(instance.sites), instance.horizon, instance.q
    Y = worker_bounds(instance)
    total = 0.0
    for i, job in enumerate(instance.jobs):
        total += max(rounded(float(v))[1] for v in instance.latency_table(i)[job.arrival:])
        for r in range(R):
            errs = [rounded(float(q[r, r2]) * job.chunk_size_mb)[1] for r2 in range(R) if r2 != r]
            total += max(errs, default=0.0) * job.data_chunks[r]
        per_slot = max(sum(rounded(float(q[r, r2]) * job.param_size_mb)[1] * int(Y[i, r]) for r in range(R))
                       for r2 in range(R))
        total += per_slot * (T - job.arrival)
    return total


def check_integer_range(instance: Instance, jobs: Iterable[int] | None = None, last_slot: dict[int, int] | None = None,
                        per_slot_transfers: bool = True) -> None:
    """Refuse, before building, a model whose integers would overflow CP-SAT's (`CPSAT_MAX_INT`).

    The instance's bounds let costs reach 10^9 x 10^9 (q x delta, q x pi) and latency tables 10^300,
    times ``SCALE``: the paper generator's exponential latency over a long horizon already gives 2e20
    in the model's units. Checked per job, as `build_cpsat` would build it: the objective's largest
    possible value (sum over its terms of |coefficient| x the variable's largest value: latency,
    transfers, the exchange epigraph per slot) and the (2b) rows ``rho y >= E h``. ``InputError``
    (field ``instance``) naming the job and the term, with the way out (``--method milp``).
    """
    R, q = len(instance.sites), instance.q
    Y = worker_bounds(instance)
    chosen = range(len(instance.jobs)) if jobs is None else sorted({int(i) for i in jobs})
    total = 0
    for i in chosen:
        job = instance.jobs[i]
        a, last = job.arrival, instance.horizon - 1
        if last_slot is not None and i in last_slot:
            last = max(a, min(last, int(last_slot[i])))
        slots = last - a + 1
        table = [abs(rounded(float(v))[0]) for v in instance.latency_table(i)[a:last + 1]]
        transfer = [[rounded(float(q[r, r2]) * job.chunk_size_mb)[0] for r2 in range(R)] for r in range(R)]
        exch = [[rounded(float(q[r, r2]) * job.param_size_mb)[0] for r in range(R)] for r2 in range(R)]
        ub = max(sum(exch[r2][r] * int(Y[i, r]) for r in range(R)) for r2 in range(R))
        moved = sum(transfer[r][r2] * job.data_chunks[r] for r in range(R) for r2 in range(R) if r2 != r)
        rho = round(job.worker_chunks_per_slot * UNIT)
        terms = [(f"job {i}'s largest latency cost over its {slots:,} slots", max(table)),
                 (f"job {i}'s largest transfer price (q x chunk_size_mb)", max(max(row) for row in transfer)),
                 (f"job {i}'s transfer cost", moved * (slots if per_slot_transfers else 1)),
                 (f"job {i}'s parameter exchange per slot (q x param_size_mb x workers)", ub),
                 (f"job {i}'s parameter exchange over its {slots:,} slots", ub * slots),
                 (f"job {i}'s row (2b) (rho x workers, epochs x chunks, scaled by {UNIT:,})",
                  max(rho * int(Y[i].max(initial=0)), job.epochs * UNIT * job.total_chunks))]
        for what, value in terms:
            if value > CPSAT_MAX_INT:
                raise cpsat_overflow(what, value, f"costs x {SCALE:,}")
        total += max(table) + moved * (slots if per_slot_transfers else 1) + ub * slots
        if total > CPSAT_MAX_INT:
            raise cpsat_overflow(f"the objective's largest value (jobs up to {i})", total, f"costs x {SCALE:,}")


def model_size(instance: Instance) -> ModelSize:
    R, K, T = len(instance.sites), len(instance.resources), instance.horizon
    slots = sum(T - j.arrival for j in instance.jobs)
    nv = slots * (R * R + 2 * R + 2) + len(instance.jobs) * 2
    nc = slots * (2 * R + 3 + R) + R * K * T + len(instance.jobs) * (R + 2)
    nz = slots * (R * R * 2 + R * R + 4 * R + R * K * 2) + len(instance.jobs) * T * 2
    return ModelSize(nv, nc, nz, note="the transfer variables grow as jobs x slots x sites^2")


def fixed_usage(instance: Instance, fixed: Schedule | None, skip: set[int]) -> dict[tuple[int, int, int], int]:
    """Resources (scaled by ``UNIT``) that the entries of ``fixed``'s jobs not in ``skip`` hold, per (site,
    resource, slot): the workers' m y and the PS's n of (2d). A sub-model subtracts them from the capacity,
    so whatever it schedules merged with these entries still satisfies (2d) for the whole instance."""
    out: dict[tuple[int, int, int], int] = {}
    if fixed is None:
        return out
    K = len(instance.resources)
    for js in fixed.jobs:
        if js.job in skip:
            continue
        job = instance.jobs[js.job]
        mk = [scaled_int(v, f"jobs.{js.job}.worker_demand") for v in job.worker_demand]
        nk = [scaled_int(v, f"jobs.{js.job}.ps_demand") for v in job.ps_demand]
        for e in js.slots:
            for r, y in e.workers.items():
                for k in range(K):
                    out[int(r), k, e.slot] = out.get((int(r), k, e.slot), 0) + mk[k] * int(y)
            if e.ps_site is not None and e.n_workers > 0:
                for k in range(K):
                    out[int(e.ps_site), k, e.slot] = out.get((int(e.ps_site), k, e.slot), 0) + nk[k]
    return out


def build_cpsat(instance: Instance, *, deadline: Deadline | None = None, jobs: Iterable[int] | None = None,
                fixed: Schedule | None = None, last_slot: dict[int, int] | None = None,
                per_slot_transfers: bool = True):
    """(model, variables) of the CP-SAT model (never solves).

    The defaults model the whole program (2). For a large-neighbourhood window (``lns.py``):

    * ``jobs``: the job indices to model (the free jobs); the objective is their cost alone (the others'
      is a constant of the window);
    * ``fixed``: a schedule whose entries of the jobs not modelled hold their resources as constants in
      the (2d) rows (`fixed_usage`), so a solution merged with them is feasible for the whole instance;
    * ``last_slot``: ``{job: slot}``, the last slot modelled for that job (default T-1): a restriction
      (every solution stays feasible) that keeps a window of paper-scale jobs small, since each slot
      costs R^2 transfer variables;
    * ``per_slot_transfers=False``: the transfers as R^2 totals per job and R trained counts per slot
      (`_add_total_transfers`), an exact reformulation: R^2 transfer variables per job, not per job and slot.

    ``variables["slots"][i]`` is the range of slots modelled for job i.
    """
    from ortools.sat.python import cp_model

    check_integer_range(instance, jobs, last_slot, per_slot_transfers)
    md = cp_model.CpModel()
    V: dict[str, Any] = {"y": {}, "s": {}, "act": {}, "g": {}, "c": {}, "lat": {}, "exch": {}, "offset": {},
                         "G": {}, "h": {}, "slots": {}}
    obj: list = []
    use: dict[tuple[int, int, int], list] = {}
    chosen = range(len(instance.jobs)) if jobs is None else sorted({int(i) for i in jobs})
    Y = worker_bounds(instance)
    for i in chosen:
        if deadline is not None:
            deadline.check()
        a, last = instance.jobs[i].arrival, instance.horizon - 1
        if last_slot is not None and i in last_slot:
            last = max(a, min(last, int(last_slot[i])))
        V["slots"][i] = range(a, last + 1)
        _add_job(md, instance, i, Y, V, obj, use, per_slot=per_slot_transfers)
    taken = fixed_usage(instance, fixed, set(chosen))
    _add_capacity(md, instance, use, taken)
    md.minimize(sum(obj))
    return md, V


def _add_job(md: Any, instance: Instance, i: int, Y: np.ndarray, V: dict[str, Any], obj: list, use: dict,
             per_slot: bool = True) -> None:
    """Job i's variables and rows over its slots ``V["slots"][i]``: (2a)-(2c), (2e), the exchange (1),
    and its terms of the (2d) rows (collected in ``use``); its costs go to ``obj``. ``per_slot``: the
    transfers as g[i, r, r2, t] (the default model) or as totals (`_add_total_transfers`)."""
    R = len(instance.sites)
    job = instance.jobs[i]
    slots = V["slots"][i]
    rho, E = scaled_int(job.worker_chunks_per_slot, f"jobs.{i}.worker_chunks_per_slot"), job.epochs * UNIT
    acts = []
    origin: dict[int, list] = {r: [] for r in range(R)}
    trained: dict[int, list] = {r: [] for r in range(R)}
    for t in slots:
        ys, ss = _add_slot_workers(md, instance, i, t, Y, V, use)
        acts.append(V["act"][i, t])
        if per_slot:
            gs = _add_slot_transfers(md, instance, i, t, V, obj, origin)
            into = [sum(gs[r, r2] for r in range(R)) for r2 in range(R)]
        else:
            into = [md.new_int_var(0, job.total_chunks, f"h_{i}_{r2}_{t}") for r2 in range(R)]
            for r2 in range(R):
                V["h"][i, r2, t] = into[r2]
                trained[r2].append(into[r2])
        for r2 in range(R):  # (2b)
            md.add(rho * ys[r2] >= E * into[r2])
        _add_slot_exchange(md, instance, i, t, Y, ys, ss, V, obj)
    if not per_slot:
        _add_total_transfers(md, instance, i, V, obj, origin, trained)
    for r in range(R):  # (2a)/(3)
        md.add(sum(origin[r]) == job.data_chunks[r])
    _add_completion(md, instance, i, acts, V, obj)


def _add_slot_workers(md: Any, instance: Instance, i: int, t: int, Y: np.ndarray, V: dict[str, Any], use: dict):
    """act, y and s of job i in slot t with (2c) and the link y <= Y act, sum y >= act; (2d) terms to ``use``."""
    R, K = len(instance.sites), len(instance.resources)
    job = instance.jobs[i]
    mk = [scaled_int(v, f"jobs.{i}.worker_demand") for v in job.worker_demand]
    nk = [scaled_int(v, f"jobs.{i}.ps_demand") for v in job.ps_demand]
    act = md.new_bool_var(f"act_{i}_{t}")
    V["act"][i, t] = act
    ys = [md.new_int_var(0, int(Y[i, r]), f"y_{i}_{r}_{t}") for r in range(R)]
    ss = [md.new_bool_var(f"s_{i}_{r}_{t}") for r in range(R)]
    for r in range(R):
        V["y"][i, r, t], V["s"][i, r, t] = ys[r], ss[r]
        md.add(ys[r] <= int(Y[i, r]) * act)
        for k in range(K):
            use.setdefault((r, k, t), []).append((mk[k], ys[r]))
            if nk[k]:
                use[r, k, t].append((nk[k], ss[r]))
    md.add(sum(ss) == act)  # (2c)
    md.add(sum(ys) >= act)
    return ys, ss


def _add_slot_transfers(md: Any, instance: Instance, i: int, t: int, V: dict[str, Any], obj: list,
                        origin: dict[int, list]) -> dict[tuple[int, int], Any]:
    """g[i, r, r2, t]: chunks moved from r and trained at r2 in slot t, with their cost (1)."""
    R, q, job = len(instance.sites), instance.q, instance.jobs[i]
    gs = {}
    for r in range(R):
        for r2 in range(R):
            g = md.new_int_var(0, job.data_chunks[r], f"g_{i}_{r}_{r2}_{t}")
            gs[r, r2] = g
            V["g"][i, r, r2, t] = g
            origin[r].append(g)
            coef = rounded(float(q[r, r2]) * job.chunk_size_mb)[0]
            if coef and r != r2:
                obj.append(coef * g)
    return gs


def _add_total_transfers(md: Any, instance: Instance, i: int, V: dict[str, Any], obj: list,
                         origin: dict[int, list], trained: dict[int, list]) -> None:
    """G[i, r, r2]: chunks moved from r to r2 over all slots, with their cost (1), and ``sum_r G[r, r2] =
    sum_t h[r2, t]``. Exact: a transfer's cost does not depend on its slot, and any per-slot trained
    counts h with these totals split into per-slot g (`split_transfers`), so only the R^2 totals are
    variables instead of R^2 per slot."""
    R, q, job = len(instance.sites), instance.q, instance.jobs[i]
    into: dict[int, list] = {r2: [] for r2 in range(R)}
    for r in range(R):
        for r2 in range(R):
            g = md.new_int_var(0, job.data_chunks[r], f"G_{i}_{r}_{r2}")
            V["G"][i, r, r2] = g
            origin[r].append(g)
            into[r2].append(g)
            coef = rounded(float(q[r, r2]) * job.chunk_size_mb)[0]
            if coef and r != r2:
                obj.append(coef * g)
    for r2 in range(R):
        md.add(sum(into[r2]) == sum(trained[r2]))


def _add_slot_exchange(md: Any, instance: Instance, i: int, t: int, Y: np.ndarray, ys: list, ss: list,
                       V: dict[str, Any], obj: list) -> None:
    """exch[i, t] >= the parameter exchange (1) of the workers with the PS, enforced at the PS's site."""
    R, q, job = len(instance.sites), instance.q, instance.jobs[i]
    coefs = [[rounded(float(q[r, r2]) * job.param_size_mb)[0] for r in range(R)] for r2 in range(R)]
    ub = max(sum(coefs[r2][r] * int(Y[i, r]) for r in range(R)) for r2 in range(R))
    exch = md.new_int_var(0, max(0, ub), f"exch_{i}_{t}")
    V["exch"][i, t] = exch
    for r2 in range(R):  # (1): exchange with the PS at r2, when it is there
        md.add(exch >= sum(coefs[r2][r] * ys[r] for r in range(R))).only_enforce_if(ss[r2])
    obj.append(exch)


def _add_completion(md: Any, instance: Instance, i: int, acts: list, V: dict[str, Any], obj: list) -> None:
    """The completion slot c[i] (2e) and the latency cost f_i(c - a + 1) by an element constraint."""
    slots, a = V["slots"][i], instance.jobs[i].arrival
    c = md.new_int_var(a, slots[-1], f"completion_{i}")
    V["c"][i] = c
    for t in slots:
        md.add(c >= t).only_enforce_if(V["act"][i, t])
    idx = md.new_int_var(0, slots[-1] - a, f"completion_offset_{i}")
    md.add(idx == c - a)
    V["offset"][i] = idx
    md.add_element(idx, acts, 1)  # (2e): the completion slot has workers
    table = [rounded(float(v))[0] for v in instance.latency_table(i)[a:slots[-1] + 1]]
    lat = md.new_int_var(min(table), max(table), f"latency_{i}")
    md.add_element(idx, table, lat)
    V["lat"][i] = lat
    obj.append(lat)


def _add_capacity(md: Any, instance: Instance, use: dict, taken: dict[tuple[int, int, int], int]) -> None:
    """(2d) per site, resource and slot with a modelled term: the modelled jobs' m y + n s fit in what the
    fixed jobs leave of C."""
    C = instance.capacity
    for (r, k, t), terms in use.items():  # (2d)
        if terms:
            cap = scaled_int(float(C[r, k]), f"sites.{r}.capacity") - taken.get((r, k, t), 0)
            md.add(sum(coef * v for coef, v in terms if coef) <= cap)


def extract_cpsat(solver: Any, V: dict[str, Any], instance: Instance) -> Schedule:
    """The schedule of the modelled jobs (all of them for the default model) in ``solver``'s solution."""
    R = len(instance.sites)
    entries: dict[int, list] = {}
    for i, slots in V["slots"].items():
        ys = {t: np.array([solver.value(V["y"][i, r, t]) for r in range(R)], dtype=np.int64) for t in slots}
        if (i, 0, 0) in V["G"]:
            G = np.array([[solver.value(V["G"][i, r, r2]) for r2 in range(R)] for r in range(R)], dtype=np.int64)
            h = {t: np.array([solver.value(V["h"][i, r2, t]) for r2 in range(R)], dtype=np.int64) for t in slots}
            gs = split_transfers(G, h)
        else:
            gs = {t: np.array([[solver.value(V["g"][i, r, r2, t]) for r2 in range(R)] for r in range(R)],
                              dtype=np.int64) for t in slots}
        for t in slots:
            y, g = ys[t], gs[t]
            if not y.any() and not g.any():
                continue
            ps = next((r for r in range(R) if solver.value(V["s"][i, r, t])), None) if y.any() else None
            entries.setdefault(i, []).append(entry(t, y, ps, g))
    return Schedule(jobs=group_entries(entries))


def solve_cpsat(instance: Instance, *, time_limit: float = 60.0, workers: int = 2, log: bool = False,
                strengthen: bool = True, hint: Any = None) -> Result:
    """Solve program (2) exactly with CP-SAT; ``time_limit`` covers building and solving.

    ``strengthen`` (default): add the valid inequalities of `formulations.strengthen` (objective >= the
    certified bound); False builds the model as the paper's constraints alone. ``hint``: a schedule (e.g.
    a registered algorithm's, `edgeopt solve --warm-start`) given to CP-SAT as a complete hint
    (`start.hint_cpsat`), so the search starts from it; what it proves is unchanged.
    """
    from edgeopt.okita import FAMILY

    check_integer_range(instance)  # before the floor's bound: a model CP-SAT cannot hold costs no time
    deadline = Deadline(time_limit)
    t0 = time.perf_counter()
    floor = certified_floor(instance, deadline) if strengthen else None
    try:
        model, V = build_cpsat(instance, deadline=deadline)
    except BuildTimeLimit as exc:
        return no_schedule_result(instance, "cpsat", Status.TIME_LIMIT, reason=str(exc), bound=None,
                                  runtime_s=deadline.elapsed())
    hinted = None
    if hint is not None:
        from formulations.okita.start import hint_cpsat

        sched = hint if isinstance(hint, Schedule) else Schedule.model_validate(hint)
        hinted = hint_cpsat(model, V, instance, sched)
    build_s = time.perf_counter() - t0
    rounding = rounding_error(instance)
    if floor is not None:
        # model value / SCALE >= (2) of the schedule - rounding >= floor - rounding (epigraph rows: >= cost)
        add_cpsat_floor(model, floor_in_model_units(floor, SCALE, slack=rounding))
    outcome, solver = run_cpsat(model, time_limit=deadline.remaining(), workers=workers, log=log)
    for name in ("objective", "bound"):
        v = getattr(outcome, name)
        if v is not None:
            setattr(outcome, name, v / SCALE)
    extra: dict[str, Any] = {"scale": SCALE, "solve_s": round(outcome.runtime_s, 6), "strengthen": strengthen,
                             "objective_floor": floor}
    if hinted is not None:
        extra["hinted_jobs"] = hinted
    if outcome.status == Status.INFEASIBLE:
        return no_schedule_result(instance, "cpsat", Status.INFEASIBLE, bound=None,
                                  reason="CP-SAT proved that no schedule trains every job by the horizon",
                                  runtime_s=outcome.runtime_s + build_s, extra=extra)
    if not outcome.has_solution:
        bound = None if outcome.bound is None else outcome.bound - rounding  # a bound on the true optimum
        return no_schedule_result(instance, "cpsat", Status.TIME_LIMIT, bound=bound,
                                  reason="time limit without an incumbent", runtime_s=outcome.runtime_s + build_s,
                                  extra=extra)
    schedule = extract_cpsat(solver, V, instance)
    extra["model_objective"] = outcome.objective  # the rounded model's value; the objective is the schedule's
    res = finish(FAMILY, instance, "cpsat", outcome, schedule, extra=extra, build_s=build_s, rounding=rounding,
                 epigraph=True)
    res.extra.update(objective_parts(instance, schedule))
    return res
