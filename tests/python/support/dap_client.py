"""A small Debug Adapter Protocol client for tests and benchmarks: drives a real debugpy.

It spawns ``python -m debugpy.adapter`` and speaks DAP over its stdin/stdout (``Content-Length``
framed JSON). A reader thread files responses by request ``seq`` and keeps every event, so tests
can wait for either without racing. Typical use::

    with DAPClient() as dap:
        stop = dap.launch_and_stop("script.py", lines=[12], env={"PYTHONPATH": backend})
        variables = dap.frame_locals(stop.frame_id)        # name -> DAP variable
        dap.evaluate("x", stop.frame_id, context="hover")["result"]

Nothing here knows about Torch Doctor: anomaly breakpoints, gradient views and anything else
that needs a paused debuggee can reuse it as is.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

DEFAULT_TIMEOUT = 240.0  # a ceiling: debuggees import torch, which takes tens of seconds on a loaded 2-core box


class DAPError(RuntimeError):
    """A request answered with ``success: false`` (the adapter's message is in ``args[0]``)."""


@dataclass
class Stop:
    """Where the debuggee paused: the ``stopped`` event body and its top frame."""

    thread_id: int
    frame_id: int
    reason: str
    frames: List[Dict[str, Any]]


class DAPClient:
    """One debugpy adapter process and the DAP conversation with it."""

    supports_start_debugging = False  # True: debugpy asks us for a session per subprocess

    def __init__(self, python: str = sys.executable, adapter_env: Optional[Mapping[str, str]] = None) -> None:
        self.python = python
        self.adapter_env = dict(os.environ if adapter_env is None else adapter_env)
        self.events: List[Dict[str, Any]] = []
        self.output: List[str] = []  # the debuggee's stdout/stderr, from "output" events
        self._seq = 0
        self._responses: Dict[int, "queue.Queue[Dict[str, Any]]"] = {}
        self._events_changed = threading.Condition()
        self._write_lock = threading.Lock()
        self._proc: Optional[subprocess.Popen] = None
        self._reader: Optional[threading.Thread] = None
        # The adapter's stderr, in a file (a pipe nobody reads fills and blocks it): read only
        # when it exits early, to say why (an interpreter without debugpy says so there).
        self._stderr: Any = None
        self._exited = threading.Event()

    # -- process and framing -------------------------------------------------------------------

    def start(self) -> "DAPClient":
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [self.python, "-m", "debugpy.adapter"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=self.adapter_env,
        )
        self._reader = threading.Thread(target=self._read_loop, name="dap-reader", daemon=True)
        self._reader.start()
        return self

    def close(self) -> None:
        """Disconnect (terminating the debuggee) and stop the adapter; safe to call twice."""
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.poll() is None:
                self.request("disconnect", {"terminateDebuggee": True}, timeout=10)
        except Exception:
            pass  # already gone, or not answering: the adapter is stopped below either way
        finally:
            self._proc = None
            for stream in (proc.stdin,):
                try:
                    stream.close()  # end of input: the adapter exits once its sessions are over
                except Exception:
                    pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
            proc.stdout.close()
            if self._stderr is not None:
                self._stderr.close()

    def __enter__(self) -> "DAPClient":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _next_seq(self) -> int:
        with self._write_lock:
            self._seq += 1
            return self._seq

    def _send(self, message: Dict[str, Any], proc: Optional[subprocess.Popen] = None) -> None:
        proc = proc or self._proc
        body = json.dumps(message).encode("utf-8")
        try:
            with self._write_lock:
                proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
                proc.stdin.flush()
        except BrokenPipeError:
            if proc is not self._proc:
                raise
            raise RuntimeError(self.exit_reason(f"{message.get('command')!r} to be sent")) from None

    def _read_loop(self) -> None:
        stream = self._proc.stdout
        while True:
            message = _read_message(stream)
            if message is None:
                break
            self._dispatch(message)
        with self._events_changed:
            self.events.append({"type": "event", "event": "<adapter exited>"})
            self._exited.set()
            self._events_changed.notify_all()

    def _dispatch(self, message: Dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "response":
            self._response_queue(message["request_seq"]).put(message)
        elif kind == "event":
            body = message.get("body") or {}
            if message.get("event") == "output" and body.get("category") in ("stdout", "stderr", "console"):
                self.output.append(body.get("output", ""))
            with self._events_changed:
                self.events.append(message)
                self._events_changed.notify_all()
        elif kind == "request":  # reverse requests (startDebugging, runInTerminal...)
            body = self.reverse_request(message)
            self._send(
                {
                    "type": "response",
                    "seq": self._next_seq(),
                    "request_seq": message["seq"],
                    "command": message.get("command"),
                    "success": body is not None,
                    "body": body or {},
                    **({} if body is not None else {"message": "not supported"}),
                }
            )

    def reverse_request(self, message: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The body to answer a reverse request with, or None to refuse it (a subclass may accept
        ``startDebugging``: see ``support/dap_children.py``). Runs on the reader thread."""
        return None

    def _response_queue(self, seq: int) -> "queue.Queue[Dict[str, Any]]":
        with self._write_lock:
            return self._responses.setdefault(seq, queue.Queue())

    # -- requests and events --------------------------------------------------------------------

    def send_request(self, command: str, arguments: Optional[Dict[str, Any]] = None) -> int:
        """Send without waiting; pair with :meth:`wait_response`. Returns the request seq."""
        seq = self._next_seq()
        self._response_queue(seq)
        self._send({"type": "request", "seq": seq, "command": command, "arguments": arguments or {}})
        return seq

    def wait_response(self, seq: int, timeout: float = DEFAULT_TIMEOUT) -> Dict[str, Any]:
        """The response body of request ``seq``; raises DAPError if it failed, TimeoutError if late,
        RuntimeError at once if the adapter exited without answering (not after the timeout)."""
        answers = self._response_queue(seq)
        deadline = time.monotonic() + timeout
        while True:
            try:
                response = answers.get(timeout=max(0.0, min(1.0, deadline - time.monotonic())))
                break
            except queue.Empty:
                if self._exited.is_set() and answers.empty():
                    raise RuntimeError(self.exit_reason(f"request {seq}")) from None
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"no response to request {seq} within {timeout}s") from None
        if not response.get("success"):
            raise DAPError(response.get("message") or json.dumps(response.get("body")))
        return response.get("body") or {}

    def request(
        self, command: str, arguments: Optional[Dict[str, Any]] = None, timeout: float = DEFAULT_TIMEOUT
    ) -> Dict[str, Any]:
        return self.wait_response(self.send_request(command, arguments), timeout)

    def wait_event(
        self,
        event: str,
        predicate: Optional[Callable[[Dict[str, Any]], bool]] = None,
        timeout: float = DEFAULT_TIMEOUT,
        start: int = 0,
    ) -> Dict[str, Any]:
        """The first event named ``event`` (from index ``start`` of :attr:`events`) that matches."""
        deadline = time.monotonic() + timeout
        with self._events_changed:
            while True:
                for message in self.events[start:]:
                    if message.get("event") == event and (predicate is None or predicate(message)):
                        return message
                    if message.get("event") == "<adapter exited>":
                        raise RuntimeError(f"{self.exit_reason(repr(event))}; output: {self.output_text()}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no {event!r} event within {timeout}s; output: {self.output_text()}")
                self._events_changed.wait(remaining)

    def output_text(self) -> str:
        return "".join(self.output)[-4000:]

    def exit_reason(self, waiting_for: str) -> str:
        """Why the adapter is gone: its exit status and the end of its stderr."""
        proc, status = self._proc, None
        if proc is not None:
            try:
                status = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        said = ""
        if self._stderr is not None and not self._stderr.closed:
            self._stderr.seek(0)
            said = self._stderr.read().decode("utf-8", "replace").strip()[-2000:]
        return (
            f"the debugpy adapter ({self.python} -m debugpy.adapter) exited with status {status} "
            f"while waiting for {waiting_for}: {said or '(nothing on stderr)'}"
        )

    # -- the usual session ----------------------------------------------------------------------

    def initialize(self) -> Dict[str, Any]:
        return self.request(
            "initialize",
            {
                "clientID": "torchdoctor-tests",
                "adapterID": "debugpy",
                "pathFormat": "path",
                "linesStartAt1": True,
                "columnsStartAt1": True,
                "supportsVariableType": True,
                "supportsRunInTerminalRequest": False,
                "supportsStartDebuggingRequest": self.supports_start_debugging,
            },
        )

    def launch(
        self,
        program: str,
        *,
        args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        just_my_code: bool = True,
        breakpoints: Optional[Mapping[str, Sequence[int]]] = None,
        exception_filters: Optional[Sequence[str]] = None,
        **extra: Any,
    ) -> None:
        """initialize, launch, set breakpoints, configurationDone: the program is then running.

        ``extra`` goes into the launch configuration as is (``module``, ``stopOnEntry``...).

        debugpy answers ``launch`` only after ``configurationDone``, so the launch request is
        sent first and its response awaited last.
        """
        self.initialize()
        config = {
            "name": "test",
            "type": "debugpy",
            "request": "launch",
            "program": os.fspath(program),
            "args": list(args),
            "console": "internalConsole",
            "justMyCode": just_my_code,
            "python": self.python,
            "env": dict(env or {}),
            "cwd": os.fspath(cwd or os.path.dirname(os.path.abspath(program))),
        }
        config.update(extra)
        launch_seq = self.send_request("launch", config)
        self.wait_event("initialized")
        for path, lines in (breakpoints or {}).items():
            self.set_breakpoints(path, lines)
        if exception_filters is not None:
            self.set_exception_breakpoints(exception_filters)
        self.request("configurationDone")
        self.wait_response(launch_seq)

    def set_breakpoints(
        self, path: str, lines: Sequence[int], conditions: Optional[Mapping[int, str]] = None
    ) -> List[Dict[str, Any]]:
        conditions = conditions or {}
        points = [
            dict({"line": line}, **({"condition": conditions[line]} if line in conditions else {})) for line in lines
        ]
        body = self.request("setBreakpoints", {"source": {"path": os.fspath(path)}, "breakpoints": points})
        return body.get("breakpoints", [])

    def wait_stopped(self, timeout: float = DEFAULT_TIMEOUT, start: int = 0) -> Stop:
        event = self.wait_event("stopped", timeout=timeout, start=start)["body"]
        thread_id = event.get("threadId")
        frames = self.stack_trace(thread_id)
        return Stop(thread_id=thread_id, frame_id=frames[0]["id"], reason=event.get("reason", ""), frames=frames)

    def stopped_after(self, action: Callable[[], Any], timeout: float = DEFAULT_TIMEOUT) -> Stop:
        """Run ``action`` (``lambda: dap.continue_(tid)``, a step...) and wait for the stop it
        causes, ignoring stops that happened before it."""
        mark = len(self.events)
        action()
        return self.wait_stopped(timeout=timeout, start=mark)

    def launch_and_stop(
        self, program: str, lines: Sequence[int], timeout: float = DEFAULT_TIMEOUT, **launch_args: Any
    ) -> Stop:
        """Launch ``program`` with breakpoints at ``lines`` of it and wait for the first stop."""
        self.launch(program, breakpoints={os.fspath(program): lines}, **launch_args)
        return self.wait_stopped(timeout=timeout)

    def stack_trace(self, thread_id: int) -> List[Dict[str, Any]]:
        return self.request("stackTrace", {"threadId": thread_id})["stackFrames"]

    def scopes(self, frame_id: int) -> List[Dict[str, Any]]:
        return self.request("scopes", {"frameId": frame_id})["scopes"]

    def variables(self, reference: int, timeout: float = DEFAULT_TIMEOUT) -> List[Dict[str, Any]]:
        return self.request("variables", {"variablesReference": reference}, timeout=timeout)["variables"]

    def frame_locals(self, frame_id: int) -> Dict[str, Dict[str, Any]]:
        """The first scope's (Locals') variables, by name."""
        scope = self.scopes(frame_id)[0]
        return {v["name"]: v for v in self.variables(scope["variablesReference"])}

    def children(self, variable: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
        """Expand a variable (or an evaluate result) as the Variables view does, by child name."""
        reference = variable.get("variablesReference", 0)
        if not reference:
            return {}
        return {v["name"]: v for v in self.variables(reference)}

    def evaluate(self, expression: str, frame_id: int, context: str = "repl") -> Dict[str, Any]:
        """Evaluate in the paused frame; ``context`` is hover, watch, repl or clipboard."""
        return self.request("evaluate", {"expression": expression, "frameId": frame_id, "context": context})

    def continue_(self, thread_id: int) -> None:
        self.request("continue", {"threadId": thread_id})

    def next_(self, thread_id: int) -> None:
        self.request("next", {"threadId": thread_id})

    def step_in(self, thread_id: int) -> None:
        self.request("stepIn", {"threadId": thread_id})

    def step_out(self, thread_id: int) -> None:
        self.request("stepOut", {"threadId": thread_id})

    def pause(self, thread_id: int) -> None:
        self.request("pause", {"threadId": thread_id})

    def threads(self) -> List[Dict[str, Any]]:
        return self.request("threads")["threads"]

    def set_exception_breakpoints(self, filters: Sequence[str] = ("uncaught",)) -> None:
        """debugpy's filters: ``raised``, ``uncaught``, ``userUnhandled``."""
        self.request("setExceptionBreakpoints", {"filters": list(filters)})

    def exception_info(self, thread_id: int) -> Dict[str, Any]:
        return self.request("exceptionInfo", {"threadId": thread_id})

    def wait_exited(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        return self.wait_event("exited", timeout=timeout)["body"].get("exitCode", 0)


def _read_message(stream) -> Optional[Dict[str, Any]]:
    """One ``Content-Length``-framed JSON message, or None at end of stream."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        return None
    body = stream.read(length)
    if len(body) < length:
        return None
    return json.loads(body.decode("utf-8"))
