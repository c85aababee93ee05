"""Sweeps give the same rows on a Dask LocalCluster as sequentially."""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import InputError
from edgeopt.sweep import SweepPoint, run_sweep, summarise

FAMILIES = [s.name for s in api.families()]
pytestmark = pytest.mark.skipif(not FAMILIES, reason="no family implemented yet")


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "runtime_s"} for r in rows]


def test_dask_matches_sequential():
    family = FAMILIES[0]
    points = [SweepPoint(family, "small", seed=s) for s in range(4)]
    seq = run_sweep(points, scheduler="sequential")
    seen = []
    par = run_sweep(points, n_workers=2, on_done=lambda d, t: seen.append((d, t)))
    assert _strip(par) == _strip(seq)
    assert seen[-1] == (4, 4)
    n_algos = len(api.algorithms(family))
    assert len(seq) == 4 * n_algos
    assert all(r["valid"] for r in seq)
    summary = summarise(seq)
    assert {s["algorithm"] for s in summary} == set(api.algorithms(family))
    assert all(s["n"] == 4 and s["valid"] == 1.0 for s in summary)


def test_bad_scheduler_is_input_error():
    with pytest.raises(InputError, match="scheduler"):
        run_sweep([], scheduler="spark")
