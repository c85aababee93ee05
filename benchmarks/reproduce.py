"""Regenerate every tracked result in benchmarks/results/ (the numbers of docs/REPRODUCTION.md).

One entry per result file: the script and the arguments that produced the committed file. Run from
the repository root:

    .venv/bin/python benchmarks/reproduce.py                 # everything, into benchmarks/results (hours)
    .venv/bin/python benchmarks/reproduce.py --quick         # reduced sizes, into benchmarks/out (minutes)
    .venv/bin/python benchmarks/reproduce.py --only okita,tapfinger --list
    .venv/bin/python benchmarks/reproduce.py --address tcp://HOST:8786    # on a running Dask cluster

With ``--address`` every entry is one Dask task on an existing cluster (workers must see this checkout
and the output folder, e.g. on a shared file system). A task runs its script into a private folder and
then moves each file into the output folder with an atomic rename, and last writes a done record
``.done/<entry key>.json``; a re-run skips the entries that have one (``--force`` runs them again), so
an interrupted cluster run resumes where it stopped.

``make reproduce`` and ``make reproduce-quick`` call it. The full run rewrites the tracked files;
the quick run only checks that every experiment still runs end to end on small inputs and writes
to the git-ignored ``benchmarks/out/`` (its numbers are not the report's). Each entry gives its
approximate time on a 2-core laptop as measured when its committed file was produced.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Entry:
    family: str
    script: str
    args: str  # as used for the committed result (``--out`` is appended)
    quick: str  # reduced sizes: a smoke run of the same code path
    minutes: float  # rough full-run time, 2 cores
    produces: str  # the result file(s)


ENTRIES: tuple[Entry, ...] = (
    # hetero (Zhou et al.)
    Entry("hetero", "hetero_ratios.py", "", "--seeds 0-1 --presets small --theorem-seeds 1 --time-limit 20",
          60, "hetero_ratios.json"),
    Entry("hetero", "hetero_paper_totals.py", "--no-every-slot",
          "--presets paper --jobs 60 --horizon 60 --no-every-slot", 45,
          "hetero_paper_totals_paper.json, hetero_paper_totals_paper_congested.json"),
    Entry("hetero", "hetero_paper_totals.py", "--presets paper --only online_every_slot --suffix _every_slot",
          "--presets paper --jobs 60 --horizon 60 --only online_every_slot --suffix _every_slot", 30,
          "hetero_paper_totals_paper_every_slot.json"),
    Entry("hetero", "hetero_online_speed.py", "--baselines", "--jobs 100 --servers 30 --horizon 100", 5,
          "hetero_online_speed.json"),
    Entry("hetero", "hetero_exact_scale.py", "--paper-jobs 20,50,100 --trivial-jobs 20,50,100,1000",
          "--paper-jobs 20 --time-limit 10 --skip-ladder", 40, "hetero_exact_scale.json"),
    Entry("hetero", "hetero_exact_scale.py", "--time-limit 600 --paper-jobs ''",
          "--time-limit 11 --paper-jobs ''", 120, "hetero_exact_scale_600.json"),
    # edgecloud (She et al.)
    Entry("edgecloud", "edgecloud_baselines.py", "--seeds 0-2 --regimes compact,first",
          "--seeds 0 --regimes compact --jobs 20,40 --servers 20 --fixed-jobs 20 --fixed-servers 20", 40,
          "edgecloud_baselines_{compact,first}.{json,png}"),
    Entry("edgecloud", "edgecloud_baselines.py",
          "--seeds 0-1 --regimes paper --jobs 100,200 --servers 100,200,300 --fixed-jobs 100",
          "--seeds 0 --regimes paper --jobs 20 --servers 20 --fixed-jobs 20 --fixed-servers 20", 60,
          "edgecloud_baselines_paper.{json,png}"),
    Entry("edgecloud", "edgecloud_overhead.py", "--seeds 0-2 --regimes compact",
          "--seeds 0 --regimes compact --overheads 0,4 --points 20x20", 20, "edgecloud_overhead_compact.*"),
    Entry("edgecloud", "edgecloud_overhead.py", "--seeds 0-2 --regimes first --points 100x200,200x200,200x100",
          "--seeds 0 --regimes first --overheads 0,4 --points 20x20", 20, "edgecloud_overhead_first.*"),
    Entry("edgecloud", "edgecloud_overhead.py",
          "--seeds 0-1 --regimes paper --points 100x200,200x200 --overheads 0,4,16",
          "--seeds 0 --regimes paper --overheads 0,4 --points 20x20", 30, "edgecloud_overhead_paper.*"),
    Entry("edgecloud", "edgecloud_ratio.py", "--seeds 0-9",
          "--seeds 0 --jobs 4 --servers 1 --fixed-jobs 4 --fixed-servers 1 --time-limit 10", 40,
          "edgecloud_ratio_{compact,spread}.json, edgecloud_fig14.png"),
    Entry("edgecloud", "edgecloud_batch.py", "--seeds 0-5", "--seeds 0 --time-limit 5", 15, "edgecloud_batch.json"),
    Entry("edgecloud", "edgecloud_wait.py", "--seeds 0-1", "--seeds 0 --jobs 20 --servers 20", 10,
          "edgecloud_wait.json"),
    Entry("edgecloud", "edgecloud_online_speed.py", "", "--jobs 50 --servers 20", 5,
          "edgecloud_online_speed_paper.json"),
    Entry("edgecloud", "edgecloud_online_speed.py", "--preset paper_compact", "--jobs 50 --servers 20 "
          "--preset paper_compact", 5, "edgecloud_online_speed_paper_compact.json"),
    # preemptive (Wang et al.)
    Entry("preemptive", "preemptive_baselines.py",
          "--seeds 0-2 --regimes paper --jobs 50 100 200 --servers 25 50 100 --fixed-jobs 200",
          "--seeds 0 --regimes paper --jobs 20 --servers 10 --fixed-jobs 20 --fixed-servers 10", 60,
          "preemptive_baselines_paper.{json,png}"),
    Entry("preemptive", "preemptive_baselines.py",
          "--seeds 0-2 --regimes short_chunks --jobs 50 100 200 --servers 25 50 100 --fixed-jobs 200",
          "--seeds 0 --regimes short_chunks --jobs 20 --servers 10 --fixed-jobs 20 --fixed-servers 10", 60,
          "preemptive_baselines_short_chunks.{json,png}"),
    Entry("preemptive", "preemptive_baselines.py",
          "--seeds 0-2 --regimes far_cloud --jobs 50 100 --servers 25 50 100 --fixed-jobs 100",
          "--seeds 0 --regimes far_cloud --jobs 20 --servers 10 --fixed-jobs 20 --fixed-servers 10", 40,
          "preemptive_baselines_far_cloud.{json,png}"),
    Entry("preemptive", "preemptive_ratio.py", "--quick --seeds 0", "--quick --lp-only --seeds 0", 30,
          "preemptive_ratio.json, preemptive_fig12_13.png"),
    Entry("preemptive", "preemptive_ratio.py", "--quick --lp-only --seeds 0 --regime short_chunks",
          "--quick --lp-only --seeds 0 --regime short_chunks", 20,
          "preemptive_ratio_short_chunks.json, preemptive_fig12_13_short_chunks.png"),
    Entry("preemptive", "preemptive_online_speed.py", "--seeds 0-2", "--seeds 0 --jobs 30 --servers 10", 10,
          "preemptive_online_speed.json"),
    # okita (Han et al.)
    Entry("okita", "okita_ratio.py", "--seeds 0-9 --cost exponential --name okita_ratio_exponential.json",
          "--seeds 0 --cell 2,3,8 --time-limit 20 --cost exponential --name okita_ratio_exponential.json", 8,
          "okita_ratio_exponential.json"),
    Entry("okita", "okita_ratio.py", "--seeds 0-9", "--seeds 0 --cell 2,3,8 --time-limit 20", 8,
          "okita_ratio.json"),
    Entry("okita", "okita_ratio.py", "--seeds 0-5 --cell 4,6,10 --time-limit 90 --name okita_ratio_large.json",
          "--seeds 0 --cell 2,3,8 --time-limit 20 --name okita_ratio_large.json", 8, "okita_ratio_large.json"),
    Entry("okita", "okita_exact_scale.py", "--seeds 0-1", "--seeds 0 --sizes 3x3x8 --time-limit 20", 20,
          "okita_exact_scale.json"),
    Entry("okita", "okita_exact_scale.py", "--seeds 0 --sizes 8x5x12 --time-limit 150 "
          "--name okita_exact_scale_large.json", "--seeds 0 --sizes 3x3x8 --time-limit 20 "
          "--name okita_exact_scale_large.json", 5, "okita_exact_scale_large.json"),
    Entry("okita", "okita_paper.py", "--seeds 0-9", "--seeds 0 --only fig4", 15, "okita_paper.json"),
    Entry("okita", "okita_online_speed.py", "--seeds 0-2", "--seeds 0", 2, "okita_online_speed.json"),
    Entry("okita", "okita_readings.py", "--seeds 0-9", "--seeds 0", 10, "okita_readings.json"),
    # tapfinger (Li et al.)
    Entry("tapfinger", "tapfinger_baselines.py", "--seeds 0-9", "--seeds 0", 5,
          "tapfinger_baselines.json, tapfinger_fig4.png"),
    Entry("tapfinger", "tapfinger_env_speed.py", "--seeds 0-4", "--seeds 0", 2, "tapfinger_env_speed.json"),
    Entry("tapfinger", "tapfinger_policy_eval.py", "--seeds 0-9", "--seeds 0", 15,
          "tapfinger_policy_eval.json, tapfinger_policy_fig4.png"),
    # certified intervals [bound, best schedule] at the paper presets, and the LNS from the best schedule
    Entry("hetero", "hetero_gap.py", "--time-limit 120", "--regimes paper --time-limit 10 --algorithms fifo", 6,
          "hetero_gap.json"),
    Entry("edgecloud", "edgecloud_gap.py", "--time-limit 600", "--regimes paper --time-limit 10 --algorithms fifo",
          8, "edgecloud_gap.json"),
    Entry("preemptive", "preemptive_gap.py", "--time-limit 600",
          "--regimes paper --time-limit 10 --algorithms online", 4, "preemptive_gap.json"),
    Entry("okita", "okita_gap.py", "--time-limit 600", "--regimes paper --time-limit 10 --algorithms fifo", 3,
          "okita_gap.json"),
    Entry("tapfinger", "tapfinger_gap.py", "--time-limit 600 --warm-start-method cpsat",
          "--regimes paper --time-limit 10 --algorithms greedy", 8, "tapfinger_gap.json"),
    Entry("hetero", "lns_gap.py", "hetero --time-limit 240", "hetero --regimes paper --time-limit 20", 9,
          "hetero_lns.json"),
    Entry("edgecloud", "lns_gap.py", "edgecloud --time-limit 240", "edgecloud --regimes paper --time-limit 20", 9,
          "edgecloud_lns.json"),
    Entry("tapfinger", "lns_gap.py", "tapfinger --time-limit 240", "tapfinger --regimes paper --time-limit 20", 9,
          "tapfinger_lns.json"),
    Entry("preemptive", "lns_gap.py", "preemptive --regimes paper,congested --time-limit 240",
          "preemptive --regimes paper --time-limit 20", 9, "preemptive_lns.json"),
    Entry("okita", "lns_gap.py", "okita --regimes paper,congested --time-limit 240 --sub-limit 5",
          "okita --regimes paper --time-limit 20", 9, "okita_lns.json"),
    # one real workload (ITP trace) across the five families
    Entry("traces", "cross_family.py", "--seeds 0 --bound-time 120 --lns-time 120",
          "--seeds 0 --windows quiet --families preemptive,okita --bound-time 10 --lns-time 10", 75,
          "cross_family.json"),
    Entry("traces", "interval_diagnosis.py", "", "--rows edgecloud:quiet:10 --no-schedules", 15,
          "interval_diagnosis.json"),
    # the CLI robustness probe (every family)
    Entry("cli", "probe_cli.py", "--runs-per-kind 21 --jobs 2", "--runs-per-kind 3 --jobs 2", 6, "probe_cli.json"),
)


def command(entry: Entry, *, quick: bool, out: Path) -> list[str]:
    args = entry.quick if quick else entry.args
    target = out / "probe_cli.json" if entry.script == "probe_cli.py" else out  # the probe's --out is a file
    return [sys.executable, str(ROOT / "benchmarks" / entry.script), *shlex.split(args), "--out", str(target)]


def entry_key(entry: Entry, *, quick: bool) -> str:
    """A stable name of one entry at one size: its script and arguments."""
    text = json.dumps([entry.script, entry.quick if quick else entry.args, quick])
    return f"{Path(entry.script).stem}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def run_on_cluster(chosen: list[Entry], *, address: str, quick: bool, out: Path, force: bool) -> int:
    """One Dask task per entry not yet done; prints each as it finishes. Returns the exit code."""
    from dask.distributed import Client, as_completed

    from edgeopt.bench import run_entry  # importable on every worker (this file need not be)
    done_dir = out / ".done"
    todo = [e for e in chosen if force or not (done_dir / f"{entry_key(e, quick=quick)}.json").exists()]
    print(f"{len(chosen) - len(todo)} of {len(chosen)} entries already done; {len(todo)} to run on {address}",
          flush=True)
    failed = []
    with Client(address) as client:
        futures = {client.submit(run_entry, command(e, quick=quick, out=out), str(out), entry_key(e, quick=quick),
                                 str(ROOT), key=f"reproduce-{entry_key(e, quick=quick)}", pure=False): e
                   for e in todo}
        for fut in as_completed(futures):
            e = futures[fut]
            try:
                rec = fut.result()
            except Exception as exc:  # noqa: BLE001 - the cluster failed the task (lost worker...): rerun it
                rec = {"rc": -1, "seconds": 0, "stderr_tail": repr(exc), "host": "?"}
            print(f"== {e.family}: {e.script}: exit {rec['rc']} after {rec['seconds']:g} s on {rec['host']}",
                  flush=True)
            if rec["rc"] != 0:
                failed.append(e.script)
                print(rec["stderr_tail"], file=sys.stderr)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="reduced sizes into benchmarks/out (a smoke run)")
    ap.add_argument("--only", default="", help="comma list of families or script names")
    ap.add_argument("--out", type=Path, default=None,
                    help="output folder (default benchmarks/results, or benchmarks/out with --quick)")
    ap.add_argument("--list", action="store_true", help="print the commands and stop")
    ap.add_argument("--address", default=None,
                    help="a running Dask scheduler (tcp://HOST:8786): one task per entry, done entries skipped")
    ap.add_argument("--force", action="store_true", help="with --address: run entries that are done again")
    args = ap.parse_args(argv)
    out = args.out or ROOT / "benchmarks" / ("out" if args.quick else "results")
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    known = {e.family for e in ENTRIES} | {e.script for e in ENTRIES} | {e.script[:-3] for e in ENTRIES}
    if only - known:
        print(f"error: only: unknown {sorted(only - known)} (known: families and script names)", file=sys.stderr)
        return 2
    chosen = [e for e in ENTRIES if not only or only & {e.family, e.script, e.script[:-3]}]
    if args.list:
        for e in chosen:
            print(f"# {e.produces} (~{e.minutes:g} min full)")
            print(shlex.join(command(e, quick=args.quick, out=out)))
        return 0
    if args.address:
        return run_on_cluster(chosen, address=args.address, quick=args.quick, out=out, force=args.force)
    failed = []
    for e in chosen:
        cmd = command(e, quick=args.quick, out=out)
        print(f"== {e.family}: {e.script} {e.quick if args.quick else e.args}", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call(cmd, cwd=ROOT)
        print(f"   exit {rc} after {time.perf_counter() - t0:.0f} s", flush=True)
        if rc != 0:
            failed.append(e.script)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
