"""``edgeopt train tapfinger --config FILE [--out DIR] [--resume]``: trains the learned policy.

Imports torch only when the command runs, so the CLI works without the ``rl`` extra (the command
then exits 2 saying how to install it).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated

import typer

from edgeopt.core import InputError


def train(
    family: Annotated[str, typer.Argument(help="the family whose policy to train (only 'tapfinger')")],
    config: Annotated[str, typer.Option("--config", help="TOML/JSON training configuration, or "
                                        "'reduced' / 'reduced_bc' / 'mid' / 'full' / 'vanilla_marl' (shipped)")],
    out: Annotated[Path | None, typer.Option("--out", help="run directory (default runs/<config name>)")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="continue from the run directory's last checkpoint")] = False,
    max_minutes: Annotated[float | None, typer.Option("--max-minutes", help="stop after this wall time")] = None,
) -> None:
    """Train a learned policy with MAPPO (rich progress bar, metrics.csv, atomic checkpoints)."""
    if family != "tapfinger":
        raise InputError("family", f"only 'tapfinger' has a trainable policy, got {family!r}")
    from edgeopt.tapfinger.policy.registry import EXTRA_MODULES

    def absent(m: str) -> bool:
        try:
            return importlib.util.find_spec(m) is None
        except (ImportError, ValueError):
            return True

    missing = [m for m in EXTRA_MODULES if absent(m)]
    if missing:
        raise InputError("extra", f"training needs the rl extra (pip install 'edgeopt[rl]'); missing: {missing}")
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from edgeopt.tapfinger.policy.config import load_config
    from edgeopt.tapfinger.policy.trainer import Trainer

    cfg = load_config(config)
    out = out or Path("runs") / cfg.name
    if out.exists() and (out / "trainer.pt").exists() and not resume:
        raise InputError("out", f"{out} holds a run already: pass --resume to continue it, or another --out")
    trainer = Trainer(cfg, out, resume=resume)
    with Progress(TextColumn("[bold]train {task.fields[name]}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("ep {task.fields[episodes]} | return {task.fields[ret]} | eval {task.fields[ev]}"),
                  TimeElapsedColumn()) as bar:
        task = bar.add_task("train", total=cfg.total_steps, completed=min(trainer.steps, cfg.total_steps),
                            name=cfg.name, episodes=trainer.episodes, ret="-",
                            ev=f"{trainer.last_eval:.2f}" if trainer.last_eval is not None else "-")

        def show(row: dict) -> None:
            ev = row["eval_mean_completion"]
            bar.update(task, completed=min(row["steps"], cfg.total_steps), episodes=row["episodes"],
                       ret=f"{row['mean_return']:.0f}", ev=f"{ev:.2f}" if ev != "" else "-")

        try:
            trainer.run(max_seconds=max_minutes * 60 if max_minutes else None, on_update=show)
        finally:
            trainer.close()
    typer.echo(f"checkpoint: {out} (steps {trainer.steps}, updates {trainer.update}, "
               f"wall {trainer.wall:.0f} s); metrics: {out / 'metrics.csv'}")
