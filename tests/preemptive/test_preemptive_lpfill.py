"""The LP-guided list schedule (`formulations.preemptive.lpfill`), the preemptive LNS's ``rebuild``: orders from
``config_jct``'s master LP, each placed by ``offline_fill``'s pass; and where the plans lie (`JobPlans.span`)."""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import Deadline
from edgeopt.core.colgen import column_generation
from edgeopt.preemptive import FAMILY
from formulations.preemptive import NEIGHBOURHOODS
from formulations.preemptive.configbound import relaxation
from formulations.preemptive.lpfill import lp_guided_fill
from tests.reliability_helpers import PROOF_CLOCK


@pytest.mark.parametrize("seed", [0, 1])
def test_the_lp_guided_schedule_is_complete_and_valid(seed: int) -> None:
    inst = api.generate("preemptive", "paper", seed=seed, regime="far_cloud", jobs=12)
    schedule = lp_guided_fill(inst, Deadline(PROOF_CLOCK))
    assert schedule is not None and not schedule.rejected and len(schedule.jobs) == len(inst.jobs)
    assert FAMILY.validate(inst, schedule) == []
    assert FAMILY.objective(inst, schedule) >= api.bound(inst, time_limit=PROOF_CLOCK).bound


def test_a_master_above_the_budget_gives_no_schedule() -> None:
    inst = api.generate("preemptive", "paper", seed=0, regime="far_cloud", jobs=12)
    assert lp_guided_fill(inst, Deadline(PROOF_CLOCK), max_nonzeros=10) is None


def test_every_plan_lies_where_its_column_and_cost_say() -> None:
    inst = api.generate("preemptive", "paper", seed=0, regime="far_cloud", jobs=12)
    rel = relaxation(inst)
    cg = column_generation(rel, deadline=Deadline(PROOF_CLOCK))
    assert cg.primal and {key[0] for _, key, _ in cg.primal} == {"edge", "cloud"}
    for j, key, _ in cg.primal:
        cost, _, _ = rel.column(j, key)
        start, end = rel.span(j, key)
        assert end == rel.arrival[j] + cost and start < end and start >= rel.arrival[j]
        if key[0] == "edge":
            assert end == key[1]


def test_the_lns_tries_it_as_its_rebuild() -> None:
    assert NEIGHBOURHOODS["cpsat"]().rebuild is lp_guided_fill
