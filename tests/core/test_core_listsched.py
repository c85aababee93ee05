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


class _OneMachine:
    """A toy for `ruin_recreate`: jobs of given lengths on one machine (no overlap), placement = (start, end);
    ``earliest`` is the first gap from slot 0 that holds the job; the held slots are tracked like a family's
    capacity, so the test can check that they always match the placements."""

    def __init__(self, lengths, placed):
        self.lengths = lengths
        self.busy = set()
        for k, pl in placed.items():
            self.put(k, pl)

    def slots(self, k, pl):
        assert pl[1] - pl[0] == self.lengths[k]
        return set(range(*pl))

    def take_out(self, k, s):
        assert self.slots(k, s) <= self.busy
        self.busy -= self.slots(k, s)

    def put(self, k, s):
        assert not (self.slots(k, s) & self.busy), "placed over another job"
        self.busy |= self.slots(k, s)

    def earliest(self, k):
        s = 0
        while self.slots(k, (s, s + self.lengths[k])) & self.busy:
            s += 1
        return (s, s + self.lengths[k])


class _Never:
    def expired(self):
        return False


def _run(lengths, weights, placed, **kw):
    from edgeopt.core.listsched import ruin_recreate

    m = _OneMachine(lengths, placed)
    out, log = ruin_recreate(placed, take_out=m.take_out, earliest=m.earliest, put=m.put, start=lambda pl: pl[0],
                             end=lambda pl: pl[1], cost=lambda k, pl: weights[k] * pl[1],
                             urgency=lambda k: weights[k] / lengths[k], deadline=kw.pop("deadline", _Never()), **kw)
    return m, out, log


def _total(weights, placed):
    return sum(weights[k] * pl[1] for k, pl in placed.items())


def test_ruin_recreate_improves_a_bad_order_never_worsens_and_keeps_the_held_capacity_in_step():
    lengths = {0: 5, 1: 1, 2: 3, 3: 1, 4: 2, 5: 4}
    weights = {0: 1, 1: 5, 2: 2, 3: 4, 4: 3, 5: 1}
    start, t = {}, 0
    for k in sorted(lengths, key=lambda k: weights[k] / lengths[k]):  # Smith's rule reversed: the worst order
        start[k], t = (t, t + lengths[k]), t + lengths[k]
    m, out, log = _run(lengths, weights, start, size=3, max_iterations=300, seed=1)
    assert log.iterations == 300 and 0 < log.accepted <= 300 and len(log.history) == log.accepted
    assert log.history[-1][1] == log.change and all(b[1] < a[1] for a, b in zip(log.history, log.history[1:]))
    assert _total(weights, out) == _total(weights, start) + log.change < _total(weights, start)
    # the optimum of 1 || sum w_j C_j is Smith's order; with every job ruinable the search reaches it here
    best, t = 0, 0
    for k in sorted(lengths, key=lambda k: -weights[k] / lengths[k]):
        t += lengths[k]
        best += weights[k] * t
    assert _total(weights, out) == best
    assert m.busy == set().union(*(m.slots(k, s) for k, s in out.items()))  # held capacity = the placements
    again = _run(lengths, weights, start, size=3, max_iterations=300, seed=1)[1]
    assert again == out  # deterministic in the seed for a given number of iterations


def test_ruin_recreate_stops_at_the_deadline_and_keeps_a_local_optimum():
    from edgeopt.core import Deadline

    lengths, weights = {0: 2, 1: 2}, {0: 3, 1: 1}
    optimum = {0: (0, 2), 1: (2, 4)}
    _m, out, log = _run(lengths, weights, dict(optimum), size=2, max_iterations=50)
    assert out == optimum and log.accepted == 0 and log.change == 0 and log.iterations == 50
    assert log.stop == "iterations"
    _m, out, log = _run(lengths, weights, dict(optimum), size=2, patience=7, max_iterations=50)
    assert out == optimum and log.iterations == 7 and log.stop == "patience"  # a work limit, not a clock
    deadline = Deadline(1e-6)
    while not deadline.expired():
        pass
    _m, out, log = _run(lengths, weights, {0: (2, 4), 1: (0, 2)}, deadline=deadline)
    assert log.iterations == 0 and out == {0: (2, 4), 1: (0, 2)} and log.stop == "deadline"


def test_ruin_recreate_with_a_list_of_sizes_reaches_the_optimum_and_is_deterministic():
    lengths = {k: 1 + k % 4 for k in range(10)}
    weights = {k: 1 + (7 * k) % 5 for k in range(10)}
    start, t = {}, 0
    for k in sorted(lengths, key=lambda k: weights[k] / lengths[k]):
        start[k], t = (t, t + lengths[k]), t + lengths[k]
    m, out, log = _run(lengths, weights, start, size=(2, 5), max_iterations=2000, seed=3)
    best, t = 0, 0
    for k in sorted(lengths, key=lambda k: -weights[k] / lengths[k]):
        t += lengths[k]
        best += weights[k] * t
    assert _total(weights, out) == _total(weights, start) + log.change == best
    assert m.busy == set().union(*(m.slots(k, s) for k, s in out.items()))
    assert _run(lengths, weights, start, size=(2, 5), max_iterations=2000, seed=3)[1] == out


def test_ruin_sizes_one_size_draws_nothing_and_a_list_follows_the_gain():
    import numpy as np
    import pytest

    from edgeopt.core.listsched import MIN_SIZE_SHARE, RuinSizes

    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert RuinSizes(12).draw(rng) == 12 and rng.bit_generator.state == state  # other families' streams unchanged
    sizes = RuinSizes((3, 12))
    assert {sizes.draw(rng) for _ in range(200)} == {3, 12}  # no gain yet: both drawn
    for _ in range(300):  # only the ruins of 12 jobs gain
        k = sizes.draw(rng)
        sizes.record(k, 5.0 if k == 12 else 0.0)
    draws = [sizes.draw(rng) for _ in range(2000)]
    share3 = draws.count(3) / len(draws)
    assert MIN_SIZE_SHARE * 0.7 < share3 < MIN_SIZE_SHARE * 1.3  # the floor, and no more
    for bad in ((), (0, 3), -1):
        with pytest.raises(ValueError, match="size"):
            RuinSizes(bad)
