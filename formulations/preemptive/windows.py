"""Per-job time windows for the exact models: an incumbent and the certified LP's duals shrink every job's slots.

Every schedule of value at most UB (an incumbent's objective) completes job j by
``r_j + UB - (a lower bound on the other jobs' total JCT)``, so the slots after that deadline can be left out of
the time-indexed models without losing any schedule that is at least as good as the incumbent, and so without
changing the optimum (`data.with_upper_bound`). The lower bound used to be the sum of the other jobs' earliest
JCTs, which ignores that they compete for workers. Here it also comes from the certified LP of ``lp4_jct``
(`formulations.preemptive.lpbound`): with the job's own columns and rows removed, that LP is a relaxation of the
problem without job j (its shared rows are the worker groups' capacities, which no job changes, and a schedule of
the other jobs is a schedule of the whole problem with j's share left out), so the weak-duality value at the full
LP's duals without job j's terms (`edgeopt.core.lpbound.dual_bounds_without`, float-safe, no solver) bounds the
other jobs' total JCT from below. JCTs are integers, so it is rounded up.

Measured on the `small` ladder (seed 1, 40 jobs, incumbent 152 from the list schedulers): the windows went from
about 40 slots beyond each job's earliest JCT to about 15, and the MILP from 57,247 to 11,640 variables.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from edgeopt.core import Deadline
from formulations.preemptive.data import ModelData, with_upper_bound

#: The list schedulers whose best complete, validated schedule is the incumbent (the strongest on the
#: `small` ladder and the paper presets; each takes about 0.01 s at 40 jobs and 1.3-4 s at 300). `offline_fill`
#: (ours, offline) is the best of them on the ladder's rungs of 32-64 jobs (seed 1: 99 / 132 / 169 / 227 against
#: `online`'s 110 / 153 / 186 / 257; the optima at 32 and 40 are 96 and 129).
INCUMBENT_ALGORITHMS = ("offline_fill", "srtf_elastic", "tiresias_l_elastic", "online", "batchsche")
#: Instances with fewer jobs are solved without windows unless asked for: their models are proven in about a
#: second, and an incumbent would only add its own time.
WINDOW_MIN_JOBS = 16
#: Most of the time limit (share, and seconds) the LP of the windows may take.
LP_SHARE = 0.1
LP_CAP_S = 10.0
#: Most of the time left (share, and seconds) the large-neighbourhood search (`formulations.preemptive.lns`) may
#: spend improving the list schedulers' incumbent before the windows are cut; every slot the upper bound drops
#: narrows every job's window by a slot. On the `small` ladder's 40 jobs (seed 1) the list schedulers give 152
#: (optimum 129); 15 s of search gave 133, and the windowed MILP then proved 129 in 57 s of CPU in all against
#: 140 s.
LNS_SHARE = 0.2
LNS_CAP_S = 12.0

#: Whether the windows also use the floors of ``config_jct``'s prices (`others_floors` with ``plans``). Off: on the
#: `small` ladder's 40 jobs (seed 1, incumbent 130) they cut the windows from 8.75 to 5.75 slots a job and the MILP
#: from 4,226 to 3,196 variables, but HiGHS then took 102.8 and 113.6 s of CPU to prove 129 against 64.8 and 67.3 s
#: with the LP's floors alone (2026-12-07). The checked ``config_jct`` bound itself is still computed: it proves an
#: incumbent it meets, and closes or lifts what the search ends with (`close_by_certificate`).
PLAN_FLOORS = False
#: Why a result proven by `Windows.proof` ran no search.
PROOF_MESSAGE = "no search: the certified config_jct bound meets the incumbent"

#: ``(incumbent, seconds, timings) -> incumbent``: improves the windows' incumbent (`milp.lns_improver`); it lives
#: with the caller because the search's windows are CP-SAT models of ``cpsat.py``, which itself cuts windows here.
Improve = Callable[[Any, float, dict[str, float]], Any]


@dataclasses.dataclass
class Windows:
    """What `job_windows` decided.

    Attributes:
        data: the model data with the per-job deadlines (unchanged when there is no upper bound).
        upper_bound: the value every kept schedule is at most (None: no windows).
        incumbent: the list scheduler's schedule the upper bound came from (`formulations.fixing.Incumbent`),
            or None when the caller's ``upper_bound`` was lower or none was found.
        lp_status: the LP's status word ("" when it was not solved).
        timings: seconds of the incumbent's search (``lns_s``, ``lns_cpu_s``; empty when it did not run).
    """

    data: ModelData
    upper_bound: float | None = None
    incumbent: Any = None
    lp_status: str = ""
    timings: dict[str, float] = dataclasses.field(default_factory=dict)
    #: the checked ``config_jct`` bound (`certified_plans`): its value and certificate, or None
    certified: Any = None

    def proof(self) -> dict[str, Any] | None:
        """The certificate that proves the incumbent optimal without a search (the certified bound reaches its
        objective), or None."""
        from edgeopt.core.lns import meets

        inc, cert = self.incumbent, self.certified
        if inc is None or cert is None or not meets(cert.bound, inc.objective):
            return None
        return dict(cert.extra["certificate"])

    def record(self, before: ModelData) -> dict[str, Any]:
        """``extra["windows"]`` of the result: where the upper bound came from, and how much the windows cut."""
        J = self.data.n_jobs
        if self.upper_bound is None or J == 0:
            return {"upper_bound": None}
        slots = [self.data.end(j) - int(self.data.arrival[j]) for j in range(J)]
        slots_before = [before.end(j) - int(before.arrival[j]) for j in range(J)]
        return {
            "upper_bound": self.upper_bound,
            "incumbent_from": None if self.incumbent is None else self.incumbent.source,
            "lp": self.lp_status,
            "mean_window_slots": round(float(np.mean(slots)), 2),
            "mean_window_slots_before": round(float(np.mean(slots_before)), 2),
            "certified_bound": None if self.certified is None else self.certified.bound,
            **{k: round(v, 3) for k, v in self.timings.items() if k.startswith("lns")},
        }


def others_floors(data: ModelData, *, time_limit: float = LP_CAP_S, plans: bool = True,
                  prices: np.ndarray | None = None) -> tuple[np.ndarray | None, str]:
    """Per job j, a lower bound on sum_{i != j} (c_i - r_i) over every complete schedule (module docstring),
    and the LP's status word; None when the LP is not solved to optimality within ``time_limit``.

    ``plans``: also the single-job plans' Lagrangian without job j (`configbound.others_floors`, ``config_jct``'s
    relaxation, which charges each job its last slot), at ``prices`` when given (a checked certificate's), else
    at prices found in what is left of ``time_limit``; the larger floor of the two is kept per job. On the
    `small` ladder (seed 1, servers growing with the jobs) it is up to 4-5 above the LP's at 40-64 jobs."""
    from edgeopt.core.lpbound import dual_bounds_without, round_up, solve_lp
    from formulations.preemptive import configbound
    from formulations.preemptive.lpbound import relaxation_of

    if data.n_jobs == 0:
        return np.zeros(0), ""
    deadline = Deadline(time_limit)
    lp, job_of_col = relaxation_of(data)
    sol = solve_lp(lp, time_limit=time_limit)
    if sol.status != "Optimal" or sol.row_dual is None:
        return None, sol.status
    floors = dual_bounds_without(lp, sol.row_dual, job_of_col)
    out = np.array([round_up(float(v), 1.0) if math.isfinite(v) else -math.inf for v in floors])
    if plans and deadline.remaining(floor=0.0) > 0.05:
        more = configbound.others_floors(data, deadline=Deadline(deadline.remaining(floor=0.0)), prices=prices)
        if more is not None:
            out = np.maximum(out, more)
    return out, sol.status


def job_windows(instance: Any, data: ModelData, *, upper_bound: float | None, hint: Any = None,
                deadline: Deadline | None = None, improve: Improve | None = None) -> Windows:
    """``data`` with per-job deadlines from the smaller of ``upper_bound`` and the best of ``hint`` and
    `INCUMBENT_ALGORITHMS`, that one improved by ``improve`` (the MILP's: the large-neighbourhood search,
    `milp.lns_improver`) for at most `LNS_SHARE` of the time left and `LNS_CAP_S` seconds, given a ``deadline``;
    the deadlines use the LP's floors (`others_floors`) when the LP is solved in time, else the earliest JCTs
    alone. No upper bound at all: ``data`` unchanged."""
    from edgeopt.preemptive import FAMILY
    from formulations.fixing import best_incumbent

    incumbent = best_incumbent(FAMILY, instance, hint=hint, algorithms=INCUMBENT_ALGORITHMS, deadline=deadline)
    timings: dict[str, float] = {}
    if (improve is not None and incumbent is not None and deadline is not None
            and (upper_bound is None or incumbent.objective < upper_bound)):
        incumbent = improve(incumbent, min(LNS_SHARE * deadline.remaining(floor=0.0), LNS_CAP_S), timings)
    if incumbent is not None and upper_bound is not None and upper_bound <= incumbent.objective:
        incumbent = None
    ub = incumbent.objective if incumbent is not None else upper_bound
    if ub is None:
        return Windows(data)
    budget = Deadline(max(0.05, LP_CAP_S if deadline is None else min(LP_CAP_S, LP_SHARE * deadline.remaining())))
    certified = certified_plans(instance, data, budget)
    prices = None
    if certified is not None and PLAN_FLOORS:
        from edgeopt.core.lowerbound import certificate_multipliers
        from formulations.preemptive.configbound import JobPlans

        prices = certificate_multipliers(JobPlans(data), certified)
    others, status = others_floors(data, time_limit=max(0.05, budget.remaining(floor=0.0)), plans=PLAN_FLOORS,
                                   prices=prices)
    return Windows(with_upper_bound(data, ub, others), float(ub), incumbent, status, timings, certified)


def certified_plans(instance: Any, data: ModelData, deadline: Deadline) -> Any:
    """The ``config_jct`` bound of ``instance`` within ``deadline``, its certificate re-checked without a solver
    (`edgeopt.core.lowerbound.check_certificate`); None when it fails, times out, does not check, or was built
    from other data than ``data`` (its fingerprint). Its prices also give the plans' floors (`others_floors`)."""
    from edgeopt.core import Status
    from edgeopt.core.lowerbound import check_certificate, compute_bound
    from formulations.preemptive.configbound import CONFIG_JCT, JobPlans

    try:
        res = compute_bound("preemptive", CONFIG_JCT, instance, deadline=deadline)
        if res.status != Status.BOUND or res.bound is None:
            return None
        if res.extra["certificate"]["fingerprint"] != JobPlans(data).fingerprint():
            return None
        check_certificate(CONFIG_JCT, instance, res)
    except Exception:  # noqa: BLE001 - an optional aid: without it the windows use the LP alone, still exact
        return None
    return res


def proven_outcome(cut: Windows) -> Any:
    """The outcome of a search that need not run: the incumbent, optimal, its proof `Windows.proof`."""
    from edgeopt.core import Status
    from formulations.common import SolverOutcome

    obj = float(cut.incumbent.objective)
    return SolverOutcome(Status.OPTIMAL, obj, obj, 0.0, PROOF_MESSAGE, True)


def proof_record(cut: Windows, before: ModelData, windows_s: float) -> dict[str, Any]:
    """The ``extra`` entries of a result proven by `Windows.proof` with no model built (``milp`` and ``cpsat``):
    the certificate, why, what the windows cut (``before``: the data they were cut from) and their time."""
    return {"certificate": cut.proof(), "proof": PROOF_MESSAGE,
            "windows": {**cut.record(before), "returned_incumbent": True},
            "timings": {"windows_s": round(windows_s, 6)}}


def close_by_certificate(outcome: Any, cut: Windows) -> tuple[Any, dict[str, Any]]:
    """The search's outcome with the certified bound of the windows (`certified_plans`) as its bound where that is
    higher, and, when it reaches the objective, status ``optimal`` with the certificate as the proof
    (``extra["certificate"]``, which `edgeopt validate` re-checks without a solver). Unchanged otherwise."""
    from edgeopt.core import Status
    from edgeopt.core.lns import meets

    cert = cut.certified
    if cert is None or outcome.objective is None or not outcome.has_solution:
        return outcome, {}
    obj = float(outcome.objective)
    if outcome.status != Status.OPTIMAL and meets(cert.bound, obj):
        return (dataclasses.replace(outcome, status=Status.OPTIMAL, bound=obj),
                {"certificate": dict(cert.extra["certificate"]),
                 "proof": f"the certified config_jct bound {cert.bound:g} meets the schedule's objective"})
    if outcome.bound is None or outcome.bound < cert.bound:
        return dataclasses.replace(outcome, bound=min(float(cert.bound), obj)), {}
    return outcome, {}


def windowed(instance: Any, data: ModelData, *, fix: bool, upper_bound: float | None, hint: Any = None,
             deadline: Deadline | None = None, improve: Improve | None = None) -> tuple[ModelData, Windows | None]:
    """The data an exact model is built from, and the windows when ``fix``: `job_windows`; without ``fix``, the
    caller's ``upper_bound`` alone cuts the windows (`data.with_upper_bound`), or nothing does."""
    if fix:
        cut = job_windows(instance, data, upper_bound=upper_bound, hint=hint, deadline=deadline, improve=improve)
        return cut.data, cut
    return (data if upper_bound is None else with_upper_bound(data, upper_bound)), None


def keep_incumbent(outcome: Any, schedule: Any, cut: Windows) -> tuple[Any, Any, bool]:
    """The search's outcome and schedule, or the incumbent's in their place when the search ended with nothing
    better (no schedule, or a worse one, at its limit); and whether the incumbent was returned.

    The solver's bound stays valid for the whole problem: every schedule of value at most the upper bound lies
    in the windowed model, an optimal one among them. The incumbent is proven optimal when that bound reaches it.

    Raises:
        ModelError: the windowed model was proven infeasible, or proven optimal above the incumbent, although the
            incumbent's schedule lies in it: the windows are wrong.
    """
    from edgeopt.core import ModelError, Status

    inc = cut.incumbent
    if inc is None:
        return outcome, schedule, False
    # up to float noise: HiGHS once reported 83.0000000000006 for a schedule of JCT 83, the incumbent's value
    better = (schedule is not None and outcome.objective is not None
              and outcome.objective <= inc.objective + 1e-6 * max(1.0, abs(inc.objective)))
    if better:
        return outcome, schedule, False
    if outcome.status in (Status.INFEASIBLE, Status.OPTIMAL):
        raise ModelError(f"preemptive windows: the windowed model ended {outcome.status.value} without a schedule as "
                         f"good as the incumbent ({inc.objective:g}, {inc.source}), which lies in it")
    closed = outcome.bound is not None and outcome.bound >= inc.objective - 1e-6
    bound = min(outcome.bound, inc.objective) if outcome.bound is not None else None
    return (dataclasses.replace(outcome, objective=float(inc.objective), bound=bound, has_solution=True,
                                status=Status.OPTIMAL if closed else outcome.status), inc.schedule, True)
