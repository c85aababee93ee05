"""The LP-guided list schedules (``formulations.<family>.lpfill``), the LNS's rebuild in edgecloud, hetero and
tapfinger.
A heuristic: the tests check that its schedules are valid, complete, above the certified bound and
deterministic, that it refuses a master above the size budget and gives nothing when out of time, and that the
LNS takes it only when it is better."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

from edgeopt import api
from edgeopt.core import Deadline
from edgeopt.core.lns import complete_and_valid, search
from tests.reliability_helpers import PROOF_CLOCK

#: family -> a complete start for the search test (an online algorithm, so the rebuild has room to beat it)
FAMILIES = {"edgecloud": "fifo", "hetero": "fifo", "tapfinger": "greedy"}


def _family(name):
    spec = api.family(name)
    return spec, importlib.import_module(f"formulations.{name}.lpfill").lp_guided_fill


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_valid_complete_deterministic_and_above_the_certified_bound(name, seed):
    spec, lp_guided_fill = _family(name)
    inst = api.generate(name, "small", seed=seed, jobs=12)
    sched = lp_guided_fill(inst, Deadline(PROOF_CLOCK))  # the master LP converges long before the clock
    assert sched is not None and complete_and_valid(spec, inst, sched)
    value = spec.objective(inst, sched)
    assert api.bound(inst, time_limit=PROOF_CLOCK).bound <= value + 1e-9
    again = lp_guided_fill(inst, Deadline(PROOF_CLOCK))
    assert spec.objective(inst, again) == value and again == sched


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_refuses_a_master_above_the_size_budget_and_gives_nothing_out_of_time(name):
    _, lp_guided_fill = _family(name)
    inst = api.generate(name, "small", seed=0, jobs=12)
    assert lp_guided_fill(inst, Deadline(PROOF_CLOCK), max_nonzeros=10) is None
    expired = Deadline(1e-3)
    while not expired.expired():
        pass
    assert lp_guided_fill(inst, expired) is None


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_search_keeps_the_rebuild_only_when_better_and_never_ends_worse(name):
    spec, lp_guided_fill = _family(name)
    neighbourhood = importlib.import_module(f"formulations.{name}.lns").neighbourhood
    inst = api.generate(name, "small", seed=1, jobs=12)
    start = spec.parse_schedule(api.run(FAMILIES[name], inst).schedule)
    start_obj = spec.objective(inst, start)
    built = lp_guided_fill(inst, Deadline(PROOF_CLOCK))
    hood = dataclasses.replace(neighbourhood(), order=lambda instance, schedule: [], local=None)  # the rebuild alone
    sched, obj, log = search(spec, inst, start, hood, deadline=Deadline(PROOF_CLOCK))
    assert spec.validate(inst, sched) == [] and obj == min(start_obj, spec.objective(inst, built))
    assert log.rebuild == ("kept" if spec.objective(inst, built) < start_obj else "not better")
