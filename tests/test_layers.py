"""The whole package is a one-way house: every import points down the layers, and no modules import each other.

Every import statement of every module of ``edgeopt/`` and ``formulations/`` is read with `ast`, the ones
inside functions included (a function-level import that only dodges a cycle is still a cycle). The layer map
is written once, here; docs/architecture.md draws it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Bottom to top. A module may import its own layer and the layers below it, never one above.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("edgeopt.core",)),
    ("families", ("edgeopt.edgecloud", "edgeopt.hetero", "edgeopt.preemptive", "edgeopt.okita", "edgeopt.tapfinger")),
    ("family index", ("edgeopt.families", "edgeopt.plugins")),
    ("formulations", ("formulations",)),
    ("services", ("edgeopt.services", "edgeopt.solving", "edgeopt.traces", "edgeopt.sweep", "edgeopt.viz",
                  "edgeopt.frames", "edgeopt.catalog", "edgeopt._catalog_data", "edgeopt.bench")),
    ("api", ("edgeopt.api",)),
    ("cli", ("edgeopt.cli", "edgeopt.commands")),
]
FAMILIES = LAYERS[1][1]


def modules(packages: Iterable[str] = ("edgeopt", "formulations")) -> dict[str, Path]:
    """Every module by dotted name (a package by its own name)."""
    out = {}
    for pkg in packages:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The known modules ``name`` imports anywhere in its file (``from P import m`` counts as module P.m
    when P.m is a module, as P otherwise)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, *([node.module] if node.module else [])])
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        found |= {t for t in map(resolve, targets) if t is not None and t != name}
    return found


def layer_of(name: str) -> int | None:
    hits = [k for k, (_, prefixes) in enumerate(LAYERS) for p in prefixes if name == p or name.startswith(p + ".")]
    return max(hits) if hits else None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def test_every_module_has_a_layer():
    unmapped = [m for m in modules() if m not in ("edgeopt",) and layer_of(m) is None]
    assert not unmapped, f"add these modules to LAYERS: {unmapped}"


def test_no_import_points_up_a_layer():
    bad = [f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
           for a, targets in graph().items() for b in targets
           if layer_of(a) is not None and layer_of(b) is not None and layer_of(b) > layer_of(a)]
    assert not bad, bad


def test_a_family_never_imports_another_family():
    def family(m: str) -> str | None:
        return next((f for f in FAMILIES if m == f or m.startswith(f + ".")), None)

    bad = [f"{a} imports {b}" for a, targets in graph().items() for b in targets
           if family(a) and family(b) and family(a) != family(b)]
    assert not bad, bad


def test_no_two_modules_import_each_other():
    assert cycles(graph()) == []


def test_the_scan_sees_function_level_imports_and_cycles(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("def f():\n    from pkg import b\n")
    (tmp_path / "pkg" / "b.py").write_text("from . import a\n")
    known = {"pkg": tmp_path / "pkg" / "__init__.py", "pkg.a": tmp_path / "pkg" / "a.py",
             "pkg.b": tmp_path / "pkg" / "b.py"}
    g = {name: imports_of(name, path, known) for name, path in known.items()}
    assert g == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}
    assert cycles(g) == [["pkg.a", "pkg.b"]]
    assert layer_of("edgeopt.api") == 5 and layer_of("edgeopt.core.result") == 0
