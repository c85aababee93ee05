"""Every job is scheduled or listed as rejected: one rule in the core, held for all five families.

The conformance part runs every registered algorithm; the mutation part takes an honest result,
drops one job and RECOMPUTES the objective over the jobs that are left, so the objective check cannot
give the lie away: only the missing job can.
"""

from __future__ import annotations

import copy
import warnings

import pytest

from edgeopt import api
from edgeopt.core import Result, Status, lookup, unregister
from tests.reliability_helpers import PROOF_CLOCK, PROOF_WORK

FAMILIES = [spec.name for spec in api.families()]
#: where a family's schedule lists its jobs: (list field, id field inside an entry)
JOB_LISTS = {"edgecloud": ("jobs", "job"), "hetero": ("jobs", "job"), "okita": ("jobs", "job"),
             "preemptive": ("jobs", "job"), "tapfinger": ("placements", "task")}
CASES = [pytest.param(spec.name, name, id=f"{spec.name}-{name}")
         for spec in api.families() for name in api.algorithms(spec.name)]


def test_every_family_exposes_its_jobs_and_the_listed_ids_of_a_schedule():
    assert sorted(FAMILIES) == sorted(JOB_LISTS)
    for spec in api.families():
        assert spec.job_ids is not None and spec.listed_jobs is not None, spec.name
        inst = api.generate(spec.name, "small", seed=0)
        assert spec.ids_of_jobs(inst) == list(range(len(spec.ids_of_jobs(inst))))
        scheduled, rejected = spec.listed_jobs(spec.parse_schedule({}))
        assert scheduled == [] and rejected in ([], None)


@pytest.mark.parametrize("family, name", CASES)
def test_every_algorithm_covers_every_job_exactly_once(family, name):
    spec = api.family(family)
    for seed in (0, 1):
        inst = api.generate(family, "small", seed=seed)
        res = api.run(name, inst, seed=seed)
        scheduled, in_schedule = spec.listed_jobs(spec.parse_schedule(res.schedule))
        rejected = set(res.rejected)
        if in_schedule is not None:
            assert set(in_schedule) == rejected
        assert len(scheduled) == len(set(scheduled))
        assert not set(scheduled) & rejected
        assert set(scheduled) | rejected == set(spec.ids_of_jobs(inst))
        assert (res.status == Status.PARTIAL) == bool(rejected)
        assert not spec.check_result(inst, res)


def _honest(family: str) -> tuple:
    spec = api.family(family)
    for seed in range(10):
        inst = api.generate(family, "small", seed=seed)
        res = api.run("fifo" if "fifo" in api.algorithms(family) else next(iter(api.algorithms(family))), inst)
        if res.status == Status.FEASIBLE and len(spec.ids_of_jobs(inst)) >= 2:
            assert not spec.check_result(inst, res)
            return spec, inst, res
    raise AssertionError(f"no feasible result on {family}")


def _mutated(spec, inst, res, *, drop: list[int], in_schedule: bool, in_extra: bool, status: Status,
             duplicate: bool = False) -> Result:
    """``res`` with the jobs ``drop`` taken out of its schedule, optionally listed as rejected in the
    schedule and/or ``extra``, and the objective recomputed from what is left."""
    field, key = JOB_LISTS[spec.name]
    sched = copy.deepcopy(res.schedule)
    entries = sched[field]
    if duplicate:
        sched[field] = entries + [entries[0]]
    else:
        sched[field] = [e for e in entries if e[key] not in drop]
    if in_schedule and "rejected" in spec.schedule_type.model_fields:
        sched["rejected"] = sorted(drop)
    extra = {"rejected": sorted(drop), "rejected_count": len(drop)} if in_extra else {}
    objective = float(spec.objective(inst, spec.parse_schedule(sched)))
    return Result(family=spec.name, algorithm=res.algorithm, status=status, objective=objective, bound=None,
                  runtime_s=0.0, schedule=sched, instance_sha256=res.instance_sha256, extra=extra)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_dropped_job_with_recomputed_objective_is_caught(family):
    spec, inst, res = _honest(family)
    job = spec.listed_jobs(spec.parse_schedule(res.schedule))[0][0]
    lies = {
        "dropped silently": {"in_schedule": False, "in_extra": False, "status": Status.FEASIBLE},
        "rejected in the schedule only, feasible": {"in_schedule": True, "in_extra": False, "status": Status.FEASIBLE},
        "rejected everywhere, still feasible": {"in_schedule": True, "in_extra": True, "status": Status.FEASIBLE},
        "rejected everywhere, time_limit incumbent": {"in_schedule": True, "in_extra": True, "status": Status.TIME_LIMIT},
        "partial, rejected only in the schedule": {"in_schedule": True, "in_extra": False, "status": Status.PARTIAL},
    }
    for what, how in lies.items():
        if family == "tapfinger" and how["in_schedule"] and not how["in_extra"]:
            continue  # a tapfinger schedule has no rejected list: same as "dropped silently"
        lie = _mutated(spec, inst, res, drop=[job], **how)
        if how["status"] == Status.TIME_LIMIT:
            lie.algorithm = "cpsat"
            lie.bound = 0.0
        found = spec.check_result(inst, lie)
        assert found, f"{family}: {what} passed"
        # the core rule itself catches it (not only a family validator that happens to)
        assert {v.equation for v in found} & {"coverage", "rejected", "status"}, [str(v) for v in found]
    # a job listed twice, objective recomputed
    twice = _mutated(spec, inst, res, drop=[], in_schedule=False, in_extra=False, status=Status.FEASIBLE,
                     duplicate=True)
    assert spec.check_result(inst, twice)
    # the honest way to give up on the job is valid (the control: the rule does not reject everything)
    honest = _mutated(spec, inst, res, drop=[job], in_schedule=True, in_extra=True, status=Status.PARTIAL)
    assert not spec.check_result(inst, honest), [str(v) for v in spec.check_result(inst, honest)]


@pytest.mark.parametrize("family", FAMILIES)
def test_all_jobs_rejected_is_never_feasible(family):
    spec, inst, res = _honest(family)
    every = spec.ids_of_jobs(inst)
    lie = _mutated(spec, inst, res, drop=every, in_schedule=True, in_extra=True, status=Status.FEASIBLE)
    assert any(v.equation == "status" for v in spec.check_result(inst, lie))
    silent = _mutated(spec, inst, res, drop=every, in_schedule=False, in_extra=False, status=Status.FEASIBLE)
    assert len([v for v in spec.check_result(inst, silent) if v.equation in ("coverage", "2a")]) >= 1
    assert not spec.check_result(
        inst, _mutated(spec, inst, res, drop=every, in_schedule=True, in_extra=True, status=Status.PARTIAL))


def test_a_user_algorithm_that_drops_job_0_is_never_ranked():
    inst = api.generate("okita", "small", seed=0)
    spec = api.family("okita")
    honest = api.run("fifo", inst)

    def drop_first(instance):
        sched = copy.deepcopy(honest.schedule)
        sched["jobs"] = [js for js in sched["jobs"] if js["job"] != 0]
        return sched

    def drop_first_listed(instance):
        return {**drop_first(instance), "rejected": [0]}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api.register_algorithm("okita", "claims_drop0")(drop_first)
        api.register_algorithm("okita", "claims_drop0_listed")(drop_first_listed)
    try:
        cmp = api.compare(inst, ["fifo", "claims_drop0", "claims_drop0_listed"], optimal=True, method="cpsat",
                          time_limit=PROOF_CLOCK, work_limit=PROOF_WORK)  # the optimum proved by work
        rows = {r.algorithm: r for r in cmp.rows}
        assert not rows["claims_drop0"].valid and rows["claims_drop0"].rank is None
        assert rows["claims_drop0"].ratio is None and rows["claims_drop0"].status == "invalid"
        assert rows["claims_drop0_listed"].status == "partial" and rows["claims_drop0_listed"].rank is None
        assert rows["claims_drop0_listed"].ratio is None
        assert rows["fifo"].rank is not None and rows["fifo"].ratio >= 1 - 1e-9
        # the result that lists its rejected job is honest; the silent one is caught by the core rule
        assert any(v.equation == "coverage" for v in spec.check_result(
            inst, lookup("okita", "claims_drop0").fn(inst)))
    finally:
        unregister("okita", "claims_drop0")
        unregister("okita", "claims_drop0_listed")


def test_run_and_compare_validate_a_plugin_result_before_giving_it_a_status(tmp_path, capsys):
    from edgeopt.core import ModelError
    from tests.reliability_helpers import cli

    inst = api.generate("hetero", "small", seed=0, jobs=5)
    assert len(inst.jobs) == 5

    def nothing(instance):
        return {"jobs": []}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api.register_algorithm("hetero", "claims_nothing")(nothing)
    try:
        with pytest.raises(ModelError, match="claims_nothing.*invalid.*neither scheduled nor listed as rejected"):
            api.run("claims_nothing", inst)
        row = {r.algorithm: r for r in api.compare(inst, ["online", "claims_nothing"]).rows}["claims_nothing"]
        assert row.status == "invalid" and not row.valid and row.rank is None and row.ratio is None
        assert len(row.violations) >= 5
        # a built-in algorithm is run as before
        assert api.run("online", inst).status == Status.FEASIBLE
        # the command line: exit 1, one error line, no traceback, nothing written
        path, out = tmp_path / "i.json", tmp_path / "out.json"
        api.save(inst, path)
        assert cli("run", "claims_nothing", path, "-o", out) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: algorithm hetero/claims_nothing returned an invalid result")
        assert "Traceback" not in err and not out.exists()
    finally:
        unregister("hetero", "claims_nothing")


def test_a_tapfinger_user_algorithm_that_leaves_a_task_out_is_partial():
    inst = api.generate("tapfinger", "small", seed=0)
    honest = api.run("greedy", inst)

    def all_but_first(instance):
        return {"placements": [p for p in honest.schedule["placements"] if p["task"] != 0]}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api.register_algorithm("tapfinger", "claims_all_but_first")(all_but_first)
    try:
        res = api.run("claims_all_but_first", inst)
        assert res.status == Status.PARTIAL and res.rejected == [0] and not api.validate(inst, res)
        row = {r.algorithm: r for r in api.compare(inst, ["greedy", "claims_all_but_first"]).rows}
        assert row["claims_all_but_first"].rank is None and row["greedy"].rank == 1
    finally:
        unregister("tapfinger", "claims_all_but_first")
