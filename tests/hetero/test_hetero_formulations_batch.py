"""Sec. 5: the batch problem (7) exactly, the packing LP (8) by column generation, its dual (9).

On seeded instances: int optimum over the generated columns <= OPT(7) <= LP bound of (8);
the dual values (delta, u) read back from HiGHS satisfy (9a)/(9b) on every generated column and,
with exact pricing at the end (``certified``), on all of Gamma_j; the dual objective (9) equals
the LP bound (strong duality). Schedules of (7) pass the validator (``check_batch_schedule``).
"""

from __future__ import annotations

import pytest

from edgeopt.core import Status
from edgeopt.core.limits import work_limit
from edgeopt.hetero import generate
from formulations.hetero.batch import column_generation, placement_cost, solve_max_weight
from tests.reliability_helpers import PROOF_CLOCK, PROOF_WORK, prove

WINDOW = (3, 9)


@pytest.mark.parametrize("preset, seed", [("small", 0), ("small", 1), ("small_ra", 2)])
def test_column_generation_brackets_the_optimum_of_problem_7(preset, seed):
    inst = generate(preset, seed=seed, jobs=6)
    jobs = list(range(len(inst.jobs)))
    opt = prove(solve_max_weight, inst, jobs, WINDOW)
    assert opt.status == Status.OPTIMAL
    # its exact pricing MILPs by work too; the integer master (direct highspy) gets an hour
    with work_limit(PROOF_WORK):
        cg = column_generation(inst, jobs, WINDOW, int_time_limit=PROOF_CLOCK)
    assert cg.certified
    assert cg.int_value <= opt.value + 1e-6
    assert opt.value <= cg.lp_bound + 1e-6
    assert cg.dual_objective == pytest.approx(cg.lp_bound, rel=1e-7, abs=1e-7)
    assert (cg.delta >= -1e-12).all() and all(v >= -1e-12 for v in cg.u.values())
    import numpy as np

    price = np.zeros((len(inst.servers), len(inst.resources), inst.horizon))
    price[:, :, WINDOW[0]:WINDOW[1]] = cg.delta
    for col in cg.columns:  # (9a) on every generated column
        w = inst.jobs[col.job].weight
        assert cg.u[col.job] >= w - placement_cost(inst, col.placement, price) - 1e-6 * w
    print(f"\n[(8) {preset} seed {seed}] int over columns {cg.int_value:.6g} <= OPT(7) {opt.value:.6g} "
          f"<= LP(8) {cg.lp_bound:.6g}; {len(cg.columns)} columns, {cg.iterations} rounds, "
          f"oracle misses {cg.oracle_misses}, {cg.runtime_s:.2f} s")
