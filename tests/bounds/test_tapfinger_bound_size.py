"""tapfinger's ti_lp bound: its size estimate counts what column generation builds (the master at its
start and the dense [rows, T] arrays), not the full time-indexed relaxation, and still refuses a
model that would exceed the budget."""

from __future__ import annotations

import numpy as np
import pytest

from edgeopt import api, traces
from edgeopt.core import InputError
from edgeopt.core.colgen import lagrangian
from edgeopt.traces.instances import from_trace
from formulations.tapfinger.lpbound import relaxation, size
from tests.reliability_helpers import PROOF_CLOCK


def _week_like(tmp_path, n=40):
    """A sparse trace (a job every 15,000 s): a long horizon with few tasks, like a real ITP week."""
    lines = ["job_id,cluster,submit_time,duration_s,num_gpus"] + [
        f"j{k},c,{k * 15000},{600 + 3000 * (k % 5)},{[1, 2, 4, 8][k % 4]}" for k in range(n)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    return from_trace("tapfinger", traces.load_jobs(tmp_path / "t.csv"), seed=0, servers=2, task_types="two")


def _full_relaxation_nonzeros(inst) -> int:
    """The former estimate: every (task, slot) column of the time-indexed relaxation."""
    J, T, R, N = len(inst.tasks), int(inst.horizon), len(inst.resources), len(inst.clusters)
    return J + (N * R + N) * T + J * (2 + R * T)


def test_bound_runs_within_a_budget_the_full_relaxation_exceeds(tmp_path):
    inst = _week_like(tmp_path)
    estimate = size(inst).nonzeros
    budget = 100_000
    assert estimate <= budget < _full_relaxation_nonzeros(inst)  # the old estimate refused this bound
    res = api.bound(inst, method="ti_lp", time_limit=PROOF_CLOCK, max_model_size=budget)  # iteration-bounded
    assert res.status.value == "bound"
    assert api.check_bound(inst, res) == pytest.approx(res.bound)


def test_estimate_covers_what_is_built(tmp_path):
    """Honest: at least the master's start (artificial columns + each task's first priced column in
    the bucketed rows) plus one entry per dense [rows, T] capacity/price slot."""
    inst = _week_like(tmp_path)
    rel = relaxation(inst)
    T = rel.horizon
    width = -(-T // 512)
    starts = np.arange(0, T, width)
    first = lagrangian(rel, np.zeros((rel.n_rows, T)), starts if width > 1 else None)
    built = rel.n_jobs + rel.n_rows * T
    for j, (key, _) in enumerate(first.best):
        _, idx, _ = rel.column(j, key)
        built += 1 + np.unique((idx // T) * len(starts) + (idx % T) // width).size
    assert size(inst).nonzeros >= built


def test_refusal_still_names_the_option_to_raise(tmp_path):
    inst = _week_like(tmp_path)
    budget = len(inst.tasks)  # not even the dense capacity rows fit
    with pytest.raises(InputError, match="--max-model-size"):
        api.bound(inst, method="ti_lp", time_limit=60, max_model_size=budget)
