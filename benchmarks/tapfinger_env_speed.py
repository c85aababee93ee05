"""Step rate of the tapfinger environment with a trivial policy, for planning training budgets.

The trivial policy starts, on every agent, the first pending task its masks allow at the largest
allowed allocation (or does nothing). Each timestep builds every agent's full observation
(masks included). Reported: timesteps/s and agent-steps/s (timesteps x agents) on one core, for
the paper preset with 3 clusters (Poisson 2) and 6 clusters (Poisson 4); target >= 2,000
agent-steps/s.

    python benchmarks/tapfinger_env_speed.py --seeds 0-2 --out benchmarks/results
"""

from __future__ import annotations

import json
import platform
import time

import numpy as np

from edgeopt.bench import benchmark_parser, result_path
from edgeopt.tapfinger.env import parallel_env


def trivial(obs: dict) -> dict:
    acts = {}
    for a, o in obs.items():
        ks = np.flatnonzero(o["task_mask"][:-1])
        if len(ks):
            c, g = np.argwhere(o["alloc_mask"][ks[0]])[-1]
            acts[a] = np.array([ks[0], c, g])
    return acts


def measure(clusters: int, rate: float, seed: int) -> dict:
    env = parallel_env(preset="paper", seed=seed, clusters=clusters, arrival_rate=rate)
    obs, _ = env.reset(seed=seed)
    steps = agent_steps = 0
    t0 = time.perf_counter()
    while env.agents:
        agent_steps += len(env.agents)
        obs, *_ = env.step(trivial(obs))
        steps += 1
    dt = time.perf_counter() - t0
    return {"timesteps": steps, "agent_steps": agent_steps, "seconds": dt}


def main() -> None:
    args = benchmark_parser(__doc__.splitlines()[0], seeds="0-2").parse_args()
    out = {"machine": platform.processor() or platform.machine(), "python": platform.python_version(), "rows": []}
    for clusters, rate in ((3, 2.0), (6, 4.0)):
        runs = [measure(clusters, rate, s) for s in args.seeds]
        steps = sum(r["timesteps"] for r in runs)
        agent_steps = sum(r["agent_steps"] for r in runs)
        secs = sum(r["seconds"] for r in runs)
        row = {"clusters": clusters, "arrival_rate": rate, "episodes": len(runs),
               "timesteps_per_s": round(steps / secs, 1), "agent_steps_per_s": round(agent_steps / secs, 1)}
        out["rows"].append(row)
        print(row)
    path = result_path(args.out, "tapfinger_env_speed.json")
    path.write_text(json.dumps(out, indent=1))
    print("wrote", path)


if __name__ == "__main__":
    main()
