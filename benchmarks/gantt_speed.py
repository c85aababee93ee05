"""Time to draw and save a Gantt chart (`api.plot_schedule` + PNG) for large schedules: target < 3 s at
1,000 jobs (issue 21). Reports the CPU time of drawing + saving (``time.process_time``), the number of
bars, and the peak RSS of the process; the run of the algorithm itself is not counted.

    .venv/bin/python benchmarks/gantt_speed.py --family preemptive --jobs 300,1000
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")


def main(argv: list[str] | None = None) -> None:
    import matplotlib.pyplot as plt

    from edgeopt import api, viz

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", default="preemptive")
    ap.add_argument("--algorithm", default="online")
    ap.add_argument("--jobs", default="300,1000")
    ap.add_argument("--preset", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in [int(x) for x in a.jobs.split(",")]:
        inst = api.generate(a.family, a.preset, seed=a.seed, jobs=n)
        res = api.run(a.algorithm, inst)
        spec = api.family_of(inst)
        n_bars = len(spec.gantt(inst, spec.parse_schedule(res.schedule)))
        png = a.out / f"gantt_{a.family}_{n}.png"
        t0 = time.process_time()
        ax = api.plot_schedule(inst, res)
        ax.figure.savefig(png, dpi=100)
        cpu = time.process_time() - t0
        plt.close("all")
        row = {"family": a.family, "algorithm": a.algorithm, "jobs": n, "bars": n_bars, "draw_and_save_cpu_s":
               round(cpu, 3), "labels": n_bars <= getattr(viz, "LABEL_LIMIT", n_bars), "png": png.name}
        rows.append(row)
        print(f"{a.family} {n} jobs: {n_bars} bars, draw + save {cpu:.2f} s CPU -> {png}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MiB")
    (a.out / f"gantt_speed_{a.family}.json").write_text(json.dumps({"rows": rows, "peak_rss_mib": round(peak)},
                                                                     indent=2) + "\n")


if __name__ == "__main__":
    main()
