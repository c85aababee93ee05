"""`compare --bound` and the size check of `compare --optimal`: ratios to a certified bound at any size,
and no algorithm's work thrown away when the exact model is too large."""

from __future__ import annotations

import json

import pytest

from edgeopt import api
from edgeopt.core import InputError
from tests.reliability_helpers import FAMILIES, PROOF_WORK, assert_clean_error, cli, small_instance


@pytest.mark.parametrize("family", FAMILIES)
def test_ratios_are_to_the_certified_bound_and_it_is_below_the_optimum(family: str) -> None:
    inst = api.generate(family, "small", seed=1)
    table = api.compare(inst, bound=True, time_limit=3600)
    bound_rows = [r for r in table.rows if r.kind == "bound"]
    assert len(bound_rows) == 1 and bound_rows[0].valid and bound_rows[0].rank is None
    lower = bound_rows[0].bound
    assert table.reference_name == "bound" and table.reference == lower and table.reference_method == bound_rows[0].algorithm
    # the certificate recomputes the number without a solver
    assert api.check_bound(inst, api.bound(inst, time_limit=3600)) == pytest.approx(lower)
    optimum = api.solve(inst, time_limit=3600, work_limit=PROOF_WORK)
    assert optimum.status.value == "optimal" and not api.validate(inst, optimum)
    assert lower <= optimum.objective * (1 + 1e-9)
    ranked = [r for r in table.rows if r.rank is not None]
    assert ranked and all(r.ratio == pytest.approx(r.objective / lower) for r in ranked)
    assert all(r.ratio_to_bound == r.ratio and r.ratio_to_optimum is None for r in ranked)
    best = min(r.objective for r in ranked if not r.relaxed)
    assert table.interval() == (lower, best)
    assert table.gap() == pytest.approx((best - lower) / best)


def test_a_proven_optimum_is_the_reference_and_no_bound_is_computed_then() -> None:
    inst = api.generate("hetero", "small", seed=1)
    table = api.compare(inst, ["fifo"], optimal=True, bound=True, time_limit=3600, work_limit=PROOF_WORK)
    assert table.reference_name == "optimum" and table.reference_method == "milp"
    # the exact row is itself the best schedule: the interval closes
    assert [r.kind for r in table.rows] == ["baseline", "exact"]
    assert table.interval() == (table.reference, table.reference) and table.gap() == 0.0


@pytest.mark.parametrize("family", FAMILIES)
def test_an_exact_model_too_large_falls_back_to_the_bound_without_losing_the_rows(family: str, monkeypatch) -> None:
    """Judged on the unfixed estimate (where reduced-cost fixing would shrink a model below the budget, that
    model is solved instead: tests/test_deferred_size_guard.py)."""
    from edgeopt.solving import exact

    monkeypatch.setattr(exact, "_waits_for_fixing", lambda *a, **k: False)
    inst = api.generate(family, "small", seed=1)
    size = api.bound(inst, time_limit=3600).extra.get("model_size", {}).get("nonzeros", 0)
    table = api.compare(inst, optimal=True, time_limit=3600, max_model_size=max(size, 1))
    kinds = [r.kind for r in table.rows]
    assert "exact" not in kinds and kinds.count("bound") == 1 and len(kinds) == len(api.algorithms(family)) + 1
    assert table.reference_name == "bound" and table.notes and "no exact solve" in table.notes[0]
    assert "certified lower bound" in table.notes[0]


def test_both_models_too_large_is_refused_before_any_algorithm_runs() -> None:
    inst = api.generate("hetero", "small", seed=1)
    steps: list[str] = []
    with pytest.raises(InputError) as exc:
        api.compare(inst, optimal=True, time_limit=60, max_model_size=1, on_step=steps.append)
    assert steps == [] and exc.value.field == "instance"
    assert "milp model" in exc.value.message and "bound" in exc.value.message
    # the bound's own refusal points at other bound methods, not back at `edgeopt bound`
    assert "edgeopt bound INSTANCE --method" in exc.value.message


def test_an_unknown_bound_method_is_refused_before_any_algorithm_runs() -> None:
    inst = api.generate("hetero", "small", seed=1)
    steps: list[str] = []
    with pytest.raises(InputError) as exc:
        api.compare(inst, bound=True, bound_method="nope", on_step=steps.append)
    assert steps == [] and exc.value.field == "method"


def test_cli_compare_optimal_above_the_budget_prints_the_table_against_the_bound(tmp_path, capsys) -> None:
    _, path = small_instance("edgecloud", tmp_path)
    out = tmp_path / "cmp.json"
    assert cli("compare", path, "--algorithms", "fifo,drf", "--optimal", "--max-model-size", "5000", "-o", out) == 0
    text = capsys.readouterr().out
    assert "ratio to bound" in text and "interval on the optimum" in text and "gap (best - bound) / best" in text
    assert "note: no exact solve" in " ".join(text.split())
    saved = json.loads(out.read_text())
    assert saved["reference_name"] == "bound" and saved["notes"] and saved["reference_method"]


def test_cli_compare_bound_errors_are_one_line(tmp_path, capsys) -> None:
    _, path = small_instance("okita", tmp_path)
    assert cli("compare", path, "--bound", "--bound-method", "nope") == 2
    assert_clean_error(capsys.readouterr().err, "method")
    assert cli("compare", path, "--bound", "--max-model-size", "1") == 2
    assert_clean_error(capsys.readouterr().err, "instance", "above the budget")


def test_a_sweep_point_with_bound_gives_ratios_to_it_and_keeps_old_keys() -> None:
    from edgeopt.sweep import SweepPoint, evaluate_point

    # cells of stores written before `bound` existed keep their names (keys computed by the earlier code)
    assert SweepPoint("hetero", "small", seed=3, optimal=True).key == "e915dae54df0e03407ed"
    assert SweepPoint("hetero", "small", seed=3, optimal=True, work_limit=5.0).key == "96e52cfda6455571c673"
    assert SweepPoint("hetero", "small", seed=3, bound=True).key != SweepPoint("hetero", "small", seed=3).key
    rows = evaluate_point(SweepPoint("hetero", "small", seed=3, algorithms=("fifo", "drf"), bound=True))
    (lower,) = [r for r in rows if r["kind"] == "bound"]
    assert lower["valid"] and lower["bound"] > 0 and json.loads(lower["params"])["method"] == "ti_lp"
    for r in rows:
        if r["kind"] != "bound":
            assert r["reference"] == "bound" and r["ratio"] == pytest.approx(r["objective"] / lower["bound"])


def test_a_sweep_point_whose_exact_model_is_too_large_uses_the_bound(monkeypatch) -> None:
    from edgeopt.core import limits
    from edgeopt.sweep import SweepPoint, evaluate_point

    inst = api.generate("hetero", "small", seed=3)
    bound_size = api.bound(inst, time_limit=3600).extra["model_size"]["nonzeros"]
    monkeypatch.setattr(limits, "DEFAULT_MAX_NONZEROS", bound_size)  # the bound fits, the MILP does not
    rows = evaluate_point(SweepPoint("hetero", "small", seed=3, algorithms=("drf",), optimal=True))
    assert [r["kind"] for r in rows] == ["baseline", "bound"] and all(r["error"] is None for r in rows)
    assert rows[0]["reference"] == "bound" and rows[0]["ratio"] == pytest.approx(rows[0]["objective"] / rows[1]["bound"])
