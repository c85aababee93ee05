"""tapfinger's LP-guided rebuild reads each task's LP mode by its index k: `lpbound.task_modes` must list the
modes in the relaxation's column order (the shared behaviour of the rebuild: ``tests/test_lp_guided_rebuild.py``)."""

from __future__ import annotations

from edgeopt.tapfinger import generate
from formulations.tapfinger.lpbound import relaxation, task_modes


def test_task_modes_are_the_relaxation_columns_modes():
    inst = generate("small", seed=3, jobs=10)
    rel = relaxation(inst)
    R = len(inst.resources)
    for j, task in enumerate(inst.tasks):
        modes = task_modes(inst, task)
        jm = rel.jobs[j]
        assert list(jm.duration) == [d for _, _, d in modes]
        for k, (n, alloc, _) in enumerate(modes):
            assert tuple(int(x) for x in jm.run[k, n * R:(n + 1) * R]) == alloc
            assert jm.at_start[k, len(inst.clusters) * R + n] == 1.0
