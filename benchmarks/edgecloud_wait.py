"""Where A_online's total completion time goes at the paper's scale: waiting for rounds, after them, running.

For each seed, A_online's total JCT sum_j (c_j - a_j) is split into the wait
until the round that decided the job (decision slot - a_j), the wait from
that decision to the job's start, and the run (c_j - start); FIFO's and DRF's
totals into wait (start - a_j, which includes the upload delays (2i)) and
run. Regimes as in ``edgecloud_baselines.py`` (``paper``: arrivals in
[1, T/1.5], T = 6144; ``compact``: arrivals in [1, 128], T = 4096).

    PYTHONPATH=. .venv/bin/python benchmarks/edgecloud_wait.py --seeds 0-1 [--regimes paper,compact]
        [--jobs 100] [--servers 200] [--out benchmarks/results]

Writes ``edgecloud_wait.json`` under ``--out``.
"""

from __future__ import annotations

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.core import lookup, run_online
from edgeopt.core.jsonio import write_json
from edgeopt.edgecloud import FAMILY, generate
from edgeopt.edgecloud.online import OnlineScheduler, Prices

PRESET = {"paper": "paper", "compact": "paper_compact"}


def split(regime: str, seed: int, jobs: int, servers: int) -> dict:
    inst = generate(PRESET[regime], seed=seed, jobs=jobs, servers=servers)
    arrival = {j.id: j.arrival for j in inst.jobs}
    pol = OnlineScheduler(inst, Prices.for_instance(inst))
    run_online(pol, inst.jobs, inst.horizon)
    decided = {d.job: d.slot for d in pol.decisions}
    runs = pol.runs
    out = {"seed": seed, "online": {
        "scheduled": len(runs),
        "wait_for_round": sum(decided[j] - arrival[j] for j in runs),
        "wait_after_decision": sum(r.start - decided[j] for j, r in runs.items()),
        "run": sum(r.end - r.start for r in runs.values()),
    }}
    out["online"]["total"] = sum(out["online"][k] for k in ("wait_for_round", "wait_after_decision", "run"))
    for name in ("fifo", "drf"):
        res = lookup("edgecloud", name)(inst)
        if FAMILY.check_result(inst, res):
            raise SystemExit(f"{name}: invalid schedule")
        rr = res.schedule["jobs"]
        out[name] = {"status": res.status.value, "scheduled": len(rr),
                     "wait": sum(r["start"] - arrival[r["job"]] for r in rr),
                     "run": sum(r["end"] - r["start"] for r in rr), "total": res.objective}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = benchmark_parser(__doc__.splitlines()[0], seeds="0-1")
    ap.add_argument("--regimes", default="paper,compact")
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--servers", type=int, default=200)
    args = ap.parse_args(argv)
    data: dict = {"benchmark": "edgecloud_wait", "jobs": args.jobs, "servers": args.servers, "regimes": {}}
    for regime in args.regimes.split(","):
        rows = [split(regime, s, args.jobs, args.servers) for s in args.seeds]
        data["regimes"][regime] = rows
        for r in rows:
            o = r["online"]
            print(f"{regime:8} seed {r['seed']}: online total {o['total']} = wait for round {o['wait_for_round']} "
                  f"+ after decision {o['wait_after_decision']} + run {o['run']}; "
                  f"fifo {r['fifo']['total']:.0f} = wait {r['fifo']['wait']} + run {r['fifo']['run']}; "
                  f"drf {r['drf']['total']:.0f} = wait {r['drf']['wait']} + run {r['drf']['run']}", flush=True)
    path = result_path(args.out, "edgecloud_wait.json")
    write_json(path, data)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
