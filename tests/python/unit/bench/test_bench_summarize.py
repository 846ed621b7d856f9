"""The summarize benchmark runs and measures what it says, at 1e4 elements (no timing asserted)."""

import importlib.util
import math
from pathlib import Path

import pytest
import torch

BENCH = Path(__file__).resolve().parents[4] / "bench" / "bench_summarize.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_summarize", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_measure_returns_medians_of_real_work(bench):
    rng = torch.get_rng_state()
    result = bench.measure(10**4, repeats=3)
    assert torch.equal(torch.get_rng_state(), rng)  # the bench draws from its own generator
    assert result["numel"] == 10**4 and result["repeats"] == 3
    has_lovely = bench.lovely_str() is not None
    for key in ("aminmax", "summarize", "cached") + (("lovely",) if has_lovely else ()):
        assert len(result["samples"][key]) == 3
        assert isinstance(result[key], float) and math.isfinite(result[key]) and result[key] > 0
    if not has_lovely:
        assert result["lovely"] is None and result["lovely_line"] is None
    else:
        assert result["lovely_line"].startswith("tensor[10000]")
    # every cold call missed the cache (real work), every second call hit it
    assert result["cold_misses"] == 3 and result["cached_hits"] == 3
    assert result["summary"].startswith("tensor[10000] f32 cpu") and "≈" not in result["summary"]


def test_report_has_a_row_per_size_and_a_verdict_per_target(bench):
    lines = bench.report([bench.measure(10**4, repeats=1, warmup=False)])
    assert lines[0].split()[:2] == ["elements", "reps"] and lines[1].split()[0] == "1e+04"
    verdicts = [line.split()[0] for line in lines[3:]]
    assert verdicts[0] == "1e8" and all(v in ("PASS", "MISS", "n/a") for v in verdicts[1:]), lines


def test_main_exits_zero(bench, capsys):
    assert bench.main(["--sizes", "1e4", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "sum/aminmax" in out and "load average" in out
