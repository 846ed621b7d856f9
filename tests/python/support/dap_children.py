"""Child debug sessions, as VS Code opens them: debugpy follows a subprocess (a torchrun rank)
and sends the client a ``startDebugging`` reverse request; the client answers it and attaches
to the child through a new connection to the same adapter (the configuration's ``connect``).

    with ParentClient() as parent:
        parent.launch_module("torch.distributed.run", [...], env=...)
        child = parent.next_child(breakpoints={script: [12]})   # a DAPClient over a socket
        stop = child.wait_stopped()
"""

from __future__ import annotations

import queue
import socket
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence

from support.dap_client import DEFAULT_TIMEOUT, DAPClient


class _SocketProcess:
    """What DAPClient needs of its adapter process, over a socket to an adapter already running."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.stdin = sock.makefile("wb")
        self.stdout = sock.makefile("rb")

    def poll(self) -> Optional[int]:
        return None

    def wait(self, timeout: Optional[float] = None) -> int:
        self._sock.close()
        return 0

    def kill(self) -> None:
        self._sock.close()


class ChildClient(DAPClient):
    """A session attached to one subprocess through the parent's adapter."""

    def connect(self, host: str, port: int) -> "ChildClient":
        sock = socket.create_connection((host, port), timeout=DEFAULT_TIMEOUT)
        sock.settimeout(None)  # the reader blocks between messages for as long as the child runs
        self._proc = _SocketProcess(sock)  # type: ignore[assignment]
        self._reader = threading.Thread(target=self._read_loop, name="dap-child-reader", daemon=True)
        self._reader.start()
        return self

    def close(self) -> None:
        """Leave the child running (its parent's session owns it): disconnect without terminating."""
        proc = self._proc
        if proc is None:
            return
        try:
            self.request("disconnect", {"terminateDebuggee": False}, timeout=10)
        except Exception:
            pass
        self._proc = None
        proc.kill()


class ParentClient(DAPClient):
    """The root session: accepts ``startDebugging`` and hands out the children it announces."""

    supports_start_debugging = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.child_configurations: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.children_opened: List[ChildClient] = []

    def reverse_request(self, message: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        if message.get("command") != "startDebugging":
            return None
        self.child_configurations.put(dict(message.get("arguments", {}).get("configuration", {})))
        return {}

    def launch_module(self, module: str, args: Sequence[str], env: Mapping[str, str], cwd: str) -> None:
        """Launch ``python -m module args`` with subprocess debugging; returns once it runs."""
        self.initialize()
        seq = self.send_request(
            "launch",
            {
                "name": "parent",
                "type": "debugpy",
                "request": "launch",
                "module": module,
                "args": list(args),
                "console": "internalConsole",
                "justMyCode": True,
                "python": self.python,
                "env": dict(env),
                "cwd": cwd,
                "subProcess": True,
            },
        )
        self.wait_event("initialized")
        self.request("configurationDone")
        self.wait_response(seq)

    def next_child(
        self, breakpoints: Mapping[str, Sequence[int]], timeout: float = DEFAULT_TIMEOUT
    ) -> "tuple[ChildClient, Dict[str, Any]]":
        """Attach to the next subprocess debugpy announces, with ``breakpoints`` set in it."""
        configuration = self.child_configurations.get(timeout=timeout)
        child = ChildClient(self.python).connect(configuration["connect"]["host"], configuration["connect"]["port"])
        self.children_opened.append(child)
        child.initialize()
        seq = child.send_request("attach", configuration)
        child.wait_event("initialized")
        for path, lines in breakpoints.items():
            child.set_breakpoints(path, lines)
        child.request("configurationDone")
        child.wait_response(seq)
        return child, configuration

    def close(self) -> None:
        for child in self.children_opened:
            child.close()
        super().close()
