"""Bodies of the trace commands (``download-trace``, ``trace-stats``); `edgeopt.cli` registers them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer


def _input_error(field: str, message: str) -> Exception:
    # imported here: `edgeopt.cli` registers these commands and must start without loading edgeopt.core
    from edgeopt.core.errors import InputError

    return InputError(field, message)


def _set_input_cap(value: int | None) -> int | None:
    if value is not None:
        from edgeopt.core.jsonio import set_max_input_bytes

        set_max_input_bytes(value)  # InputError (exit 2) for a value < 1; `edgeopt.cli.main` restores it
    return value


def download_trace(
    name: Annotated[str, typer.Argument(help="Trace to fetch: alibaba-gpu-v2023 or itp-elasticflow.")],
    to: Annotated[Path, typer.Option("--to", help="Folder to write the files into (created if needed).")],
) -> None:
    """Fetch a public trace from its home and verify its SHA-256 (nothing is kept if it does not match)."""
    from edgeopt.traces.download import download_trace as fetch

    for path in fetch(name, to):
        sys.stderr.write(f"ok {path}\n")


def trace_stats(
    trace: Annotated[Path, typer.Argument(help="Job trace file (ITP, Alibaba, Philly JSON, Helios CSV; .gz ok), "
                                          "or `itp`: the ITP trace shipped with edgeopt.")],
    fmt: Annotated[str, typer.Option("--format", help="auto, itp, alibaba, philly or helios.")] = "auto",
    bin_hours: Annotated[float, typer.Option("--bin-hours", help="Width of an arrival-rate bin, hours.")] = 1.0,
    plot: Annotated[Path | None, typer.Option(help="Write histograms and the arrival curve here (PNG/PDF/SVG).")]
    = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
    max_input_bytes: Annotated[int | None, typer.Option(
        "--max-input-bytes", callback=_set_input_cap,
        help="Refuse a trace larger than this many bytes before reading it (default 64 MiB, after gzip "
             "decompression).")] = None,
) -> None:
    """Job count, arrival rate over time, quantiles of GPU counts and durations of a trace."""
    import math

    from edgeopt.core.jsonio import atomic_file, check_output_path
    from edgeopt.traces.loaders import load_jobs
    from edgeopt.traces.stats import check_bin, format_stats, plot_trace
    from edgeopt.traces.stats import trace_stats as compute

    if not (math.isfinite(bin_hours) and 0 < bin_hours <= 24 * 365):
        raise _input_error("bin_hours", f"must be a finite number in (0, 8760], got {bin_hours}")
    if plot is not None:  # before the trace is read: a device, FIFO or directory is never replaced
        if plot.suffix.lower() not in (".png", ".pdf", ".svg"):
            raise _input_error("plot", f"{plot.name}: the figure must be .png, .pdf or .svg")
        check_output_path(plot, what="plot")
    jobs = load_jobs(trace, fmt)
    check_bin(jobs, bin_hours * 3600.0, field="bin_hours", unit_s=3600.0, unit="hours")
    stats = compute(jobs, bin_hours * 3600.0)
    if plot is not None:  # drawn before anything is printed: a plot that fails leaves no half output
        import matplotlib.pyplot as plt

        fig = plot_trace(jobs, bin_hours * 3600.0)
        try:
            with atomic_file(plot, what="plot") as tmp:
                fig.savefig(tmp, dpi=110, format=plot.suffix.lower()[1:])
        finally:
            plt.close(fig)
    if as_json:
        sys.stdout.write(json.dumps(stats, indent=2) + "\n")
    else:
        sys.stdout.write(format_stats(stats) + "\n")
    if plot is not None:
        sys.stderr.write(f"wrote {plot}\n")


def generate_from_trace(family: str, output: Path, trace: Path | None, machines: Path | None, window: str | None,
                        cluster: str | None, jobs: int | None, servers: int | None, seed: int,
                        preset: str | None, horizon: int | None, extra: list[str]) -> None:
    """``edgeopt generate FAMILY --trace FILE ...``: write the trace-driven instance as JSON."""
    from edgeopt import api
    from edgeopt.core.jsonio import check_output_path, write_json
    from edgeopt.traces.instances import generate_from_files

    api.family(family)  # an unknown family is reported first
    if trace is None:
        raise _input_error("trace", "--machines, --window and --cluster need --trace FILE")
    check_output_path(output)  # before the trace is read: a device, FIFO or directory is never replaced
    for name, value in (("preset", preset), ("horizon", horizon)):
        if value is not None:
            raise _input_error(name, f"--{name} does not apply with --trace (the trace sets it)")
    from edgeopt.commands.common import _family_options

    options = _family_options(extra)  # trace options of the family (tapfinger: --task-types two)
    instance = generate_from_files(family, trace, machines=machines, window=window, n_jobs=jobs, seed=seed,
                                   servers=servers, cluster=cluster, **options)
    write_json(output, instance.model_dump(mode="json"))
    n_jobs = len(getattr(instance, "jobs", []))
    sys.stderr.write(f"wrote {output} ({family} from {trace.name}, {n_jobs} jobs, horizon {instance.horizon}, "
                     f"seed {seed})\n")
