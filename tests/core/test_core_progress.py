"""Every family's online algorithm reports its own progress, ending at done == total."""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import progress

FAMILIES = [s.name for s in api.families()]


@pytest.mark.parametrize("family", FAMILIES)
def test_online_algorithms_report_progress_to_a_listener(family, monkeypatch):
    monkeypatch.setattr(progress, "MIN_INTERVAL_S", 0.0)  # every report reaches the listener
    inst = api.generate(family, "small", seed=1)
    name = "online" if "online" in api.algorithms(family) else next(iter(api.algorithms(family)))
    calls: list[tuple[int, int]] = []
    with progress.listening(lambda done, total: calls.append((done, total))):
        res = api.run(name, inst)
    assert api.validate(inst, res) == []
    assert calls, f"{family}/{name} reported nothing"
    dones = [d for d, _ in calls]
    assert dones == sorted(dones) and all(0 <= d <= t for d, t in calls)
    assert calls[-1][0] == calls[-1][1] > 0


def test_reports_without_a_listener_cost_nothing_and_are_throttled():
    progress.report(1, 2)  # nobody listens: no error, no effect
    calls: list[tuple[int, int]] = []
    with progress.listening(lambda d, t: calls.append((d, t))):
        for k in range(1000):
            progress.report(k, 1000)
        progress.report(1000, 1000)
        progress.report(1000, 1000)  # the end is reported once
    assert calls[0] == (0, 1000) and calls[-1] == (1000, 1000)
    assert len(calls) < 10
    progress.report(3, 4)
    assert calls[-1] == (1000, 1000)  # the listener is gone after the block
