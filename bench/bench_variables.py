"""How long does the Variables view take for a frame of 20 tensors of 10 million elements each?

Everything goes through real DAP (``python -m debugpy.adapter`` driving a real debuggee), and
every number is printed as a ratio to baselines measured in the same run, on the same data:

- plain debugpy (no Torch Doctor on PYTHONPATH): the same Variables request, torch's own repr;
- one ``torch.sum`` pass and one ``torch.aminmax`` pass over all 20 tensors, timed inside the
  debuggee (what "reading the data once" costs on this machine);
- an ``evaluate("1")`` round trip: the adapter's own per-request latency, which no plugin beats.

The first stop computes exact statistics (cold cache); the second stop, same frame, unchanged
tensors, must cost (nearly) nothing beyond the round trip.

    .venv/bin/python bench/bench_variables.py [--tensors 20] [--elements 10000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python" / "dap"))

from dap_client import DAPClient  # noqa: E402

PYBACKEND = REPO / "pybackend"
WELL_UNDER_A_SECOND = 0.5  # seconds: what we call "well under a second" for the cold Variables view


def write_program(directory: Path, tensors: int, elements: int, stops: int) -> tuple:
    names = [f"t{i:02d}" for i in range(tensors)]
    assignments = "\n".join(f"    {n} = torch.randn({elements}, generator=g)" for n in names)
    source = textwrap.dedent("""
        import time
        import torch


        def timed(op, tensors, repeat=3):
            best = float("inf")
            for _ in range(repeat):
                start = time.perf_counter()
                for t in tensors:
                    op(t)
                best = min(best, time.perf_counter() - start)
            return best


        def frame():
            g = torch.Generator().manual_seed(0)
        {assignments}
            for stop in range({stops}):
                pass  # BREAK
            return {first}


        frame()
    """).format(assignments=assignments, stops=stops, first=names[0])
    path = directory / "twenty_tensors.py"
    path.write_text(source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "# BREAK" in text)
    return path, line, names


def adapter_env(with_plugin: bool) -> dict:
    env = dict(os.environ)
    paths = [p for p in env.pop("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != PYBACKEND]
    if with_plugin:
        paths.insert(0, str(PYBACKEND))
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def timed_request(dap: DAPClient, reference: int) -> tuple:
    start = time.perf_counter()
    variables = dap.variables(reference, timeout=600)
    return time.perf_counter() - start, variables


def locals_reference(dap: DAPClient, frame_id: int) -> int:
    return dap.scopes(frame_id)[0]["variablesReference"]


def session(program: Path, line: int, names: list, with_plugin: bool, repeat: int) -> dict:
    """Variables-request seconds, cold and cached, each cold try paired with baselines timed
    right after it in the debuggee (a shared machine's load moves both together)."""
    env = adapter_env(with_plugin)
    tensors = "[" + ", ".join(names) + "]"
    out = {"cold": [], "sum": [], "aminmax": []}
    with DAPClient(adapter_env=env) as dap:
        stop = dap.launch_and_stop(str(program), [line], env={"PYTHONPATH": env.get("PYTHONPATH", "")}, timeout=600)
        clear = "__import__('torchdoctor.runtime.stats.cache', fromlist=['VALUE_STATS']).VALUE_STATS.clear()"
        for _ in range(repeat):
            if with_plugin:
                dap.evaluate(clear, stop.frame_id, "repl")
            seconds, variables = timed_request(dap, locals_reference(dap, stop.frame_id))
            out["cold"].append(seconds)
            out["sum"].append(float(dap.evaluate(f"timed(torch.sum, {tensors}, 1)", stop.frame_id, "repl")["result"]))
            out["aminmax"].append(
                float(dap.evaluate(f"timed(torch.aminmax, {tensors}, 1)", stop.frame_id, "repl")["result"])
            )
        out["sample"] = next(v["value"] for v in variables if v["name"] == names[0])
        out["warm"] = min(timed_request(dap, locals_reference(dap, stop.frame_id))[0] for _ in range(repeat))
        stop = dap.stopped_after(lambda: dap.continue_(stop.thread_id), timeout=600)
        out["second_stop"] = timed_request(dap, locals_reference(dap, stop.frame_id))[0]
        latency = []
        for _ in range(5):
            start = time.perf_counter()
            dap.evaluate("1", stop.frame_id, "watch")
            latency.append(time.perf_counter() - start)
        out["latency"] = statistics.median(latency)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tensors", type=int, default=20)
    parser.add_argument("--elements", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="tries per measurement; the best is kept")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        program, line, names = write_program(Path(tmp), args.tensors, args.elements, stops=2)
        plugin = session(program, line, names, True, args.repeat)
        plain = session(program, line, names, False, args.repeat)
    report(args, plugin, plain)


def report(args, plugin: dict, plain: dict) -> None:
    latency = plugin["latency"]
    cold, base = min(plugin["cold"]), min(plain["cold"])
    warm, second = plugin["warm"], plugin["second_stop"]
    # Paired ratios: each cold try against the passes timed right after it.
    per_sum = statistics.median((c - latency) / s for c, s in zip(plugin["cold"], plugin["sum"]))
    per_amm = statistics.median((c - latency) / a for c, a in zip(plugin["cold"], plugin["aminmax"]))
    print(
        f"Variables view of a frame with {args.tensors} float32 tensors of {args.elements:,} elements "
        f"({args.tensors * args.elements * 4 / 2**20:.0f} MiB), through DAP; {args.repeat} tries each"
    )
    print(f"  a value with Torch Doctor : {plugin['sample']}")
    print(f"  a value, plain debugpy    : {plain['sample'][:70]}...")
    print()
    rows = [
        ("Torch Doctor, cold (exact stats computed)", cold),
        ("Torch Doctor, warm (same stop, cached)", warm),
        ("Torch Doctor, second stop (cached)", second),
        ("plain debugpy (torch repr), no plugin", base),
        ("one torch.sum pass over all tensors", min(plugin["sum"])),
        ("one torch.aminmax pass over all tensors", min(plugin["aminmax"])),
        ("DAP round trip (evaluate '1')", latency),
    ]
    for label, seconds in rows:
        print(f"  {label:45s} {seconds * 1000:8.1f} ms   (best)")
    print()
    print(f"  cold        / plain debugpy         : {cold / base:6.2f}x")
    print(f"  (cold - round trip) / sum pass      : {per_sum:6.2f}x   (median of paired tries)")
    print(f"  (cold - round trip) / aminmax pass  : {per_amm:6.2f}x   (median of paired tries)")
    print(f"  second stop / plain debugpy         : {second / base:6.2f}x")
    print(f"  second stop / DAP round trip        : {second / latency:6.2f}x")
    verdict = (
        "well under a second"
        if cold < WELL_UNDER_A_SECOND
        else ("under a second, but not well under" if cold < 1.0 else "NOT under a second")
    )
    print(
        f"  verdict: cold Variables view in {cold:.3f} s -> {verdict} (threshold {WELL_UNDER_A_SECOND} s); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
