"""edgecloud's LP-guided list schedule (``formulations.edgecloud.lpfill``), the LNS's rebuild. A heuristic:
the tests check that its schedules are valid, complete, above the certified bound and deterministic, that it
refuses a master above the size budget and gives nothing when out of time, and that the LNS takes it only
when it is better."""

from __future__ import annotations

import dataclasses

import pytest

from edgeopt import api
from edgeopt.core import Deadline
from edgeopt.core.lns import search
from edgeopt.edgecloud import FAMILY, generate
from formulations.edgecloud.lns import neighbourhood
from formulations.edgecloud.lpfill import lp_guided_fill
from tests.reliability_helpers import PROOF_CLOCK


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_valid_complete_deterministic_and_above_the_certified_bound(seed):
    inst = generate("small", seed=seed, jobs=12)
    sched = lp_guided_fill(inst, Deadline(PROOF_CLOCK))  # the master LP converges long before the clock
    assert sched is not None
    assert FAMILY.validate(inst, sched) == []
    assert not sched.rejected and sorted(r.job for r in sched.jobs) == [j.id for j in inst.jobs]
    value = FAMILY.objective(inst, sched)
    assert api.bound(inst, time_limit=PROOF_CLOCK).bound <= value + 1e-9
    again = lp_guided_fill(inst, Deadline(PROOF_CLOCK))
    assert FAMILY.objective(inst, again) == value and again.jobs == sched.jobs


def test_refuses_a_master_above_the_size_budget_and_gives_nothing_out_of_time():
    inst = generate("small", seed=0, jobs=12)
    assert lp_guided_fill(inst, Deadline(PROOF_CLOCK), max_nonzeros=10) is None
    expired = Deadline(1e-3)
    while not expired.expired():
        pass
    assert lp_guided_fill(inst, expired) is None


def test_the_search_keeps_the_rebuild_only_when_better_and_never_ends_worse():
    inst = generate("small", seed=1, jobs=12)
    start = FAMILY.parse_schedule(api.run("fifo", inst).schedule)
    start_obj = FAMILY.objective(inst, start)
    built = lp_guided_fill(inst, Deadline(PROOF_CLOCK))
    hood = dataclasses.replace(neighbourhood(), order=lambda instance, schedule: [], local=None)  # the rebuild alone
    sched, obj, log = search(FAMILY, inst, start, hood, deadline=Deadline(PROOF_CLOCK))
    assert FAMILY.validate(inst, sched) == [] and obj == min(start_obj, FAMILY.objective(inst, built))
    assert log.rebuild == ("kept" if FAMILY.objective(inst, built) < start_obj else "not better")
