"""``oasis``: OASiS (Y. Bao, Y. Peng, C. Wu, Z. Li, "Online Job Scheduling in Distributed Machine Learning
Clusters", IEEE INFOCOM 2018, arXiv 1801.00936) as Han et al. use it as a baseline (Sec. V-A).

What the two papers say, and how we read it:

* Bao et al. (online primal-dual): every resource k of every server h in every slot t has a price
  ``p_h^k(t) = L^k (U^k / L^k) ** (g_h^k(t) / C_h^k)``, where g_h^k(t) is the amount already allocated
  and U^k, L^k bound the jobs' utility per unit of resource (U^k: the largest utility per unit of
  type-k resource; L^k: the smallest utility per unit of resource and unit of time, scaled down by
  1/(4 eta)). When job i arrives, a dual subroutine finds, over every completion time, the schedule
  (workers and parameter servers per server and slot) whose priced resource cost is least, and keeps
  the one of largest payoff ``mu_i = utility(completion) - priced cost``. The job is admitted iff
  ``mu_i > 0``; its allocation is then reserved and the prices rise. Otherwise it is rejected. Servers
  are chosen by price only: OASiS has no data locality and no inter-server bandwidth cost.
* Han et al. (Sec. V-A): "for each newly arrived job, OASiS computes the optimal schedule based on the
  unit resource cost to achieve the goal of minimizing the deployment cost. ... OASiS first computes
  the workload of sites at each time slot, and then transfers data online based on a similar fashion
  in Alg. 3." Sec. V-A also says OASiS takes the training time into account (its makespan is shorter
  than FIFO's and DRF's).

Our reading (``deployment cost`` = the priced resource cost of a schedule). Bao et al. define U^k and L^k
in words over their own model (utility at the fastest / slowest completion, per unit of resource and
time); which completion times and demands stand for those here is ours, below:

* Prices: exactly the form above, per resource k, site r and slot t, on the capacity reserved by the
  admitted jobs' plans. A site's zero-capacity resource is priced U^k (no job can use it).
* Utility. OASiS maximises utilities that fall with the completion time; our jobs carry a latency cost
  f_i that rises with it. We use ``u_i(x) = V_i - f_i(x)`` for a latency x = t_i - a_i + 1 with
  ``V_i = f_i(T - a_i + 1)``, the latency cost of a job not done by the last slot: the latency cost the
  schedule saves against the horizon, >= 0 and non-increasing over the horizon as OASiS requires.
  Finishing in the last slot T-1 is worth u_i(T - a_i) = f_i(T - a_i + 1) - f_i(T - a_i) (0 for a flat
  cost, e.g. a piecewise cost past its step: such a job is never admitted, as in OASiS).
* U^k = max_i u_i(1) / d_i^k with d_i^k the smallest positive type-k demand of one worker or the PS
  (jobs that need no type-k resource are left out; U^k = L when none needs it).
  L = min_i u_i^+ / (4 eta W_i sum_k (m_i^k + n_i^k)), with u_i^+ the smallest positive utility of job
  i over the horizon, W_i its worker-slots ceil(E_i D_i / rho_i), and eta = 1 (Bao et al.'s scaling
  factor; its bound is not checkable here). L is the same for every k, as in Bao et al. (their
  denominator sums over the resource types). U^k and L use every job's parameters: Bao et al. assume
  these bounds known in advance, so the prices (not the decisions) depend on jobs not yet arrived.
* Dual subroutine: one dynamic program over the slots a_i .. T-1 (the one of ``oasis_latency``): per
  slot and worker count x, the cheapest placement of x workers and one PS at the current prices (for
  each PS site, workers on the cheapest sites by ``sum_k p_r^k m_i^k``; the PS at ``sum_k p_r^k n_i^k``);
  over the slots, the per-slot counts that collect W_i worker-slots at least priced cost + f_i at the
  completion, i.e. the largest payoff u_i - cost, over every completion time.
* Admission: iff ``mu_i = V_i - f_i(x) - priced cost > 0``. A rejected job is listed in
  ``extra["rejected"]`` (status ``partial``, never ranked), and in ``extra["not_admitted"]`` when its
  payoff was <= 0 (the others had no feasible plan by T-1).
* Execution: the plan is reserved; data then moves slot by slot with DTA (Alg. 3) for the planned
  per-site workload. A plan that leaves chunks (a non-integer rho/E floors the workload) is planned
  again from the next slot, without a new admission test (the job was admitted).
"""

from __future__ import annotations

import numpy as np

from edgeopt.core import Result, register, stopwatch
from edgeopt.okita.baselines import OasisScheduler
from edgeopt.okita.instance import Instance
from edgeopt.okita.placement import JobArrays
from edgeopt.okita.schedule import objective_parts
from edgeopt.okita.spec import FAMILY

#: Bao et al.'s scaling factor eta in L^k = (1 / (4 eta)) * (smallest utility per unit of time and resource).
ETA = 1.0


def utilities(ja: JobArrays, horizon: int) -> np.ndarray:
    """u_i(x) = V_i - f_i(x) for the latencies x = 1 .. T - a_i reachable within the horizon."""
    x = np.arange(1, horizon - ja.arrival + 1)
    return float(ja.f(horizon - ja.arrival + 1)) - np.asarray(ja.f(x), dtype=float)


def price_bounds(jobs: list[JobArrays], horizon: int, eta: float = ETA) -> tuple[np.ndarray, float]:
    """(U [K], L) of the price function (module docstring)."""
    K = len(jobs[0].m) if jobs else 1
    uppers: list[list[float]] = [[] for _ in range(K)]
    lowers = []
    for ja in jobs:
        u = utilities(ja, horizon)
        pos = u[u > 0]
        if not pos.size:
            continue
        W = max(1, ja.worker_slots(int(ja.D.sum())))
        lowers.append(float(pos.min()) / (4 * eta * W * float((ja.m + ja.n).sum())))
        for k in range(K):
            d = [v for v in (ja.m[k], ja.n[k]) if v > 0]
            if d:
                uppers[k].append(float(u[0]) / min(d))
    L = min(lowers) if lowers else 1.0
    U = np.array([max(max(v), L) if v else L for v in uppers])
    return U, L


class OasisPrimalDual(OasisScheduler):
    """OASiS: per-resource exponential prices, placement by price only, admission iff payoff > 0."""

    exchange_in_placement = False

    def __init__(self, instance: Instance, *, eta: float = ETA) -> None:
        super().__init__(instance)
        self.Uk, self.Lk = price_bounds(self.jobs, instance.horizon, eta)
        self.value = {ja.id: float(ja.f(instance.horizon - ja.arrival + 1)) for ja in self.jobs}
        self.payoff: dict[int, float] = {}
        self.not_admitted: set[int] = set()

    def unit_prices(self, t: int) -> np.ndarray:
        """p_r^k(t) = L (U^k / L) ** (g_r^k(t) / C_r^k), per unit of resource k at site r."""
        safe = np.where(self.C > 0, self.C, 1.0)
        u = np.where(self.C > 0, self.reserved[t] / safe, 1.0)
        return self.Lk * (self.Uk[None, :] / self.Lk) ** u

    def admit(self, ja: JobArrays, cost: float) -> bool:
        """mu_i = V_i - (f_i(x) + priced cost) > 0; ``cost`` is the DP's f_i(x) + priced cost."""
        mu = self.value[ja.id] - cost
        self.payoff[ja.id] = mu
        if mu > 0:
            return True
        self.not_admitted.add(ja.id)
        return False


@register("okita", "oasis", kind="baseline",
          summary="OASiS (Bao et al. INFOCOM 2018, Sec. V-A): exponential per-resource prices, schedule of least "
                  "priced (deployment) cost, admitted iff utility - priced cost > 0, DTA data transfer")
def oasis(instance: Instance, *, seed: int = 0, eta: float = ETA) -> Result:
    """OASiS as Bao et al. and Sec. V-A of Han et al. describe it (module docstring: every reading).
    Deterministic. Jobs whose payoff is not positive are rejected (status partial, ``extra["rejected"]``).

    Args:
        seed: unused (deterministic).
        eta: Bao et al.'s scaling factor of the lowest price L = (smallest utility per unit) / (4 eta).
    """
    with stopwatch() as el:
        sch = OasisPrimalDual(instance, eta=eta)
        schedule = sch.run()
    extra = {**objective_parts(instance, schedule), "not_admitted": sorted(sch.not_admitted),
             "price_L": sch.Lk, "price_U": [float(v) for v in sch.Uk]}
    return FAMILY.algorithm_result(instance, "oasis", schedule, el[0], rejected=schedule.rejected, extra=extra)
