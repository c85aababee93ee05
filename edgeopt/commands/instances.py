"""Commands that make and describe instances: ``generate``, ``algorithms``, ``schema``.

Registered by `edgeopt.cli`; the functions here are plain typer commands.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from edgeopt.commands.common import (
    PRESET_HELP,
    InputError,
    MaxInputBytes,
    Plugins,
    Seed,
    Table,
    _family_options,
    _plain,
    api,
    check_output_path,
    dumps,
    err,
    out,
    write_json,
)
from edgeopt.commands.compare import _kind_label


def _preset_help() -> str:
    """The presets of every implemented family, for --help (imports every family: filled in by `main`
    only for the command being run, see `_DYNAMIC_HELP`)."""
    listing = "; ".join(f"{s.name}: {', '.join(s.presets)}" for s in api.families())
    return f"Generator preset; the family's first is the default ({listing})."


def _options_help() -> str:
    """Each family's own generator options, for --help."""
    parts = []
    for s in api.families():
        opts = api.generator_options(s.name)
        if opts:
            parts.append(f"{s.name}: " + ", ".join("--" + k.replace("_", "-") for k in opts))
    return "; ".join(parts)


GENERATE_EPILOG = "Family options (e.g. `edgeopt generate tapfinger --preset paper --clusters 6 --arrival-rate 4`): "


def generate(
    ctx: typer.Context,
    family: Annotated[str, typer.Argument(help="Problem family, e.g. hetero.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Instance file to write.")],
    preset: Annotated[str | None, typer.Option(help=PRESET_HELP)] = None,
    jobs: Annotated[int | None, typer.Option(help="Number of jobs (overrides the preset).")] = None,
    servers: Annotated[int | None, typer.Option(help="Number of servers (overrides the preset).")] = None,
    horizon: Annotated[int | None, typer.Option(help="Number of slots T (overrides the preset).")] = None,
    seed: Seed = 0,
    trace: Annotated[Path | None, typer.Option(help="Build the instance from this job trace (ITP, Alibaba, "
                                                    "Philly, Helios; see docs/families/FAMILY.md), or `itp`: "
                                                    "the ITP trace shipped with edgeopt.")] = None,
    machines: Annotated[Path | None, typer.Option(help="With --trace: machine list for the capacities.")] = None,
    window: Annotated[str | None, typer.Option(help="With --trace: START:END on the trace's clock (14d:21d).")]
    = None,
    cluster: Annotated[str | None, typer.Option(help="With --trace: only this cluster of the trace.")] = None,
    max_input_bytes: MaxInputBytes = None,
) -> None:
    """Generate a seeded instance of FAMILY and write it as JSON.

    Options of the family's own generator follow as ``--name VALUE`` (listed below).
    """
    if trace is not None or machines is not None or window is not None or cluster is not None:
        from edgeopt.commands.traces import generate_from_trace

        generate_from_trace(family, output, trace, machines, window, cluster, jobs, servers, seed,
                            preset, horizon, ctx.args)
        return
    options = _family_options(ctx.args)
    _check_generate_options(family, options)
    check_output_path(output)
    instance = api.generate(family, preset, seed=seed, jobs=jobs, servers=servers, horizon=horizon, **options)
    write_json(output, instance.model_dump(mode="json"))
    n_jobs = len(getattr(instance, "jobs", []))
    err.print(f"wrote {output} ({family}, {n_jobs} jobs, seed {seed})")
    if jobs is not None and horizon is None and hasattr(instance, "horizon"):
        err.print(_horizon_note(family, preset, seed, servers, options, instance.horizon), markup=False)


def _horizon_note(family: str, preset: str | None, seed: int, servers: int | None, options: dict[str, str],
                  horizon: int) -> str:
    """Say whether ``--jobs`` moved the horizon: some presets derive T from their draws (the load then
    stays the preset's), others fix T as their paper does, so more jobs make a busier instance."""
    default = api.generate(family, preset, seed=seed, servers=servers, **options).horizon  # < 0.2 s at paper size
    name = preset or api.family(family).presets[0]
    if default == horizon:
        return (f"note: --jobs does not scale the horizon: T = {horizon:,} is {family} {name}'s own, so more jobs "
                "make a busier instance (some may not finish by T); pass --horizon to change it")
    return f"note: the horizon follows the jobs: T = {horizon:,} ({default:,} at {family} {name}'s own job count)"


def _check_generate_options(family: str, options: dict[str, str]) -> None:
    """An unknown ``--option`` of ``generate``: suggest the closest of every option it takes."""
    if not options:
        return
    own = [f"--{k.replace('_', '-')}" for k in api.generator_options(family)]
    common = ["--output", "--preset", "--jobs", "--servers", "--horizon", "--seed"]
    for key in options:
        opt = f"--{key.replace('_', '-')}"
        if opt not in own:
            raise InputError(key, f"unknown option {opt} for generate {family}{api.did_you_mean(opt, own + common)} "
                                  f"(options: {', '.join(common)}; {family}'s own: {', '.join(own) or 'none'})")


def list_algorithms(
    family: Annotated[str | None, typer.Argument(help="Only this family.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")] = False,
    plugin: Plugins = None,
) -> None:
    """List the registered algorithms (and exact models) of each family."""
    from edgeopt import catalog

    rows = catalog.rows(family)  # without importing the families when the generated copy is up to date
    if as_json:
        sys.stdout.write(catalog.dumps(rows))
        return
    table = Table("family", "algorithm", "kind", "summary", "parameters (default)")
    families = list(dict.fromkeys(r["family"] for r in rows))
    for row in sorted(rows, key=lambda r: families.index(r["family"])):  # a family's algorithms, then its models
        params = "; ".join(f"{p['name']}={p['default']!r}" + (f": {p['help']}" if p["help"] else "")
                           for p in row["params"])
        table.add_row(row["family"], row["algorithm"], _kind_label(row["kind"], row["relaxed"]),
                      _plain(row["summary"]), _plain(params))
    out.print(table)


def schema(
    what: Annotated[str, typer.Argument(help="A family (its instance schema), or 'result'.")],
    family: Annotated[str | None, typer.Option(
        help="With 'result': describe this family's schedule inside the result.")] = None,
) -> None:
    """Print the JSON Schema of a family's instance files, or of result files (`schema result`)."""
    if what == "result":
        sys.stdout.write(dumps(api.result_schema(family)))
        return
    from edgeopt.families import FAMILY_NAMES

    api.check_choice("family", what, [*FAMILY_NAMES, "result"], "family (or result) schema")
    sys.stdout.write(dumps(api.family(what).instance_type.model_json_schema()))
