"""The collection benchmark runs end to end on a few steps (no timing asserted)."""

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[4] / "bench" / "bench_collect.py"


def test_measure_times_both_paths_and_leaves_nothing_installed():
    spec = importlib.util.spec_from_file_location("bench_collect", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    off, on, ratio, low = bench.measure(batch=4, repeats=3, steps=2)
    assert all(math.isfinite(v) and v > 0 for v in (off, on, ratio, low))
    assert bench.collect_install.current() is None
    assert bench.snapshot_cost(4) > 0 and bench.collect_install.current() is None


def test_the_script_prints_a_verdict():
    out = subprocess.run(
        [sys.executable, str(BENCH), "--repeats", "3", "--steps", "2"], capture_output=True, text=True, timeout=900
    )  # a ceiling: the bench imports torch and times 41 pairs on a possibly busy box
    assert out.returncode == 0, out.stderr
    assert "batch  32:" in out.stdout and "ratio on/off" in out.stdout
    assert out.stdout.strip().splitlines()[-1].split(": ")[-1] in ("PASS", "MISS")
