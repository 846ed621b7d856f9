"""Does the language server stay responsive while a 100,000-line file is open and being edited?

The real backend (``python -m torchdoctor.server``) is driven over stdio. Two small files are
open; on them we time hover, codeLens and diagnostics (a full change then a save: the lint runs
at once, so the time is the lint plus the round trip, not the 300 ms typing debounce).

1. Baseline: those requests with nothing else open.
2. Over the limit: the same requests while a generated 100,000-line file (over the 1 MB analysis
   limit, so not parsed) is open, gets an edit every ``--edit-every`` seconds, and is asked for
   its own CodeLenses after each edit (as VS Code does).
3. Near the limit: the same again with a file just under the limit (``--near-margin`` characters
   below ``MAX_ANALYSIS_BYTES``): the sample workspace's models repeated with their classes
   renamed, ~28,000 lines of realistic model code that is parsed, linted and searched for model
   classes on every version. Its edits insert a comment line, so every version still parses.

Printed: p50 and p95 per request in each phase, the ratio to the baseline's p95, the big file's own
CodeLens times (and how many lenses it got), the load average, and whether each p95 under load is
within the 300 ms budget of issue 16.

    .venv/bin/python bench/bench_lsp_responsiveness.py [--samples 40] [--lines 100000] [--near-margin 24576]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "pybackend"))
from torchdoctor.checks.safe_discovery import MAX_ANALYSIS_BYTES  # noqa: E402

BUDGET = 0.300
MODELS = REPO / "sample_workspace" / "models"
SMALL = (MODELS / "mlp.py").read_text()


class Client:
    """Minimal JSON-RPC over stdio: requests with futures, diagnostics by (uri, version)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc, self.next_id, self.pending, self.published = proc, 0, {}, {}
        self.reader = asyncio.ensure_future(self._read())

    def send(self, message: dict) -> None:
        body = json.dumps(dict(message, jsonrpc="2.0")).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: dict):
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self.send({"id": self.next_id, "method": method, "params": params})
        return await future

    async def _read(self) -> None:
        out = self.proc.stdout
        while True:
            try:
                header = await out.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return  # the server has exited
            size = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            message = json.loads(await out.readexactly(size))
            if "method" in message and "id" in message:  # a request to us: configuration, progress...
                wanted = len(message.get("params", {}).get("items", [])) or None
                self.send({"id": message["id"], "result": [{}] * wanted if wanted else None})
            elif message.get("method") == "textDocument/publishDiagnostics":
                p = message["params"]
                self.published[(p["uri"], p.get("version"))] = time.perf_counter()
            elif "id" in message and message["id"] in self.pending:
                self.pending.pop(message["id"]).set_result(message.get("result"))


def generated(lines: int) -> str:
    block = [
        "class M{i}(nn.Module):",
        "    def __init__(self):",
        "        super().__init__()",
        "        self.fc = nn.Linear({d}, 4)",
        "",
        "    def forward(self, x):",
        "        return torch.relu(self.fc(x)) + 1",
        "",
    ]
    out = ["import torch", "import torch.nn as nn", ""]
    i = 0
    while len(out) < lines:
        out += [line.format(i=i, d=i % 50 + 1) for line in block]
        i += 1
    return "\n".join(out[:lines]) + "\n"


def near_limit(chars: int) -> str:
    """Realistic model code of at most ``chars`` characters: the sample models, classes renamed per copy."""
    bodies = []
    for name in ("tiny_gpt.py", "cnn.py", "mlp.py", "custom_autograd.py", "shape_mismatch.py", "ctor_args.py"):
        text = (MODELS / name).read_text()
        body = "\n".join(line for line in text.splitlines() if not line.startswith(("import ", "from "))) + "\n"
        bodies.append((body, re.findall(r"^class (\w+)", text, re.MULTILINE)))
    out = "import math\n\nimport torch\nfrom torch import nn\nfrom torch.nn import functional as F\n\n"
    copy = 0
    while True:
        body, classes = bodies[copy % len(bodies)]
        for name in classes:
            body = re.sub(rf"\b{name}\b", f"{name}_{copy}", body)
        if len(out) + len(body) + 1 > chars:
            return out
        out += body + "\n"
        copy += 1


async def timed(samples: dict, name: str, coro) -> None:
    start = time.perf_counter()
    await coro
    samples.setdefault(name, []).append(time.perf_counter() - start)


async def diagnostics(client: Client, uri: str, version: int) -> None:
    change = {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": SMALL + f"# {version}\n"}]}
    client.send({"method": "textDocument/didChange", "params": change})
    client.send({"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})
    while (uri, version) not in client.published:
        await asyncio.sleep(0.002)


async def measure(client: Client, uris: list, n: int, version0: int, more=lambda: False) -> dict:
    """``n`` rounds of hover, codeLens and diagnostics on the small files, and more while ``more()``."""
    samples: dict = {}
    a, b = uris
    k = 0
    while k < n or more():
        pos = {"textDocument": {"uri": a}, "position": {"line": 5, "character": 8}}
        await timed(samples, "hover", client.request("textDocument/hover", pos))
        await timed(samples, "codeLens", client.request("textDocument/codeLens", {"textDocument": {"uri": a}}))
        await timed(samples, "diagnostics", diagnostics(client, b, version0 + k))
        k += 1
    return samples


async def edit_big(client: Client, uri: str, every: float, stop: asyncio.Event, line: int, text: str, own: dict):
    """Insert ``text`` at ``line`` every ``every`` seconds, asking for the file's CodeLenses after each."""
    version = 1
    while not stop.is_set():
        version += 1
        at = {"line": line, "character": 0}
        change = {"range": {"start": at, "end": at}, "text": text}
        params = {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
        client.send({"method": "textDocument/didChange", "params": params})
        start = time.perf_counter()
        lenses = await client.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
        own["codeLens"].append(time.perf_counter() - start)
        own["lenses"].append(len(lenses or []))
        await asyncio.sleep(every)


async def under_load(client: Client, small: list, path: Path, text: str, edit: str, args, version0: int):
    """The small files' requests while ``text`` is open at ``path`` and edited (at least ``--min-edits``
    times: a parsed file's own CodeLenses take a second or more each); then it is closed."""
    big = opened(client, path, text)
    stop, own = asyncio.Event(), {"codeLens": [], "lenses": []}
    editor = asyncio.ensure_future(edit_big(client, big, args.edit_every, stop, text.count("\n") // 2, edit, own))
    load = await measure(client, small, args.samples, version0, lambda: len(own["codeLens"]) < args.min_edits)
    stop.set()
    await editor
    client.send({"method": "textDocument/didClose", "params": {"textDocument": {"uri": big}}})
    return load, own


def opened(client: Client, path: Path, text: str) -> str:
    uri = path.as_uri()
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": text}
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": doc}})
    return uri


async def main(args: argparse.Namespace) -> None:
    load_before = os.getloadavg()
    env = dict(os.environ, PYTHONPATH=str(REPO / "pybackend"))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "torchdoctor.server", "--stdio", "--log-level", "WARNING",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, limit=2**26,
    )  # fmt: skip
    client = Client(proc)
    await client.request("initialize", {"processId": os.getpid(), "capabilities": {}})
    client.send({"method": "initialized", "params": {}})
    with tempfile.TemporaryDirectory() as tmp:
        small = [opened(client, Path(tmp) / name, SMALL) for name in ("a.py", "b.py")]
        await measure(client, small, 3, 100)  # warm-up: imports, first lint
        base = await measure(client, small, args.samples, 1000)
        over_text, near_text = generated(args.lines), near_limit(MAX_ANALYSIS_BYTES - args.near_margin)
        phases = {
            "over": (over_text, *await under_load(client, small, Path(tmp) / "big.py", over_text, "x", args, 5000)),
            "near": (near_text, *await under_load(client, small, Path(tmp) / "near.py", near_text, "#\n", args, 9000)),
        }
    await client.request("shutdown", {})  # the server stops its background processes as it exits
    client.send({"method": "exit", "params": {}})
    try:
        await asyncio.wait_for(proc.wait(), 30)
    except asyncio.TimeoutError:
        proc.kill()
    report(base, phases, args, load_before)


def report(base: dict, phases: dict, args: argparse.Namespace, load_before: tuple) -> None:
    def p(xs: list, q: float) -> float:
        return statistics.quantiles(xs, n=100)[q - 1] if len(xs) > 1 else xs[0]

    def ms(x: float) -> str:
        return f"{x * 1e3:7.0f}ms"

    print(f"LSP responsiveness: {args.samples} samples per request on two small files; the big file is edited")
    print(f"every {args.edit_every} s and asked for its own CodeLenses after each edit")
    for key, title in (("over", "over the 1 MB limit (not parsed)"), ("near", "just under the limit (parsed)")):
        text, _, own = phases[key]
        print(
            f"  {key}: {text.count(chr(10))} lines, {len(text)} characters, {title}: edited {len(own['codeLens'])}"
            f" times; its own codeLens p50 {ms(p(own['codeLens'], 50)).strip()}, p95 {ms(p(own['codeLens'], 95)).strip()},"
            f" {min(own['lenses'])}-{max(own['lenses'])} lenses"
        )
    print(
        f"{'request':12} {'base p50':>9} {'base p95':>9} {'over p50':>9} {'over p95':>9} {'ratio':>6}"
        f" {'near p50':>9} {'near p95':>9} {'ratio':>6}  budget (< {BUDGET * 1e3:.0f} ms)"
    )
    ok = True
    for name in ("hover", "codeLens", "diagnostics"):
        b95 = p(base[name], 95)
        row = f"{name:12} {ms(p(base[name], 50))} {ms(b95)}"
        verdicts = []
        for key in ("over", "near"):
            load = phases[key][1][name]
            l95 = p(load, 95)
            ok &= l95 < BUDGET
            verdicts.append(f"{key} {'ok' if l95 < BUDGET else 'OVER'}")
            row += f" {ms(p(load, 50))} {ms(l95)} {l95 / b95:5.1f}x"
        print(f"{row}  {', '.join(verdicts)}")
    after = os.getloadavg()
    print(
        f"load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in load_before)} before,"
        f" {' '.join(f'{x:.2f}' for x in after)} after, on {os.cpu_count()} CPUs"
    )
    print("all p95 within budget" if ok else "some p95 over budget")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--edit-every", type=float, default=0.1)
    parser.add_argument("--min-edits", type=int, default=5, help="big-file edits to measure under, at least")
    parser.add_argument("--near-margin", type=int, default=24 * 1024, help="characters below the 1 MB limit")
    asyncio.run(main(parser.parse_args()))
