"""``solve --warm-start ALG|best``: an exact solve whose incumbent is never worse than a registered algorithm's.

The algorithm (``best``: every registered algorithm that schedules the real problem, i.e. not a
relaxed one) runs first, inside the call's time limit; its best complete, validated schedule is the
warm start. The algorithms run in turn while time is left; an algorithm of kind ``offline`` (tens of
seconds at the papers' scale) that runs after a complete schedule was found is interrupted at the deadline
(`Deadline.guard`), keeping the best schedule found before it. The exact method then gets the remaining
time. The result is the solver's when the
solver proves optimality or finds a schedule at least as good; otherwise the warm-start schedule
with status ``time_limit`` and the solver's proven bound (if any), so the incumbent is never worse
than the warm start. ``extra["warm_start"]`` records which algorithm gave it, its objective and
whether it was kept.

Where the exact method takes a ``hint`` argument, the warm-start schedule is handed to the solver:
a MIP start for HiGHS (``formulations/common.py``, ``start=``), solution hints for CP-SAT; elsewhere
the solver's own search starts cold, and the guarantee above comes from keeping the better of the two.

When the family's certified lower bound (computed where the solver proved none) reaches the objective of
the schedule returned, that schedule is optimal: the result says ``optimal``, with the bound's certificate
as ``extra["certificate"]`` (the proof, re-checked by ``validate`` and ``validate --certify`` without a
solver) and ``extra["proof"]`` saying so (`proven_by_bound`). The LNS stops there too.

``lns=True`` (`solve_lns`): instead of one solve of the whole model, a large-neighbourhood search
(`edgeopt.core.lns`) re-solves windows of a few jobs with the family's exact model ``method``
(``formulations.<family>.NEIGHBOURHOODS``) until the time limit; the certified bound is computed
first, with at most a quarter of the time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from edgeopt.core import BuildTimeLimit, InputError, ModelError, Result, Status
from edgeopt.core.limits import DEFAULT_MAX_NONZEROS, Deadline
from edgeopt.services import lookup, running
from edgeopt.solving import bounds


def warm_start_schedule(instance: Any, warm_start: str, deadline: Deadline) -> tuple[str, Result] | None:
    """The best complete validated result of ``warm_start`` (an algorithm name or ``best``), or None."""

    spec = lookup.family_of(instance)
    algos = lookup.algorithms(spec.name)
    if warm_start == "best":
        names = [n for n, a in algos.items() if not a.relaxed]
    else:
        lookup.check_choice("warm_start", warm_start, sorted([*algos, "best"]), f"{spec.name} algorithm")
        if algos[warm_start].relaxed:
            raise InputError("warm_start", f"{warm_start!r} schedules a relaxation, so it is no warm start")
        names = [warm_start]
    best: tuple[str, Result] | None = None
    for name in names:
        if deadline.expired() and best is not None:
            break
        # the first complete schedule is waited for
        res = run_in_time(algos[name], lambda n=name: running.run(n, instance, seed=0), deadline,
                          interruptible=best is not None)
        if res is None:
            break
        if res.comparable and not spec.check_result(instance, res) and (best is None or
                                                                         res.objective < best[1].objective):
            best = (name, res)
    return best


def run_in_time(algo: Any, call: Callable[[], Result], deadline: Deadline, *, interruptible: bool = True
                ) -> Result | None:
    """``call()``, a run of the registered algorithm ``algo``; None when the deadline interrupted it.

    Only an algorithm of kind ``offline`` (tens of seconds at the papers' scale) is interrupted
    (`Deadline.guard`). Online algorithms and baselines take seconds and run to the end: they may import a
    library lazily (torch for the learned policies), which an asynchronous interruption would leave
    half-initialised in the process. ``interruptible=False`` runs any algorithm to the end."""
    if not interruptible or algo.kind != "offline":
        return call()
    try:
        with deadline.guard(f"the run of {algo.family}/{algo.name}"):
            return call()
    except BuildTimeLimit:
        return None


def accepts_hint(instance: Any, method: str) -> bool:
    """Whether the family's exact ``method`` takes a ``hint`` schedule (CP-SAT solution hints)."""
    return lookup.method_takes(lookup.family_of(instance).name, method, "hint")


def solve_lns(instance: Any, *, method: str, time_limit: float, warm_start: str, sub_limit: float = 10.0,
              min_sub_limit: float = 0.5, max_model_size: int | None = None) -> Result:
    """Warm start, certified bound, then LNS until ``time_limit`` (the whole call) or until the incumbent meets
    the bound; status ``time_limit``, or ``optimal`` when the bound meets it (`proven_by_bound`).

    The incumbent is the warm start improved by every neighbourhood solve that gave a valid, better,
    complete schedule (`edgeopt.core.lns.search`), so never worse than the warm start. Without a
    complete warm start there is nothing to improve: an `InputError` on ``warm_start``. The time
    limit covers the whole call: the neighbourhood is imported before the deadline starts, and when
    the warm start leaves less than ``min_sub_limit`` seconds (no window could start) its result is
    returned at once. The first warm-start algorithm always runs to its end (`warm_start_schedule`).

    ``max_model_size`` bounds each window's model (the whole model is never built): a window whose
    estimate is above it is refused before it is built and the next one is smaller; when even one-job
    windows are all refused the search stops and ``extra["reason"]`` says so. None: the default budget
    (`DEFAULT_MAX_NONZEROS`), as for a whole model.
    """
    from edgeopt.core.lns import SearchLog, search

    spec = lookup.family_of(instance)
    hoods = lookup._formulations_table(spec.name, "NEIGHBOURHOODS")
    if method not in hoods:
        known = ", ".join(sorted(hoods)) or "none"
        raise InputError("method", f"{spec.name} has no LNS neighbourhood for {method!r} (has: {known})")
    hood = hoods[method]()  # imports the family's neighbourhood module now, before the deadline starts
    deadline = Deadline(time_limit)
    found = warm_start_schedule(instance, warm_start, deadline)
    if found is None:
        raise InputError("warm_start", f"{warm_start!r} gave no complete valid schedule: the LNS needs one to improve")
    name, ws = found
    extra: dict[str, Any] = {"warm_start": {"requested": warm_start, "algorithm": name, "objective": ws.objective,
                                            "kept": True}}
    if deadline.remaining(floor=0.0) < min_sub_limit:
        # no window could start: the warm start as it is, without reading its schedule back (seconds at
        # the papers' sizes) or computing a bound
        extra["lns"] = {"method": method, "sub_limit_s": sub_limit,
                        **SearchLog(start_objective=ws.objective, objective=ws.objective,
                                    history=[(0.0, ws.objective)]).as_dict()}
        return Result(family=ws.family, algorithm=method, status=Status.TIME_LIMIT, objective=ws.objective,
                      bound=None, runtime_s=deadline.elapsed(), schedule=ws.schedule,
                      instance_sha256=ws.instance_sha256, extra=extra)
    bound = None
    certified = None
    if deadline.remaining(floor=0.0) > 2.0:
        certified = bounds.bound(instance, time_limit=deadline.remaining() / 4)
        if certified.bound is not None and certified.bound <= ws.objective:
            bound = certified.bound
            extra["bound_method"] = certified.algorithm
            extra["bound_certificate"] = certified.extra.get("certificate")
    budget = DEFAULT_MAX_NONZEROS if max_model_size is None else int(max_model_size)
    best, objective, log = search(spec, instance, spec.parse_schedule(ws.schedule), hood,
                                  deadline=deadline, sub_limit=sub_limit, min_sub_limit=min_sub_limit,
                                  max_nonzeros=budget, lower=bound)
    extra["warm_start"]["kept"] = log.improvements == 0
    extra["lns"] = {"method": method, "sub_limit_s": sub_limit, "max_model_size": budget, **log.as_dict()}
    if log.stop is not None:
        extra["reason"] = f"{log.stop}: raise --max-model-size"
    out = Result(family=ws.family, algorithm=method, status=Status.TIME_LIMIT, objective=objective,
                 bound=bound if bound is not None and bound <= objective else None, runtime_s=deadline.elapsed(),
                 schedule=best.model_dump(mode="json"), instance_sha256=ws.instance_sha256, extra=extra)
    return proven_by_bound(out, certified)


def proven_by_bound(result: Result, certified: Result | None) -> Result:
    """``result`` (a complete, validated schedule) as an ``optimal`` result whose proof is ``certified``'s
    certificate when that certified bound meets its objective (`edgeopt.core.lns.meets`); ``result`` as it
    is otherwise. ``validate`` and ``validate --certify`` re-check the proof without a solver
    (`edgeopt.solving.bounds.check_optimal`)."""
    from edgeopt.core.lns import meets

    if certified is None or not meets(certified.bound, result.objective):
        return result
    extra = {k: v for k, v in result.extra.items() if k not in ("bound_certificate", "bound_method")}
    extra.update(certificate=certified.extra.get("certificate"), bound_method=certified.algorithm,
                 proof=f"the certified {certified.algorithm} bound {certified.bound:g} meets the schedule's objective")
    return Result(family=result.family, algorithm=result.algorithm, status=Status.OPTIMAL,
                  objective=result.objective, bound=result.objective, runtime_s=result.runtime_s,
                  schedule=result.schedule, instance_sha256=result.instance_sha256, extra=extra)


def solve_warm(instance: Any, *, method: str, time_limit: float, warm_start: str,
               solve: Any, **options: Any) -> Result:
    """Run the warm start, then ``solve(instance, method=..., time_limit=remaining, ...)``; keep the better.

    A model the size budget refuses is not solved, and a solver answer that fails its own check
    (`ModelError`) is not used: the warm start is returned (status ``feasible``, the refusal or the
    error in ``extra["reason"]``). When the solver proved no bound, the family's certified
    lower bound (`edgeopt.solving.bounds.bound`) is computed with the time left and attached.
    """

    deadline = Deadline(time_limit)
    found = warm_start_schedule(instance, warm_start, deadline)
    if found is not None and accepts_hint(instance, method):
        options = {**options, "hint": found[1].schedule}
    try:
        result: Result | None = solve(instance, method=method, time_limit=max(0.05, deadline.remaining()), **options)
        refused = None
    except InputError as exc:
        if found is None or exc.field != "instance":
            raise
        result, refused = None, str(exc)
    except ModelError as exc:
        # a solver answer that contradicts its own schedule is a defect: reported, and the validated
        # warm start is returned instead of nothing
        if found is None:
            raise
        result, refused = None, f"the exact method failed: {exc}"
    if found is None:
        assert result is not None
        result.extra["warm_start"] = {"requested": warm_start, "algorithm": None, "objective": None, "kept": False}
        return result
    name, ws = found
    solver_better = result is not None and result.objective is not None and result.schedule is not None and (
        result.status == Status.OPTIMAL or result.objective <= ws.objective)
    info = {"requested": warm_start, "algorithm": name, "objective": ws.objective, "kept": not solver_better}
    if solver_better:
        assert result is not None
        result.extra["warm_start"] = info
        return result
    extra: dict[str, Any] = {"warm_start": info}
    bound = None
    if result is not None:
        extra.update({k: v for k, v in result.extra.items() if k not in ("rejected", "rejected_count", "warm_start")})
        extra["solver_status"], extra["solver_objective"] = result.status.value, result.objective
        bound = result.bound if result.bound is not None and result.bound <= ws.objective else None
    else:
        extra["reason"] = refused
    certified = None
    if bound is None and deadline.remaining(floor=0.0) > 1.0:
        certified = bounds.bound(instance, time_limit=deadline.remaining())
        if certified.bound is not None and certified.bound <= ws.objective:
            bound = certified.bound
            extra["bound_method"] = certified.algorithm
            extra["bound_certificate"] = certified.extra.get("certificate")
    out = Result(family=ws.family, algorithm=method, status=Status.TIME_LIMIT if result is not None else Status.FEASIBLE,
                 objective=ws.objective, bound=bound, runtime_s=deadline.elapsed(), schedule=ws.schedule,
                 instance_sha256=ws.instance_sha256, extra=extra)
    return proven_by_bound(out, certified)
