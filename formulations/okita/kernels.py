"""Compiled (numba) kernels of the PS-site floor's subgradient loop (`lpbound.ps_site_floor`).

The floor runs FLOOR_STEPS subgradient steps on arrays [lengths, origins, sites] for every job; on the
150-job ``paper`` instance that is most of the solver-free certificate check of ``worker_lp`` and
``config_lp`` (8.6 of 11.7 s under a profiler). The two kernels do the two passes over those arrays in
one loop each, with the same floating-point operations in the same order as the numpy reference
(``lpbound.REFERENCE = True``), so the floor, hence every bound and certificate, is bitwise the same;
tests run both on random inputs.

* `reduced_sums`: rho[l, p] = sum over origins o, in order, of min(0, c[o, p] - lam[l, o]) (numpy's
  reduction over the middle axis of a C-ordered array adds the origin slices in order, as here).
* `assigned_counts`: per (l, o) the number of opened sites p with c[o, p] < lam[l, o] (an integer: no
  rounding at all).

Compiled with ``cache=True``: the first call in a fresh environment compiles (about a second); later
processes load the cached machine code.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = {"cache": True, "nogil": True}


@nb.njit(**_JIT)
def reduced_sums(c: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """rho [L, S] from c [O, S] and lam [L, O] (module docstring)."""
    n, n_origins = lam.shape
    n_sites = c.shape[1]
    rho = np.zeros((n, n_sites))
    for l in range(n):
        for o in range(n_origins):
            x = lam[l, o]
            for p in range(n_sites):
                d = c[o, p] - x
                rho[l, p] += min(0.0, d)
    return rho


@nb.njit(**_JIT)
def assigned_counts(c: np.ndarray, lam: np.ndarray, opened: np.ndarray) -> np.ndarray:
    """[L, O] counts of opened sites cheaper than lam (module docstring)."""
    n, n_origins = lam.shape
    n_sites = c.shape[1]
    out = np.zeros((n, n_origins))
    for l in range(n):
        for o in range(n_origins):
            x = lam[l, o]
            k = 0
            for p in range(n_sites):
                if opened[l, p] and c[o, p] < x:
                    k += 1
            out[l, o] = k
    return out


__all__ = ["assigned_counts", "reduced_sums"]
