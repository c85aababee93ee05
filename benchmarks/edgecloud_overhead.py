"""She et al. Fig. 9-10: A_online vs Preemptive as the preemption (resumption) overhead grows.

The paper reports A_online "slightly better" than Preemptive once preemption
overhead is charged (Fig. 9-10) and gives no overhead value. This sweep runs
``preemptive`` with ``overhead_slots`` in ``--overheads`` (a resumed job holds
its resources but trains nothing for that many slots) against ``online`` on
several seeds and points (J varied at S = 200, S varied at J = 200), in a
stated regime (``compact``: arrivals in [1, 128], T = 4096; ``first``: the
same with one worker type and one PS type per edge server; ``paper``:
arrivals in [1, T/1.5], T = 6144; see ``edgecloud_baselines.py``), and
reports, per point and seed, the smallest overhead at which ``online``'s total
completion time is at most Preemptive's (the flip), or none within the
sweep. Partial results (rejected jobs) get no comparison.

    PYTHONPATH=. .venv/bin/python benchmarks/edgecloud_overhead.py --seeds 0-2 [--regimes compact,first,paper]
        [--overheads 0,1,2,4,8,16,24] [--out benchmarks/results]

Writes ``edgecloud_overhead_<regime>.json`` and ``.png`` under ``--out``.
"""

from __future__ import annotations

import statistics
import time

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import Status, lookup
from edgeopt.core.jsonio import write_json
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud.instance import COMPACT_HORIZON, COMPACT_LAST_ARRIVAL, paper_instance

PRESET = {"compact": "paper_compact", "paper": "paper"}


def make_instance(regime: str, seed: int, jobs: int, servers: int):
    """``compact`` / ``paper`` presets, or ``first``: compact arrivals with one worker and PS type per server."""
    if regime == "first":
        return paper_instance(seed, jobs=jobs, servers=servers, horizon=COMPACT_HORIZON,
                              last_arrival=COMPACT_LAST_ARRIVAL, server_types="per_server")
    return generate(PRESET[regime], seed=seed, jobs=jobs, servers=servers)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _run(inst, name: str, **kw) -> dict:
    res = lookup("edgecloud", name)(inst, **kw)
    bad = FAMILY.check_result(inst, res)
    if bad:
        raise SystemExit(f"{name} {kw} produced an invalid schedule: {bad[0]}")
    out = {"status": res.status.value, "total_jct": res.objective, "rejected": len(res.rejected)}
    if name == "preemptive":
        out["resumptions"] = sum(max(0, len(r.get("segments") or [1]) - 1) for r in res.schedule["jobs"])
    return out


def main(argv: list[str] | None = None) -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-2")
    ap.add_argument("--regimes", default="compact,first,paper")
    ap.add_argument("--overheads", type=_ints, default=_ints("0,1,2,4,8,16,24"))
    ap.add_argument("--points", default="100x200,200x200,300x200,200x100,200x300",
                    help="comma list of JOBSxEDGE_SERVERS")
    args = ap.parse_args(argv)
    points = [tuple(int(v) for v in p.split("x")) for p in args.points.split(",")]
    t0 = time.perf_counter()
    data: dict = {"benchmark": "edgecloud_overhead", "seeds": args.seeds, "overheads": args.overheads, "regimes": {}}
    for regime in args.regimes.split(","):
        rows = []
        for jobs, servers in points:
            for seed in args.seeds:
                inst = make_instance(regime, seed, jobs, servers)
                on = _run(inst, "online")
                pre = {o: _run(inst, "preemptive", overhead_slots=o) for o in args.overheads}
                comparable = on["status"] == Status.FEASIBLE.value and all(
                    p["status"] == Status.FEASIBLE.value for p in pre.values())
                flip = None
                if comparable:
                    flip = next((o for o in args.overheads if on["total_jct"] <= pre[o]["total_jct"]), None)
                row = {"jobs": jobs, "servers": servers, "seed": seed, "online": on,
                       "preemptive": {str(o): p for o, p in pre.items()}, "comparable": comparable,
                       "flip_overhead": flip,
                       "rate": {str(o): pre[o]["total_jct"] / on["total_jct"] for o in args.overheads}
                       if comparable else None}
                rows.append(row)
                rates = " ".join(f"{o}:{row['rate'][str(o)]:.3f}" for o in args.overheads) if comparable else "-"
                print(f"{regime:8} J={jobs:4d} S={servers:4d} seed={seed}  preemptive/online by overhead {rates}"
                      f"  flip at {flip}", flush=True)
        summary = []
        for jobs, servers in points:
            sel = [r for r in rows if (r["jobs"], r["servers"]) == (jobs, servers) and r["comparable"]]
            flips = [r["flip_overhead"] for r in sel]
            summary.append({
                "jobs": jobs, "servers": servers, "seeds": len(sel),
                "mean_rate": {str(o): statistics.fmean(r["rate"][str(o)] for r in sel) for o in args.overheads}
                if sel else None,
                "flip_overheads": flips,
                "no_flip_within_sweep": sum(f is None for f in flips),
            })
            s = summary[-1]
            if sel:
                print(f"{regime:8} J={jobs:4d} S={servers:4d}  mean preemptive/online: "
                      + " ".join(f"{o}:{s['mean_rate'][str(o)]:.3f}" for o in args.overheads)
                      + f"  flips {flips}")
        data["regimes"][regime] = {"rows": rows, "summary": summary}
        one = {**data, "regimes": {regime: data["regimes"][regime]}, "points": args.points,
               "elapsed_s": round(time.perf_counter() - t0, 1)}
        path = result_path(args.out, f"edgecloud_overhead_{regime}.json")
        write_json(path, one)
        plot(one, path.with_suffix(".png"))
        print(f"wrote {path} and .png ({one['elapsed_s']} s)")


def plot(data: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    regimes = list(data["regimes"])
    fig, axes = plt.subplots(1, len(regimes), figsize=(5.5 * len(regimes), 3.8), squeeze=False)
    for ax, regime in zip(axes[0], regimes, strict=True):
        for s in data["regimes"][regime]["summary"]:
            if s["mean_rate"] is None:
                continue
            ov = data["overheads"]
            ax.plot(ov, [s["mean_rate"][str(o)] for o in ov], marker="o", label=f"J={s['jobs']}, S={s['servers']}")
        ax.axhline(1.0, color="k", lw=0.8, ls=":")
        ax.set_xlabel("preemption overhead [slots per resumption]")
        ax.set_ylabel("total JCT: preemptive / online (mean over seeds)")
        ax.set_title(f"regime {regime}: below 1 = preemptive better", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"edgecloud Fig. 9-10: overhead sweep, seeds {data['seeds']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
