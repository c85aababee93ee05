"""Both exact models of program (2) agree on seeded `small` instances (seeds 15-22; 0-7 in
``test_hetero_formulations_agree_a.py``, split so that ``pytest -n 2`` runs the halves in parallel).

On each instance: HiGHS (time-indexed MILP) and CP-SAT (interval model) prove optimality (by work,
`tests.reliability_helpers.prove`: the same on a loaded machine) and
agree within 1e-6 relative; both schedules pass the family validator (``finish`` re-checks and
``check_result`` again here); every registered online algorithm and baseline returns a valid
schedule whose objective is >= the optimum.

16 seeds, not 30: the two files took about 190 s of CPU (6 s per seed); see ``..._agree_a.py``.
"""

from __future__ import annotations

import pytest

from edgeopt.hetero import generate
from formulations.hetero.checks import agreement
from tests.reliability_helpers import prove


@pytest.mark.parametrize("seed", range(15, 23))
def test_exact_models_agree_and_bound_every_algorithm(seed):
    inst = generate("small", seed=seed)
    out = prove(agreement, inst)  # by work, not by the clock: the same on a loaded machine
    assert not out.problems, out.problems
    assert out.optimum is not None and out.optimum > 0
    assert out.exact["milp"].bound <= out.optimum + 1e-6 * out.optimum
