"""Training throughput of the learned TapFinger policy: agent decisions per second, `reduced` and `full`.

A decision is one agent choosing one task and allocation (the unit of ``total_steps``; idle
timesteps are not counted). Each measurement runs ``--updates`` MAPPO updates of the named
configuration (rollouts of ``--envs`` environments in lockstep, then the PPO epochs over
minibatches of batched graphs; no validation) after one warm-up update, and reports:

* ``decisions_per_cpu_s``: decisions / CPU seconds of the process (all its threads) and of its
  environment workers (``--workers``). This is the
  figure to read on a shared machine, where wall time depends on the other jobs;
* ``decisions_per_wall_s``: decisions / wall seconds (only meaningful on an otherwise idle machine);
* the split of CPU time between rollout (environment, graphs, forward passes) and update;
* peak RSS of the process.

Both HAN backends (``dense``, the default, and PyG's sparse ``pyg``) are measured unless
``--backend`` names one. ``--device cuda`` runs the networks on a GPU (dense backend); the CPU
figures are what the targets (`reduced` >= 2,000 decisions/s on 2 cores, `full` >= 200/s) refer to.

    python benchmarks/tapfinger_train_speed.py --envs 0,4 --updates 1 --out benchmarks/results
    python benchmarks/tapfinger_train_speed.py --configs full --device cuda --updates 3
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import tempfile
import time
from pathlib import Path

from edgeopt.bench import result_path


def children_cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) of the live processes ``pids`` (the environment workers)."""
    import os

    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def measure(config: str, backend: str, *, updates: int, envs: int | None, threads: int, device: str,
            batch_size: int | None, workers: int = 0, rollout_threads: int | None = None) -> dict:
    import torch

    from edgeopt.tapfinger.policy.config import load_config
    from edgeopt.tapfinger.policy.trainer import Trainer

    cfg = load_config(config)
    upd = {"backend": backend, "threads": threads, "device": device, "workers": workers,
           "rollout_threads": rollout_threads, "eval_every": 10**9,
           "checkpoint_every": 10**9, "total_steps": 10**9}
    if envs:
        upd["num_envs"] = envs
    if batch_size:
        upd["batch_size"] = batch_size
    cfg = cfg.model_copy(update=upd)
    with tempfile.TemporaryDirectory() as out, Trainer(cfg, out) as tr:
        tr.train_update()  # warm-up (allocator, first graphs, worker start)
        pids = [p.pid for p in tr.pool.procs] if tr.pool else []
        steps0, cpu0, wall0, wcpu0 = tr.steps, time.process_time(), time.perf_counter(), children_cpu(pids)
        split = {"rollout": 0.0, "update": 0.0}
        wall_split = {"rollout": 0.0, "update": 0.0}
        for _ in range(updates):
            tr.train_update()
            for key in split:
                split[key] += tr.last_cpu[key]
                wall_split[key] += tr.last_wall[key]
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        wcpu = children_cpu(pids) - wcpu0
        n = tr.steps - steps0
    gpu = torch.cuda.get_device_name() if device == "cuda" else None
    return {"config": config, "backend": backend, "device": device, "gpu": gpu, "threads": threads,
            "rollout_threads": cfg.rollout_thread_count, "workers": workers,
            "num_envs": cfg.num_envs,
            "batch_size": cfg.batch_size, "epochs": cfg.epochs, "updates": updates, "decisions": n,
            "cpu_s": round(cpu + wcpu, 2), "main_cpu_s": round(cpu, 2), "workers_cpu_s": round(wcpu, 2),
            "wall_s": round(wall, 2), "rollout_cpu_s": round(split["rollout"], 2),
            "update_cpu_s": round(split["update"], 2), "rollout_wall_s": round(wall_split["rollout"], 2),
            "update_wall_s": round(wall_split["update"], 2),
            "decisions_per_cpu_s": round(n / (cpu + wcpu), 1), "decisions_per_wall_s": round(n / wall, 1),
            "parameters": sum(p.numel() for p in tr.net.parameters()),
            "torch": torch.__version__}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="reduced,full", help="comma-separated configuration names or files")
    ap.add_argument("--backend", choices=["dense", "pyg", "both"], default="both")
    ap.add_argument("--updates", type=int, default=2, help="measured updates per configuration")
    ap.add_argument("--envs", default=None, help="environments in lockstep, one value or one per config "
                    "(comma-separated; 0 or omitted: the config's)")
    ap.add_argument("--batch-size", type=int, default=None, help="minibatch size (default: the config's)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--workers", default="0", help="environment worker processes, comma-separated values to "
                    "measure each (0: in the training process)")
    ap.add_argument("--rollout-threads", type=int, default=None, help="torch CPU threads of the rollout's forward "
                    "passes (default: --threads)")
    ap.add_argument("--out", type=Path, default=None, help="directory for tapfinger_train_speed.json")
    ap.add_argument("--tag", default=None, help="write tapfinger_train_speed_TAG.json instead (another setting's "
                    "rows, e.g. 2cores)")
    args = ap.parse_args(argv)
    backends = ["dense", "pyg"] if args.backend == "both" else [args.backend]
    rows = []
    configs = args.configs.split(",")
    envs = [int(e) for e in args.envs.split(",")] if args.envs else [0]
    envs = envs * len(configs) if len(envs) == 1 else envs
    for config, n_envs in zip(configs, envs, strict=True):
        for backend in backends:
            if args.device == "cuda" and backend == "pyg":
                continue
            for workers in (int(w) for w in args.workers.split(",")):
                row = measure(config, backend, updates=args.updates, envs=n_envs or None, threads=args.threads,
                              device=args.device, batch_size=args.batch_size, workers=workers,
                              rollout_threads=args.rollout_threads)
                rows.append(row)
                print(json.dumps(row), flush=True)
    doc = {"benchmark": "tapfinger_train_speed", "regime": "MAPPO updates without validation; CPU time of the "
           "whole process; the machine may be shared (read decisions_per_cpu_s)",
           "machine": f"{platform.machine()}, {__import__('os').cpu_count()} CPUs",
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
           "rows": rows}
    if args.out:
        tag = args.tag or (None if args.device == "cpu" else args.device)
        name = f"tapfinger_train_speed_{tag}.json" if tag else "tapfinger_train_speed.json"
        path = result_path(args.out, name)
        path.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
