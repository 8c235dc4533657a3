"""The benchmark script runs end to end on tiny sizes and writes its table, JSON and plot
(no timing assertion: this only checks that it works)."""

from __future__ import annotations

import json

import pytest

from benchmarks.run import main


@pytest.mark.slow
def test_benchmark_runs_end_to_end(tmp_path, capsys):
    """`bali bench --quick` measures every section and writes bench.json (and bench.png)."""
    results = main(["--quick", "--no-startup", "--seconds", "0.05", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "bench.json").read_text())
    assert data["aec"]["bali_v0"]["steps_per_s"] > 0
    assert set(data["vector"]) == {"1", "8", "64"}
    assert all(r["steps_per_s"] > 0 for r in data["rollout"].values())
    assert data["memory"]["state_bytes_per_game"] <= 1024
    assert data["machine"]["cores"] >= 1
    out = capsys.readouterr().out
    assert "BaliVectorEnv N=64" in out and "rollout kernel" in out
    assert results["aec"].keys() == data["aec"].keys()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "bench.png").stat().st_size > 0
