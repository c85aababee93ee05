"""``edgeopt bound``: a certified lower bound on an instance's optimum (body of the CLI command)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

_err = Console(stderr=True)


def _set_input_cap(value: int | None) -> int | None:
    if value is not None:
        from edgeopt.core.jsonio import set_max_input_bytes

        set_max_input_bytes(value)  # InputError (exit 2) for a value < 1
    return value


def bound(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    method: Annotated[str, typer.Option(help="Bound method of the family (`auto`: its strongest scalable one).")]
    = "auto",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds for the whole call.")] = 60.0,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the result JSON here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result JSON on stdout.")] = False,
    max_model_size: Annotated[int | None, typer.Option(
        "--max-model-size", help="Budget on the model's estimated nonzeros (default 2,000,000).")] = None,
    max_input_bytes: Annotated[int | None, typer.Option(
        "--max-input-bytes", callback=_set_input_cap,
        help="Refuse input files larger than this many bytes before reading them (default 64 MiB).")] = None,
) -> None:
    """A certified lower bound on INSTANCE's optimum (status `bound`, certificate in extra.certificate)."""
    # imported here: `edgeopt.cli` registers this command and must start without loading the library
    from edgeopt import api
    from edgeopt.core.jsonio import check_output_path, dumps

    check_output_path(output)
    inst = api.load(instance)
    result = api.bound(inst, method=method, time_limit=time_limit, max_model_size=max_model_size)
    if output is not None:
        result.save(str(output))
    if as_json:
        sys.stdout.write(dumps(result.to_dict(), indent=2) + "\n")
    else:
        cert = result.extra.get("certificate", {})
        line = (f"{result.family}/{result.algorithm}: {result.status.value}, bound {result.bound!r} "
                f"(trivial {cert.get('trivial')!r}), {result.runtime_s:.2f} s")
        if result.extra.get("reason"):
            line += f" ({result.extra['reason']})"
        (_err if output is not None else Console()).print(
            line + (f" -> {output}" if output is not None else ""), markup=False)
