"""Results as DataFrames: one row per scheduled job whose contributions add up to the objective."""

from __future__ import annotations

import pytest

from edgeopt import api
from edgeopt.core.views import JobRow
from edgeopt.frames import JOB_COLUMNS, job_frame, records_frame
from tests.reliability_helpers import prove, scheduled_ids

pd = pytest.importorskip("pandas")
FAMILIES = [s.name for s in api.families()]




@pytest.mark.parametrize("family", FAMILIES)
def test_result_frame_rows_add_up_to_the_objective(family):
    inst = api.generate(family, "small", seed=1)
    for res in (api.run("online", inst), prove(api.solve, inst, method="cpsat")):
        assert api.validate(inst, res) == []
        frame = res.to_frame(inst)
        assert list(frame.columns[: len(JOB_COLUMNS)]) == list(JOB_COLUMNS)
        assert sorted(frame["job"]) == sorted(scheduled_ids(res))
        # The objective recomputed by the family's own function equals the sum of the rows' shares.
        assert frame["objective"].sum() == pytest.approx(res.objective)
        assert (frame["start"] >= frame["arrival"]).all()
        assert (frame["end"] > frame["start"]).all()
        assert frame.attrs["algorithm"] == res.algorithm and frame.attrs["rejected"] == []


def test_partial_result_lists_rejected_jobs_outside_the_rows():
    inst = api.generate("edgecloud", "small", seed=1)
    res = api.run("online", inst)
    sched = dict(res.schedule)
    dropped = sched["jobs"][0]["job"]
    sched["jobs"] = sched["jobs"][1:]
    sched["rejected"] = [dropped]
    spec = api.family("edgecloud")
    partial = spec.algorithm_result(inst, "online", spec.parse_schedule(sched), 0.0, rejected=[dropped])
    frame = partial.to_frame(inst)
    assert dropped not in set(frame["job"]) and frame.attrs["rejected"] == [dropped]
    assert frame.attrs["status"] == "partial"


def test_comparison_frame_one_row_per_algorithm():
    inst = api.generate("hetero", "small", seed=0)
    comparison = api.compare(inst, ["online", "fifo"])
    frame = comparison.to_frame()
    assert list(frame.index) == ["online", "fifo"]
    assert {"status", "objective", "ratio", "rank", "valid", "rejected"} <= set(frame.columns)
    assert frame.loc["online", "objective"] == comparison.rows[0].objective
    assert frame.attrs["objective_name"] == api.family("hetero").objective_name


def test_job_frame_rejects_extra_columns_that_shadow_common_ones():
    with pytest.raises(ValueError, match="objective"):
        job_frame([JobRow(0, 0, 0, 1, "x", 1.0, extra={"objective": 2})])
    assert list(job_frame([]).columns) == list(JOB_COLUMNS)


def test_records_frame_flattens_nested_rows():
    frame = records_frame([{"algorithm": "a", "point": {"seed": 1}}, {"algorithm": "b", "point": {"seed": 2}}])
    assert list(frame["point.seed"]) == [1, 2]


def test_result_without_adapter_or_schedule_is_a_clear_input_error():
    from edgeopt.core import InputError

    inst = api.generate("hetero", "small", seed=0)
    res = api.run("online", inst)
    res.schedule = None
    with pytest.raises(InputError, match="result.schedule"):
        res.to_frame(inst)


def test_save_load_compact_and_gzip_round_trip(tmp_path):
    inst = api.generate("preemptive", "small", seed=0)
    res = api.run("online", inst)
    plain, gz = tmp_path / "r.json", tmp_path / "r.json.gz"
    api.save(res, plain)
    api.save(res, gz)
    assert "\n " not in plain.read_text()  # compact: no indentation
    assert gz.read_bytes()[:2] == b"\x1f\x8b"
    assert api.load_result(gz) == api.load_result(plain) == res
    api.save(inst, tmp_path / "i.json.gz")
    assert api.load(tmp_path / "i.json.gz") == inst
