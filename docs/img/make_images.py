"""Draw docs/img/<family>_gantt.png: A_online and the optimum on one small instance, side by side.

Run from the repository root: ``.venv/bin/python docs/img/make_images.py [FAMILY ...]``
(default: every implemented family). A family without an exact model gets A_online alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib.pyplot as plt

from edgeopt import api, viz

OUT = Path(__file__).resolve().parent


def draw(name: str, seed: int = 1) -> Path:
    inst = api.generate(name, "small", seed=seed)
    results = [api.run("online", inst)]
    if api.exact_methods(name):
        results.append(api.solve(inst, method="cpsat" if "cpsat" in api.exact_methods(name) else "milp",
                                 time_limit=60))
    for res in results:
        assert api.validate(inst, res) == [], (name, res.algorithm)
    fig, axes = viz.side_by_side(len(results), width=6.5 * len(results), height=3.4)
    for ax, res in zip(axes, results, strict=True):
        api.plot_schedule(inst, res, ax=ax)
    fig.suptitle(f"{name}: small preset, seed {seed}; rows are servers, bars jobs, triangles arrivals",
                 fontsize=10)
    assert viz.overlaps_figure(fig) == []
    path = OUT / f"{name}_gantt.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


if __name__ == "__main__":
    for family in sys.argv[1:] or [s.name for s in api.families()]:
        print("wrote", draw(family))
