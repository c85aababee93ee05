"""edgecloud ``offline_fill`` (ours, an offline list scheduler). It is a heuristic, so the tests check what
it promises: valid complete schedules above the certified bound, the first job of a pass at its idle-cluster
earliest completion, sweeps that never delay a job, determinism, and the zero price it searches with."""

from __future__ import annotations

import numpy as np
import pytest

from edgeopt import api
from edgeopt.core import InputError
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud.offline import ZERO, _order, fill, improve, total
from edgeopt.edgecloud.schedule import Schedule
from edgeopt.edgecloud.state import make_ledger
from tests.reliability_helpers import PROOF_CLOCK


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_valid_complete_and_above_the_certified_bound(seed):
    inst = generate("small", seed=seed)
    r = api.run("offline_fill", inst)
    assert FAMILY.check_result(inst, r) == []
    assert r.status.value == "feasible"
    b = api.bound(inst, time_limit=PROOF_CLOCK)  # bounded by its iterations; the clock never cuts it short
    assert b.bound <= r.objective + 1e-9


def test_first_job_of_a_pass_completes_as_early_as_on_an_idle_cluster():
    # the first job placed sees an idle cluster: its completion is the least over every option
    inst = generate("small", seed=3)
    jobs = _order(inst, "spt")
    runs, rejected = fill(inst, jobs)
    assert not rejected
    j = jobs[0]
    alone, _ = fill(inst, [j])
    assert runs[j.id].end == alone[j.id].end


@pytest.mark.parametrize("preset,seed", [("small", 4), ("paper_compact", 5)])
def test_sweeps_never_delay_a_job(preset, seed):
    kw = {"jobs": 40, "servers": 12} if preset == "paper_compact" else {}
    inst = generate(preset, seed=seed, **kw)
    runs, _ = fill(inst, _order(inst, "arrival"))
    swept, moves = improve(inst, runs, sweeps=3)
    assert set(swept) == set(runs)
    assert all(swept[k].end <= runs[k].end for k in runs)
    assert total(inst, swept) <= total(inst, runs)
    if moves:
        assert total(inst, swept) < total(inst, runs)
    sched = Schedule(jobs=[swept[k] for k in sorted(swept)], rejected=[j.id for j in inst.jobs if j.id not in swept])
    assert FAMILY.validate(inst, sched) == []


def test_deterministic_zero_prices_and_checked_parameters():
    inst = generate("small", seed=6)
    a, b = api.run("offline_fill", inst), api.run("offline_fill", inst)
    assert a.schedule == b.schedule and a.objective == b.objective
    ledger = make_ledger(inst)
    ledger.usage[:] = ledger.capacity[:, :, None] / 2
    job = inst.jobs[0]
    for arr in ZERO.arrays(inst, ledger, job, 0, inst.horizon)[:2]:
        assert np.array_equal(arr, np.zeros_like(arr))
    for bad in ({"repairs": -1}, {"sweeps": -1}):
        with pytest.raises(InputError):
            api.run("offline_fill", inst, **bad)
