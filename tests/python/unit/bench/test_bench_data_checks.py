"""The data-check benchmark runs end to end on a small dataset (no timing asserted)."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[4] / "bench" / "bench_data_checks.py"


def test_the_script_prints_every_ratio_with_a_verdict_and_the_load():
    out = subprocess.run(
        [sys.executable, str(BENCH), "--samples", "200", "--repeats", "1", "--size", "16"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("load average before:") and lines[1].startswith("load average after:")
    ratios = [ln for ln in lines if " = " in ln and "x  " in ln]
    # Dataset and DataLoader, each with and without the image gallery: wall-clock medians, then
    # CPU-time medians (85fdf67 added the second table).
    names = [ln.strip().split("  ")[0] for ln in ratios]
    assert names == ["check", "loader check", "check, no gallery", "loader, no gallery"] * 2, out.stdout
    assert "CPU time" in out.stdout, out.stdout
    assert all(ln.split()[-4] in ("PASS", "MISS") for ln in ratios), out.stdout
