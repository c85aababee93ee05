"""Fill the generated parts of docs/families/<family>.md from the code: formats and algorithms.

Run from the repository root: ``.venv/bin/python docs/make_docs.py [--check]``. Each page marks
generated blocks with ``<!-- generated:KIND -->`` ... ``<!-- /generated -->`` where KIND is
``instance`` (fields of the instance schema), ``schedule`` (fields of the schedule schema) or
``algorithms`` (registered algorithms with their parameters and exact models). The rest of a page
is written by hand. ``--check`` exits 1 when a page is out of date (nothing is written).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from edgeopt import api

PAGES = Path(__file__).resolve().parent / "families"
BLOCK = re.compile(r"(<!-- generated:(\w+) -->\n)(.*?)(<!-- /generated -->)", re.DOTALL)


def _type(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in prop:
        return " or ".join(_type(p) for p in prop["anyOf"])
    if "enum" in prop:
        return " / ".join(repr(v) for v in prop["enum"])
    if "const" in prop:
        return repr(prop["const"])
    t = prop.get("type", "any")
    if t == "array":
        return f"list[{_type(prop.get('items', {}))}]"
    if t == "object" and "additionalProperties" in prop:
        return f"dict[str, {_type(prop['additionalProperties'])}]"
    return {"integer": "int", "number": "float", "string": "str", "boolean": "bool", "null": "null"}.get(t, t)


def _bounds(prop: dict[str, Any]) -> str:
    parts = []
    for key, sym in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("minItems", "items >=")):
        if key in prop:
            parts.append(f"{sym} {prop[key]}")
    if "minLength" in prop:
        parts.append(f"length >= {prop['minLength']}")
    return ", ".join(parts)


def _table(title: str, schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", []))
    lines = [f"**{title}**", "", "| field | type | required / default | constraints | meaning |",
             "|---|---|---|---|---|"]
    for name, prop in schema.get("properties", {}).items():
        if name in required:
            default = "required"
        else:  # a default_factory leaves no default in the schema
            default = f"default `{prop['default']!r}`" if "default" in prop else "optional (empty)"
        desc = (prop.get("description") or "").replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{name}` | {_type(prop).replace('|', '/')} | {default} | {_bounds(prop)} | {desc} |")
    return lines + [""]


def schema_tables(schema: dict[str, Any], root: str) -> str:
    """Markdown tables of a pydantic JSON schema: the root model, then every nested model."""
    out = _table(root, schema)
    for name, sub in schema.get("$defs", {}).items():
        doc = (sub.get("description") or "").split("\n")[0]
        out += _table(f"{name}" + (f": {doc}" if doc else ""), sub)
    return "\n".join(out)


def algorithms_table(family: str) -> str:
    lines = ["| algorithm | kind | summary | parameters (default: meaning) |", "|---|---|---|---|"]
    for algo in api.algorithms(family).values():
        kind = algo.kind + (" (relaxed)" if algo.relaxed else "") + (", randomized" if algo.randomized else "")
        params = "<br>".join(f"`{p.name}={p.default!r}`" + (f": {p.help}" if p.help else "") for p in algo.params)
        lines.append(f"| `{algo.name}` | {kind} | {algo.summary} | {params or '-'} |")
    for method in api.exact_methods(family):
        lines.append(f"| `{method}` | exact | exact model (`edgeopt solve --method {method}`) | `time_limit` |")
    return "\n".join(lines) + "\n"


def render(family: str, kind: str) -> str:
    spec = api.family(family)
    if kind == "instance":
        return schema_tables(spec.instance_type.model_json_schema(), "Instance") + "\n"
    if kind == "schedule":
        return schema_tables(spec.schedule_type.model_json_schema(), "Schedule") + "\n"
    if kind == "algorithms":
        return algorithms_table(family)
    raise ValueError(f"unknown generated block {kind!r}")


def update(page: Path) -> tuple[str, str]:
    family = page.stem
    text = page.read_text()
    new = BLOCK.sub(lambda m: m.group(1) + render(family, m.group(2)) + m.group(4), text)
    return text, new


if __name__ == "__main__":
    stale = []
    for page in sorted(PAGES.glob("*.md")):
        if page.stem not in {s.name for s in api.families()}:
            continue
        old, new = update(page)
        if old != new:
            stale.append(page.name)
            if "--check" not in sys.argv:
                page.write_text(new)
    print(("out of date: " if "--check" in sys.argv else "updated: ") + (", ".join(stale) or "none"))
    sys.exit(1 if stale and "--check" in sys.argv else 0)
