"""``solve --method milp`` for hetero: the time-indexed MILP of ``milp.py``, with reduced-cost fixing first.

Kept apart from ``milp.py`` because the fixing's incumbent comes from a large-neighbourhood search whose windows
are themselves MILPs (``fixing.py`` -> ``lns.py`` -> ``milp.py``): with the solve in ``milp.py`` the imports would
go round in a circle.
"""

from __future__ import annotations

import math
import time
from typing import Any

from edgeopt.core import Deadline, Result, Status
from edgeopt.core.limits import guard_built
from formulations.common import deadline_bounded, finish, solve_pyomo
from formulations.hetero.data import prepare
from formulations.hetero.milp import build_milp, extract_milp
from formulations.hetero.schedule_io import infeasible_result, to_schedule
from formulations.hetero.sizes import milp_size_of
from formulations.hetero.start import start_milp


@deadline_bounded("hetero", "milp")
def solve_milp(instance: Any, *, time_limit: float = 60.0, threads: int = 1, rel_gap: float | None = None,
               tee: bool = False, strengthen: bool = True, fix: bool = True, fix_min_vars: int | None = None,
               lns_share: float | None = None, deadline: Deadline | None = None, hint: Any = None,
               **options: Any) -> Result:
    """Solve program (2) (or (15) for Ring-AllReduce) with the time-indexed MILP and HiGHS.

    ``strengthen``: accepted for a uniform interface; the solve adds no rows. Both candidates slowed HiGHS
    down (benchmarks/results/exact_scale_paired.json: with the symmetry-breaking rows of
    ``build_milp(strengthen=True)`` the largest size proved in 60 s fell from 14 to 12 jobs, 36.6 vs 28.5 s
    CPU on the sizes both proved; the objective floor of `formulations.strengthen` likewise).
    ``hint``: a schedule (a `Schedule` or its JSON) handed to HiGHS as a MIP start (``start.py``); with ``fix``
    it is one of the incumbents instead.

    ``fix`` (default): reduced-cost fixing (``fixing.py``): an incumbent (the hint, the list schedulers and a
    short large-neighbourhood search) and the prices of the certified bound ``ti_lp`` remove every start no
    better schedule uses before the model is built, and HiGHS is asked for a schedule strictly better than the
    incumbent (its ``objective_bound``); when there is none, the incumbent is returned, proven optimal (with
    the bound's certificate in ``extra["certificate"]`` when the bound alone meets it). ``extra["fixing"]``
    records the incumbent, the bound and how many start variables were removed, ``extra["timings"]`` the time
    of each step. Models with fewer than ``fix_min_vars`` start variables
    (`formulations.hetero.fixing.FIX_MIN_VARS`) are solved unfixed. ``lns_share``: the share of the time left
    that the incumbent's search may take (default `formulations.hetero.fixing.LNS_SHARE`, at most 12 s; 0: none).
    """
    from edgeopt.hetero import FAMILY
    from formulations.common import REL_GAP
    from formulations.fixing import conclude, skipped_search

    if options:
        raise TypeError(f"unknown options: {sorted(options)}")
    t0 = time.perf_counter()
    deadline = deadline or Deadline(time_limit)
    with deadline.guard():
        data = prepare(instance)
        bad = data.unschedulable()
    fixing, timings = None, {}
    if fix and not bad:
        from formulations.hetero import fixing as het_fixing

        least = het_fixing.FIX_MIN_VARS if fix_min_vars is None else fix_min_vars
        if het_fixing.start_variables(data) >= least:
            data, fixing, timings = het_fixing.prepare_fixing(
                instance, data, hint=hint, deadline=deadline,
                lns_share=het_fixing.LNS_SHARE if lns_share is None else lns_share)
    extra: dict[str, Any] = {"program": "15" if data.ring else "2", "strengthen": strengthen, "fix": fix}
    highs_options: dict[str, Any] = {}
    if fixing is not None:
        extra["fixing"] = fixing.record()
        extra["timings"] = timings
        if (skip := skipped_search(fixing)) is not None:
            outcome, _ = conclude(skip, fixing)
            if fixing.prices.bound >= fixing.incumbent.objective:
                # the bound alone is the proof: its certificate, which edgeopt validate re-checks without a solver
                extra["certificate"] = dict(fixing.prices.certificate)
            return finish(FAMILY, instance, "milp", outcome, fixing.incumbent.schedule, extra=extra,
                          build_s=time.perf_counter() - t0)
        # HiGHS prunes every node above it and answers "infeasible" when no schedule is below it
        highs_options["objective_bound"] = fixing.solver_cutoff()
    # a size guard deferred to the fixed model (`edgeopt.core.limits.guard_built`; a no-op otherwise)
    guard_built(milp_size_of(data) if fixing is not None else None)
    t1 = time.perf_counter()
    with deadline.guard():
        model = build_milp(data, objective="wct")
        start = start_milp(model, FAMILY.parse_schedule(hint)) if hint is not None and fixing is None else None
    timings["model_s"] = time.perf_counter() - t1
    build_s = time.perf_counter() - t0
    outcome = solve_pyomo(model, time_limit=time_limit, rel_gap=REL_GAP if rel_gap is None else rel_gap,
                          threads=threads, tee=tee, deadline=deadline, start=start, highs_options=highs_options)
    extra.update({"n_vars": model.nvariables(), "n_constraints": model.nconstraints()})
    if hint is not None and fixing is None:
        extra["mip_start_values"] = outcome.start_values
    if bad:
        extra["unschedulable_jobs"] = bad
    if outcome.bound is not None and all(float(j.weight).is_integer() for j in instance.jobs):
        # integer weights and slots: every schedule's objective is an integer, so the optimum is at
        # least ceil(bound) (HiGHS itself stops on this when it detects the objective's integrality)
        extra["bound_highs"] = outcome.bound
        outcome.bound = float(math.ceil(outcome.bound - 1e-6))
    schedule = None
    if outcome.has_solution and outcome.status != Status.INFEASIBLE:
        schedule = to_schedule(instance, extract_milp(model))
    if fixing is not None:
        outcome, use_incumbent = conclude(outcome, fixing)
        if use_incumbent:
            schedule = fixing.incumbent.schedule
    if outcome.status == Status.INFEASIBLE or not outcome.has_solution:
        return infeasible_result(FAMILY, instance, "milp", outcome, extra=extra, build_s=build_s)
    return finish(FAMILY, instance, "milp", outcome, schedule, extra=extra, build_s=build_s)


