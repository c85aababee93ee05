"""What ``edgeopt algorithms`` lists, at start-up speed.

The registry (`edgeopt.core.registry`) is the one source of truth: each family registers its
algorithms, with their declared parameters, when it is imported. Importing the five families costs
about 0.4 s of CPU (numpy, pydantic models, PettingZoo), more than the whole command may take, so
`edgeopt._catalog_data` keeps a copy of the listing, *generated* from the registry by

    python -m edgeopt.catalog --write

and `rows` reads that copy only when it must equal the registry:

- nothing of edgeopt's registry is loaded in this process yet (so no algorithm was registered at
  run time, by a notebook or a test: otherwise the registry itself is read, it is loaded anyway);
- no plug-in package declares algorithms (entry point group ``edgeopt.algorithms``);
- every optional requirement of a listed algorithm is there (tapfinger's learned ``online`` and
  ``vanilla_marl`` need the ``rl`` extra and their shipped checkpoints);
- the family asked for is one the copy knows (an unknown name goes to the registry's own error,
  with its "did you mean");
- the sources it was generated from (the families' modules, the list of families, the registry, the
  exact models' names) are unchanged, by their SHA-256 (so an edited checkout never lists stale algorithms).

Otherwise `rows` imports the families and reads the registry. ``python -m edgeopt.catalog --check``
(run by tests/test_cli_catalog.py) fails when the copy differs from what the registry reports, so
the two cannot drift apart. This module imports nothing but the standard library until it has to.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).with_name("_catalog_data.py")
PACKAGE = Path(__file__).parent


def exact_summary(method: str) -> str:
    """The summary line of an exact model's row."""
    return f"exact model, `edgeopt solve --method {method}`"


def registry_rows(families: Sequence[str]) -> list[dict[str, Any]]:
    """The listing of ``families`` as the registry reports it (imports the families): every registered
    algorithm, then every exact model, as plain JSON values (tuples as lists)."""
    from edgeopt.core.jsonio import dumps
    from edgeopt.services import lookup as api  # the names of edgeopt.api, from the layer below it

    rows: list[dict[str, Any]] = [
        {"family": name, "algorithm": algo.name, "kind": algo.kind, "relaxed": algo.relaxed,
         "randomized": algo.randomized, "summary": algo.summary, "params": [p.describe() for p in algo.params]}
        for name in families for algo in api.algorithms(name).values()
    ]
    rows += [{"family": name, "algorithm": m, "kind": "exact", "relaxed": False, "randomized": False,
              "summary": exact_summary(m), "params": []}
             for name in families for m in api.exact_method_names(name)]
    return json.loads(dumps(rows))  # the same values the generated copy holds after its JSON round trip


def rows(family: str | None = None) -> list[dict[str, Any]]:
    """The rows of ``edgeopt algorithms [FAMILY]``: from the generated copy when it equals the registry
    (see the module's docstring), from the registry otherwise."""
    cached = cached_rows(family)
    if cached is not None:
        return cached
    from edgeopt.services import lookup as api  # the names of edgeopt.api, from the layer below it

    names = [s.name for s in api.families()] if family is None else [api.family(family).name]
    return registry_rows(names)


def cached_rows(family: str | None = None) -> list[dict[str, Any]] | None:
    """The generated copy's rows of ``family`` (all families for None), or None when it cannot be used."""
    if "edgeopt.core.registry" in sys.modules:
        return None
    from edgeopt import _catalog_data as data

    if family is not None and family not in data.FAMILIES:
        return None
    if data.SOURCES_SHA256 != sources_sha256(data.FAMILIES):  # a family was edited since the copy was made
        return None
    if not all(_satisfied(guard) for guard in data.GUARDS):
        return None
    from edgeopt.plugins import discovered

    if discovered():
        return None
    return [dict(r) for r in data.ROWS if family is None or r["family"] == family]


def _satisfied(guard: dict[str, Any]) -> bool:
    """Whether the modules and files (relative to the package) an optional algorithm needs are there."""
    import importlib.util

    try:
        if any(importlib.util.find_spec(m) is None for m in guard["modules"]):
            return False
    except (ImportError, ValueError):  # blocked or half-installed: missing, as the registry sees it
        return False
    return all((PACKAGE / f).exists() for f in guard["files"])


def sources_sha256(families: Sequence[str]) -> str:
    """SHA-256 of the sources that decide the listing: the families' modules, the list of families, the
    registry and the exact models' names (about 2 ms): an edit to any of them sets the copy aside until it
    is regenerated."""
    import hashlib

    files = [f for name in families for f in sorted((PACKAGE / name).rglob("*.py"))]
    files += [PACKAGE / "families.py", PACKAGE / "core" / "registry.py",
              PACKAGE.parent / "formulations" / "__init__.py"]
    digest = hashlib.sha256()
    for f in files:
        digest.update(f"{f.relative_to(PACKAGE.parent).as_posix()}\0".encode())
        digest.update(f.read_bytes() if f.exists() else b"")
    return digest.hexdigest()


def dumps(rows: list[dict[str, Any]]) -> str:
    """The JSON text of ``edgeopt algorithms --json`` (that of `edgeopt.core.jsonio.dumps`)."""
    return json.dumps(rows, sort_keys=True, indent=2, allow_nan=False) + "\n"


def _guards() -> list[dict[str, Any]]:
    """The optional requirements of registered algorithms, read from where the registration checks them."""
    from edgeopt.tapfinger.policy import registry as policy

    modules, files = policy.requirements()
    return [{"family": "tapfinger", "algorithms": sorted(policy.SHIPPED), "modules": list(modules),
             "files": sorted(str(f.relative_to(PACKAGE)) for f in files)}]


def generate() -> str:
    """The text of `edgeopt._catalog_data`, from the registry (every family imported, no plug-in)."""
    import pprint

    from edgeopt.families import FAMILY_NAMES
    from edgeopt.services import lookup as api  # the names of edgeopt.api, from the layer below it

    missing = {name: api.unavailable_algorithms(name) for name in FAMILY_NAMES if api.unavailable_algorithms(name)}
    if missing:
        raise SystemExit(f"cannot generate the catalog: algorithms not registered here: {missing}")
    all_rows = registry_rows(FAMILY_NAMES)
    foreign = [r for r in all_rows if r["kind"] != "exact"
               and not api.is_builtin(api.algorithms(r["family"])[r["algorithm"]])]
    if foreign:
        raise SystemExit(f"cannot generate the catalog: plug-in algorithms registered: {foreign}")
    return (
        '"""Generated by `python -m edgeopt.catalog --write` from the algorithm registry: do not edit.\n\n'
        "tests/test_cli_catalog.py fails when it differs from what the registry reports.\n"
        '"""\n\n'
        f"FAMILIES = {tuple(FAMILY_NAMES)!r}\n\n"
        f"SOURCES_SHA256 = {sources_sha256(FAMILY_NAMES)!r}\n\n"
        f"GUARDS = {pprint.pformat(_guards(), width=108)}\n\n"
        f"ROWS = {pprint.pformat(all_rows, width=108)}\n"
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m edgeopt.catalog", description=__doc__.splitlines()[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help=f"regenerate {DATA_FILE.name}")
    group.add_argument("--check", action="store_true", help=f"exit 1 when {DATA_FILE.name} is out of date")
    args = ap.parse_args(argv)
    text = generate()
    if args.write:
        DATA_FILE.write_text(text)
        print(f"wrote {DATA_FILE}")
        return 0
    if DATA_FILE.read_text() != text:
        print(f"{DATA_FILE} is out of date with the algorithm registry: run `python -m edgeopt.catalog --write`")
        return 1
    print(f"{DATA_FILE.name} matches the registry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
