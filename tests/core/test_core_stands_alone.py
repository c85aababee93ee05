"""The core imports nothing above it: no module of edgeopt/core imports another edgeopt package.

Scans every import statement (top level and inside functions) of edgeopt/core/*.py with `ast`,
so a lazy import inside a method is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "edgeopt" / "core"


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against edgeopt.core
                base = "edgeopt.core" if node.level == 1 else "edgeopt"
                out.append((node.lineno, f"{base}.{node.module}" if node.module else base))
            elif node.module:
                out.append((node.lineno, node.module))
    return out


def test_core_imports_no_edgeopt_module_above_it():
    files = sorted(CORE.glob("*.py"))
    assert len(files) >= 10
    bad = [f"{p.name}:{line} imports {mod}" for p in files for line, mod in _imported_modules(p)
           if (mod == "edgeopt" or mod.startswith("edgeopt.")) and not (
               mod == "edgeopt.core" or mod.startswith("edgeopt.core."))]
    assert not bad, bad


def test_the_scan_sees_a_lazy_import_inside_a_function(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def g():\n    from edgeopt.families import get_family\n    import edgeopt.frames\n")
    assert [m for _, m in _imported_modules(f)] == ["edgeopt.families", "edgeopt.frames"]


def test_result_to_frame_works_without_the_layers_above_the_core():
    import subprocess
    import sys

    code = ("import sys; from edgeopt.hetero import FAMILY, generate; from edgeopt.hetero.online import *; "
            "from edgeopt.core import registered; inst = generate('small', seed=0); "
            "res = registered('hetero')['online'](inst); f = res.to_frame(inst); "
            "assert len(f) == len(inst.jobs), len(f); "
            "assert 'edgeopt.families' not in sys.modules and 'edgeopt.frames' not in sys.modules, "
            "[m for m in sys.modules if m.startswith('edgeopt.f')]")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
