"""Issue 10, part 1: input that used to get through (each case was a traceback or a silent acceptance)."""

from __future__ import annotations

import json

import pytest

from edgeopt import api
from edgeopt.core import InputError, Result, Status
from edgeopt.core.jsonio import set_path
from tests.reliability_helpers import (
    FAMILIES,
    assert_clean_error,
    cli,
    jobs_key,
    make_job_too_long,
    prove,
    small_instance,
    write,
)


@pytest.mark.parametrize("what", ["instance", "result"])
def test_deep_nesting_exits_2(what, tmp_path, capsys):
    deep = tmp_path / "d.json"
    deep.write_text("[" * 5000 + "]" * 5000)
    if what == "instance":
        code = cli("run", "online", deep)
    else:
        _, inst = small_instance("hetero", tmp_path)
        code = cli("validate", inst, deep)
    assert code == 2
    assert_clean_error(capsys.readouterr().err, f"{what}:")


def test_deep_nesting_inside_an_object(tmp_path, capsys):
    data, _ = small_instance("hetero", tmp_path)
    data["jobs"][0]["weight"] = json.loads("[" * 200 + "]" * 200)
    assert cli("run", "online", write(tmp_path / "x.json", data)) == 2
    assert_clean_error(capsys.readouterr().err, "instance")


# (family, path into the instance, value, field named in the message)
HUGE = [
    ("hetero", ("jobs", 0, "weight"), float("inf"), "instance.jobs.0.weight"),
    ("hetero", ("jobs", 0, "gradient_size_mb"), 1e308, "instance.jobs.0.gradient_size_mb"),
    ("edgecloud", ("jobs", 0, "gradient_size_mb"), 1e308, "instance.jobs.0.gradient_size_mb"),
    ("preemptive", ("jobs", 0, "gradient_size_mb"), 1e308, "instance.jobs.0.gradient_size_mb"),
    ("edgecloud", ("jobs", 0, "worker_time_slots"), 1e308, "instance.jobs.0.worker_time_slots"),
    *[(f, ("jobs", 0, k), 10**20, f"instance.jobs.0.{k}") for f in ("hetero", "edgecloud", "preemptive")
      for k in ("chunks", "epochs", "minibatches_per_chunk", "arrival")],
    *[("okita", ("jobs", 0, k), 10**20, f"instance.jobs.0.{k}") for k in ("epochs", "arrival", "chunk_size_mb")],
    ("okita", ("jobs", 0, "data_chunks", 0), 10**20, "instance.jobs.0.data_chunks.0"),
    ("okita", ("jobs", 0, "worker_demand", 0), float("inf"), "instance.jobs.0.worker_demand.0"),
    ("okita", ("sites", 0, "capacity", 0), 1e308, "instance.sites.0.capacity.0"),
    ("okita", ("bandwidth_cost_per_mb", 0, 1), float("inf"), "instance.bandwidth_cost_per_mb.0.1"),
    ("tapfinger", ("tasks", 0, "arrival"), 10**20, "instance.tasks.0.arrival"),
    ("tapfinger", ("tasks", 0, "min_resources", 0), 10**20, "instance.tasks.0.min_resources"),
    ("tapfinger", ("clusters", 0, "capacity", 0), 10**20, "instance.clusters.0.capacity.0"),
    ("tapfinger", ("task_types", 0, "progress", "rate"), float("inf"), "instance.task_types.0.progress.rate"),
    ("edgecloud", ("jobs", 0, "upload_delay_slots", 0), 10**20, "instance.jobs.0.upload_delay_slots.0"),
    ("preemptive", ("jobs", 0, "upload_delay_slots", 0), 10**20, "instance.jobs.0.upload_delay_slots.0"),
    ("edgecloud", ("servers", 0, "ps", 0), 10**20, "instance.servers.0.ps.0"),
    ("preemptive", ("servers", 0, "ps"), 10**20, "instance.servers.0.ps"),
    ("hetero", ("horizon",), 10**20, "instance.horizon"),
]


@pytest.mark.parametrize("family, path, value, field", HUGE, ids=[f"{h[0]}-{'.'.join(map(str, h[1]))}" for h in HUGE])
def test_numbers_the_model_cannot_use_exit_2_naming_the_field(family, path, value, field, tmp_path, capsys):
    data, _ = small_instance(family, tmp_path)
    set_path(data, path, value)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))  # Infinity is written as JSON's extension, as a hostile user would
    assert cli("run", "online", bad) == 2
    assert_clean_error(capsys.readouterr().err, field)


def test_every_bound_is_finite_and_documented():
    import edgeopt.core.bounds as mod

    names = [n for n in dir(mod) if n.isupper()]
    assert len(names) >= 10
    for n in names:
        assert 0 < getattr(mod, n) < 1e16, n
        assert n in mod.__doc__, n


@pytest.mark.parametrize("family", FAMILIES)
def test_largest_allowed_values_give_an_answer_not_a_traceback(family, tmp_path):
    """At the documented maxima a job is simply too long for the horizon: partial with the job rejected."""
    from edgeopt.core import bounds as B

    data, _ = small_instance(family, tmp_path)
    if family == "okita":  # the largest epoch count and data size of the schema
        data["jobs"][0].update(epochs=100, worker_chunks_per_slot=100)  # rho >= E is the schema's rule
        data["jobs"][0]["data_chunks"] = [10**7] * len(data["sites"])
    elif family == "tapfinger":  # the slowest progress the schema allows
        make_job_too_long(family, data)
    else:
        job = data["jobs"][0]
        for k in ("chunks", "epochs", "minibatches_per_chunk"):
            job[k] = B.MAX_COUNT
        if family == "preemptive":
            job["requested_workers"] = 1
    spec = api.family(family)
    inst = spec.parse_instance(data)
    for name in api.algorithms(family):
        res = api.run(name, inst)
        assert res.status in (Status.FEASIBLE, Status.PARTIAL), (name, res.status)
        assert not spec.check_result(inst, res), name
        assert res.status == Status.PARTIAL and 0 in res.rejected or api.algorithms(family)[name].relaxed, name


@pytest.mark.parametrize("family", FAMILIES)
def test_job_arriving_after_the_horizon_is_rejected_on_load(family, tmp_path, capsys):
    data, _ = small_instance(family, tmp_path)
    data["horizon"] = 12
    data[jobs_key(family)][0]["arrival"] = 50
    assert cli("run", "online", write(tmp_path / "x.json", data)) == 2
    err = capsys.readouterr().err
    assert_clean_error(err, "arrival")


@pytest.mark.parametrize("family", FAMILIES)
def test_every_schema_error_is_reported(family, tmp_path, capsys):
    data, _ = small_instance(family, tmp_path)
    jobs = jobs_key(family)
    # two wrong fields of two jobs (per family: a count below its minimum, a string for a number)
    first, second = {"tapfinger": ("task_type", "arrival"), "okita": ("epochs", "chunk_size_mb")}.get(
        family, ("epochs", "chunks"))
    data[jobs][0][first] = -1 if family == "tapfinger" else 0
    data[jobs][1][second] = "many"
    data["horizon"] = -3
    assert cli("run", "online", write(tmp_path / "x.json", data)) == 2
    err = capsys.readouterr().err
    assert_clean_error(err, "instance.", "2 more")
    lines = err.strip().splitlines()
    assert len(lines) == 4, err
    for field in ("instance.horizon", f"instance.{jobs}.0.{first}", f"instance.{jobs}.1.{second}"):
        assert sum(line.strip().startswith(field + ":") for line in lines[1:]) == 1, (field, err)
    with pytest.raises(InputError) as exc:
        api.family(family).parse_instance(data)
    assert len(exc.value.details) == 3


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("method", ["milp", "cpsat"])
def test_zero_jobs_is_optimal_zero(family, method, tmp_path):
    _, path = small_instance(family, tmp_path, **{jobs_key(family): []})
    inst = api.load(path)
    spec = api.family_of(inst)
    res = prove(api.solve, inst, method=method)
    assert res.status == Status.OPTIMAL and res.objective == 0 and res.bound == 0
    assert not spec.check_result(inst, res)
    assert isinstance(Result.from_dict(json.loads(res.to_json())), Result)
