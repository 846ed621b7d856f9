"""The channel from the program to the VS Code view: newline-delimited JSON over loopback TCP.

The extension listens on 127.0.0.1 with a per-session token (``docs/monitor.md``, "Channel").
The training thread only appends to a bounded queue (:meth:`Channel.push`, the recorder's
listener); a daemon thread connects, says hello with the token, and sends one ``{"batch": ...}``
line at most every ``interval`` seconds. When the queue is full, or the view is slow or gone,
items are dropped and counted (``dropped`` in every batch and in the ``end`` line): the training
thread never waits on the socket. At exit :meth:`close` sends what is left and ``{"end": ...}``,
waiting at most ``close_timeout`` seconds. Stdlib only.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections import deque
from typing import Any, Deque, Dict, List, Optional, Tuple

VERSION = 1
QUEUE = 4096
KINDS = {"step": "steps", "eval": "evals", "user": "user", "finding": "findings"}


class Channel:
    def __init__(
        self,
        host: str,
        port: int,
        token: str,
        interval: float = 0.25,
        queue: int = QUEUE,
        send_timeout: float = 2.0,
        close_timeout: float = 1.0,
    ) -> None:
        self.address = (host or "127.0.0.1", int(port))
        self.token = token
        self.interval = interval
        self.capacity = queue
        self.send_timeout = send_timeout
        self.close_timeout = close_timeout
        self.items: Deque[Tuple[str, Dict[str, Any]]] = deque()
        self.lock = threading.Lock()
        self.dropped = 0
        self.sent = 0
        self.steps = 0
        self.gone = False  # the view closed the connection or never listened: drop everything
        self.error: Optional[str] = None
        self._stop = threading.Event()
        self._sock: Optional[socket.socket] = None
        self._thread = threading.Thread(target=self._run, name="torchdoctor-monitor-channel", daemon=True)
        # Under the debugger: not traced, and not suspended at a breakpoint, so the view still
        # receives the steps of the last interval while the program is paused.
        self._thread.pydev_do_not_trace = True  # type: ignore[attr-defined]
        self._thread.is_pydev_daemon_thread = True  # type: ignore[attr-defined]

    def start(self) -> "Channel":
        self._thread.start()
        return self

    # -- the training thread -----------------------------------------------------------------------

    def push(self, kind: str, payload: Dict[str, Any]) -> None:
        """Queue one item; never blocks (a full queue or a gone view drops it, counted)."""
        if kind == "step":
            self.steps += 1
        if self.gone or len(self.items) >= self.capacity:
            self.dropped += 1
            return
        self.items.append((kind, payload))

    # -- the sender thread ---------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            sock = socket.create_connection(self.address, timeout=self.send_timeout)
            sock.settimeout(self.send_timeout)
            self._sock = sock
            self._send({"hello": self._hello()})
        except OSError as exc:
            self._give_up(f"cannot reach the view at {self.address[0]}:{self.address[1]}: {exc}")
            return
        while not self._stop.wait(self.interval):
            if not self._flush():
                return
        self._flush()

    def _hello(self) -> Dict[str, Any]:
        rank = os.environ.get("RANK")
        world = os.environ.get("WORLD_SIZE")  # how many ranks the view waits for before comparing a step
        return {
            "token": self.token,
            "pid": os.getpid(),
            "rank": int(rank) if rank and rank.isdigit() else None,
            "world_size": int(world) if world and world.isdigit() else None,
            "script": os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else None,
            "version": VERSION,
        }

    def _take(self) -> List[Tuple[str, Dict[str, Any]]]:
        taken = []
        while self.items:
            taken.append(self.items.popleft())
        return taken

    def _flush(self) -> bool:
        taken = self._take()
        if not taken:
            return True
        batch: Dict[str, Any] = {"steps": [], "evals": [], "user": [], "findings": []}
        for kind, payload in taken:
            if kind == "finding":
                payload = {k: v for k, v in payload.items() if k != "about"}
            batch[KINDS[kind]].append(payload)
        batch["dropped"] = self.dropped
        try:
            self._send({"batch": batch})
            self.sent += len(taken)
            return True
        except OSError as exc:
            self.dropped += len(taken)
            self._give_up(f"the view stopped reading: {exc}")
            return False

    def _send(self, message: Dict[str, Any]) -> None:
        if self._sock is None:
            raise OSError("not connected")
        line = json.dumps(finite(message), allow_nan=False, default=_plain) + "\n"
        self._sock.sendall(line.encode("utf-8"))

    def _give_up(self, why: str) -> None:
        self.gone = True
        self.error = why
        self.dropped += len(self._take())
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None

    def close(self) -> None:
        """Send what is queued and the ``end`` line; at most ``close_timeout`` seconds."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(self.close_timeout)
        if self._sock is not None and not self._thread.is_alive():
            try:
                self._send({"end": {"steps": self.steps, "dropped": self.dropped}})
            except OSError:
                pass
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None


def _plain(value: Any) -> Any:
    return None


def finite(message: Any) -> Any:
    """NaN and Inf become null (strict JSON for the view)."""
    if isinstance(message, float):
        return message if message == message and message not in (float("inf"), float("-inf")) else None
    if isinstance(message, dict):
        return {k: finite(v) for k, v in message.items()}
    if isinstance(message, list):
        return [finite(v) for v in message]
    return message
