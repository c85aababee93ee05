"""Compiled (numba) kernels of hetero's per-job search (`edgeopt.hetero.mincost.search`).

One kernel, `search_kernel`, runs the whole search over groups x starts of one job: the first lower
bound of every (group, start) pair, the batched best-first loop with its pruning, the second-stage bound
of distributed candidates, the PS-server room condition and the exact evaluation of every candidate that
survives. Each routine repeats the floating-point operations of its numpy counterpart in
`edgeopt.hetero.mincost` in the same order (same products, sums and comparisons), and takes candidates in
the same order, so the kernel returns bitwise the same cost and the same schedule as the numpy reference
(``mincost.REFERENCE = True``); tests run both on random instances. Where numpy's order is not fixed
(ties inside ``argpartition``), the reference was made deterministic (ties by index) and the kernel
follows it.

The kernel skips work the reference does, never a candidate that could win (each skip is argued where
it is made): the batches come off a heap instead of a pass over every candidate per batch; a second-stage
column cached before the window's last changes still prunes while every change since only took capacity
and raised prices; the workers' part of the second-stage bound is tried before its PSs' part; the
colocated scan passes over starts whose first bound, and pairs whose workers alone, already exceed the
best. Columns are computed lazily (`_cheapest_walk`: servers off a heap by price, a server's capacity
only when it comes off), with the same sums in the same order.

Compiled with ``cache=True``: the first call in a fresh environment compiles (about 27 s of CPU on the
2-core machine, 2026-11-29; reported separately by benchmarks/hetero_online_speed.py); later processes load
the cached machine code.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

EPS = 1e-9

_JIT = {"cache": True, "nogil": True}
#: Integer constants passed to a helper are typed as literals, and numba compiles the helper once for the
#: literal and once more for int64 (it did so for `_cheapest_walk`, `_next_server`, `_heapify`, `_sift_down`
#: and `_better`: 3-4 s of a first call's compile). Passing ``I64(c)`` types them int64 from the start.
I64 = np.int64


@nb.njit(**_JIT)
def _log2_floor(d: int) -> int:
    k = 0
    while (2 << k) <= d:
        k += 1
    return k


@nb.njit(**_JIT)
def _copies(free_row, unit) -> float:
    """`mincost._copies` for one server: how many ``unit`` fit in ``free_row`` (-1.0 when free < 0 where the
    unit needs nothing)."""
    best = np.inf
    has_pos = False
    neg = False
    for r in range(unit.shape[0]):
        if unit[r] > 0:
            has_pos = True
            v = math.floor((free_row[r] + EPS) / unit[r])
            best = min(best, v)
        elif free_row[r] < -EPS:
            neg = True
    if neg:
        return -1.0
    return best if has_pos else 1e9


@nb.njit(**_JIT)
def _minfree(table, t: int, d: int, out) -> None:
    """min over [t, t+d) of free capacity into ``out`` [H, R] (`PricedWindow.minfree`)."""
    k = _log2_floor(d)
    b = t + d - (1 << k)
    H, R = out.shape
    for h in range(H):
        for r in range(R):
            x, y = table[k, t, h, r], table[k, b, h, r]
            out[h, r] = min(x, y)  # np.minimum (free capacities are never NaN)


@nb.njit(**_JIT)
def _sift_down(heap, key, i: int, n: int) -> None:
    """Restore the min-heap ``heap[:n]`` of positions ordered by (``key[position]``, position) below i."""
    x = heap[i]
    kx = key[x]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        r = c + 1
        if r < n and (key[heap[r]] < key[heap[c]] or (key[heap[r]] == key[heap[c]] and heap[r] < heap[c])):
            c = r
        y = heap[c]
        if key[y] < kx or (key[y] == kx and y < x):
            heap[i] = y
            i = c
        else:
            break
    heap[i] = x


@nb.njit(**_JIT)
def _heapify(heap, key, n: int) -> None:
    """Make ``heap[:n]`` a min-heap of positions ordered by (``key[position]``, position)."""
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(heap, key, i, n)


@nb.njit(**_JIT)
def _heap_pop(heap, key, n: int):
    """(the smallest position of the heap ``heap[:n]``, the heap's new size)."""
    top = heap[0]
    n -= 1
    heap[0] = heap[n]
    _sift_down(heap, key, I64(0), n)
    return top, n


@nb.njit(**_JIT)
def _cut(bound: float) -> float:
    """``bound`` raised by more than the rounding of the bounds compared with it: a lower bound above this
    proves the candidate cannot reach ``bound`` (the skips the reference does not make use it)."""
    return bound + 1e-9 * (1.0 + abs(bound))


@nb.njit(**_JIT)
def cheapest_n_column(unit, cap, nmax: int, F) -> None:
    """One column of `mincost._cheapest_n`: ``F[N]`` = the cheapest cost of N units, N = 0..nmax, for unit
    prices ``unit`` [H] and capacities ``cap`` [H] (inf where fewer than N units exist). The servers that
    hold a unit are taken in stable order of price (ties by index) with the same cumulative sums as the
    numpy routine; they come off a heap, so only as many are ordered as the walk to nmax units needs
    (servers without a unit come last there and never hold unit N, so they are left out)."""
    H = unit.shape[0]
    heap = np.empty(H, dtype=np.int64)
    nh = I64(0)
    for h in range(H):
        if cap[h] > 0:
            heap[nh] = h
            nh += 1
    _cheapest_walk(unit, cap, nmax, nmax, F, heap, nh, np.empty((1, 1, 1, 1)), I64(-1), I64(0), I64(0), np.empty(1))


@nb.njit(**_JIT)
def _cheapest_walk(unit, cap, nmax: int, nout: int, F, heap, nh: int, table, k: int, t: int, b: int, em) -> None:
    """`cheapest_n_column`'s walk over the servers ``heap[:nh]`` (in any order): F[0..nout] for capacities
    clipped at ``nmax`` >= nout. Blocks are taken in (price, index) order off a heap; block k holds units
    (cum[k-1], cum[k]], and unit N costs the price of the block that holds it; servers with cap <= 0 hold
    none and are passed over. With ``k >= 0`` a server's capacity is computed only when it comes off the
    heap, into ``cap``: the type-``em`` copies that fit in the minimum of the sparse-table rows ``t`` and
    ``b`` of level k of ``table`` (the free capacity over a window); with ``k < 0`` ``cap`` is given."""
    _heapify(heap, unit, nh)
    top = min(nmax, unit.shape[0])
    F[0] = 0.0
    kk = 0
    acc, acc_c = 0.0, 0.0
    prev_cum, prev_cost = 0.0, 0.0
    row = np.empty(em.shape[0])
    cur = -1
    if top > 0:
        cur, nh = _next_server(heap, nh, unit, cap, table, k, t, b, em, row)
    for n in range(1, nout + 1):
        while cur >= 0:
            c = cap[cur] if cap[cur] <= nmax else float(nmax)
            cum_k = acc + c if kk else c
            if cum_k < n:
                v = c * unit[cur]
                acc_c = acc_c + v if kk else v
                acc = cum_k
                kk += 1
                prev_cum, prev_cost = acc, acc_c
                cur = -1
                if kk < top:
                    cur, nh = _next_server(heap, nh, unit, cap, table, k, t, b, em, row)
            else:
                break
        if cur < 0:
            F[n] = np.inf
        elif kk > 0:
            F[n] = prev_cost + (n - prev_cum) * unit[cur]
        else:
            F[n] = 0.0 + (n - 0.0) * unit[cur]


@nb.njit(**_JIT)
def _next_server(heap, nh: int, unit, cap, table, k: int, t: int, b: int, em, row):
    """Pop servers off the heap ``heap[:nh]`` (by price, then index) until one holds a unit: (that server or
    -1, the heap's new size). With ``k >= 0`` its capacity is computed here (`_cheapest_walk`)."""
    while nh > 0:
        h, nh = _heap_pop(heap, unit, nh)
        if k >= 0:
            cap[h] = _window_copies(table, k, t, b, h, em, row)
        if cap[h] > 0:
            return h, nh
    return -1, nh


@nb.njit(**_JIT)
def _window_copies(table, k: int, t: int, b: int, h: int, em, row) -> float:
    """Type-``em`` copies (>= 0) that fit on server h over a window: `_copies` of the minimum of the
    sparse-table rows t and b of level k (`_minfree` for one server)."""
    for r in range(em.shape[0]):
        x, y = table[k, t, h, r], table[k, b, h, r]
        row[r] = min(x, y)
    c = _copies(row, em)
    return c if c > 0 else 0.0


@nb.njit(**_JIT)
def cheapest_n(unit, cap, nmax: int):
    """`mincost._cheapest_n` for every column: [nmax + 1, X]."""
    X = unit.shape[1]
    out = np.empty((nmax + 1, X))
    col = np.empty(nmax + 1)
    for x in range(X):
        cheapest_n_column(np.ascontiguousarray(unit[:, x]), np.ascontiguousarray(cap[:, x]), nmax, col)
        for n in range(nmax + 1):  # element by element: a slice assignment compiles numba's broadcasting
            out[n, x] = col[n]
    return out


@nb.njit(**_JIT)
def refresh_prefix(pref, F, pe_slot, cw_slot, s: int, e: int) -> None:
    """Recompute the per-slot cheapest-N costs ``F`` [nmax + 1, T] of slots [s, e) and resume from slot s the
    prefix sums ``pref`` [2, nmax + 1, T + 1] (index 0: sums of the finite costs, index 1: number of slots
    where N do not fit) of one worker type (`PricedWindow.cheapest_prefix`, same sequential additions);
    ``pe_slot``/``cw_slot`` [T, H]: its unit prices and capacities per slot."""
    nmax = pref.shape[1] - 1
    T = pe_slot.shape[0]
    H = pe_slot.shape[1]
    col = np.empty(nmax + 1)
    u = np.empty(H)
    c = np.empty(H)
    for t in range(s, e):
        for h in range(H):
            u[h] = pe_slot[t, h]
            c[h] = cw_slot[t, h]
        cheapest_n_column(u, c, nmax, col)
        for n in range(nmax + 1):  # element by element, as in `cheapest_n`
            F[n, t] = col[n]
    for n in range(nmax + 1):
        for t in range(s, T):
            f = F[n, t]
            if np.isinf(f):
                pref[0, n, t + 1] = pref[0, n, t] + 0.0
                pref[1, n, t + 1] = pref[1, n, t] + 1.0
            else:
                pref[0, n, t + 1] = pref[0, n, t] + f
                pref[1, n, t + 1] = pref[1, n, t] + 0.0


@nb.njit(**_JIT)
def _window_worker_n(table, pe, e, m: int, n: int, t: int, d: int, nmax: int, heap, om, cw, col) -> None:
    """`PricedWindow.window_cheapest(m, d, nmax)[:n + 1, t]` into ``col[:n + 1]`` (NaN above): the N cheapest
    type-m workers kept on their servers over [t, t+d), for N <= n. Servers come off a heap by window
    price, and the capacity of a server (its free capacity's minimum over the window) is computed only when
    it comes off, so a column costs O(H) plus the servers that hold the n cheapest workers."""
    H = pe.shape[2]
    k = _log2_floor(d)
    b = t + d - (1 << k)
    for h in range(H):
        om[h] = pe[m, t + d, h] - pe[m, t, h]
        heap[h] = h
    _cheapest_walk(om, cw, nmax, n, col, heap, H, table, k, t, b, e[m])
    for x in range(n + 1, col.shape[0]):
        col[x] = np.nan


@nb.njit(**_JIT)
def _ps_cost_min(pz, p: int, t: int, d: int) -> float:
    best = np.inf
    for h in range(pz.shape[2]):
        v = pz[p, t + d, h] - pz[p, t, h]
        best = min(best, v)
    return best


@nb.njit(**_JIT)
def _ps_part(pz, n: int, mx: float, bwm: float, Bmax: float, t: int, d: int) -> float:
    """The PSs' part of the second-stage bound: the fewest PSs (2i) at the cheapest PS price over [t, t+d)
    (`mincost.search`: ``s_min * ps_cost_min_all(d)[t]``)."""
    s_min = max(1.0, math.ceil((n - mx) * bwm / Bmax - EPS))
    pmin = np.inf
    for p in range(pz.shape[0]):
        v = _ps_cost_min(pz, p, t, d)
        pmin = min(pmin, v)
    return s_min * pmin


@nb.njit(**_JIT)
def _ps_room(mf, inv, off, zmax, z, m: int, p: int) -> float:
    """`PricedWindow._room` for one PS type: an upper bound of N for a PS server in ``mf`` [H, R]."""
    H, R = mf.shape
    best = -np.inf
    for h in range(H):
        q = np.inf
        zfit = True
        for r in range(R):
            x = mf[h, r] + 1e-6 * (1.0 + abs(mf[h, r]) + zmax[r])
            v = math.floor(x * inv[m, p, r]) + off[m, p, r]
            q = min(q, v)
            if not z[p, r] <= x:
                zfit = False
        v = q if zfit else -1.0
        best = max(best, v)
    return best


@nb.njit(**_JIT)
def _eval_dps(table, pe, pz, e, z, m: int, p: int, n: int, t: int, d: int, b: float, B: float, mf, omega,
              psi, cw, order_out):
    """`mincost._eval_distributed_ps`: (cost, PS server, its worker count g, its PS count s); cost inf if
    none fits. ``order_out`` receives the servers in stable price order (for the placement)."""
    _minfree(table, t, d, mf)
    H = mf.shape[0]
    for h in range(H):
        omega[h] = pe[m, t + d, h] - pe[m, t, h]
        psi[h] = pz[p, t + d, h] - pz[p, t, h]
        c = _copies(mf[h], e[m])
        c = c if c <= n else float(n)
        ci = np.int64(c)
        cw[h] = max(0, ci)
    order = np.argsort(omega, kind="mergesort")
    for i in range(H):  # element by element, as in `cheapest_n`
        order_out[i] = order[i]
    cum = np.empty(H, dtype=np.int64)
    cumcost = np.empty(H)
    acc, accc = 0, 0.0
    rank = np.empty(H, dtype=np.int64)
    for i in range(H):
        h = order[i]
        acc += cw[h]
        v = cw[h] * omega[h]
        accc = accc + v if i else v
        cum[i] = acc
        cumcost[i] = accc
        rank[h] = i
    total = cum[H - 1]
    F = np.empty(2 * n + 1)
    k = 0
    for x in range(2 * n + 1):
        while k < H and cum[k] < x:
            k += 1
        kk = min(k, H - 1)
        if x <= total:
            if kk > 0:
                F[x] = cumcost[kk - 1] + (x - cum[kk - 1]) * omega[order[kk]]
            else:
                F[x] = 0.0 + (x - 0) * omega[order[kk]]
        else:
            F[x] = np.inf
    F[0] = 0.0
    best = np.inf
    best_h, best_g = -1, -1
    R = mf.shape[1]
    for h in range(H):
        start_n = cum[rank[h]] - cw[h]
        for g in range(n):
            x = n - g
            s = max(1.0, math.ceil(x * b / B - EPS))
            si = np.int64(s)
            fits = True
            for r in range(R):
                rest = mf[h, r] - si * z[p, r] - g * e[m, r]
                if not rest >= -EPS:
                    fits = False
                    break
            if not fits:
                continue
            if x > total - cw[h]:
                continue  # inf
            if x <= start_n:
                fm = F[x]
            else:
                sh = min(x + cw[h], 2 * n)
                fm = F[sh] - cw[h] * omega[h]
            tot = g * omega[h] + si * psi[h] + fm
            if tot < best:
                best, best_h, best_g = tot, h, g
    if not np.isfinite(best):
        return np.inf, -1, 0, 0
    x = n - best_g
    s = np.int64(max(1.0, math.ceil(x * b / B - EPS)))
    return best, best_h, best_g, s


@nb.njit(**_JIT)
def _eval_dra(table, pe, e, m: int, n: int, t: int, d: int, mf, omega, cw, wh, wc):
    """`mincost._eval_distributed_ra`: (cost, number of servers); the placement in ``wh``/``wc`` in the
    reference's insertion order."""
    _minfree(table, t, d, mf)
    H = mf.shape[0]
    tot, used = 0, 0
    for h in range(H):
        omega[h] = pe[m, t + d, h] - pe[m, t, h]
        c = _copies(mf[h], e[m])
        c = c if c <= n else float(n)
        ci = np.int64(c)
        cw[h] = max(0, ci)
        tot += cw[h]
        if cw[h] > 0:
            used += 1
    if tot < n or used < 2:
        return np.inf, 0
    order = np.argsort(omega, kind="mergesort")
    k = 0
    x = n
    for i in range(H):
        if x <= 0:
            break
        h = order[i]
        if cw[h] <= 0:
            continue
        c = min(cw[h], x)
        wh[k], wc[k] = h, c
        k += 1
        x -= c
    if k == 1:
        h0 = wh[0]
        wc[0] -= 1
        for i in range(H):
            h = order[i]
            if h != h0 and cw[h] > 0:
                wh[1], wc[1] = h, 1
                k = 2
                break
    cost = 0.0
    for i in range(k):
        v = wc[i] * omega[wh[i]]
        cost = cost + v if i else v
    return cost, k


@nb.njit(**_JIT)
def fill_dps(table, pe, e, m: int, n: int, t: int, d: int, nsrv: int, g: int, wh, wc) -> int:
    """The workers of the distributed PS placement (PS server ``nsrv`` with ``g`` workers) in the reference's
    insertion order (`mincost._greedy_fill`, then the PS server): the number of entries written."""
    H = pe.shape[2]
    mf = np.empty((H, e.shape[1]))
    _minfree(table, t, d, mf)
    omega = np.empty(H)
    cw = np.empty(H, dtype=np.int64)
    for h in range(H):
        omega[h] = pe[m, t + d, h] - pe[m, t, h]
        c = _copies(mf[h], e[m])
        c = c if c <= n else float(n)
        ci = np.int64(c)
        cw[h] = max(0, ci)
    order = np.argsort(omega, kind="mergesort")
    x = n - g
    k = 0
    for i in range(H):
        if x <= 0:
            break
        h = order[i]
        if h == nsrv or cw[h] <= 0:
            continue
        c = min(cw[h], x)
        wh[k], wc[k] = h, c
        k += 1
        x -= c
    if g > 0:
        wh[k], wc[k] = nsrv, g
        k += 1
    return k


@nb.njit(**_JIT)
def _better(cost, comp, nodes, c, bcost, bcomp, bnodes, bc) -> bool:
    """(cost, completion, nodes, configuration) < the best's, lexicographically."""
    if cost != bcost:
        return cost < bcost
    if comp != bcomp:
        return comp < bcomp
    if nodes != bnodes:
        return nodes < bnodes
    return c < bc


@nb.njit(**_JIT)
def search_kernel(gq, gm, gn, gd, mem_ptr, mem_idx, cfp, ts, Tw: int, ps_arch: bool, pref, maxt, tott, table,
                  pe, pz, pzminall, e, z, bw, Bps, Bmax: float, inv, off, zmax, idle_room, cutoff: float,
                  batch: int, nmax_w: int, ckeys, cstamp, cvals, changed, clock: int, mono: int):
    """The search of `mincost.search` for one job (see there); returns
    ``(found, config, start, cost, server, g, s, counters)``: for a colocated best ``server`` is its
    server; for a distributed PS best the PS server, its worker count g and PS count s; for Ring-AllReduce
    distributed -1 (the caller rebuilds the placement). ``counters`` [8]: colocated group evaluations,
    second-stage bound checks, distributed PS evaluations, batches, candidates popped, candidates,
    second-stage columns computed, candidates pruned by a stale column.

    ``ckeys``/``cstamp``/``cvals`` [C], [C], [C, nmax_w + 1]: the window's direct-mapped cache of second-stage
    columns (`_window_worker_n`; NaN above the worker count they were computed for), valid while no slot of
    their window changed after ``cstamp``;
    ``changed`` [T]: the clock of each slot's last change; ``clock``: the clock now; ``mono``: the clock
    since which every change only took capacity and raised prices (a stale column stamped at or after it
    is a lower bound of the current one)."""
    G = gq.shape[0]
    S = ts.shape[0]
    H = pe.shape[2]
    R = e.shape[1]
    valid = np.zeros((G, S), dtype=np.bool_)
    mxa = np.empty((G, S))
    lba = np.empty((G, S))  # the first bound per (group, start), for the colocated scan
    ncand = I64(0)
    for g in range(G):
        q, m, n, d = gq[g], gm[g], gn[g], gd[g]
        k = _log2_floor(d)
        for i in range(S):
            t = ts[i]
            if t + d > Tw:
                mxa[g, i] = 0.0
                continue
            b = t + d - (1 << k)
            x, y = maxt[k, t, m], maxt[k, b, m]
            mx = min(x, y)
            mxa[g, i] = mx
            if q == 1:
                ok = mx >= n
            else:
                x, y = tott[k, t, m], tott[k, b, m]
                ok = (min(x, y)) >= n
            if ok:
                valid[g, i] = True
                ncand += 1
    cand = np.empty(ncand, dtype=np.int64)
    clb = np.empty(ncand)
    ccomp = np.empty(ncand, dtype=np.int64)
    j = 0
    for g in range(G):
        q, m, n, d = gq[g], gm[g], gn[g], gd[g]
        f_ratio = bw[m] / Bmax
        for i in range(S):
            if not valid[g, i]:
                continue
            t = ts[i]
            end = t + d
            if pref[m, 1, n, end] - pref[m, 1, n, t] > 0:
                lbw = np.inf
            else:
                lbw = pref[m, 0, n, end] - pref[m, 0, n, t]
            if ps_arch:
                if q == 1:
                    sg = 1.0
                else:
                    sg = max(1.0, math.ceil((n - mxa[g, i]) * f_ratio - EPS))
                lbz = sg * (pzminall[end] - pzminall[t])
            else:
                lbz = 0.0
            cand[j] = g * S + i
            clb[j] = lbw + lbz
            lba[g, i] = clb[j]
            ccomp[j] = end
            j += 1

    best_cost, best_comp = cutoff, I64(-1)
    have = False
    b_nodes, b_c, b_t, b_srv, b_g, b_s = I64(0), I64(0), I64(0), I64(-1), I64(0), I64(0)
    done_grp = np.zeros(G, dtype=np.bool_)
    # The reference takes, batch after batch, the `batch` smallest remaining candidates by (key, position)
    # after dropping those the best so far prunes; key = lb + completion * 1e-9 * (1 + |lb|). A heap over
    # (key, position), built once, gives the same batches: popping in that order and dropping the pruned
    # ones as they come up yields the first `batch` unpruned ones (the pruned ones are dropped for good in
    # the reference too, since the best only improves). It replaces a pass over every remaining candidate
    # per batch, which cost O(candidates x batches) on a congested cluster.
    key = np.empty(ncand)
    for i in range(ncand):
        key[i] = clb[i] + ccomp[i] * 1e-9 * (1.0 + abs(clb[i]))
    heap = np.arange(ncand)
    nh = ncand
    _heapify(heap, key, nh)
    pick = np.empty(batch, dtype=np.int64)
    mf = np.empty((H, R))
    om = np.empty(H)
    psi = np.empty(H)
    cwf = np.empty(H)
    hbuf = np.empty(H, dtype=np.int64)
    cwi = np.empty(H, dtype=np.int64)
    order_buf = np.empty(H, dtype=np.int64)
    wh = np.empty(H + 1, dtype=np.int64)
    wc = np.empty(H + 1, dtype=np.int64)
    pair_t = np.empty(S * H, dtype=np.int64)
    pair_h = np.empty(S * H, dtype=np.int64)
    pair_w = np.empty(S * H)
    room_buf = np.empty((S * H, R))
    n_eval = 0
    cnt = np.zeros(8, dtype=np.int64)
    cmask = ckeys.shape[0] - 1
    sel = np.empty(batch, dtype=np.int64)
    sel_lb = np.empty(batch)
    sel_comp = np.empty(batch, dtype=np.int64)
    # whenever the best has changed since the last filter, drop the candidates it prunes and re-heapify
    # (O(remaining), as the reference's filter); between changes, pops are O(log remaining)
    f_cost, f_comp = np.nan, -2
    while nh > 0:
        prune = have or np.isfinite(best_cost)
        if prune and not (best_cost == f_cost and best_comp == f_comp):
            j = I64(0)
            for a in range(nh):
                i = heap[a]
                lb_i = clb[i]
                if lb_i < best_cost or (lb_i == best_cost and ccomp[i] <= best_comp):
                    heap[j] = i
                    j += 1
            nh = j
            _heapify(heap, key, nh)
            f_cost, f_comp = best_cost, best_comp
            if nh == 0:
                break
        npick = 0
        while nh > 0 and npick < batch:
            i, nh = _heap_pop(heap, key, nh)
            cnt[4] += 1
            lb_i = clb[i]
            if prune and not (lb_i < best_cost or (lb_i == best_cost and ccomp[i] <= best_comp)):
                continue
            pick[npick] = i
            npick += 1
        if npick == 0:
            break
        cnt[3] += 1
        # order the batch by (lb, completion, flat index)
        for a in range(npick):
            sel[a], sel_lb[a], sel_comp[a] = cand[pick[a]], clb[pick[a]], ccomp[pick[a]]
        for a in range(1, npick):
            f0, l0, c0 = sel[a], sel_lb[a], sel_comp[a]
            bpos = a - 1
            while bpos >= 0 and (sel_lb[bpos] > l0 or (sel_lb[bpos] == l0 and (
                    sel_comp[bpos] > c0 or (sel_comp[bpos] == c0 and sel[bpos] > f0)))):
                sel[bpos + 1], sel_lb[bpos + 1], sel_comp[bpos + 1] = sel[bpos], sel_lb[bpos], sel_comp[bpos]
                bpos -= 1
            sel[bpos + 1], sel_lb[bpos + 1], sel_comp[bpos + 1] = f0, l0, c0
        for a in range(npick):
            l0, c0 = sel_lb[a], sel_comp[a]
            if l0 > best_cost or (l0 == best_cost and c0 > best_comp):
                continue
            g = sel[a] // S
            ti = sel[a] - g * S
            if done_grp[g]:
                continue
            q, m, n, d = gq[g], gm[g], gn[g], gd[g]
            t0 = ts[ti]
            bound, bound_comp = best_cost, best_comp
            if q == 1:
                done_grp[g] = True
                n_eval += 1
                cnt[0] += 1
                k = _log2_floor(d)
                # (start, server) pairs where the N workers fit and cost <= bound: a PS only adds a
                # non-negative cost and needs room on top, so no other pair can give a result <= bound
                # (the reference finds none there either); the scan below keeps the reference's order
                npair = 0
                # a start whose first bound is above ``bound`` (by a margin for rounding) holds no pair of
                # total cost <= bound, so it cannot change the result: skipped
                lb_cut = _cut(bound)
                for i in range(S):
                    if not valid[g, i] or lba[g, i] > lb_cut:
                        continue
                    t = ts[i]
                    bb = t + d - (1 << k)
                    # with PSs every member adds one, which costs at least the cheapest PS price per slot
                    # summed over the window: a pair above ``bound`` by that (and the margin) never wins
                    wcut = lb_cut - (pzminall[t + d] - pzminall[t]) if ps_arch else lb_cut
                    for h in range(H):
                        wcost = n * (pe[m, t + d, h] - pe[m, t, h])
                        if not wcost <= bound or wcost > wcut:
                            continue
                        ok = True
                        for r in range(R):
                            x, y = table[k, t, h, r], table[k, bb, h, r]
                            room = (min(x, y)) - n * e[m, r]
                            if not room >= -EPS:
                                ok = False
                                break
                            room_buf[npair, r] = room
                        if ok:
                            pair_t[npair], pair_h[npair], pair_w[npair] = t, h, wcost
                            npair += 1
                if npair == 0:
                    continue
                for pos in range(mem_ptr[g], mem_ptr[g + 1]):
                    c = mem_idx[pos]
                    p = cfp[c]
                    bt_cost, bt_t, bt_h = np.inf, -1, 0
                    for a2 in range(npair):
                        # a PS never costs less than 0: a pair whose workers alone reach the first minimum
                        # so far, or exceed the best, can be neither that minimum nor accepted
                        if pair_w[a2] >= bt_cost or pair_w[a2] > best_cost:
                            continue
                        if p >= 0:
                            ok = True
                            for r in range(R):
                                if not z[p, r] <= room_buf[a2, r] + EPS:
                                    ok = False
                                    break
                            if not ok:
                                continue
                            t, h = pair_t[a2], pair_h[a2]
                            cost = pair_w[a2] + (pz[p, t + d, h] - pz[p, t, h])
                        else:
                            cost = pair_w[a2]
                        if cost < bt_cost:  # row-major first minimum, as np.argmin per start then over starts
                            bt_cost, bt_t, bt_h = cost, pair_t[a2], pair_h[a2]
                    if bt_t >= 0 and bt_cost <= bound:
                        nodes = n + (1 if p >= 0 else 0)
                        if bt_cost < cutoff and (not have or _better(bt_cost, bt_t + d, nodes, c, best_cost,
                                                                        best_comp, b_nodes, b_c)):
                            have = True
                            best_cost, best_comp, b_nodes, b_c, b_t = bt_cost, bt_t + d, nodes, c, bt_t
                            b_srv, b_g, b_s = bt_h, n, 1 if p >= 0 else 0
            else:
                cnt[1] += 1
                # the column serves every N of this (m, d, start), in this search and the next ones
                # until a reservation changes a slot of [t0, t0 + d) (`PricedWindow.update` stamps them)
                fkey = (m * (Tw + 1) + d) * (Tw + 1) + t0
                slot = (fkey * 2654435761) & cmask
                last = 0
                for t in range(t0, t0 + d):
                    last = max(last, changed[t])
                # the PSs' part of the bound (O(P H)) is added only where the workers' part alone does not
                # prune: it is >= 0, so a candidate the workers' part prunes is pruned with it too
                lbz2 = -1.0
                if ckeys[slot] != fkey or cstamp[slot] < last or np.isnan(cvals[slot, n]):
                    # (NaN: the column was computed only for fewer workers)
                    if ckeys[slot] == fkey and cstamp[slot] >= mono:
                        # a stale column computed after `mono`: since then free capacity only shrank and
                        # prices only rose, so its value is a lower bound of the current one; when it
                        # prunes by a clear margin (rounding), the current one prunes too
                        lbs = cvals[slot, n]
                        cut = _cut(bound)
                        if ps_arch and not lbs > cut:
                            lbz2 = _ps_part(pz, n, mxa[g, ti], bw[m], Bmax, t0, d)
                            lbs = lbs + lbz2
                        if lbs > cut:
                            cnt[7] += 1
                            continue
                    cnt[6] += 1
                    _window_worker_n(table, pe, e, m, n, t0, d, nmax_w, hbuf, om, cwf, cvals[slot])
                    ckeys[slot] = fkey
                    cstamp[slot] = clock
                lbw2 = cvals[slot, n]
                if np.isinf(lbw2) or lbw2 > bound or (lbw2 == bound and t0 + d > bound_comp):
                    continue
                if ps_arch:
                    if lbz2 < 0.0:
                        lbz2 = _ps_part(pz, n, mxa[g, ti], bw[m], Bmax, t0, d)
                    lb2 = lbw2 + lbz2
                    if np.isinf(lb2) or lb2 > bound or (lb2 == bound and t0 + d > bound_comp):
                        continue
                room_idle = True
                if ps_arch:
                    for pos in range(mem_ptr[g], mem_ptr[g + 1]):
                        if not idle_room[m, cfp[mem_idx[pos]]] < n:
                            room_idle = False
                            break
                    if not room_idle:
                        _minfree(table, t0, d, mf)
                for pos in range(mem_ptr[g], mem_ptr[g + 1]):
                    c = mem_idx[pos]
                    p = cfp[c]
                    if ps_arch:
                        room = idle_room[m, p] if room_idle else _ps_room(mf, inv, off, zmax, z, m, p)
                        if n > room:
                            continue
                        B = Bps[p]
                        s_c = max(1.0, math.ceil((n - mxa[g, ti]) * bw[m] / B - EPS))
                        lb3 = lbw2 + s_c * _ps_cost_min(pz, p, t0, d)
                        if np.isinf(lb3) or lb3 > bound or (lb3 == bound and t0 + d > bound_comp):
                            continue
                        n_eval += 1
                        cnt[2] += 1
                        cost, hs, gg, ss = _eval_dps(table, pe, pz, e, z, m, p, n, t0, d, bw[m], B, mf, om, psi,
                                                     cwi, order_buf)
                        nodes = n + ss
                    else:
                        n_eval += 1
                        cost, _kk = _eval_dra(table, pe, e, m, n, t0, d, mf, om, cwi, wh, wc)
                        hs, gg, ss = -1, 0, 0
                        nodes = n
                    if cost < cutoff and (not have or _better(cost, t0 + d, nodes, c, best_cost, best_comp,
                                                               b_nodes, b_c)):
                        have = True
                        best_cost, best_comp, b_nodes, b_c, b_t = cost, t0 + d, nodes, c, t0
                        b_srv, b_g, b_s = hs, gg, ss
    cnt[5] = ncand
    return have, b_c, b_t, best_cost, b_srv, b_g, b_s, cnt
