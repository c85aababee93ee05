"""`edgeopt.core.listsched.best_of_passes`: repairs move rejected jobs to the front, improvement runs on the
finalists with the fewest rejections only, and the best after improvement wins."""

from __future__ import annotations

from edgeopt.core.listsched import best_of_passes


def _fill_rejecting_late(capacity: int):
    """A fake pass: places the first ``capacity`` jobs of the order (objective: sum of positions)."""
    def fill(order):
        placed = {j: pos for pos, j in enumerate(order[:capacity])}
        return placed, list(order[capacity:])
    return fill


def test_repairs_improvement_and_choice():
    seen_orders = []

    def fill(order):
        seen_orders.append(list(order))
        # job 3 fits only when placed first
        ok = [j for j in order if j != 3 or order[0] == 3]
        return {j: pos for pos, j in enumerate(ok)}, [j for j in order if j not in ok]

    improved = []

    def improve(placed):
        improved.append(dict(placed))
        return {j: max(0, p - 1) for j, p in placed.items()}, 1

    out = best_of_passes([("a", [0, 1, 2, 3], fill), ("b", [0, 1, 2], _fill_rejecting_late(2))], improve,
                         lambda placed: float(sum(placed.values())), repairs=2)
    # variant a: first pass rejects 3, the repair puts 3 first and places everything
    assert seen_orders == [[0, 1, 2, 3], [3, 0, 1, 2]]
    # variant b keeps rejecting (fewest rejections decides), so only a's repaired pass is improved
    assert improved == [{3: 0, 0: 1, 1: 2, 2: 3}]
    assert out.label == "a/1" and out.rejected == [] and out.moves == 1
    assert out.placed == {3: 0, 0: 0, 1: 1, 2: 2}
    assert [p["rejected"] for p in out.passes] == [1, 0, 1, 1, 1]
    assert out.passes[1]["objective_after_improvement"] == 3.0
