"""The time-indexed search refuses a horizon whose tables cannot fit, before allocating them.

A valid small instance with a horizon of 10^7 slots once made ``run offline_fill`` take 15.8 GB and run
past every timeout; the search's tables hold about log2(T) + 8 copies of servers x resources x slots.
"""

from __future__ import annotations

import tracemalloc

import pytest

from edgeopt import api
from edgeopt.core import InputError
from edgeopt.hetero.mincost import MAX_SEARCH_BYTES, search_bytes


@pytest.fixture(scope="module")
def long_instance():
    data = api.generate("hetero", "small", seed=1).model_dump(mode="json")
    data["horizon"] = 10**7
    return api.family("hetero").parse_instance(data)


@pytest.mark.parametrize("algorithm", ["online", "online_every_slot", "offline_fill"])
def test_a_horizon_beyond_the_search_budget_is_refused_before_allocating(long_instance, algorithm):
    assert search_bytes(long_instance) > MAX_SEARCH_BYTES
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="horizon") as exc:
            api.run(algorithm, long_instance)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20
    assert "at most about" in str(exc.value)


def test_the_paper_presets_are_far_inside_the_budget():
    for preset, kw in (("small", {}), ("paper", {}), ("paper", {"jobs": 1000, "horizon": 300})):
        assert search_bytes(api.generate("hetero", preset, seed=0, **kw)) < MAX_SEARCH_BYTES / 20
