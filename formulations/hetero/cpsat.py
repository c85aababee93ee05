"""CP-SAT model of Zhou et al.'s program (2) (PS) and (15) (Ring-AllReduce): one interval per job.

Independent of the MILP (``milp.py``): no time index at all. Each job j has

* one boolean per configuration k = (m, p, q, N) (``data.py``), exactly one true (2a); the job's
  interval [start_j, end_j) has the chosen configuration's duration (2f, 2m), start_j >= a_j (2j)
  and end_j <= T;
* booleans ``wtype[j, m]`` / ``ptype[j, p]`` (the chosen types) and integers ``y[j, h, m]`` /
  ``s[j, h, p]``, zero unless their type is chosen (2b, 2c, 2k, 2l); sum y = N_k (2f, 2g);
  sum s >= 1 (2e);
* (2d)/(15a) with booleans ``on[j, h]`` (sum_h on = q_j; q_j and not on[j, h] => nothing on h)
  and ``used[j, h]`` (not q_j => at least two used servers);
* (2i) as an enforced linear row: a PS on h => sum_p B_p s_jhp >= sum_m b_m sum_{h' != h} y_jh'm;
* (2h)/(15b) as one cumulative per (server, resource) whose demands are the job's load
  ``sum_m e_m^r y_jhm + sum_p z_p^r s_jhp`` held over its interval.

CP-SAT works on integers: each resource, the bandwidths and the weights are scaled by the
least power of ten that makes them integral (``data.int_scale``); the objective is scaled back.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from edgeopt.core import Deadline, Result, Status
from formulations.common import CPSAT_MAX_INT, cpsat_overflow, deadline_bounded, finish
from formulations.common import solve_cpsat as run_cpsat
from formulations.hetero.data import ModelData, identical_servers, int_scale, prepare
from formulations.hetero.schedule_io import Placement, infeasible_result, to_schedule
from formulations.hetero.start import hint_cpsat
from formulations.strengthen import add_cpsat_floor, certified_floor, consecutive_pairs, floor_in_model_units


class CpsatModel:
    """The CP-SAT model and the handles `extract_cpsat` reads."""

    def __init__(self, model: cp_model.CpModel, data: ModelData, weight_scale: int) -> None:
        self.model = model
        self.data = data
        self.weight_scale = weight_scale
        self.config: dict[tuple[int, int], Any] = {}
        self.start: dict[int, Any] = {}
        self.duration: dict[int, Any] = {}
        self.y: dict[tuple[int, int, int], Any] = {}
        self.s: dict[tuple[int, int, int], Any] = {}


def build_cpsat(data: ModelData, *, strengthen: bool = True) -> CpsatModel:
    """Build the CP-SAT model of program (2)/(15) over ``data``'s window (never solves).

    ``strengthen``: add the symmetry-breaking rows over identical servers (`_order_identical_servers`).
    """
    if np.any(data.free > data.capacity[:, :, None] + 1e-9):
        raise ValueError("free capacity above C_h^r")
    L, H, R = data.length, data.n_servers, data.n_resources
    M, P = data.n_worker_types, data.n_ps_types
    e, z = data.worker_demand, data.ps_demand
    r_scale = [int_scale(np.concatenate([data.capacity[:, r], e[:, r], z[:, r]]), what=f"resource {r}")
               for r in range(R)]
    bw_scale = int_scale(np.concatenate([data.worker_bw, data.ps_bw]), what="bandwidth_mbps")
    w_scale = int_scale(np.array([jd.weight for jd in data.jobs]), what="weight")
    cap = [[round(data.capacity[h, r] * r_scale[r]) for r in range(R)] for h in range(H)]
    ei = [[round(e[m, r] * r_scale[r]) for r in range(R)] for m in range(M)]
    zi = [[round(z[p, r] * r_scale[r]) for r in range(R)] for p in range(P)]
    bi = [round(x * bw_scale) for x in data.worker_bw]
    Bi = [round(x * bw_scale) for x in data.ps_bw]
    # the weights' scale is that of the finest weight: 10^6 x a weight of 10^6, times completions up to L,
    # can pass CP-SAT's integers (the rows' own sums are caught by `run_cpsat`'s overflow check)
    largest = sum(round(jd.weight * w_scale) for jd in data.jobs) * L
    if largest > CPSAT_MAX_INT:
        raise cpsat_overflow("the weighted completion times' largest sum", largest, f"weights x {w_scale:,}")

    model = cp_model.CpModel()
    cm = CpsatModel(model, data, w_scale)
    intervals: list[Any] = []
    demands: dict[tuple[int, int], list[Any]] = {(h, r): [] for h in range(H) for r in range(R)}
    objective = []
    if data.unschedulable():
        model.add_bool_or([])  # (2a) cannot hold for a job that fits nowhere: an empty clause is infeasible
    for jd in data.jobs:
        if not jd.configs:
            continue
        j, D = jd.index, jd.max_workers
        cfg = [model.new_bool_var(f"job{j}_cfg_m{c.worker_type}_p{c.ps_type}_{'col' if c.colocated else 'dist'}"
                                  f"_n{c.workers}") for c in jd.configs]
        for k, var in enumerate(cfg):
            cm.config[j, k] = var
        model.add_exactly_one(cfg)  # (2a) with one configuration
        dur = model.new_int_var_from_domain(cp_model.Domain.from_values(jd.durations), f"duration_of_job{j}")
        model.add(dur == sum(c.duration * v for c, v in zip(jd.configs, cfg, strict=True)))  # (2f)
        start = model.new_int_var(jd.earliest, L - min(jd.durations), f"start_of_job{j}")  # (2j)
        end = model.new_int_var(jd.earliest + min(jd.durations), L, f"end_of_job{j}")  # completion <= T
        intervals.append(model.new_interval_var(start, dur, end, f"run_of_job{j}"))
        cm.start[j], cm.duration[j] = start, dur
        objective.append(round(jd.weight * w_scale) * end)

        # (2b)/(2c): one worker type, one PS type
        wtype = [model.new_bool_var(f"job{j}_wtype{m}") for m in range(M)]
        for m in range(M):
            model.add(wtype[m] == sum(v for c, v in zip(jd.configs, cfg, strict=True) if c.worker_type == m))
        ptype = [model.new_bool_var(f"job{j}_ptype{p}") for p in range(P)]
        if not data.ring:
            for p in range(P):
                model.add(ptype[p] == sum(v for c, v in zip(jd.configs, cfg, strict=True) if c.ps_type == p))
        q = model.new_bool_var(f"job{j}_colocated")
        model.add(q == sum(v for c, v in zip(jd.configs, cfg, strict=True) if c.colocated))

        y = {}
        for h in range(H):
            for m in range(M):
                ub = int(min(D, data.worker_cap[h, m]))
                y[h, m] = model.new_int_var(0, ub, f"y_job{j}_srv{h}_wt{m}")
                model.add(y[h, m] <= ub * wtype[m])  # (2b)
        s = {}
        if not data.ring:
            for h in range(H):
                for p in range(P):
                    ub = int(data.ps_cap[h, p])
                    s[h, p] = model.new_int_var(0, ub, f"s_job{j}_srv{h}_pt{p}")
                    model.add(s[h, p] <= ub * ptype[p])  # (2c)
            model.add(sum(s.values()) >= 1)  # (2e)
        cm.y.update({(j, h, m): v for (h, m), v in y.items()})
        cm.s.update({(j, h, p): v for (h, p), v in s.items()})
        model.add(sum(y.values()) == sum(c.workers * v for c, v in zip(jd.configs, cfg, strict=True)))  # (2f)(2g)

        # (2d)/(15a): q_j = 1 iff everything sits on one server
        on = [model.new_bool_var(f"job{j}_all_on_srv{h}") for h in range(H)]
        used = [model.new_bool_var(f"job{j}_uses_srv{h}") for h in range(H)]
        model.add(sum(on) == q)
        for h in range(H):
            here = sum(y[h, m] for m in range(M)) + sum(s[h, p] for p in range(P) if (h, p) in s)
            model.add(here == 0).only_enforce_if([q, ~on[h]])
            model.add(here >= 1).only_enforce_if(used[h])
            model.add(here == 0).only_enforce_if(~used[h])
        model.add(sum(used) >= 2).only_enforce_if(~q)

        # (2i): a PS on h covers the bandwidth of the workers on other servers
        if not data.ring:
            for h in range(H):
                hasps = model.new_bool_var(f"job{j}_ps_on_srv{h}")
                ps_here = sum(s[h, p] for p in range(P))
                model.add(ps_here >= 1).only_enforce_if(hasps)
                model.add(ps_here == 0).only_enforce_if(~hasps)
                remote = sum(bi[m] * y[hh, m] for hh in range(H) if hh != h for m in range(M))
                model.add(sum(Bi[p] * s[h, p] for p in range(P)) >= remote).only_enforce_if(hasps)

        # (2h)/(15b): the job's load on (h, r), held over its interval
        for h in range(H):
            for r in range(R):
                expr = sum(ei[m][r] * y[h, m] for m in range(M) if ei[m][r]) + sum(
                    zi[p][r] * s[h, p] for p in range(P) if (h, p) in s and zi[p][r])
                if isinstance(expr, int):
                    continue
                load = model.new_int_var(0, cap[h][r], f"load_job{j}_srv{h}_res{r}")
                model.add(load == expr)
                demands[h, r].append((intervals[-1], load))
    _hold_taken(model, data, r_scale, cap, demands)
    for (h, r), items in demands.items():
        if items:
            model.add_cumulative([i for i, _ in items], [d for _, d in items], cap[h][r])  # (2h)
    if strengthen:
        _order_identical_servers(cm)
    model.minimize(sum(objective))
    return cm


def _hold_taken(model: cp_model.CpModel, data: ModelData, r_scale: list[int], cap: list[list[int]],
                demands: dict[tuple[int, int], list[Any]]) -> None:
    """Capacity taken by others (``data.free`` below C_h^r: a neighbourhood of the LNS) as fixed intervals.

    Each maximal run of slots with the same taken amount C_h^r - free_h^r(t) becomes one fixed
    interval with that demand in the (h, r) cumulative, so the window's jobs get exactly the free part.
    """
    L = data.length
    for (h, r), items in demands.items():
        if not items:
            continue
        taken = [cap[h][r] - math.floor(data.free[h, r, t] * r_scale[r] + 1e-6) for t in range(L)]
        t = 0
        while t < L:
            u = t
            while u < L and taken[u] == taken[t]:
                u += 1
            if taken[t] > 0:
                items.append((model.new_fixed_size_interval_var(t, u - t, f"taken_srv{h}_res{r}_{t}"), taken[t]))
            t = u
def _order_identical_servers(cm: CpsatModel) -> None:
    """Symmetry breaking: of two identical servers h < h', h carries at least h''s weighted placement count.

    Valid inequality: servers with equal capacity, free profile and per-type limits are
    interchangeable in program (2)/(15) (no constraint or cost names a server otherwise), so swapping
    all workers and PSs of h and h' maps a schedule to one with the same objective; sorting the
    servers of a class by sum_j c_j (workers + PSs of j on the server), c_j = J - j, keeps one
    optimal schedule of every orbit.
    """
    data = cm.data
    J = len(data.jobs)
    count: dict[int, list] = {h: [] for h in range(data.n_servers)}
    for (j, h, _m), v in cm.y.items():
        count[h].append((J - j) * v)
    for (j, h, _p), v in cm.s.items():
        count[h].append((J - j) * v)
    for h, h2 in consecutive_pairs(identical_servers(data)):
        cm.model.add(sum(count[h]) >= sum(count[h2])).with_name(f"valid_symmetry_servers_{h}_{h2}")


def extract_cpsat(cm: CpsatModel, solver: cp_model.CpSolver) -> list[Placement]:
    """Read the placements from a solved model."""
    data = cm.data
    out = []
    for jd in data.jobs:
        if not jd.configs:
            continue
        j = jd.index
        k = next(k for k in range(len(jd.configs)) if solver.value(cm.config[j, k]))
        cf = jd.configs[k]
        workers = {h: int(solver.value(cm.y[j, h, cf.worker_type])) for h in range(data.n_servers)}
        ps = {} if data.ring else {h: int(solver.value(cm.s[j, h, cf.ps_type])) for h in range(data.n_servers)}
        out.append(Placement(
            job=j, start=data.t0 + int(solver.value(cm.start[j])), duration=int(solver.value(cm.duration[j])),
            worker_type=cf.worker_type, ps_type=cf.ps_type, colocated=cf.colocated,
            workers={h: n for h, n in workers.items() if n > 0}, ps={h: n for h, n in ps.items() if n > 0},
        ))
    return out


@deadline_bounded("hetero", "cpsat")
def solve_cpsat(instance: Any, *, time_limit: float = 60.0, workers: int = 2, log: bool = False,
                strengthen: bool = True, deadline: Deadline | None = None, hint: Any = None,
                **options: Any) -> Result:
    """Solve program (2) (or (15) for Ring-AllReduce) with CP-SAT.

    ``strengthen``: add the valid inequalities (symmetry breaking over identical servers, objective >=
    the certified bound of `formulations.strengthen`); False builds the model without them. With a
    ``hint`` the symmetry rows are left out: a warm start need not be the representative they keep.
    ``hint``: a schedule (a `Schedule` or its JSON) given as solution hints (``start.py``).
    """
    from edgeopt.hetero import FAMILY

    if options:
        raise TypeError(f"unknown options: {sorted(options)}")
    t0 = time.perf_counter()
    deadline = deadline or Deadline(time_limit)
    floor = certified_floor(instance, deadline) if strengthen else None
    with deadline.guard():
        data = prepare(instance)
        cm = build_cpsat(data, strengthen=strengthen and hint is None)
        if floor is not None and data.t0 == 0:
            # model objective = weight_scale * (the schedule's objective), an integer
            add_cpsat_floor(cm.model, floor_in_model_units(floor, cm.weight_scale))
        hinted = hint_cpsat(cm, FAMILY.parse_schedule(hint)) if hint is not None else None
    build_s = time.perf_counter() - t0
    outcome, solver = run_cpsat(cm.model, time_limit=time_limit, workers=workers, log=log, deadline=deadline)
    # the model's objective is sum_j round(w_j * scale) * end_j: scale back
    if outcome.objective is not None:
        outcome.objective = outcome.objective / cm.weight_scale
    if outcome.bound is not None:
        outcome.bound = outcome.bound / cm.weight_scale
    extra: dict[str, Any] = {"program": "15" if data.ring else "2", "weight_scale": cm.weight_scale,
                             "strengthen": strengthen, "objective_floor": floor}
    if hinted is not None:
        extra["hinted_jobs"] = hinted
    if data.unschedulable():
        extra["unschedulable_jobs"] = data.unschedulable()
    if outcome.status == Status.INFEASIBLE or not outcome.has_solution:
        return infeasible_result(FAMILY, instance, "cpsat", outcome, extra=extra, build_s=build_s)
    schedule = to_schedule(instance, extract_cpsat(cm, solver))
    return finish(FAMILY, instance, "cpsat", outcome, schedule, extra=extra, build_s=build_s)
