"""Conflict resolution by Bayes' rule (eq. 11).

Pr(j|n) is agent n's pointer probability of the task (eq. 10); Pr(n) is proportional to how many
copies of the task's minimum fit in n's free resources; the task goes to
``argmax_n Pr(n|j) = argmax_n Pr(j|n) Pr(n)`` (the normaliser of Pr(n|j) is common to all n).
The environment applies this rule itself (`TapFingerEnv._resolve`, ties to the lowest agent index)
when the policy passes its selection probabilities to ``step``; this module computes the same
posterior for inspection and tests, and reads the outcome (the mask m of eq. 14) from ``infos``.
"""

from __future__ import annotations

import numpy as np


def fits(free: np.ndarray, minimum: np.ndarray) -> float:
    """Copies of ``minimum`` that fit in ``free`` (unnormalised Pr(n))."""
    pos = minimum > 0
    return float(np.min(free[pos] // minimum[pos])) if pos.any() else 1.0


def posterior(pr_j_given_n: np.ndarray, pr_n: np.ndarray) -> np.ndarray:
    """Eq. (11): Pr(n|j) over the candidate agents (zeros if every candidate has zero weight)."""
    w = np.asarray(pr_j_given_n, float) * np.asarray(pr_n, float)
    total = w.sum()
    return w / total if total > 0 else np.zeros_like(w)


def winner(pr_j_given_n: np.ndarray, pr_n: np.ndarray) -> int:
    """Index of the candidate that gets the task (ties: the first, as in the environment)."""
    return int(np.argmax(np.asarray(pr_j_given_n, float) * np.asarray(pr_n, float)))


def allocation_kept(info: dict) -> bool:
    """m of eq. (14): 1 unless the agent lost a conflict (its allocation term leaves the loss)."""
    return not bool(info.get("conflict_lost"))
