"""The channel to the view: hello with the token, batches, the end line; a slow or absent view
never blocks the training thread (items are dropped and counted)."""

from __future__ import annotations

import json
import socket
import threading
import time

from torchdoctor.runtime.monitor.channel import Channel


def server():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    return listener, listener.getsockname()[1]


def read_lines(conn):
    data = b""
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return [json.loads(line) for line in data.decode().splitlines()]


def test_hello_batches_and_end():
    listener, port = server()
    got = {}

    def accept():
        conn, _ = listener.accept()
        got["lines"] = read_lines(conn)

    reader = threading.Thread(target=accept)
    reader.start()
    # close() waits for the sender at most close_timeout (1 s by default, for a training's exit):
    # a ceiling here, so a loaded machine's late sender still sends the end line.
    channel = Channel("127.0.0.1", port, "ab" * 16, interval=0.05, close_timeout=60.0).start()
    for i in range(100):
        channel.push("step", {"step": i + 1, "series": "opt0", "loss": float("nan") if i == 3 else 1.0})
    channel.push("eval", {"step": 50, "loss": 0.5})
    channel.push("finding", {"kind": "overfitting", "about": "eval", "severity": "warning"})
    channel.close()
    reader.join(60)
    listener.close()
    lines = got["lines"]
    assert lines[0]["hello"]["token"] == "ab" * 16 and lines[0]["hello"]["version"] == 1
    batches = [line["batch"] for line in lines if "batch" in line]
    steps = [s for b in batches for s in b["steps"]]
    assert [s["step"] for s in steps] == list(range(1, 101))
    assert steps[3]["loss"] is None  # NaN as null: strict JSON
    assert [e["step"] for b in batches for e in b["evals"]] == [50]
    assert [f for b in batches for f in b["findings"]] == [{"kind": "overfitting", "severity": "warning"}]
    assert lines[-1] == {"end": {"steps": 100, "dropped": 0}}


def test_slow_view_never_blocks_training():
    listener, port = server()
    accepted = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    channel = Channel("127.0.0.1", port, "cd" * 16, interval=0.01, queue=256, send_timeout=60.0).start()
    deadline = time.perf_counter() + 30
    while not accepted and time.perf_counter() < deadline:
        time.sleep(0.01)  # the view's end must exist before it is closed below (else it is never closed)
    assert accepted, "the channel never connected"
    big = {"step": 0, "series": "opt0", "padding": "x" * 20000}
    started = time.perf_counter()
    for i in range(20000):  # ~400 MB if all were sent; the view reads nothing
        channel.push("step", dict(big, step=i))
    pushing = time.perf_counter() - started
    assert channel._thread.is_alive() and not channel.gone  # the sender is stuck in sendall ...
    assert pushing < channel.send_timeout  # ... and the training thread was never held by it
    assert channel.dropped > 0 and channel.steps == 20000
    listener.close()
    for conn in accepted:
        conn.close()  # the view goes away: the stuck sender gives up
    deadline = time.perf_counter() + 30
    while channel._thread.is_alive() and time.perf_counter() < deadline:
        time.sleep(0.05)
    assert channel.gone
    before = channel.dropped
    channel.push("step", big)
    assert channel.dropped == before + 1
    channel.close()


def test_absent_view_drops_and_counts():
    listener, port = server()
    listener.close()  # nothing listens there any more
    channel = Channel("127.0.0.1", port, "ef" * 16, interval=0.01).start()
    channel._thread.join(10)
    assert channel.gone and "cannot reach" in (channel.error or "")
    for i in range(10):
        channel.push("step", {"step": i})
    assert channel.dropped == 10
    channel.close()
