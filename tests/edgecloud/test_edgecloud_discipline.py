"""Online discipline: every algorithm's decisions up to slot t do not change when later jobs change."""

from __future__ import annotations

import pytest

from edgeopt.core import run_online
from edgeopt.edgecloud import Instance, generate
from edgeopt.edgecloud.baselines import DrfScheduler, FifoScheduler, PreemptiveScheduler
from edgeopt.edgecloud.batchsche import BatchScheScheduler
from edgeopt.edgecloud.online import OnlineScheduler, Prices

POLICIES = {
    "online": lambda inst: OnlineScheduler(inst, Prices.for_instance(inst)),
    "batchsche": BatchScheScheduler,
    "fifo": FifoScheduler,
    "drf": DrfScheduler,
    "preemptive": lambda inst: PreemptiveScheduler(inst, 1, threshold=2.0),
}


def _spread(seed: int) -> Instance:
    """A small instance with 10 jobs whose arrivals are spread over slots 0..40 (T = 96)."""
    inst = generate("small", seed=seed, jobs=10, horizon=96)
    jobs = [j.model_copy(update={"arrival": 4 * k + seed % 3}) for k, j in enumerate(inst.jobs)]
    return inst.model_copy(update={"jobs": jobs})


def _changed_after(inst: Instance, t: int) -> Instance:
    """The same instance with every job arriving after t made bigger and of the other types."""
    jobs = [
        j.model_copy(update={"epochs": j.epochs + 3, "worker_type": 1 - j.worker_type, "chunks": 3,
                             "ps_type": 1 - j.ps_type})
        if j.arrival > t else j
        for j in inst.jobs
    ]
    return Instance.model_validate({**inst.model_dump(), "jobs": [j.model_dump() for j in jobs]})


@pytest.mark.parametrize("name", list(POLICIES))
@pytest.mark.parametrize("seed", range(4))
def test_decisions_up_to_t_ignore_later_jobs(name, seed):
    inst = _spread(seed)
    compared = 0
    for t in (8, 17, 25):
        a, b = POLICIES[name](inst), POLICIES[name](_changed_after(inst, t))
        run_online(a, inst.jobs, inst.horizon)
        run_online(b, _changed_after(inst, t).jobs, inst.horizon)
        da, db = a.decisions_until(t), b.decisions_until(t)
        assert da == db
        compared += len(da)
        # and the change does matter later (otherwise the test would prove nothing)
        assert a.decisions != b.decisions
    assert compared > 0
