"""The Python API fails clearly (issue 24, item 8): a wrong argument raises TypeError or ValueError
(InputError is a ValueError) naming the argument and what it expected, never an error from inside."""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core import InputError


@pytest.fixture(scope="module")
def inst():
    return api.generate("hetero", "small", seed=0)


@pytest.fixture(scope="module")
def res(inst):
    return api.run("fifo", inst)


@pytest.mark.parametrize("algorithm", [None, 123, ["online"]])
def test_run_with_a_non_name_algorithm(inst, algorithm):
    with pytest.raises(TypeError, match=r"^algorithm: expected an algorithm name \(str\)"):
        api.run(algorithm, inst)


def test_run_with_a_bad_seed(inst):
    with pytest.raises(TypeError, match="^seed: expected a non-negative int"):
        api.run("fifo", inst, seed="x")
    with pytest.raises(TypeError, match="^seed"):
        api.run("fifo", inst, seed=1.5)
    with pytest.raises(ValueError, match="^seed: must be >= 0"):
        api.run("fifo", inst, seed=-1)


def test_run_on_something_that_is_not_an_instance(res):
    with pytest.raises(TypeError, match="^instance: expected an edgeopt instance"):
        api.run("fifo", {"family": "hetero"})
    with pytest.raises(TypeError, match="^instance: expected an edgeopt instance"):
        api.run("fifo", None)


def test_generate_with_bad_arguments():
    with pytest.raises(TypeError, match="^seed: expected a non-negative int, got str 'a'"):
        api.generate("hetero", "small", seed="a")
    with pytest.raises(TypeError, match="^name: expected a family name"):
        api.generate(None)
    with pytest.raises(TypeError, match="^preset: expected a preset name"):
        api.generate("hetero", 3)
    with pytest.raises(InputError, match="did you mean 'hetero'"):
        api.generate("heteor")


@pytest.mark.parametrize("bad", [None, {"family": "hetero"}, 42])
def test_validate_with_a_non_result(inst, bad):
    with pytest.raises(TypeError, match=r"^result: expected an edgeopt Result"):
        api.validate(inst, bad)


def test_validate_with_a_dict_says_how_to_read_it(inst, res):
    with pytest.raises(TypeError, match=r"Result.from_dict"):
        api.validate(inst, res.to_dict())


def test_validate_with_swapped_arguments(inst, res):
    with pytest.raises(TypeError, match=r"^instance: expected an instance, got a Result \(the order is"):
        api.validate(res, inst)


def test_plot_schedule_without_a_result(inst):
    with pytest.raises(TypeError, match="^result: expected an edgeopt Result"):
        api.plot_schedule(inst, None)


def test_compare_with_one_string_runs_that_one_algorithm(inst):
    table = api.compare(inst, "fifo")
    assert [r.algorithm for r in table.rows] == ["fifo"]
    table = api.compare(inst, "online[F=8]")
    assert [r.algorithm for r in table.rows] == ["online[F=8]"]


def test_compare_with_nothing_to_run(inst):
    with pytest.raises(ValueError, match="^names: expected at least one algorithm"):
        api.compare(inst, [])


@pytest.mark.parametrize("bad", [3, [3], [("online",)], {"online": {}}])
def test_compare_with_non_names(inst, bad):
    with pytest.raises(TypeError, match="^names: expected"):
        api.compare(inst, bad)


def test_compare_with_a_bad_seed_or_limit(inst):
    with pytest.raises(TypeError, match="^seed"):
        api.compare(inst, ["fifo"], seed="x")
    with pytest.raises(ValueError, match="^time_limit"):
        api.compare(inst, ["fifo"], optimal=True, time_limit="ten")
