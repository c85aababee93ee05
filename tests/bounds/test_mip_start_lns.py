"""MIP starts, CP-SAT hints and the large-neighbourhood search (``solve --lns``).

* a schedule mapped to a model's variables (each family's ``start.py``) is feasible in that model:
  CP-SAT completes the hints with every hinted variable fixed (`complete_hints`), and HiGHS, stopped
  at its first improving solution, returns the warm start's objective or better;
* the LNS returns status ``time_limit``, a complete schedule that validates and is never worse than
  the warm start, and a neighbourhood that returns a worse, invalid or incomplete schedule never
  replaces the incumbent.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest

from edgeopt import api
from edgeopt.core import Deadline, InputError, Result, Status
from edgeopt.core.lns import Neighbourhood, SubSolve, search
from formulations.common import complete_hints, solve_pyomo
from tests.reliability_helpers import PROOF_CLOCK, PROOF_WORK, assert_lns_result, cli


def _warm(family: str, seed: int, algorithm: str):
    inst = api.generate(family, "small", seed=seed)
    ws = api.run(algorithm, inst)
    assert ws.comparable and not api.validate(inst, ws)
    return inst, ws, api.family_of(inst).parse_schedule(ws.schedule)


@pytest.mark.parametrize(("family", "algorithm"), [("hetero", "fifo"), ("hetero", "drf"), ("edgecloud", "fifo")])
def test_cpsat_hints_of_a_valid_schedule_are_feasible(family: str, algorithm: str) -> None:
    inst, _ws, sched = _warm(family, 3, algorithm)
    if family == "hetero":
        from formulations.hetero.cpsat import build_cpsat
        from formulations.hetero.data import prepare
        from formulations.hetero.start import hint_cpsat

        cm = build_cpsat(prepare(inst))
        assert hint_cpsat(cm, sched) == len(inst.jobs)
    else:
        from formulations.edgecloud.cpsat import build_cpsat
        from formulations.edgecloud.start import hint_cpsat

        cm = build_cpsat(inst)
        assert hint_cpsat(cm, inst, sched) == len(inst.jobs)
    # every hinted variable fixed to its hint: CP-SAT finds a solution, so the mapping is feasible
    assert complete_hints(cm.model, time_limit=PROOF_CLOCK)  # no work limit reaches it; every variable is fixed


def _first_highs_solution(family: str, inst, sched, with_start: bool) -> float:
    if family == "hetero":
        from formulations.hetero.data import prepare
        from formulations.hetero.milp import build_milp
        from formulations.hetero.start import start_milp

        model = build_milp(prepare(inst))
        start = start_milp(model, sched)
    else:
        from formulations.edgecloud.milp import build_milp
        from formulations.edgecloud.start import start_milp

        model = build_milp(inst)
        start = start_milp(model, inst, sched)
    out = solve_pyomo(model, time_limit=PROOF_CLOCK, start=start if with_start else None,
                      highs_options={"mip_max_improving_sols": 1})
    assert out.has_solution
    assert (out.start_values > 0) == with_start
    return float(out.objective)


@pytest.mark.parametrize(("family", "algorithm"), [("hetero", "drf"), ("edgecloud", "fifo")])
def test_highs_takes_the_mip_start(family: str, algorithm: str) -> None:
    inst, ws, sched = _warm(family, 3, algorithm)
    # HiGHS stops at its first improving solution; from the start it is the warm start or better
    assert _first_highs_solution(family, inst, sched, True) <= ws.objective + 1e-6


def test_highs_mip_start_matters_on_this_instance() -> None:
    # without the start, HiGHS's first solution on this instance is worse than the warm start: the
    # test above would fail if the start were silently dropped
    inst, ws, sched = _warm("hetero", 3, "drf")
    assert _first_highs_solution("hetero", inst, sched, False) > ws.objective


@pytest.mark.parametrize("method", ["cpsat", "milp"])
def test_solve_milp_and_cpsat_take_a_hint(method: str) -> None:
    inst, ws, _ = _warm("hetero", 3, "drf")
    res = api.solve(inst, method=method, time_limit=20, warm_start="drf")
    assert not api.validate(inst, res)
    assert res.objective <= ws.objective + 1e-9
    key = "mip_start_values" if method == "milp" else "hinted_jobs"
    assert res.extra.get(key) or res.extra["warm_start"]["kept"] is False


@pytest.mark.parametrize(("family", "algorithm"), [("hetero", "fifo"), ("edgecloud", "fifo"), ("tapfinger", "minimum")])
def test_lns_is_never_worse_than_the_warm_start_and_validates(family: str, algorithm: str) -> None:
    inst, ws, _ = _warm(family, 1, algorithm)
    res = api.solve(inst, method="cpsat", time_limit=8, warm_start=algorithm, lns=True)
    assert_lns_result(inst, ws, res)


def test_hetero_lns_with_the_milp_windows() -> None:
    inst, ws, _ = _warm("hetero", 1, "fifo")
    res = api.solve(inst, method="milp", time_limit=8, warm_start="fifo", lns=True)
    assert not api.validate(inst, res) and res.objective <= ws.objective + 1e-9


def _later_and_overfull(sched):
    """Two neighbours of a hetero schedule: its first job a slot later (worse), and with 10^4 workers (invalid)."""
    first = sched.jobs[0]
    later = sched.model_copy(update={"jobs": [first.model_copy(update={"start": first.start + 1}), *sched.jobs[1:]]})
    overfull = sched.model_copy(update={"jobs": [first.model_copy(update={"workers": {0: 10**4}}), *sched.jobs[1:]]})
    return later, overfull


def test_search_rejects_worse_invalid_and_incomplete_neighbours() -> None:
    inst, ws, sched = _warm("hetero", 1, "fifo")
    spec = api.family_of(inst)
    later, overfull = _later_and_overfull(sched)
    dropped = sched.model_copy(update={"jobs": sched.jobs[1:]})
    offers = itertools.cycle([later, overfull, dropped, None])
    hood = Neighbourhood(order=lambda i, s: [js.job for js in s.jobs],
                         reoptimise=lambda i, s, free, limit: SubSolve(next(offers), False), window=2)
    best, obj, log = search(spec, inst, sched, hood, deadline=Deadline(1.0), min_sub_limit=0.0)
    assert obj == pytest.approx(ws.objective) and best is sched
    assert log.improvements == 0 and log.iterations >= 4 and log.failed_windows >= 3


def test_tapfinger_window_keeps_the_other_tasks_and_improves_a_poor_start() -> None:
    from formulations.tapfinger.lns import reoptimise

    inst, ws, sched = _warm("tapfinger", 1, "minimum")
    first = [0, 1, 2, 3]
    sub = reoptimise(inst, sched, first, 20.0)
    assert sub.schedule is not None
    ids = {inst.tasks[j].id for j in first}
    keep = {p.task: p for p in sched.placements if p.task not in ids}
    assert {p.task: p for p in sub.schedule.placements if p.task not in ids} == keep
    spec = api.family_of(inst)
    assert spec.validate(inst, sub.schedule) == []
    assert spec.objective(inst, sub.schedule) <= ws.objective + 1e-9


def test_lns_refusals(tmp_path: Path) -> None:
    # okita has a neighbourhood for its CP-SAT model only: LNS windows of its MILP are refused
    inst = api.generate("okita", "small", seed=1)
    with pytest.raises(InputError) as err:
        api.solve(inst, method="milp", time_limit=5, lns=True)
    assert err.value.field == "method" and "cpsat" in str(err.value)
    het = api.generate("hetero", "small", seed=1)
    path, out = tmp_path / "i.json", tmp_path / "r.json"
    api.save(het, path)
    assert cli("solve", path, "--method", "cpsat", "--time-limit", "5", "--lns", "-o", out) == 0
    res = Result.load(str(out))
    assert res.status == Status.TIME_LIMIT and not api.validate(het, res)


def test_okita_highs_takes_the_mip_start() -> None:
    from formulations.okita.milp import build_milp
    from formulations.okita.start import start_milp

    inst, ws, sched = _warm("okita", 1, "fifo")
    model = build_milp(inst)
    out = solve_pyomo(model, time_limit=PROOF_CLOCK, start=start_milp(model, sched),
                      highs_options={"mip_max_improving_sols": 1})
    assert out.start_values > 0
    # the first incumbent HiGHS reports is the start itself (no better one is found before it)
    assert out.objective == pytest.approx(ws.objective, rel=1e-6)
    res = api.solve(inst, method="milp", time_limit=20, warm_start="fifo")
    assert not api.validate(inst, res) and res.objective <= ws.objective + 1e-9
    assert res.extra.get("mip_start_values") or res.extra["warm_start"]["kept"] is False


def test_okita_start_of_the_model_by_completion_is_the_schedule() -> None:
    """`start_milp_completion` encodes a schedule as a solution of the completion model that keeps every row
    and costs the schedule's objective (HiGHS may find a better solution before it reads the start there, so
    the start is checked on the model itself), and `solve_milp` from it returns no worse."""
    import pyomo.core as pyo

    from formulations.okita.milp_completion import build_milp_completion, start_milp_completion

    inst, ws, sched = _warm("okita", 1, "fifo")
    model = build_milp_completion(inst)
    start = start_milp_completion(model, sched)
    for var in model.component_data_objects(pyo.Var):
        var.set_value(start.get(var, 0.0), skip_validation=True)
    for row in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(row.body)
        assert row.lower is None or body >= pyo.value(row.lower) - 1e-9, row.name
        assert row.upper is None or body <= pyo.value(row.upper) + 1e-9, row.name
    assert pyo.value(model.obj) == pytest.approx(ws.objective, rel=1e-9)
    res = api.solve(inst, method="milp", time_limit=PROOF_CLOCK, hint=sched.model_dump(mode="json"),
                    work_limit=PROOF_WORK)
    assert res.status == Status.OPTIMAL and not api.validate(inst, res) and res.objective <= ws.objective + 1e-9
    assert res.extra["mip_start_values"] > 0


def test_preemptive_highs_takes_the_mip_start() -> None:
    from formulations.preemptive.data import from_instance
    from formulations.preemptive.milp import build_milp
    from formulations.preemptive.start import start_milp

    inst, ws, sched = _warm("preemptive", 1, "online")
    firsts = []
    for with_start in (False, True):
        data = from_instance(inst)
        model = build_milp(data)
        start = start_milp(model, data, inst, sched) if with_start else None
        out = solve_pyomo(model, time_limit=PROOF_CLOCK, start=start, highs_options={"mip_max_improving_sols": 1})
        firsts.append(out.objective)
    # from the start, HiGHS's first solution is the warm start or better; without it, worse here
    assert firsts[1] <= ws.objective + 1e-6 < firsts[0]
    res = api.solve(inst, method="milp", time_limit=20, warm_start="online")
    assert not api.validate(inst, res) and res.objective <= ws.objective + 1e-9


def test_search_hands_each_window_at_most_the_sub_limit_and_stops_at_the_deadline() -> None:
    inst, _ws, sched = _warm("hetero", 1, "fifo")
    given: list[float] = []

    def record(i, s, free, limit):
        given.append(limit)
        return SubSolve(None, False)

    deadline = Deadline(0.3)
    hood = Neighbourhood(order=lambda i, s: [js.job for js in s.jobs], reoptimise=record, window=1)
    best, _obj, log = search(api.family_of(inst), inst, sched, hood, deadline=deadline, sub_limit=0.1,
                            min_sub_limit=0.0)
    assert deadline.expired() and best is sched and log.iterations == len(given) >= 1
    assert all(0.0 <= g <= 0.1 for g in given)


@pytest.mark.parametrize(("family", "algorithm"), [("preemptive", "srtf"), ("okita", "fifo")])
def test_preemptive_and_okita_cpsat_start_from_the_warm_start(family: str, algorithm: str) -> None:
    # the full CP-SAT solve takes the warm start as hints: every job hinted, never worse, validated
    inst, ws, _ = _warm(family, 2, algorithm)
    from edgeopt.solving.warmstart import accepts_hint

    assert accepts_hint(inst, "cpsat")
    res = api.solve(inst, method="cpsat", time_limit=20, warm_start=algorithm)
    assert not api.validate(inst, res)
    assert res.objective <= ws.objective + 1e-6
    assert res.extra["hinted_jobs"] == len(inst.jobs)


def test_search_takes_a_better_polish_and_refuses_a_worse_or_invalid_one() -> None:
    inst, ws, sched = _warm("hetero", 1, "fifo")
    spec = api.family_of(inst)
    later, overfull = _later_and_overfull(sched)
    no_windows = Neighbourhood(order=lambda i, s: [], reoptimise=lambda i, s, free, limit: SubSolve(None, False))
    for offered in (later, overfull, None):  # worse, invalid, nothing to polish: the start stays
        hood = dataclasses.replace(no_windows, polish=lambda i, s, o=offered: o)
        best, obj, log = search(spec, inst, sched, hood, deadline=Deadline(1.0), min_sub_limit=0.0)
        assert best is sched and obj == pytest.approx(ws.objective) and log.improvements == 0
    # a better polish (the worse one as the start) is taken and logged
    hood = dataclasses.replace(no_windows, polish=lambda i, s: sched)
    best, obj, log = search(spec, inst, later, hood, deadline=Deadline(1.0), min_sub_limit=0.0)
    assert best is sched and log.improvements == 1 and log.objective == pytest.approx(ws.objective)


def test_search_takes_a_better_rebuild_within_its_share_of_the_time() -> None:
    """A neighbourhood's ``rebuild`` (a schedule from nothing) is tried once before the windows, given at most
    `REBUILD_SHARE` of the time left, and kept like any neighbour: only when valid, complete and better."""
    from edgeopt.core.lns import REBUILD_SHARE

    inst, ws, sched = _warm("hetero", 1, "fifo")
    spec = api.family_of(inst)
    later, overfull = _later_and_overfull(sched)
    no_windows = Neighbourhood(order=lambda i, s: [], reoptimise=lambda i, s, free, limit: SubSolve(None, False))
    for offered, verdict in ((later, "not better"), (overfull, "not better"), (None, "no schedule")):
        hood = dataclasses.replace(no_windows, rebuild=lambda i, d, o=offered: o)
        best, obj, log = search(spec, inst, sched, hood, deadline=Deadline(100.0), min_sub_limit=0.0)
        assert best is sched and obj == pytest.approx(ws.objective) and log.improvements == 0
        assert log.rebuild == verdict and log.as_dict()["rebuild"] == verdict
    given = []

    def rebuild(i, d):
        given.append(d.remaining(floor=0.0))
        return sched

    best, obj, log = search(spec, inst, later, dataclasses.replace(no_windows, rebuild=rebuild),
                            deadline=Deadline(100.0), min_sub_limit=0.0)
    assert best is sched and log.rebuild == "kept" and log.improvements == 1
    assert len(given) == 1 and 0.0 < given[0] <= REBUILD_SHARE * 100.0
    assert "rebuild" not in search(spec, inst, sched, no_windows, deadline=Deadline(1.0), min_sub_limit=0.0)[2].as_dict()
    # with a margin, a better rebuild is kept only when better by that fraction of the start
    gain = (spec.objective(inst, later) - spec.objective(inst, sched)) / spec.objective(inst, later)
    for margin, verdict in ((gain / 2, "kept"), (gain * 2, "not better by the margin")):
        hood = dataclasses.replace(no_windows, rebuild=lambda i, d: sched, rebuild_margin=margin)
        best, obj, log = search(spec, inst, later, hood, deadline=Deadline(100.0), min_sub_limit=0.0)
        assert log.rebuild == verdict and (best is sched) == (verdict == "kept")


def test_search_runs_a_local_search_after_the_polish_within_its_share_and_keeps_it_only_when_better() -> None:
    """A neighbourhood's ``local`` search starts from the incumbent (after the polish), gets at most
    ``local_share`` of the time left, and is kept like any neighbour: only when valid, complete and better."""
    inst, ws, sched = _warm("hetero", 1, "fifo")
    spec = api.family_of(inst)
    later, overfull = _later_and_overfull(sched)
    no_windows = Neighbourhood(order=lambda i, s: [], reoptimise=lambda i, s, free, limit: SubSolve(None, False))
    for offered, verdict in ((later, "not better"), (overfull, "not better"), (None, "no schedule")):
        hood = dataclasses.replace(no_windows, local=lambda i, s, d, o=offered: o)
        best, obj, log = search(spec, inst, sched, hood, deadline=Deadline(100.0), min_sub_limit=0.0)
        assert best is sched and obj == pytest.approx(ws.objective) and log.improvements == 0
        assert log.local == verdict and log.as_dict()["local"] == verdict
    given = []

    def local(i, s, d):
        given.append((s, d.remaining(floor=0.0)))
        return sched

    hood = dataclasses.replace(no_windows, local=local, local_share=0.3)
    best, obj, log = search(spec, inst, later, hood, deadline=Deadline(100.0), min_sub_limit=0.0)
    assert best is sched and log.local == "kept" and log.improvements == 1
    assert len(given) == 1 and given[0][0] is later and 0.0 < given[0][1] <= 0.3 * 100.0
    # it starts from what the polish made the incumbent
    hood = dataclasses.replace(no_windows, polish=lambda i, s: sched, local=lambda i, s, d: given.append(s))
    best, obj, log = search(spec, inst, later, hood, deadline=Deadline(100.0), min_sub_limit=0.0)
    assert given[-1] is sched and best is sched and log.local == "no schedule"
    assert "local" not in search(spec, inst, sched, no_windows, deadline=Deadline(1.0), min_sub_limit=0.0)[2].as_dict()


@pytest.mark.parametrize("family", ["hetero", "edgecloud", "tapfinger"])
def test_the_list_scheduling_families_run_ruin_and_recreate_before_their_windows(family: str) -> None:
    import importlib

    lns = importlib.import_module(f"formulations.{family}.lns")
    hood = lns.neighbourhood()
    assert hood.local is lns.recreate and 0.0 < hood.local_share == lns.LOCAL_SHARE < 1.0
    # from a list schedule it improves on the `small` preset, validated and complete
    inst = api.generate(family, "small", seed=2)
    start = api.run({"tapfinger": "greedy", "edgecloud": "fifo", "hetero": "fifo"}[family], inst)
    spec = api.family_of(inst)
    assert start.status.value == "feasible"
    # it stops when it stalls (a work limit: 10 iterations per job without a kept move), long before 100 s
    out = lns.recreate(inst, spec.parse_schedule(start.schedule), Deadline(100.0))
    assert out is not None and spec.validate(inst, out) == [] and spec.objective(inst, out) < start.objective


class _Never:
    def expired(self):
        return False


@pytest.mark.parametrize(("family", "algorithm"), [("edgecloud", "fifo"), ("tapfinger", "greedy")])
def test_ruin_and_recreate_improves_a_list_schedule_and_stays_valid_and_complete(family: str, algorithm: str) -> None:
    import importlib

    from edgeopt.core.lns import complete_and_valid

    recreate = importlib.import_module(f"edgeopt.{family}.offline").recreate
    inst = api.generate(family, "small", seed=2)
    spec = api.family_of(inst)
    res = api.run(algorithm, inst)
    start = spec.parse_schedule(res.schedule)
    out, log = recreate(inst, start, _Never(), max_iterations=40)
    assert log.iterations == 40 and log.accepted >= 1 and out is not None
    assert complete_and_valid(spec, inst, out)  # the validator, and every job scheduled once
    assert spec.objective(inst, out) == pytest.approx(res.objective + log.change) and log.change < 0
    assert recreate(inst, start, _Never(), max_iterations=40)[0] == out  # deterministic per iteration count
    best = spec.parse_schedule(api.run("offline_fill", inst).schedule)
    again, log = recreate(inst, best, _Never(), max_iterations=40)
    assert again is None and log.accepted == 0  # nothing better found: None, the caller keeps its schedule
