"""Both exact models of program (2) agree on seeded `small` instances (seeds 15-29; 0-14 in
``test_hetero_formulations_agree_a.py``, split so that ``pytest -n 2`` runs the halves in parallel).

On each instance: HiGHS (time-indexed MILP) and CP-SAT (interval model) prove optimality and
agree within 1e-6 relative; both schedules pass the family validator (``finish`` re-checks and
``check_result`` again here); every registered online algorithm and baseline returns a valid
schedule whose objective is >= the optimum.
"""

from __future__ import annotations

import pytest

from edgeopt.hetero import generate
from formulations.hetero.checks import agreement


@pytest.mark.parametrize("seed", range(15, 30))
def test_exact_models_agree_and_bound_every_algorithm(seed):
    inst = generate("small", seed=seed)
    out = agreement(inst, time_limit=60.0)
    assert not out.problems, out.problems
    assert out.optimum is not None and out.optimum > 0
    assert out.exact["milp"].bound <= out.optimum + 1e-6 * out.optimum
