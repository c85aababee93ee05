"""Commands that run, solve and check one instance: ``run``, ``solve``, ``validate``.

Registered by `edgeopt.cli`; the functions here are plain typer commands.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from edgeopt.commands.common import (
    METHOD_HELP,
    InputError,
    MaxInputBytes,
    OutFile,
    Plugins,
    Result,
    Seed,
    WorkLimit,
    _fmt,
    _print_json,
    _progress_status,
    _run_progress,
    _same_family,
    api,
    check_output_path,
    err,
    out,
)
from edgeopt.commands.compare import _parse_params


def run(
    algorithm: Annotated[str, typer.Argument(help="Algorithm name (see `edgeopt algorithms`).")],
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    output: OutFile = None,
    seed: Seed = 0,
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="KEY=VALUE, repeatable; see `edgeopt algorithms FAMILY` for each algorithm's parameters.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout (also with -o; "
                                                         "without -o it is printed anyway).")] = False,
    max_input_bytes: MaxInputBytes = None,
    plugin: Plugins = None,
) -> None:
    """Run ALGORITHM on INSTANCE and print (or write) its result."""
    check_output_path(output)
    inst = api.load(instance)
    spec = api.family_of(inst)
    params = _parse_params(param or [])
    api.check_algorithm(spec.name, algorithm).check_params(params)  # reject a bad key or value before running
    with _run_progress(f"{spec.name}/{algorithm}, slots"):
        result = api.run(algorithm, inst, seed=seed, **params)
    _emit(result, output)
    if as_json and output is not None:
        sys.stdout.write(result.to_json())


def solve(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    method: Annotated[str, typer.Option(help=METHOD_HELP)] = "milp",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds for the whole call, model building "
                                                                   "included.")] = 60.0,
    output: OutFile = None,
    max_model_size: Annotated[int | None, typer.Option(
        "--max-model-size", help="Budget on the model's estimated nonzeros (default 2,000,000, about 3 GB); "
        "larger models are refused before they are built (with reduced-cost fixing on: the model the fixing "
        "leaves).")] = None,
    max_input_bytes: MaxInputBytes = None,
    warm_start: Annotated[str | None, typer.Option(
        "--warm-start", help="ALG or best: run registered algorithm(s) first; the incumbent is never worse.")] = None,
    lns: Annotated[bool, typer.Option(
        "--lns", help="Improve the warm start (default best) by large-neighbourhood search with --method until "
        "the time limit.")] = False,
    fix: Annotated[bool | None, typer.Option(
        "--fix/--no-fix", help="Reduced-cost fixing before the exact search: with an incumbent and a certified "
        "bound, every variable that cannot beat the incumbent is removed, and the bound meeting the incumbent "
        "is the proof. Default: the model's own (on for edgecloud milp/cpsat, hetero milp and, from 16 jobs or "
        "above the size budget, "
        "preemptive milp/cpsat, whose windows per job come from the incumbent; okita milp's completion windows, from "
        "a hint or, above the size budget, the best fast algorithm; off for tapfinger milp); "
        "models without it refuse the option.")] = None,
    work_limit: WorkLimit = None,
    plugin: Plugins = None,
) -> None:
    """Solve INSTANCE exactly (optimal, or incumbent + bound at the time limit)."""
    check_output_path(output)
    inst = api.load(instance)
    spec = api.family_of(inst)
    with _progress_status(f"solving {spec.name} with {method} (limit {time_limit:g} s)"):
        result = api.solve(inst, method=method, time_limit=time_limit, max_model_size=max_model_size,
                           warm_start=warm_start, lns=lns, work_limit=work_limit,
                           **({} if fix is None else {"fix": fix}))
    _emit(result, output)


def validate(
    instance: Annotated[Path, typer.Argument(help="Instance JSON file.")],
    result: Annotated[Path, typer.Argument(help="Result JSON file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of text.")] = False,
    certify: Annotated[bool, typer.Option("--certify", help="Also re-prove the optimality and bound claims: "
                                          "re-solve small instances exactly, use a lower bound for larger ones. "
                                          "Exit 1 if a claim is false; 'not certified' (exit 0) when undecided.")] = False,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds for --certify.")] = 60.0,
    max_input_bytes: MaxInputBytes = None,
) -> None:
    """Check RESULT against INSTANCE: exit 0 if valid, 1 with the violations listed (or a claim --certify refutes)."""
    from edgeopt.solving import certify as certification

    inst = api.load(instance)
    spec = api.family_of(inst)
    res = Result.load(str(result))
    if certify and not (0 < time_limit <= api.MAX_TIME_LIMIT):
        raise InputError("time_limit", f"must be a number of seconds in (0, {api.MAX_TIME_LIMIT:g}], got {time_limit}")
    _same_family(spec.name, res, result)
    violations = api.validate(inst, res)  # a bound result's certificate is recomputed too (no solver)
    claims = certification.claims(spec, res)
    cert = certification.certify(inst, res, time_limit=time_limit) if certify and not violations else None
    failed = bool(violations) or (cert is not None and cert.verdict == certification.FALSE)
    if as_json:
        report = {"valid": not violations, "family": res.family, "algorithm": res.algorithm,
                  "status": res.status.value, "objective": res.objective,
                  "violations": [{"equation": v.equation, "message": v.message, "job": v.job}
                                 for v in violations],
                  "checked": [c.claim for c in claims if c.checked],
                  "not_checked": [c.claim for c in claims if not c.checked]}
        if certify:
            report["certify"] = cert.to_dict() if cert is not None else {  # an invalid result claims falsely
                "verdict": certification.FALSE, "claims": [], "evidence": ["the result is invalid: see violations"]}
        _print_json(report)
        if failed:
            raise typer.Exit(1)
        return
    if violations:
        out.print(f"invalid: {len(violations)} violation(s)")
        for v in violations:
            out.print(f"  {v}")
    else:
        out.print(f"valid: {res.family}/{res.algorithm}, objective {_fmt(res.objective)}")
    out.print("checked: " + "; ".join(c.claim for c in claims if c.checked))
    unchecked = [c.claim for c in claims if not c.checked]
    out.print("not checked: " + ("; ".join(unchecked) if unchecked else "none"))
    if certify and cert is None:
        out.print("certify: false (the result is invalid)")
    if cert is not None:
        out.print(f"certify: {cert.verdict}")
        for c in cert.claims:
            out.print(f"  {c.verdict}: {c.claim} ({c.evidence})")
    if failed:
        raise typer.Exit(1)


def _emit(result: Result, output: Path | None) -> None:
    if output is not None:
        result.save(str(output))
        err.print(
            f"{result.family}/{result.algorithm}: {result.status.value}, objective {_fmt(result.objective)}, "
            f"bound {_fmt(result.bound)}, {result.runtime_s:.3f} s -> {output}"
        )
    else:
        sys.stdout.write(result.to_json())
