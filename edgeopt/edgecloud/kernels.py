"""Compiled (numba) kernels of edgecloud's A_online: the per-job search of `online.best_option` and the
incremental update of the window structures it reads (`online.WindowCache`).

`search` evaluates the triples (xi, workers, start) of one job in order of (completion, workers,
colocated first) and keeps the first strictly cheapest one: that is the lexicographic minimum of
(cost, completion, workers, colocated first) which the numpy reference takes with ``lexsort``. Each cost
repeats the reference's floating-point operations in the same order: COST_C's
``w * (C_lambda[e] - C_lambda[o]) + (C_mu[e] - C_mu[o])``, COST_D's greedy fill over the servers sorted by
(run cost per worker, index) with the workers' cost summed in numpy's pairwise order (`pairwise_sum`),
and the two ways around the all-workers-with-the-PS case (2f). So the kernel returns bitwise the cost
the reference computes, and the same option; tests run both on random instances.

Pruning (exact). ``limit``: only options cheaper than ``limit`` are of interest (A_maxsche accepts a job
iff its cost is below its weight, 1); the search returns nothing when none is. A triple, and inside a
triple a server, whose cost cannot fall below the best found so far is skipped; the argument, for a
server whose run cost per worker ``u >= best``: any placement that takes a worker there costs at least
``u`` (a sum of non-negative terms is at least each term; the 2f move keeps ``(w - 1) u + u_2 >= u`` for
``w >= 2`` and replaces u by ``u_2 >= u`` for ``w = 1``), and if the greedy fill does not reach it, it
can only be the "next cheapest" server of the 2f move, which then costs at least ``u`` too. Such a
server sorts after every cheaper one, so dropping it changes no other server's position in the sorted
order (the pairwise sum's order). Per start ``o``, a server that costs ``>= limit`` already over the
shortest run from ``o`` is dropped for every run from ``o`` (costs only grow with the run). A zero-cost
option ends the search (costs are >= 0 and later triples lose the ties).

Compiled with ``cache=True``: the first call in a fresh environment compiles (seconds; the speed
benchmark reports it apart); later processes load the cached machine code. Imported lazily, so the
toolkit's import does not pay numba's.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = {"cache": True, "nogil": True}
INF = np.inf


@nb.njit(**_JIT)
def pairwise_sum(a, n):
    """numpy's pairwise summation of ``a[:n]`` (the order of ``ndarray.sum`` along a contiguous axis):
    sequential below 8 items, 8 interleaved partial sums up to 128, halves (multiples of 8) above."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        r0, r1, r2, r3 = a[0], a[1], a[2], a[3]
        r4, r5, r6, r7 = a[4], a[5], a[6], a[7]
        i = 8
        stop = n - n % 8
        while i < stop:
            r0 += a[i]
            r1 += a[i + 1]
            r2 += a[i + 2]
            r3 += a[i + 3]
            r4 += a[i + 4]
            r5 += a[i + 5]
            r6 += a[i + 6]
            r7 += a[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return pairwise_sum(a, n2) + pairwise_sum(a[n2:], n - n2)


@nb.njit(**_JIT)
def build_table(free, table):
    """Sparse range-min table ``table[k, i, s] = min(free[i : i + 2**k, s])`` (valid where it fits)."""
    L, n = free.shape
    for i in range(L):
        for s in range(n):
            table[0, i, s] = free[i, s]
    for k in range(1, table.shape[0]):
        h = 1 << (k - 1)
        for i in range(L - (1 << k) + 1):
            for s in range(n):
                a, b = table[k - 1, i, s], table[k - 1, i + h, s]
                table[k, i, s] = min(b, a)


@nb.njit(**_JIT)
def init_side(used, cap, busy_col, busy_slot, busy_price, price, prefix, free, table, up):
    """Fill a window's arrays from the ledger's ``used[column, slot]``: prices (zero but at the busy
    entries, priced by numpy), prefix sums (sequential, as ``cumsum``), free capacity, its range-min
    table and ``up[t]`` (how many columns gain free capacity from slot t to t + 1)."""
    n, L = used.shape
    for b in range(busy_col.shape[0]):
        price[busy_slot[b], busy_col[b]] = busy_price[b]
    for j in range(n):
        for t in range(L):
            free[t, j] = cap[j] - used[j, t]
    for t in range(L):
        for j in range(n):
            prefix[t + 1, j] = prefix[t, j] + price[t, j]
    build_table(free, table)
    for t in range(L - 1):
        c = 0
        for j in range(n):
            if free[t + 1, j] > free[t, j]:
                c += 1
        up[t] = c


@nb.njit(**_JIT)
def update_side(pos, s, e, new_price, new_free, price, prefix, free, table, up):
    """Write new prices and free capacity of the columns ``pos`` over the window's slots ``[s, e)`` and
    bring the prefix sums (sequential, as ``cumsum``), the range-min table and the per-boundary count of
    servers that gain free capacity (``up[t]``: free[t + 1] > free[t]) up to date."""
    L = price.shape[0]
    a, b = max(0, s - 1), min(e, L - 1)  # boundaries t | t+1 that see a changed slot
    for q in range(pos.shape[0]):
        j = pos[q]
        for t in range(a, b):
            if free[t + 1, j] > free[t, j]:
                up[t] -= 1
        for t in range(s, e):
            price[t, j] = new_price[q, t - s]
            free[t, j] = new_free[q, t - s]
        for t in range(a, b):
            if free[t + 1, j] > free[t, j]:
                up[t] += 1
        for t in range(s, L):
            prefix[t + 1, j] = prefix[t, j] + price[t, j]
        for t in range(s, e):
            table[0, t, j] = free[t, j]
        for k in range(1, table.shape[0]):
            h = 1 << (k - 1)
            n = L - (1 << k) + 1
            if n <= 0:
                break
            for i in range(max(0, s - (1 << k) + 1), min(e, n)):
                x, y = table[k - 1, i, j], table[k - 1, i + h, j]
                table[k, i, j] = min(y, x)


@nb.njit(**_JIT)
def _cheap(pre, o, e_min, rows_ok, limit, out):
    """Columns whose run cost over ``[o, e_min)`` is below ``limit`` (and whose ``rows_ok`` holds) into
    ``out``; returns how many."""
    m = 0
    for j in range(pre.shape[1]):
        if rows_ok[j] and pre[e_min, j] - pre[o, j] < limit:
            out[m] = j
            m += 1
    return m


@nb.njit(**_JIT)
def search(L, cand, dd, colocation, limit, rows_w, rel_w, pre_w, tab_w, rows_p, rel_p, pre_p, tab_p,
           co_w, co_p, lg):
    """The cheapest option of one job: ``(cost, start offset, workers, xi)``; xi = -1 when no option costs
    less than ``limit``.

    Args:
        L: window length; cand: candidate start offsets (sorted, unique); dd: ``[2, D]`` durations
            ``d[xi, w - 1]``; colocation: evaluate COST_C too; limit: only options below it count.
        rows_w, rel_w, pre_w, tab_w: per worker-side column (a server with the job's worker type): its
            server, first usable offset, prefix sums ``[L + 1, n]`` of one worker's price, range-min
            table of free workers ``[levels, L, n]``; rows_p, rel_p, pre_p, tab_p: the same for the PS
            side; co_w, co_p: the column pairs of the servers that have both (COST_C);
            lg: ``lg[x] = floor(log2 x)``.

    Per start o, three lists hold the columns still worth looking at (workers, PSs, COST_C pairs). The
    triples of a start come in order of completion, and over a longer run a server's cost only grows
    and its least free capacity only falls, so a column that costs ``>= best`` or has no free unit is
    dropped from its start's list for good.
    """
    D = dd.shape[1]
    nw, npp, nc = pre_w.shape[1], pre_p.shape[1], co_w.shape[0]
    nca = cand.shape[0]
    dmin = L + 1
    for xi in range(2):
        for w in range(D):
            dmin = min(dmin, dd[xi, w])
    cw = np.empty((nca, nw), dtype=np.int64)
    cp = np.empty((nca, npp), dtype=np.int64)
    cc = np.empty((nca, max(nc, 1)), dtype=np.int64)
    mw = np.zeros(nca, dtype=np.int64)
    big = np.iinfo(np.int64).max
    fmax = np.full(nca, big, dtype=np.int64)  # per start: most free workers on a kept COST_C server
    wsum = np.full(nca, big, dtype=np.int64)  # per start: free workers on the kept COST_D servers
    mp = np.zeros(nca, dtype=np.int64)
    mc = np.zeros(nca, dtype=np.int64)
    for q in range(nca):
        o = cand[q]
        em = o + dmin
        if em > L:
            continue
        m = 0
        for j in range(nw):
            if rel_w[j] <= o and pre_w[em, j] - pre_w[o, j] < limit:
                cw[q, m] = j
                m += 1
        mw[q] = m
        m = 0
        for j in range(npp):
            if rel_p[j] <= o and pre_p[em, j] - pre_p[o, j] < limit:
                cp[q, m] = j
                m += 1
        mp[q] = m
        if colocation:
            m = 0
            for k in range(nc):
                i, j = co_w[k], co_p[k]
                if rel_w[i] <= o and (pre_w[em, i] - pre_w[o, i]) + (pre_p[em, j] - pre_p[o, j]) < limit:
                    cc[q, m] = k
                    m += 1
            mc[q] = m
    # ---- triples in order of (completion, workers, colocated first): a stable counting sort by completion
    count = np.zeros(L + 2, dtype=np.int64)
    for w in range(D):
        for xi in range(1, -1, -1):
            d = dd[xi, w]
            for q in range(nca):
                e = cand[q] + d
                if e <= L:
                    count[e + 1] += 1
    for e in range(1, L + 2):
        count[e] += count[e - 1]
    N = count[L + 1]
    tq = np.empty(N, dtype=np.int64)
    tw = np.empty(N, dtype=np.int64)
    tx = np.empty(N, dtype=np.int64)
    for w in range(D):
        for xi in range(1, -1, -1):
            d = dd[xi, w]
            for q in range(nca):
                e = cand[q] + d
                if e <= L:
                    k = count[e]
                    tq[k], tw[k], tx[k] = q, w + 1, xi
                    count[e] += 1
    avail = np.zeros(nw, dtype=np.int64)
    unit = np.zeros(nw)
    pc = np.full(npp, INF)
    best, bo, bw, bx = limit, -1, -1, -1
    for t in range(N):
        if best == 0.0:
            break  # costs are >= 0 and every later triple loses the ties
        q, w, xi = tq[t], tw[t], tx[t]
        if xi == 1 and not colocation:
            continue
        o = cand[q]
        e = o + dd[xi, w - 1]
        k = lg[e - o]
        h = e - (1 << k)
        if xi == 1:
            # COST_C: the workers and the PS on one server
            if w > fmax[q]:
                continue  # no kept server had w free workers over a shorter run from o
            c_best = INF
            keep = 0
            top = 0
            for m in range(mc[q]):
                kk = cc[q, m]
                i, j = co_w[kk], co_p[kk]
                du = pre_w[e, i] - pre_w[o, i]
                dp = pre_p[e, j] - pre_p[o, j]
                if du + dp >= best:
                    continue  # w du + dp >= du + dp: dropped
                fw = min(tab_w[k, o, i], tab_w[k, h, i])
                if fw < 1 or min(tab_p[k, o, j], tab_p[k, h, j]) < 1:
                    continue  # dropped: no free worker or PS over this run, nor over longer ones
                cc[q, keep] = kk
                keep += 1
                top = max(top, fw)
                c = w * du + dp
                if c < c_best and fw >= w:
                    c_best = c
            mc[q] = keep
            fmax[q] = top
            if c_best < best:
                best, bo, bw, bx = c_best, o, w, 1
            continue
        # COST_D. The workers: servers cheaper than best with a free worker over the run (clipped to w).
        if wsum[q] < w:
            continue  # the kept servers had fewer free workers over a shorter run from o
        keep = 0
        zero_avail = 0
        total = 0
        free_sum = 0
        for m in range(mw[q]):
            j = cw[q, m]
            u = pre_w[e, j] - pre_w[o, j]
            if u >= best:
                continue
            a = min(tab_w[k, o, j], tab_w[k, h, j])
            if a < 1:
                continue
            cw[q, keep] = j
            keep += 1
            free_sum += a
            a = min(a, w)
            unit[j] = u
            avail[j] = a
            total += a
            if u == 0.0:
                zero_avail += a
        mw[q] = keep
        wsum[q] = free_sum
        if total < w:
            continue
        # the PS: no placement of the triple costs less than its cheapest PS
        pc_min = INF
        keep = 0
        for m in range(mp[q]):
            j = cp[q, m]
            c = pre_p[e, j] - pre_p[o, j]
            if c >= best or min(tab_p[k, o, j], tab_p[k, h, j]) < 1:
                continue
            cp[q, keep] = j
            keep += 1
            pc[j] = c
            pc_min = min(pc_min, c)
        mp[q] = keep
        if pc_min < best:
            cost = _distributed(q, o, e, w, zero_avail, cw, mw, cp, mp, rows_w, pre_w, rows_p, avail, unit, pc)
            if cost < best:
                best, bo, bw, bx = cost, o, w, 0
        for m in range(mp[q]):
            pc[cp[q, m]] = INF
    return best, bo, bw, bx


@nb.njit(**_JIT)
def _distributed(q, o, e, w, zero_avail, cw, mw, cp, mp, rows_w, pre_w, rows_p, avail, unit, pc):
    """COST_D of the triple (o, e, w) as the reference computes it, given the kept worker columns
    ``cw[q, :mw[q]]`` with their ``unit`` cost and ``avail`` free workers (clipped to w), whose zero-cost
    ones hold ``zero_avail``, and the PS run cost ``pc`` of the columns in ``cp[q]`` (INF elsewhere)."""
    n = mw[q]
    s2 = -1
    u_second = INF
    if zero_avail >= w:
        # the greedy fill takes zero-cost servers only, in index order: the workers cost 0 exactly
        wcost = 0.0
        only, single = -1, False
        for m in range(n):
            j = cw[q, m]
            if unit[j] == 0.0:
                only, single = j, avail[j] >= w
                break
        u_only = 0.0
        if single:  # the next server in (unit, index) order with a free worker
            for m in range(n):
                j = cw[q, m]
                if j != only and unit[j] < u_second:
                    u_second, s2 = unit[j], j
    else:
        # the servers in (unit, index) order (a stable sort of the index order), the reference's order
        keys = np.empty(n)
        for m in range(n):
            keys[m] = unit[cw[q, m]]
        order = np.argsort(keys, kind="mergesort")
        need = w
        n_used = 0
        only = -1
        u_only = 0.0
        taken = np.empty(n, dtype=np.int64)
        takes = np.empty(n, dtype=np.int64)
        for r in range(n):
            j = cw[q, order[r]]
            if r == 1:
                u_second, s2 = unit[j], j
            if need > 0:
                tk = min(need, avail[j])
                need -= tk
                taken[n_used], takes[n_used] = j, tk
                if n_used == 0:
                    only, u_only = j, unit[j]
                n_used += 1
        single = n_used == 1
        wcost = _workers_cost(taken, takes, n_used, unit, pre_w, o, e)
    # the PS: (a) on any server but the only worker server when single (2f); (b) on it, with one worker
    # moved to the next cheapest server
    sid = rows_w[only]
    pc_a = INF
    pc_only = INF
    for m in range(mp[q]):
        j = cp[q, m]
        c = pc[j]
        if rows_p[j] == sid:
            pc_only = c
            if single:
                continue
        pc_a = min(pc_a, c)
    cost = wcost + pc_a
    if single and s2 >= 0:
        cb = ((wcost - u_only) + u_second) + pc_only
        cost = min(cost, cb)
    return cost


@nb.njit(**_JIT)
def _workers_cost(taken, takes, n_used, unit, pre_w, o, e):
    """sum of take x unit over the taken servers, in the reference's order: numpy's pairwise sum over all
    worker columns sorted by (unit, index), where every server not taken adds an exact 0. With at most
    two non-zero terms the order cannot matter; with more, the positions are counted over all columns."""
    nnz = 0
    x0 = 0.0
    x1 = 0.0
    for r in range(n_used):
        p = takes[r] * unit[taken[r]]
        if p != 0.0:
            if nnz == 0:
                x0 = p
            elif nnz == 1:
                x1 = p
            nnz += 1
    if nnz <= 2:
        return x0 + x1
    n = pre_w.shape[1]
    prod = np.zeros(n)
    for r in range(n_used):
        j = taken[r]
        u = unit[j]
        pos = 0
        for i in range(n):
            v = pre_w[e, i] - pre_w[o, i]
            if v < u or (v == u and i < j):
                pos += 1
        prod[pos] = takes[r] * u
    return pairwise_sum(prod, n)
