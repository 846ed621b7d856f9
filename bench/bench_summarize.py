"""How fast is ``summarize(x)`` on big CPU tensors of every kind, next to one ``aminmax`` pass and lovely-tensors?

For each kind (f32, bf16, f16, i64, u8, bool, a transposed f32 matrix) one tensor of ``--size``
elements (default 1e8; ``--size 1e7`` for a quick run) is built, and every number is a ratio to
baselines measured in the same run, on the same tensor:

- one ``torch.aminmax`` pass: what reading the data once costs on this machine (for bool,
  ``count_nonzero``, the natural single pass over bytes; for the transposed matrix, ``aminmax``
  of the same memory in storage order);
- lovely-tensors' ``str(lovely(x))`` (its default configuration), when it is installed.

``summarize`` is timed cold: the value cache is cleared before every timed call, and its counters
prove each cold call missed (real work) and each cached call hit. Repetitions are interleaved
(aminmax, summarize cold then cached, lovely), their order rotated each time, and medians
compared, because this bench runs on small shared machines. Targets (issue 15), reported
PASS/MISS, never asserted:

- f32: ``summarize`` <= 3× one aminmax pass; bf16, f16, i64, u8, bool, transposed: <= 4×;
- every kind: ``summarize`` not slower than lovely-tensors.

``--threads`` also times summarize with torch limited to 1 thread and with all of them, to show
which the load favours (the runtime picks by the load average: see ``runtime/stats/guard.py``).

``--cpu-time`` times CPU seconds of this thread with torch on one thread, for baseline and
summarize alike: on a shared machine loaded past its cores, wall time mostly measures who else
ran, while CPU time measures the work.

Measured (issue 15, 2-core shared EPYC, torch 2.13 CPU, lovely-tensors 0.1.22, ``--size 1e8
--repeats 3``), summarize / aminmax. Before the CPU float pass (``stats/float_pass.py``), load
1.6 -> 6.3: f32 4.14x, bf16 7.44x, f16 8.59x, i64 3.98x, u8 6.83x, bool 1.18x, transposed 5.02x.
After it (and 4096-value row norms), wall clock, load 8.2 -> 7.9: f32 2.57x, bf16 4.64x, f16
4.04x, i64 3.47x, u8 6.09x, bool 1.29x, transposed 2.89x; lovely-tensors / summarize 14.5x,
18.9x, 20.1x, 2.13x, 3.09x, 6.36x, 64.5x (never slower). ``--cpu-time`` (both on one thread),
load 7.6 -> 8.1: f32 2.64x, bf16 4.33x, f16 4.09x, i64 3.36x, u8 9.19x, bool 1.02x, transposed
2.76x. Met: f32, i64, bool, transposed, not-slower-than-lovely; missed: bf16, f16, u8 (4x).
Ratios at this load move by ~0.5x between runs.
uint8/int8 by int8 Gram matrices (``stats/byte_stats.py``, CPUs with VNNI/AMX; a 2-core Xeon
with AMX, load 7-8): ``--cpu-time`` u8 4.79x, i8 4.42x (i16 8.70x, still float64; bf16 7.19x
and f16 6.41x at this load, against 3.6x/3.5x idle); wall clock u8 4.71x, i8 4.56x, with the
runtime on 1 thread against a 2-thread aminmax (the load is other processes': each kind's line
prints the load, our own share and the threads the runtime picks, ``stats/guard.py``).
Then by int8 matrix-vector products (one ``[2, K] x [K, 1]`` ``_int_mm`` per run of ~252 KiB,
``stats/byte_stats.py``), on a 2-core Zen 4 EPYC with VNNI (1 MiB L2 a core), load 3-5, torch
on one thread, CPU time: u8 12.3x (Gram) -> 3.0-3.3x; int64 3.2-3.5x -> 2.95-3.2x with its
extremes read before its float64 copy (``stats/raw_pass.py``).

Row norms first (2026-12-07, the same EPYC, idle, ``--cpu-time``): f32 2.88-3.07x -> 2.48-2.60x;
bf16 3.7-4.0x, f16 3.7-4.0x, i64 3.2x, u8 3.2x, bool 1.05x, transposed 2.8x (docs/views.md).

A float block is read four times (row norms, extremes, sum, zeros), each op on a cached block costing about half to all of the aminmax that
brought it in (the CPU, not memory, is the limit here); half floats add their float32 copy. u8
was counted by ``bincount`` (~1 ns a byte) against an aminmax that reads 32 bytes an instruction.

    .venv/bin/python bench/bench_summarize.py [--size 1e8] [--kinds f32,u8] [--repeats N] [--threads] [--no-lovely]
        [--cpu-time]   (kinds: f32 bf16 f16 i64 u8 bool transposed, and on request i8 i16 i32)
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "pybackend"))

import torch  # noqa: E402

from torchdoctor.runtime.stats.cache import VALUE_STATS  # noqa: E402
from torchdoctor.runtime.stats.guard import OWN, idle_threads  # noqa: E402
from torchdoctor.runtime.summary.api import summarize  # noqa: E402

KINDS = ("f32", "bf16", "f16", "i64", "u8", "bool", "transposed", "i8", "i16", "i32")
DEFAULT_KINDS = KINDS[:7]  # the kinds; i8, i16, i32 on request (``--kinds``)
TARGET = {"f32": 3.0}  # summarize / aminmax at the size measured; every other kind: DEFAULT_TARGET
DEFAULT_TARGET = 4.0
# Integer kinds: dtype and the range of the values drawn.
INTS = {
    "i64": (torch.int64, 0, 50_000),
    "u8": (torch.uint8, 0, 256),
    "i8": (torch.int8, -128, 128),
    "i16": (torch.int16, -30_000, 30_000),
    "i32": (torch.int32, -(10**9), 10**9),
}
BIG = 10**8
# What the timings read: wall time, or with ``--cpu-time`` this thread's CPU time with torch on
# one thread (on a machine loaded beyond its cores, wall time mostly measures the scheduler).
CLOCK = time.perf_counter


def make(kind: str, numel: int, seed: int = 0) -> torch.Tensor:
    """One tensor of about ``numel`` elements of ``kind``, from a private generator."""
    g = torch.Generator().manual_seed(seed)  # never the global RNG
    if kind == "transposed":
        side = max(int(numel**0.5), 1)
        return torch.randn(side, side, generator=g).t()
    if kind in INTS:
        dtype, low, high = INTS[kind]
        return torch.randint(low, high, (numel,), generator=g, dtype=dtype)
    if kind == "bool":
        return torch.rand(numel, generator=g) > 0.3
    x = torch.randn(numel, generator=g).relu_()  # a ReLU output: the zeros count has work to do
    return x.to({"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[kind])


def baseline(x: torch.Tensor) -> Callable[[], object]:
    """One pass over the data at memory speed. For the transposed matrix: ``aminmax`` of the same
    memory read in order (``x.t()``), since ``aminmax`` of the view itself strides (was 25× slower)."""
    if x.dtype == torch.bool:
        return lambda: torch.count_nonzero(x)
    if x.dim() == 2 and not x.is_contiguous() and x.t().is_contiguous():
        same_memory = x.t()
        return lambda: torch.aminmax(same_memory)
    return lambda: torch.aminmax(x)


def lovely_str() -> Optional[Callable[[torch.Tensor], str]]:
    """``str(lovely(x))``, or None when lovely-tensors is not installed (``pybackend[bench]``)."""
    try:
        from lovely_tensors import lovely
    except ImportError:
        return None
    return lambda x: str(lovely(x))


def _timed(fn: Callable[[], object]) -> float:
    start = CLOCK()
    fn()
    return CLOCK() - start


def _cold(x: torch.Tensor, threads: Optional[int] = None) -> Callable[[], str]:
    def run() -> str:
        VALUE_STATS.clear()
        if threads is None:
            return summarize(x)
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            return summarize(x)
        finally:
            torch.set_num_threads(before)

    return run


def _cold_then_cached(x: torch.Tensor, samples: Dict[str, List[float]], counts: Dict[str, object]) -> None:
    """One cold summarize (the cache cleared: it must miss) and one cached (it must hit, same text)."""
    misses, hits = VALUE_STATS.misses, VALUE_STATS.hits
    start = CLOCK()
    summary = _cold(x)()
    samples["summarize"].append(CLOCK() - start)
    counts["cold_misses"] = int(counts["cold_misses"]) + int(
        VALUE_STATS.misses - misses == 1 and VALUE_STATS.hits == hits
    )
    hits = VALUE_STATS.hits
    start = CLOCK()
    again = summarize(x)
    samples["cached"].append(CLOCK() - start)
    counts["cached_hits"] = int(counts["cached_hits"]) + int(VALUE_STATS.hits - hits == 1 and again == summary)
    counts["summary"] = summary


def _units(
    x, base, lovely, threads: bool, samples: Dict[str, List[float]], counts: Dict[str, object]
) -> List[Callable[[], None]]:
    """The timed calls of one repetition, each appending to its samples."""

    def lovely_once() -> None:
        start = CLOCK()
        counts["lovely_line"] = lovely(x)
        samples["lovely"].append(CLOCK() - start)

    units = [lambda: samples["aminmax"].append(_timed(base)), lambda: _cold_then_cached(x, samples, counts)]
    if lovely is not None:
        units.append(lovely_once)
    if threads:
        units.append(lambda: samples["one"].append(_timed(_cold(x, 1))))
        units.append(lambda: samples["all"].append(_timed(_cold(x, os.cpu_count() or 1))))
    return units


def measure(
    kind: str, numel: int, repeats: int, warmup: bool = True, threads: bool = False, lovely_too: bool = True
) -> Dict[str, object]:
    """Median seconds of the baseline, cold and cached summarize, lovely (and 1/all threads)."""
    x = make(kind, numel)
    lovely = lovely_str() if lovely_too else None
    base = baseline(x)
    keys = ["aminmax", "summarize", "cached"] + (["lovely"] if lovely else []) + (["one", "all"] if threads else [])
    samples: Dict[str, List[float]] = {k: [] for k in keys}
    counts: Dict[str, object] = {"cold_misses": 0, "cached_hits": 0, "summary": None}
    summary = lovely_line = None
    units: List[Callable[[], None]] = []
    try:
        if warmup:  # first-call costs (lazy imports, allocator) are not what we compare
            base(), _cold(x)()
            if lovely is not None:
                lovely(x)
        units += _units(x, base, lovely, threads, samples, counts)
        for r in range(repeats):
            # order rotated each repetition: what ran just before a call changes it (a cold uint8
            # summary took 20.3 ms right after a 2-thread aminmax, 17.5 ms after nothing: likely
            # libgomp's worker spin-waiting on a core), so no call always follows the same one
            for unit in units[r % len(units) :] + units[: r % len(units)]:
                unit()
        summary, lovely_line = counts["summary"], counts.get("lovely_line")
        cold_misses, cached_hits = counts["cold_misses"], counts["cached_hits"]
    finally:
        units.clear()  # their closures hold the tensor
        del x
        VALUE_STATS.clear()
        gc.collect()
    result: Dict[str, object] = {
        "kind": kind,
        "numel": numel,
        "repeats": repeats,
        "summary": summary,
        "lovely_line": lovely_line,
        "cold_misses": cold_misses,
        "cached_hits": cached_hits,
        "samples": samples,
    }
    for key in ("aminmax", "summarize", "cached", "lovely", "one", "all"):
        values = samples.get(key)
        result[key] = statistics.median(values) if values else None
    return result


def _ratio(num: Optional[float], den: Optional[float]) -> Optional[float]:
    if num is None or den is None or den <= 0:
        return None
    return num / den


def _seconds(value: Optional[float]) -> str:
    if value is None:
        return "-"
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s"


def _times(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}×"


def _verdict(ok: Optional[bool]) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def loadavg() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except (AttributeError, OSError):
        return "n/a"


def report(results: List[Dict[str, object]]) -> List[str]:
    """The table of ratios, then one PASS/MISS line per kind and target."""
    lines = [
        f"{'kind':>10} {'elements':>9} {'reps':>4} {'aminmax':>9} {'summarize':>10} {'cached':>8} {'lovely':>9}"
        f" {'sum/amm':>8} {'lovely/sum':>10} {'1thr/amm':>9} {'allthr/amm':>10} {'cold=miss':>9} {'2nd=hit':>8}"
    ]
    for r in results:
        lines.append(
            f"{r['kind']:>10} {r['numel']:>9.0e} {r['repeats']:>4} {_seconds(r['aminmax']):>9}"
            f" {_seconds(r['summarize']):>10} {_seconds(r['cached']):>8} {_seconds(r['lovely']):>9}"
            f" {_times(_ratio(r['summarize'], r['aminmax'])):>8} {_times(_ratio(r['lovely'], r['summarize'])):>10}"
            f" {_times(_ratio(r['one'], r['aminmax'])):>9} {_times(_ratio(r['all'], r['aminmax'])):>10}"
            f" {r['cold_misses']:>4}/{r['repeats']:<4} {r['cached_hits']:>3}/{r['repeats']:<4}"
        )
    lines.append("")
    for r in results:
        target = TARGET.get(str(r["kind"]), DEFAULT_TARGET)
        ratio = _ratio(r["summarize"], r["aminmax"])
        lines.append(
            f"{_verdict(None if ratio is None else ratio <= target)}  {r['kind']}: summarize <= {target:g}× one"
            f" {'count_nonzero' if r['kind'] == 'bool' else 'aminmax'} pass ({_times(ratio)})"
        )
        speedup = _ratio(r["lovely"], r["summarize"])
        lines.append(
            f"{_verdict(None if speedup is None else speedup >= 1.0)}  {r['kind']}: not slower than lovely-tensors"
            f" ({_times(speedup)} faster)"
        )
    honest = all(r["cold_misses"] == r["repeats"] and r["cached_hits"] == r["repeats"] for r in results)
    lines.append(f"{_verdict(honest)}  every cold call missed the cache, every second call hit it")
    return lines


def _kinds(text: str) -> List[str]:
    kinds = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown kind(s) {unknown}: choose from {', '.join(KINDS)}")
    return kinds


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--size", type=lambda s: int(float(s)), default=BIG, help="elements per tensor (1e8)")
    parser.add_argument("--kinds", type=_kinds, default=list(DEFAULT_KINDS), help="comma-separated: " + ",".join(KINDS))
    parser.add_argument("--repeats", type=int, default=None, help="interleaved repetitions (default 5, 3 at 1e8)")
    parser.add_argument("--threads", action="store_true", help="also time summarize with 1 and with all threads")
    parser.add_argument(
        "--cpu-time", action="store_true", help="time this thread's CPU seconds, torch on 1 thread (loaded machines)"
    )
    parser.add_argument("--no-lovely", action="store_true", help="skip lovely-tensors (seconds per call at 1e8)")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.size >= BIG else 5)
    if args.cpu_time:
        global CLOCK
        CLOCK = time.thread_time
        torch.set_num_threads(1)
    try:
        import lovely_tensors

        lovely_version = getattr(lovely_tensors, "__version__", "?")
    except ImportError:
        lovely_version = "not installed (pip install 'pybackend[bench]'): lovely columns show '-'"
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs;"
        f" lovely-tensors {lovely_version}"
    )
    print(
        f"load average before: {loadavg()}; clock: {'thread CPU time, 1 thread' if args.cpu_time else 'wall'}",
        flush=True,
    )
    started = time.perf_counter()
    results = []
    for kind in args.kinds:
        result = measure(kind, args.size, repeats, threads=args.threads, lovely_too=not args.no_lovely)
        results.append(result)
        picked = idle_threads(torch.get_num_threads())
        print(
            f"  {kind:>10}: {result['summary']}   (load {loadavg()}, ours ~{OWN.level:.2f};"
            f" the runtime picks {picked} of {torch.get_num_threads()} threads)",
            flush=True,
        )
        if result["lovely_line"]:
            print(f"  {'lovely':>10}: {result['lovely_line']}", flush=True)
    print()
    print("\n".join(report(results)))
    print()
    print(f"load average after: {loadavg()}; bench took {time.perf_counter() - started:.1f} s")
    print(
        "(ratios of medians of interleaved repetitions decide PASS/MISS; absolute times are information only."
        f" With a load average above the {os.cpu_count()} CPUs every ratio is noisy: compare runs at similar load.)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
