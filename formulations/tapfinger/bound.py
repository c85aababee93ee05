"""A lower bound on the optimum of (1)-(8) that scales to the paper's presets: the
*fastest-run + start-rate bound*.

For every schedule, end_j - arrival_j = (start_j - arrival_j) + d_j, where d_j is at least
``d_min(j)``, the task's shortest duration over every allocation that fits some cluster of D_j
(alone, the whole cluster free; noise realisation included). And by (2) at most N tasks start in
any timestep (one per cluster), so the total waiting sum_j (start_j - arrival_j) is at least that
of the relaxation "N unit start-slots per timestep, any task in any slot": serving as many
arrived tasks as possible in every timestep minimises it (all tasks weigh the same), which a
single pass computes. The bound is the sum of both parts; it ignores capacity contention between
concurrent tasks, so it is loose when clusters are busy.
"""

from __future__ import annotations

from edgeopt.tapfinger.instance import Instance


def fastest_runs(instance: Instance) -> list[int]:
    """d_min(j) per task (``horizon + 1`` when the task fits nowhere)."""
    out = []
    for t in instance.tasks:
        best = instance.horizon + 1
        for n in t.reachable_clusters:
            opts = instance.pareto_allocations(t.id, n)
            if opts:
                best = min(best, opts[0][1])
        out.append(best)
    return out


def start_rate_wait(instance: Instance) -> int:
    """Least total waiting when at most N tasks (one per cluster) start per timestep."""
    N = len(instance.clusters)
    arrivals = sorted(t.arrival for t in instance.tasks)
    waiting, total, i, t = 0, 0, 0, 0
    while i < len(arrivals) or waiting:
        if waiting == 0 and i < len(arrivals):
            t = max(t, arrivals[i])
        while i < len(arrivals) and arrivals[i] <= t:
            waiting += 1
            i += 1
        waiting -= min(N, waiting)
        total += waiting  # every task still waiting loses this timestep
        t += 1
    return total


def start_rate_bound(instance: Instance) -> float:
    """The fastest-run + start-rate lower bound on sum_j (end_j - arrival_j)."""
    return float(sum(fastest_runs(instance)) + start_rate_wait(instance))
