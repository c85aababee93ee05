"""The learned TapFinger policies against the baselines and the certified bound: paper presets and real-trace weeks.

Regimes. The ``paper`` and ``congested`` regimes of ``tapfinger_gap.py`` (``generate("paper", seed=0)``:
3 clusters, Poisson(2), 192 tasks; and the same at Poisson(4)), with ``ti_lp``'s certified bound computed
here (``--preset-bound-time`` seconds, checked by its certificate). The three ITP weeks of ``cross_family.py`` (shipped ITP trace, cluster06, 96 GPUs as 6 clusters of
16 CPU / 16 GPU, seed 0, 300-second timesteps): quiet (week 0, 111 tasks), typical (week 2, 212) and busiest
(week 4, 182). Two mappings of the trace's jobs to task types:

* ``two`` (what ``cross_family.py`` builds): the paper's two types, ``short`` and ``long``; the certified
  bound is ``ti_lp``'s from ``bound_levels.json`` (checked there by its certificate), and every feasible
  algorithm gets its ratio total completion time / that bound;
* ``binned`` (``generate --trace``'s default): up to 64 types by GPU demand and duration; the one-hot
  ``online`` refuses it (one line, saying what to use), the type-profile ``online_bc`` runs. No bound is
  computed here (``--bound-time`` to compute ``ti_lp``'s, checked by its certificate).

Each learned policy takes the most likely action (argmax), one torch thread; its inference time per
decision is wall and CPU milliseconds (graph building + network, all deciding agents together).

    python benchmarks/tapfinger_policy_bound.py --out benchmarks/results
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bound_levels  # the weeks and their instances, as cross_family.py builds them
from bound_levels import WEEKS

from edgeopt import api, traces
from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import InputError
from edgeopt.core.jsonio import write_json
from edgeopt.core.lowerbound import check_certificate, compute_bound
from edgeopt.tapfinger.policy.registry import LAST_INFERENCE, LAST_INFERENCE_CPU
from formulations import table

ALGOS = ["online", "online_bc", "optimus", "optimus_np", "greedy", "greedy_ordered", "tiresias_np"]


PRESETS = {"paper": {}, "congested": {"arrival_rate": 4.0}}  # tapfinger_gap.py's regimes, seed 0


def week_instance(week: int, types: str):
    return bound_levels.week_instance("tapfinger", traces.load_itp(), week, task_types=types)


def known_bounds(path: Path) -> dict[str, float]:
    """window -> the certified ti_lp bound of bound_levels.json (two types), where its check agreed."""
    if not path.exists():
        return {}
    rows = json.loads(path.read_text())["rows"]
    return {r["window"]: r["bound"] for r in rows if r["family"] == "tapfinger" and r["check"] >= r["bound"] - 1e-6}


def run_week(label: str, types: str, bound: float | None, bound_time: float) -> dict:
    return run_instance(week_instance(WEEKS[label], types), bound, bound_time)


def run_instance(inst, bound: float | None, bound_time: float) -> dict:
    out: dict = {"tasks": len(inst.tasks), "task_types": len(inst.task_types), "horizon": inst.horizon}
    if bound is None and bound_time > 0:
        method = table("tapfinger", "LOWER_BOUNDS")["ti_lp"]
        res = compute_bound("tapfinger", method, inst, time_limit=bound_time)
        if res.bound is not None and check_certificate(method, inst, res) >= res.bound - 1e-6:
            bound = res.bound
    out["bound"] = bound
    out["bound_kind"] = "ti_lp (certified)" if bound else None
    rows = {}
    for a in ALGOS:
        c0 = time.process_time()
        try:
            res = api.run(a, inst, seed=0)
        except InputError as exc:
            rows[a] = {"status": "not run", "reason": exc.message}
            continue
        assert not api.validate(inst, res), a
        row = {"status": res.status.value, "cpu_s": round(time.process_time() - c0, 2),
               "kind": api.algorithms("tapfinger")[a].kind, "relaxed": api.algorithms("tapfinger")[a].relaxed}
        if res.status.value == "feasible":  # a partial result gets no number
            row["total_completion"] = res.objective
            if bound:
                row["ratio_to_bound"] = round(res.objective / bound, 4)
        else:
            row["rejected"] = len(res.rejected())
        if a in LAST_INFERENCE:
            row["inference_ms_per_decision"] = round(LAST_INFERENCE.pop(a), 2)
            row["inference_cpu_ms_per_decision"] = round(LAST_INFERENCE_CPU.pop(a), 2)
        rows[a] = row
    out["rows"] = rows
    return out


def main() -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0")
    ap.add_argument("--windows", default=",".join(WEEKS))
    ap.add_argument("--bound-time", type=float, default=0.0, help="compute ti_lp's bound where none is known")
    ap.add_argument("--preset-bound-time", type=float, default=300.0)
    ap.add_argument("--name", default="tapfinger_policy_bound")
    args = ap.parse_args()
    known = known_bounds(Path(args.out) / "bound_levels.json")
    t0 = time.perf_counter()
    report: dict = {"regime": " ".join(__doc__.split("\n\n")[1:4]).replace("\n", " "), "presets": {}, "windows": {}}
    from edgeopt.tapfinger import generate

    for label, options in PRESETS.items():
        report["presets"][label] = run_instance(generate("paper", seed=0, **options), None, args.preset_bound_time)
        print(label, json.dumps({a: r.get("ratio_to_bound", r["status"]) for a, r in
                                 report["presets"][label]["rows"].items()}), flush=True)
    for label in args.windows.split(","):
        report["windows"][label] = {types: run_week(label, types, known.get(label) if types == "two" else None,
                                                    args.bound_time)
                                    for types in ("two", "binned")}
        print(label, json.dumps({t: {a: r.get("total_completion", r["status"]) for a, r in w["rows"].items()}
                                 for t, w in report["windows"][label].items()}), flush=True)
    report["wall_s"] = round(time.perf_counter() - t0, 1)
    write_json(result_path(args.out, f"{args.name}.json"), report)


if __name__ == "__main__":
    main()
