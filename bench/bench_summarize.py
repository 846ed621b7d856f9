"""How fast is ``summarize(x)`` on a big CPU tensor, next to reading it once and next to lovely-tensors?

For float32 tensors of 1e4, 1e6, 1e7 and 1e8 elements on the CPU, every number is a ratio to
baselines measured in the same run, on the same tensor:

- one ``torch.aminmax`` pass: what reading the data once at memory speed costs on this machine;
- lovely-tensors' ``str(lovely(x))`` (0.1.22, its default configuration, histogram included):
  the library people use today for the same one-line summary.

``summarize`` is timed cold: the runtime's value-statistics cache (``runtime.cache.VALUE_STATS``)
is cleared before every timed call, and its counters prove each cold call missed (real work) and
each cached call hit. The cached second call is reported on its own.

Repetitions are interleaved (aminmax, summarize cold, summarize cached, lovely, then again) and the
medians are compared, because this bench runs on small shared machines. Targets (issue 3):

- at 1e8 elements, ``summarize`` costs at most 4 times one ``aminmax`` pass;
- at 1e8 elements, ``summarize`` is at least 20 times faster than lovely-tensors;
- at every size, ``summarize`` is not slower than lovely-tensors.

Targets are reported PASS/MISS, never asserted: the exit status is 0 unless the bench crashes.
Absolute times are printed for information only.

    .venv/bin/python bench/bench_summarize.py [--sizes 1e4,1e6,1e7,1e8] [--repeats N]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "pybackend"))

import torch  # noqa: E402

from torchdoctor.runtime.stats.cache import VALUE_STATS  # noqa: E402
from torchdoctor.runtime.summary.api import summarize  # noqa: E402

SIZES = (10**4, 10**6, 10**7, 10**8)
# Interleaved repetitions per size: fewer where one lovely-tensors call takes seconds.
REPEATS = {10**4: 41, 10**6: 21, 10**7: 9, 10**8: 5}

MAX_AMINMAX_RATIO = 4.0  # at 1e8: summarize / aminmax
MIN_LOVELY_RATIO_BIG = 20.0  # at 1e8: lovely / summarize
MIN_LOVELY_RATIO_ANY = 1.0  # at every size: lovely / summarize
BIG = 10**8


def lovely_str():
    """``str(lovely(x))``, or None when lovely-tensors is not installed (``pybackend[bench]``)."""
    try:
        from lovely_tensors import lovely
    except ImportError:
        return None
    return lambda x: str(lovely(x))


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def measure(numel: int, repeats: int, seed: int = 0, warmup: bool = True) -> Dict[str, object]:
    """Median seconds of aminmax, cold and cached summarize, and lovely on one f32 tensor.

    Returns ``{"numel", "repeats", "aminmax", "summarize", "cached", "lovely", "samples",
    "summary", "lovely_line", "cold_misses", "cached_hits"}``; ``lovely`` and ``lovely_line`` are
    None without lovely-tensors. ``samples`` holds every timing, per key, in run order.
    """
    generator = torch.Generator().manual_seed(seed)  # never the global RNG
    x = torch.randn(numel, generator=generator, dtype=torch.float32)
    lovely = lovely_str()
    samples: Dict[str, List[float]] = {"aminmax": [], "summarize": [], "cached": [], "lovely": []}
    cold_misses = cached_hits = 0
    summary = lovely_line = None
    try:
        if warmup:  # first-call costs (lazy imports, allocator) are not what we compare
            torch.aminmax(x)
            VALUE_STATS.clear()
            summarize(x)
            if lovely is not None:
                lovely(x)
        for _ in range(repeats):
            samples["aminmax"].append(_timed(torch.aminmax, x))

            VALUE_STATS.clear()
            misses, hits = VALUE_STATS.misses, VALUE_STATS.hits
            start = time.perf_counter()
            summary = summarize(x)
            samples["summarize"].append(time.perf_counter() - start)
            cold_misses += int(VALUE_STATS.misses - misses == 1 and VALUE_STATS.hits == hits)

            hits = VALUE_STATS.hits
            start = time.perf_counter()
            cached = summarize(x)
            samples["cached"].append(time.perf_counter() - start)
            cached_hits += int(VALUE_STATS.hits - hits == 1 and cached == summary)

            if lovely is not None:
                start = time.perf_counter()
                lovely_line = lovely(x)
                samples["lovely"].append(time.perf_counter() - start)
    finally:
        del x
        VALUE_STATS.clear()
        gc.collect()
    result: Dict[str, object] = {
        "numel": numel,
        "repeats": repeats,
        "summary": summary,
        "lovely_line": lovely_line,
        "cold_misses": cold_misses,
        "cached_hits": cached_hits,
        "samples": samples,
    }
    for key, values in samples.items():
        result[key] = statistics.median(values) if values else None
    return result


def _ratio(num: Optional[float], den: Optional[float]) -> Optional[float]:
    if num is None or den is None or den <= 0:
        return None
    return num / den


def _best_ratio(result: Dict[str, object], num: str, den: str) -> Optional[float]:
    """The ratio of the fastest repetitions: information only (what the code costs when the
    scheduler does not interfere); targets are judged on medians."""
    samples = result["samples"]
    if not samples[num] or not samples[den]:
        return None
    return _ratio(min(samples[num]), min(samples[den]))


def _seconds(value: Optional[float]) -> str:
    if value is None:
        return "-"
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.2f} ms"
    return f"{value:.2f} s"


def _times(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}×"


def _verdict(ok: Optional[bool]) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def report(results: List[Dict[str, object]]) -> List[str]:
    """The table of ratios and the PASS/MISS lines."""
    lines = [
        f"{'elements':>9} {'reps':>4} {'aminmax':>10} {'summarize':>10} {'cached':>9} {'lovely':>10}"
        f" {'sum/aminmax':>12} {'lovely/sum':>11} {'best s/a':>9} {'best l/s':>9} {'cold=miss':>9} {'2nd=hit':>8}"
    ]
    for r in results:
        lines.append(
            f"{r['numel']:>9.0e} {r['repeats']:>4} {_seconds(r['aminmax']):>10} {_seconds(r['summarize']):>10}"
            f" {_seconds(r['cached']):>9} {_seconds(r['lovely']):>10}"
            f" {_times(_ratio(r['summarize'], r['aminmax'])):>12} {_times(_ratio(r['lovely'], r['summarize'])):>11}"
            f" {_times(_best_ratio(r, 'summarize', 'aminmax')):>9} {_times(_best_ratio(r, 'lovely', 'summarize')):>9}"
            f" {r['cold_misses']:>4}/{r['repeats']:<4} {r['cached_hits']:>3}/{r['repeats']:<4}"
        )
    lines.append("")
    big = next((r for r in results if r["numel"] == BIG), None)
    if big is None:
        lines.append("1e8 targets: n/a (1e8 not measured in this run)")
    else:
        to_aminmax = _ratio(big["summarize"], big["aminmax"])
        to_lovely = _ratio(big["lovely"], big["summarize"])
        lines.append(
            f"{_verdict(None if to_aminmax is None else to_aminmax <= MAX_AMINMAX_RATIO)}"
            f"  1e8: summarize <= {MAX_AMINMAX_RATIO:g}× one aminmax pass ({_times(to_aminmax)})"
        )
        lines.append(
            f"{_verdict(None if to_lovely is None else to_lovely >= MIN_LOVELY_RATIO_BIG)}"
            f"  1e8: summarize >= {MIN_LOVELY_RATIO_BIG:g}× faster than lovely-tensors ({_times(to_lovely)})"
        )
    ratios = [(r["numel"], _ratio(r["lovely"], r["summarize"])) for r in results]
    known = [value for _, value in ratios if value is not None]
    worst = min(known) if known else None
    lines.append(
        f"{_verdict(None if worst is None else worst >= MIN_LOVELY_RATIO_ANY)}"
        f"  every size: summarize not slower than lovely-tensors (worst {_times(worst)})"
    )
    honest = all(r["cold_misses"] == r["repeats"] and r["cached_hits"] == r["repeats"] for r in results)
    lines.append(f"{_verdict(honest)}  every cold call missed the cache, every second call hit it")
    return lines


def _sizes(text: str) -> List[int]:
    return [int(float(part)) for part in text.split(",") if part.strip()]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=_sizes, default=list(SIZES), help="comma-separated element counts")
    parser.add_argument("--repeats", type=int, default=None, help="repetitions at every size (default: per size)")
    args = parser.parse_args(argv)

    lovely = lovely_str()
    try:
        import lovely_tensors

        lovely_version = getattr(lovely_tensors, "__version__", "?")
    except ImportError:
        lovely_version = "not installed (pip install 'pybackend[bench]'): lovely columns show '-'"
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs;"
        f" lovely-tensors {lovely_version}"
    )
    print(f"load average before: {_loadavg()}")
    started = time.perf_counter()
    results = []
    for numel in args.sizes:
        repeats = args.repeats or REPEATS.get(numel, 5)
        result = measure(numel, repeats)
        results.append(result)
        print(f"  {numel:.0e}: {result['summary']}")
        if lovely is not None:
            print(f"  {' ' * len(f'{numel:.0e}')}  lovely: {result['lovely_line']}")
    print()
    print("\n".join(report(results)))
    print()
    print(f"load average after: {_loadavg()}; bench took {time.perf_counter() - started:.1f} s")
    print(
        "(ratios of medians of interleaved repetitions decide PASS/MISS; 'best' columns compare the fastest"
        " repetitions and absolute times are information only. On a busy machine (load average above"
        f" the {os.cpu_count()} CPUs) every parallel region of torch may wait for a descheduled thread,"
        " which costs summarize, a few hundred small regions, more than one aminmax pass.)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
