"""Smoke test of the Fig. 14 benchmark script (one tiny point): it runs, certifies, writes JSON + figure."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from edgeopt.core.jsonio import read_json

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "edgecloud_ratio.py"


def test_ratio_benchmark_runs(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("edgecloud_ratio", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out_json, out_png = tmp_path / "r.json", tmp_path / "f.png"
    mod.main(["--seeds", "2", "--jobs", "4", "--servers", "1", "--json", str(out_json), "--out", str(out_png)])
    data = read_json(out_json)
    assert out_png.stat().st_size > 0
    rows = data["rows"]
    assert len(rows) == 4
    for r in rows:
        assert r["certified_by"] == ["cpsat", "milp"]
        assert r["online"]["ratio"] >= 1.0
        assert abs(r["online"]["objective"] - r["online"]["ratio"] * r["optimum"]) < 1e-9
