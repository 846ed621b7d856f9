"""Check the CUDA paths of torchdoctor.summarize / stats on a real GPU; prints PASS/FAIL lines.

    python bench/cuda_check.py            # on a CUDA machine (exit 1 if any check fails)
    python bench/cuda_check.py --device cpu   # dry run of the same checks on the CPU

Without CUDA it prints one SKIP line and exits 0. What it checks:

1. stats() of CUDA tensors of every dtype and layout (NaN/Inf, views, expanded, sparse, 0-d,
   empty, fp8, complex, Parameter with grad) match stats() of the same tensor copied to the CPU;
2. no whole-tensor device->host copy: while a 1 GiB tensor is summarized, a dispatcher-level
   recorder sees only small device->host results, and the CUDA profiler's DtoH memcpy bytes stay
   under 64 KiB;
3. extra device memory stays bounded (scratch blocks, not a copy of the tensor);
4. the cache: a second summary computes nothing (cache hit; only the 64-element probe runs);
5. state: CPU and CUDA RNG states and the tensor's _version are unchanged;
6. summarizing CPU tensors in a fresh process does not initialize CUDA.

Timings are printed for information (ratio to one aminmax pass), never judged.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "pybackend"))

RESULTS = []


def check(name, fn):
    """Run one check; a returned string is detail for the PASS line, an exception is a FAIL."""
    try:
        detail = fn()
        RESULTS.append(True)
        print(f"PASS {name}" + (f" — {detail}" if detail else ""), flush=True)
    except Exception as exc:  # one failing check must not hide the others
        RESULTS.append(False)
        print(f"FAIL {name} — {type(exc).__name__}: {exc}", flush=True)
        if os.environ.get("CUDA_CHECK_TRACEBACK"):
            traceback.print_exc()


def close(a, b, tol, scale):
    if a is None or b is None:
        return a is b
    return abs(a - b) <= tol * max(scale, 1e-30)


def same_stats(got: dict, want: dict, tol: float) -> None:
    for key in ("kind", "shape", "dtype", "count", "nan", "posinf", "neginf", "true", "nnz", "note"):
        if got.get(key) != want.get(key):
            raise AssertionError(f"{key}: device {got.get(key)!r} != cpu {want.get(key)!r}")
    for key in ("min", "max"):
        if not close(got.get(key), want.get(key), 1e-6, abs(want.get(key) or 0)):
            raise AssertionError(f"{key}: device {got.get(key)!r} != cpu {want.get(key)!r}")
    scale = max(abs(want.get("min") or 0), abs(want.get("max") or 0))
    for key in ("mean", "std"):
        if not close(got.get(key), want.get(key), tol, scale):
            raise AssertionError(f"{key}: device {got.get(key)!r} vs cpu {want.get(key)!r}")


def cases(torch, device):
    g = torch.Generator(device="cpu").manual_seed(0)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g).to(dtype).to(device)

    dirty = randn(1_000_003)
    dirty[17], dirty[999_999], dirty[5] = math.nan, math.inf, -math.inf
    out = {
        "f32 with NaN/Inf": dirty,
        "f32 offset 1000 (ill-conditioned)": randn(3_000_000) * 1e-3 + 1000,
        "f16": randn(4096, 513, dtype=torch.float16),
        "bf16": randn(4096, 513, dtype=torch.bfloat16),
        "f64": randn(100_000, dtype=torch.float64),
        "int32": torch.randint(-1000, 1000, (1 << 20,), generator=g).to(torch.int32).to(device),
        "int64 beyond 2**53": torch.tensor([2**62 + 1, -(2**61), 3], dtype=torch.int64).to(device),
        "uint8 image": torch.randint(0, 256, (8, 3, 224, 224), generator=g).to(torch.uint8).to(device),
        "bool": (randn(1_000_000) > 0.5),
        "complex64": torch.complex(randn(10_000), randn(10_000)),
        "transposed view": randn(2048, 1024).t(),
        "strided view": randn(1 << 20)[::3],
        "expanded view": randn(1, 1000).expand(100_000, 1000),
        "channels_last": randn(16, 32, 28, 28).contiguous(memory_format=torch.channels_last),
        "0-d": randn(()),
        "empty": torch.empty(0, 7, device=device),
        "all NaN": torch.full((1000,), math.nan, device=device),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note about sparse invariant checks
        out["sparse COO"] = torch.sparse_coo_tensor(
            torch.tensor([[0, 5, 9], [1, 2, 3]]), torch.tensor([1.0, math.nan, -2.0]), (10, 10)
        ).to(device)
    for name in ("float8_e4m3fn", "float8_e5m2"):
        if hasattr(torch, name):
            try:
                out[name] = randn(100_000).to(getattr(torch, name))
            except Exception:
                pass  # this GPU or build cannot convert to it; nothing to check
    return out


def check_reference(torch, device, summarize, stats):
    for name, t in cases(torch, device).items():

        def one(t=t):
            got, want = stats(t), stats(t.cpu())
            if got.get("kind") != "tensor":
                raise AssertionError(got)
            if got["device"] != str(t.device):
                raise AssertionError(f"device {got['device']}")
            same_stats(got, want, 1e-9 if t.dtype == torch.float64 else 2e-5)
            return summarize(t)

        check(f"matches CPU reference: {name}", one)


class HostTransfers:
    """Records every op whose inputs live on the device and whose outputs land on the host."""

    def __init__(self, torch):
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils._pytree import tree_leaves

        recorder = self
        self.moved = []  # (op, bytes)
        self.ops = 0

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                recorder.ops += 1
                inputs = [a for a in tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
                if any(a.device.type != "cpu" for a in inputs):
                    if func is torch.ops.aten._local_scalar_dense.default:
                        recorder.moved.append((str(func), inputs[0].element_size()))
                    for o in tree_leaves(out):
                        if isinstance(o, torch.Tensor) and o.device.type == "cpu":
                            recorder.moved.append((str(func), o.numel() * o.element_size()))
                return out

        self.mode = Mode()

    def __enter__(self):
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self.mode.__exit__(*exc)


def big_tensor(torch, device):
    elements = 1 << 28  # 1 GiB of float32
    if device == "cuda":
        free, _ = torch.cuda.mem_get_info()
        while elements * 4 * 3 > free and elements > 1 << 20:
            elements //= 2
    else:
        elements = 1 << 22  # dry run: keep it small
    t = torch.randn(elements, device=device)
    t[12345] = math.nan
    return t


def check_no_host_copy(torch, device, summarize):
    from torchdoctor.runtime.stats.cache import VALUE_STATS

    t = big_tensor(torch, device)
    VALUE_STATS.clear()
    with HostTransfers(torch) as rec:
        line = summarize(t)
    biggest = max((b for _, b in rec.moved), default=0)
    total = sum(b for _, b in rec.moved)
    if biggest > 64 * 1024:
        raise AssertionError(f"a {biggest}-byte device->host result: {sorted(rec.moved, key=lambda m: -m[1])[:3]}")
    if "NaN×1" not in line:
        raise AssertionError(line)
    return f"{t.numel() * 4 / 2**20:.0f} MiB tensor, {len(rec.moved)} host transfers, {total} bytes in all; {line}"


def check_profiler_memcpy(torch, device, summarize):
    if device != "cuda":
        return "skipped on the CPU dry run"
    from torch.profiler import ProfilerActivity, profile

    from torchdoctor.runtime.stats.cache import VALUE_STATS

    t = big_tensor(torch, device)
    VALUE_STATS.clear()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        summarize(t)
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        events = json.load(open(path)).get("traceEvents", [])
    copies = [e for e in events if "DtoH" in str(e.get("name", "")) or "Device -> " in str(e.get("name", ""))]
    total = sum(int((e.get("args") or {}).get("bytes", 0)) for e in copies)
    if total > 64 * 1024:
        raise AssertionError(f"{total} bytes copied device->host in {len(copies)} memcpys")
    return f"{len(copies)} DtoH memcpys, {total} bytes, for a {t.numel() * 4 / 2**20:.0f} MiB tensor"


def check_bounded_memory(torch, device, summarize):
    if device != "cuda":
        return "skipped on the CPU dry run"
    from torchdoctor.runtime.stats.cache import VALUE_STATS

    t = big_tensor(torch, device)
    h = t.half()
    VALUE_STATS.clear()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    summarize(t)
    summarize(h)  # converted in blocks, never as a whole
    extra = torch.cuda.max_memory_allocated() - before
    if extra > 128 * 2**20:
        raise AssertionError(f"{extra / 2**20:.0f} MiB extra for a {t.numel() * 4 / 2**20:.0f} MiB tensor")
    return f"peak extra {extra / 2**20:.1f} MiB for {t.numel() * 4 / 2**20:.0f} MiB f32 + its f16 copy"


def check_cache(torch, device, summarize):
    from torchdoctor.runtime.stats.cache import VALUE_STATS

    t = torch.randn(1 << 24, device=device)
    first = summarize(t)
    misses, hits = VALUE_STATS.misses, VALUE_STATS.hits
    with HostTransfers(torch) as rec:
        second = summarize(t)
    if second != first or VALUE_STATS.misses != misses or VALUE_STATS.hits != hits + 1:
        raise AssertionError(f"hits {VALUE_STATS.hits - hits}, misses {VALUE_STATS.misses - misses}")
    if rec.ops > 20:
        raise AssertionError(f"{rec.ops} ops on a cache hit")
    t.add_(1)
    third = summarize(t)
    if VALUE_STATS.misses != misses + 1 or third == first:
        raise AssertionError("an in-place change was not noticed")
    return f"hit ran {rec.ops} small ops (the probe)"


def check_state(torch, device, summarize, stats):
    t = torch.randn(1 << 20, device=device, requires_grad=True)
    (t * 2).sum().backward()
    layer = torch.nn.Linear(4, 4).to(device)  # its init draws random numbers: before the snapshot
    cpu_rng = torch.get_rng_state().clone()
    cuda_rng = [s.clone() for s in torch.cuda.get_rng_state_all()] if device == "cuda" else []
    version, grad = t._version, t.grad.clone()
    summarize(t), stats(t), summarize([t, t.grad]), summarize(layer)
    if not torch.equal(cpu_rng, torch.get_rng_state()):
        raise AssertionError("CPU RNG state changed")
    if device == "cuda" and not all(torch.equal(a, b) for a, b in zip(cuda_rng, torch.cuda.get_rng_state_all())):
        raise AssertionError("CUDA RNG state changed")
    if t._version != version or not torch.equal(t.grad, grad) or not torch.is_grad_enabled():
        raise AssertionError("tensor, grad or grad mode changed")
    return summarize(t)


def check_no_cuda_init(torch, device):
    if device != "cuda":
        return "skipped on the CPU dry run"
    code = (
        "import torch, torchdoctor; torchdoctor.summarize(torch.randn(100)); "
        "torchdoctor.summarize(torch.nn.Linear(2, 2)); print(torch.cuda.is_initialized())"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "pybackend"), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    if out.stdout.strip() != "False":
        raise AssertionError(f"stdout {out.stdout!r} stderr {out.stderr[-300:]!r}")
    return "torch.cuda.is_initialized() stays False"


def timing(torch, device, summarize):
    from torchdoctor.runtime.stats.cache import VALUE_STATS

    t = big_tensor(torch, device)
    t[12345] = 0.0

    def best(fn, repeat=5):
        times = []
        for _ in range(repeat):
            VALUE_STATS.clear()
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            fn()
            if device == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        return min(times)

    amm = best(lambda: torch.aminmax(t))
    full = best(lambda: summarize(t))
    print(
        f"INFO summarize of {t.numel():,} f32 on {device}: {full * 1000:.2f} ms = {full / amm:.2f}x one aminmax pass "
        f"({amm * 1000:.2f} ms)",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu for a dry run of the same checks")
    device = parser.parse_args().device
    try:
        import torch
    except ImportError:
        print("SKIP torch is not installed")
        return 0
    if device == "cuda" and not torch.cuda.is_available():
        print("SKIP no CUDA device (torch.cuda.is_available() is False)")
        return 0
    from torchdoctor import stats, summarize

    name = torch.cuda.get_device_name(0) if device == "cuda" else "cpu (dry run)"
    print(f"INFO torch {torch.__version__} on {name}", flush=True)
    check_reference(torch, device, summarize, stats)
    check("no whole-tensor device->host copy (dispatcher)", lambda: check_no_host_copy(torch, device, summarize))
    check(
        "no whole-tensor device->host copy (profiler memcpy bytes)",
        lambda: check_profiler_memcpy(torch, device, summarize),
    )
    check("bounded extra device memory", lambda: check_bounded_memory(torch, device, summarize))
    check("cache: second summary computes nothing", lambda: check_cache(torch, device, summarize))
    check("state unchanged (RNG, _version, grad)", lambda: check_state(torch, device, summarize, stats))
    check("CPU summaries do not initialize CUDA", lambda: check_no_cuda_init(torch, device))
    try:
        timing(torch, device, summarize)
    except Exception as exc:
        print(f"INFO timing failed: {exc}")
    failed = RESULTS.count(False)
    print(f"{'FAIL' if failed else 'PASS'} {len(RESULTS) - failed}/{len(RESULTS)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
