"""The edgecloud validator as it was before its capacity check became an event sweep: it filled dense
servers x types x (horizon + 1) difference arrays (280 MB on a 2,000-job paper-preset instance, without
bound at the family's caps). Kept verbatim, for tests only: `edgeopt.edgecloud.schedule.validate` must
report the same violations, with the same messages, in the same order."""

from __future__ import annotations

import itertools

import numpy as np

from edgeopt.core import Violation
from edgeopt.edgecloud.instance import Instance, duration_slots, minibatch_slots
from edgeopt.edgecloud.schedule import JobRun, Schedule


def validate_reference(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violated constraint of (2a)-(2l) (empty list: the schedule is valid)."""
    out: list[Violation] = []
    S, T, J = len(instance.servers), instance.horizon, len(instance.jobs)
    W, P = instance.W(), instance.P()
    U, V = W.shape[1], P.shape[1]
    use_w = np.zeros((S, U, T + 1), dtype=np.int64)  # difference arrays over time
    use_p = np.zeros((S, V, T + 1), dtype=np.int64)

    seen: dict[int, str] = {}
    for j in schedule.rejected:
        if not 0 <= j < J:
            out.append(Violation("coverage", f"rejected job id {j} does not exist"))
        elif j in seen:
            out.append(Violation("coverage", "rejected twice", j))
        else:
            seen[j] = "rejected"
    for run in schedule.jobs:
        j = run.job
        if not 0 <= j < J:
            out.append(Violation("coverage", f"scheduled job id {j} does not exist"))
            continue
        if j in seen:
            out.append(Violation("coverage", f"scheduled but already {seen[j]}", j))
            continue
        seen[j] = "scheduled"
        out.extend(_check_run_reference(instance, schedule, run, use_w, use_p))
    for j in range(J):
        if j not in seen:
            out.append(Violation("coverage", "neither scheduled nor rejected", j))

    # (2g)/(2h): capacities per server, type and slot.
    fw = np.cumsum(use_w, axis=2)[:, :, :T]
    fp = np.cumsum(use_p, axis=2)[:, :, :T]
    for s, u, t in zip(*np.nonzero(fw > W[:, :, None]), strict=True):
        out.append(Violation("2g", f"server {s} worker type {u} slot {t}: {fw[s, u, t]} > W={W[s, u]}"))
        break  # one message per constraint family is enough to name it; count below
    n_g = int(np.count_nonzero(fw > W[:, :, None]))
    if n_g > 1:
        out.append(Violation("2g", f"{n_g} (server, type, slot) cells over capacity in total"))
    for s, v, t in zip(*np.nonzero(fp > P[:, :, None]), strict=True):
        out.append(Violation("2h", f"server {s} PS type {v} slot {t}: {fp[s, v, t]} > P={P[s, v]}"))
        break
    n_h = int(np.count_nonzero(fp > P[:, :, None]))
    if n_h > 1:
        out.append(Violation("2h", f"{n_h} (server, type, slot) cells over capacity in total"))
    return out


def _check_run_reference(
    instance: Instance, schedule: Schedule, run: JobRun, use_w: np.ndarray, use_p: np.ndarray
) -> list[Violation]:
    out: list[Violation] = []
    j = run.job
    job = instance.jobs[j]
    S, T = len(instance.servers), instance.horizon
    release = instance.release(j)
    if run.segments and not schedule.preemptive:
        out.append(Violation("2c", "segments (a changing allocation) in a non-preemptive schedule", j))
    pieces = run.pieces()
    if run.segments:
        if run.start != pieces[0].start:
            out.append(Violation("2j", f"start {run.start} != first segment start {pieces[0].start}", j))
        if run.end != pieces[-1].end:
            out.append(Violation("2k", f"end {run.end} != last segment end {pieces[-1].end}", j))
        first = pieces[0]
        if (run.workers, run.ps_server, run.colocated) != (first.workers, first.ps_server, first.colocated):
            out.append(Violation("2c", "workers/ps_server/colocated differ from the first segment's", j))
        for a, b in itertools.pairwise(pieces):
            if b.start < a.end:
                out.append(Violation("2c", f"segments overlap or are unordered at slot {b.start}", j))
    work = 0.0
    for k, seg in enumerate(pieces):
        bad = False
        if not 0 <= seg.start < seg.end <= T:
            out.append(Violation("2l", f"run [{seg.start}, {seg.end}) not inside [0, {T})", j))
            bad = True
        servers_ok = True
        for s, c in seg.workers.items():
            if not 0 <= s < S:
                out.append(Violation("2l", f"worker server {s} does not exist", j))
                servers_ok = False
            elif c < 1:
                out.append(Violation("2a", f"{c} workers listed on server {s} (counts must be >= 1)", j))
        if not 0 <= seg.ps_server < S:
            out.append(Violation("2b", f"PS server {seg.ps_server} does not exist (one PS on a real server)", j))
            servers_ok = False
        w = sum(c for c in seg.workers.values() if c > 0)
        if not 1 <= w <= job.chunks:
            out.append(Violation("2a", f"{w} workers, must be in [1, D_j={job.chunks}]", j))
        together = servers_ok and all(s == seg.ps_server for s, c in seg.workers.items() if c > 0)
        if seg.colocated != together:
            out.append(
                Violation("2f", f"colocated={seg.colocated} but workers on {sorted(seg.workers)}, "
                                f"PS on {seg.ps_server}", j)
            )
        if servers_ok:
            for s in sorted({*(s for s, c in seg.workers.items() if c > 0), seg.ps_server}):
                if seg.start < release[s]:
                    out.append(
                        Violation("2i", f"uses server {s} from slot {seg.start} < a_j + Delta_js = "
                                        f"{int(release[s])}", j)
                    )
        if bad or not servers_ok or not 1 <= w <= job.chunks:
            continue
        length = seg.end - seg.start
        if schedule.preemptive:
            overhead = schedule.preemption_overhead_slots if k > 0 else 0
            work += w * max(0, length - overhead) / minibatch_slots(instance, job, seg.colocated)
        elif length < duration_slots(instance, job, w, seg.colocated):
            need = duration_slots(instance, job, w, seg.colocated)
            out.append(
                Violation("2e", f"runs {length} slots with {w} workers (colocated={seg.colocated}), "
                                f"needs {need}", j)
            )
        for s, c in seg.workers.items():
            use_w[s, job.worker_type, seg.start] += c
            use_w[s, job.worker_type, seg.end] -= c
        use_p[seg.ps_server, job.ps_type, seg.start] += 1
        use_p[seg.ps_server, job.ps_type, seg.end] -= 1
    if schedule.preemptive and work < job.steps * (1 - 1e-9):
        out.append(Violation("2e", f"trains {work:.3f} mini-batch steps, needs E*D*M = {job.steps}", j))
    return out
