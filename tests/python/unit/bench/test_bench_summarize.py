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


@pytest.mark.parametrize("kind", ["f32", "u8", "bool", "transposed"])
def test_measure_returns_medians_of_real_work(bench, kind):
    rng = torch.get_rng_state()
    result = bench.measure(kind, 10**4, repeats=3, threads=True)
    assert torch.equal(torch.get_rng_state(), rng)  # the bench draws from its own generator
    assert result["kind"] == kind and result["numel"] == 10**4 and result["repeats"] == 3
    has_lovely = bench.lovely_str() is not None
    for key in ("aminmax", "summarize", "cached", "one", "all") + (("lovely",) if has_lovely else ()):
        assert len(result["samples"][key]) == 3
        assert isinstance(result[key], float) and math.isfinite(result[key]) and result[key] > 0
    if not has_lovely:
        assert result["lovely"] is None and result["lovely_line"] is None
    # every cold call missed the cache (real work), every second call hit it
    assert result["cold_misses"] == 3 and result["cached_hits"] == 3
    assert result["summary"].startswith("tensor[") and "stats…" not in result["summary"]


def test_kinds_are_what_they_say(bench):
    assert bench.make("u8", 100).dtype == torch.uint8 and bench.make("bool", 100).dtype == torch.bool
    transposed = bench.make("transposed", 10_000)
    assert transposed.shape == (100, 100) and not transposed.is_contiguous()
    assert bench.make("bf16", 100).dtype == torch.bfloat16 and bench.make("i64", 100).dtype == torch.int64


def test_report_has_a_row_per_kind_and_a_verdict_per_target(bench):
    results = [bench.measure(kind, 10**4, repeats=1, warmup=False) for kind in ("f32", "u8")]
    lines = bench.report(results)
    assert lines[0].split()[:2] == ["kind", "elements"] and [line.split()[0] for line in lines[1:3]] == ["f32", "u8"]
    verdicts = [line.split()[0] for line in lines[4:]]
    assert len(verdicts) == 2 * 2 + 1 and all(v in ("PASS", "MISS", "n/a") for v in verdicts), lines
    assert "3×" in lines[4] and "4×" in lines[6]  # f32's target is 3×, every other kind's 4×


def test_main_exits_zero(bench, capsys):
    assert bench.main(["--size", "1e4", "--kinds", "f32,bool", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "sum/amm" in out and "load average" in out


def test_unknown_kind_is_a_clear_error(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--kinds", "f33"])
    assert "unknown kind" in capsys.readouterr().err
