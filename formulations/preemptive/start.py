"""A MIP start for the preemptive MILP (``milp.py``) and hints for its CP-SAT model (``cpsat.py``): a
schedule as the model's variable values (the inverses of `extract_milp` and `extract_cpsat`).

Per job j: n[j, k] its chunks on edge worker k (k the global worker index of (server, worker)) and
Y[j, k, t] = 1 in their slots; nc[j] its cloud chunks and u[j] = 1 when it has any; zeta[j] its
colocation flag (the family's `colocated`); z[j, s, t] = 1 while its PS sits on edge server s;
C[j] its completion (one past its last training slot). A value without a variable in the model
(a slot the model's time window cut) is left out; HiGHS then completes or drops the start.
"""

from __future__ import annotations

from typing import Any


def start_milp(model: Any, data: Any, instance: Any, schedule: Any) -> Any:
    """Values of `build_milp`'s variables that encode ``schedule`` (nonzeros; a Pyomo ``ComponentMap``)."""
    from pyomo.common.collections import ComponentMap

    from edgeopt.preemptive.schedule import colocated

    worker_of = {(int(s), int(w)): k for k, (s, w) in enumerate(zip(data.worker_server, data.worker_slot, strict=True))}
    out = ComponentMap()
    for js in schedule.jobs:
        j = int(js.job)
        n: dict[int, int] = {}
        cloud = 0
        last = int(data.arrival[j])
        for ch in js.chunks:
            if ch.slots:
                last = max(last, max(ch.slots) + 1)
            if data.cloud is not None and int(ch.server) == data.cloud:
                cloud += 1
                continue
            k = worker_of.get((int(ch.server), int(ch.worker)))
            if k is None:
                continue
            n[k] = n.get(k, 0) + 1
            for t in ch.slots:
                if (j, k, int(t)) in model.Y:
                    out[model.Y[j, k, int(t)]] = 1.0
        for k, count in n.items():
            if (j, k) in model.n:
                out[model.n[j, k]] = float(count)
        if j in model.nc:
            out[model.nc[j]] = float(cloud)
            out[model.u[j]] = float(cloud > 0)
            out[model.zeta[j]] = float(cloud > 0 and colocated(instance, js))
        for pr in js.ps:
            for t in range(int(pr.start), int(pr.end)):
                if (j, int(pr.server), t) in model.z:
                    out[model.z[j, int(pr.server), t]] = 1.0
        out[model.C[j]] = float(last)
    return out


def hint_cpsat(h: Any, data: Any, schedule: Any) -> int:
    """Hint `build_cpsat`'s decisions with ``schedule``'s placements of the jobs the model holds.

    Hinted: where each chunk trains (its mode and slot literals, or with ``counted`` the chunks and
    slot literals per worker and the cloud's count), zeta_j (every chunk on the cloud: (2g) then
    forces it) and the edge PS literals; ends and completions follow from them
    (`formulations.common.complete_hints` fills them in). A schedule's chunk labels are arbitrary, so
    a job's chunks are relabelled in the order the strengthened model's chunk-symmetry rows ask for
    (worker rank, the cloud last; then end): the hint then satisfies those rows too. Returns the
    number of jobs whose every chunk found its worker and slots in the model (a job the model cannot
    hold exactly is hinted as far as it goes).
    """
    worker_of = {(int(s), int(w)): k for k, (s, w) in enumerate(zip(data.worker_server, data.worker_slot, strict=True))}
    modelled = set(h.jobs)
    ps_of: dict[int, list[tuple[int, int, Any]]] = {}
    for (j, s, t), lit in h.ps.items():
        ps_of.setdefault(j, []).append((s, t, lit))
    mdl = h.model
    exact = 0
    for js in schedule.jobs:
        j = int(js.job)
        if j not in modelled:
            continue
        placed = [(None if data.cloud is not None and int(ch.server) == data.cloud else worker_of.get((int(ch.server), int(ch.worker))),
                   sorted(int(t) for t in ch.slots)) for ch in js.chunks]
        placed.sort(key=lambda ks: (data.n_workers if ks[0] is None else ks[0], ks[1][-1] if ks[1] else 0))
        if h.counted:
            held_all = _hint_counted(h, j, placed)
        else:  # every chunk is hinted, even after one that the model cannot hold (no short-circuit)
            held_all = min((_hint_chunk(h, j, d, k, slots) for d, (k, slots) in enumerate(placed)), default=True)
        ok = len(placed) == int(data.chunks[j]) and held_all
        if j in h.colocated:
            mdl.AddHint(h.colocated[j], all(k is None for k, _ in placed))
        held = {(int(run.server), t) for run in js.ps for t in range(int(run.start), int(run.end))}
        for s, t, lit in ps_of.get(j, []):
            mdl.AddHint(lit, (s, t) in held)
        exact += int(ok)
    return exact


def _hint_chunk(h: Any, j: int, d: int, k: int | None, slots: list[int]) -> bool:
    """Hint chunk (j, d) on mode ``k`` in ``slots``; whether the model has that mode and those slots."""
    modes = h.mode.get((j, d))
    if modes is None:
        return False
    for kk, a in modes.items():
        h.model.AddHint(a, kk == k)
    for kk in modes:
        if kk is None:
            continue
        chosen = set(slots) if kk == k else set()
        for t, b in h.train[(j, d, kk)].items():
            h.model.AddHint(b, t in chosen)
    if k is None:
        return None in modes
    return k in modes and set(slots) <= set(h.train[(j, d, k)])


def _hint_counted(h: Any, j: int, placed: list[tuple[int | None, list[int]]]) -> bool:
    """Hint job j's chunk counts and slot literals per worker (``counted``); whether the model holds them."""
    count: dict[int | None, int] = {}
    busy: dict[int | None, set[int]] = {}
    for k, slots in placed:
        count[k] = count.get(k, 0) + 1
        busy.setdefault(k, set()).update(slots)
    ok = True
    for (jj, k), n in h.count.items():
        if jj != j:
            continue
        h.model.AddHint(n, count.get(k, 0))
        for t, y in h.train[(j, -1, k)].items():
            h.model.AddHint(y, t in busy.get(k, ()))
        ok &= busy.get(k, set()) <= set(h.train[(j, -1, k)])
    if j in h.cloud_count:
        h.model.AddHint(h.cloud_count[j], count.get(None, 0))
    elif count.get(None):
        ok = False
    return ok and all(k is None or (j, k) in h.count for k in count)
