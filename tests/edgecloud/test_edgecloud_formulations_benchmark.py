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
    mod.main(["--seeds", "0", "--jobs", "4", "--servers", "1", "--algorithms", "online,fifo",
              "--out", str(tmp_path)])
    assert (tmp_path / "edgecloud_fig14.png").stat().st_size > 0
    for regime in ("compact", "spread"):  # both regimes, same sweep
        rows = read_json(tmp_path / f"edgecloud_ratio_{regime}.json")["rows"]
        assert len(rows) == 2
        for r in rows:
            assert r["certified_by"] == ["cpsat", "milp"]
            assert r["online"]["ratio"] >= 1.0
            assert abs(r["online"]["objective"] - r["online"]["ratio"] * r["optimum"]) < 1e-9
            # wait + run + nothing else: JCT = (start - a) + (end - start)
            assert r["online"]["wait"] + r["online"]["run"] == r["online"]["objective"]
            assert r["optimum_wait"] + r["optimum_run"] == r["optimum"]
