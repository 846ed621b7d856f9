"""Run one check in a worker subprocess of the user's interpreter (backend side: no torch).

``run_check(spec, on_progress)`` starts the worker, streams its progress events,
enforces the time limit, and always returns a result (``result.py``'s shape):
the worker's own, or an ERROR result that says what went wrong in words a user
can act on: interpreter missing or too old, torch missing, time limit reached
(the process group is killed), worker crash (exit status and the last lines of
stderr). Cancelling the awaiting task kills the worker too.

The worker imports *this* copy of ``torchdoctor`` by file location, without
putting our folder (which may also hold the bundled pygls and friends) on the
user's ``sys.path``.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..spelling import fmt_num
from . import result as R

DEFAULT_TIMEOUT = 120.0
STDERR_TAIL = 30
MAX_LINE = 32 * 1024 * 1024  # the result is one JSON line; a shape trace of a big model is long
EXIT_TOO_OLD = 3
TOO_OLD_MESSAGE = "Torch Doctor checks need Python >= 3.9"

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../torchdoctor

# Loads torchdoctor from argv[1] under its own name, then runs the worker on the rest of argv.
# Written for any Python 3 so that an old interpreter gets a sentence, not a SyntaxError.
_BOOTSTRAP = (
    "import sys\n"
    "MESSAGE = TOO_OLD\n"
    "if sys.version_info < (3, 9):\n"
    "    sys.stderr.write('%s, this is %s\\n' % (MESSAGE, sys.version.split()[0])); sys.exit(3)\n"
    "import importlib.util, os\n"
    "pkg = sys.argv[1]\n"
    "spec = importlib.util.spec_from_file_location('torchdoctor', os.path.join(pkg, '__init__.py'), submodule_search_locations=[pkg])\n"
    "mod = importlib.util.module_from_spec(spec); sys.modules['torchdoctor'] = mod; spec.loader.exec_module(mod)\n"
    "from torchdoctor.checks.worker import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
).replace("TOO_OLD", repr(TOO_OLD_MESSAGE), 1)

ProgressCallback = Callable[[float, str], None]
StderrCallback = Callable[[str], None]


@dataclass
class JobSpec:
    """What to run, where, and for how long."""

    check: str
    file: str
    class_name: str
    python: str = ""  # empty: this interpreter (sys.executable)
    options: dict = field(default_factory=dict)  # worker options: batchSize, steps, csv, ...
    timeout: float = DEFAULT_TIMEOUT
    source: Optional[str] = None  # the editor's unsaved text, run instead of the file on disk
    cwd: Optional[str] = None  # the workspace folder; default: the file's folder


def resolve_interpreter(python: str) -> Optional[str]:
    """An absolute path to an existing interpreter, or None."""
    if not python:
        return sys.executable
    if os.path.isabs(python) or os.sep in python or (os.altsep and os.altsep in python):
        # absolute without resolving symlinks: a venv's python must stay the venv's
        return os.path.abspath(python) if os.path.isfile(python) else None
    return shutil.which(python)


def worker_command(python: str, spec: JobSpec) -> list[str]:
    cmd = [
        python,
        "-c",
        _BOOTSTRAP,
        _PACKAGE_DIR,
        "--check",
        spec.check,
        "--file",
        spec.file,
        "--class",
        spec.class_name,
    ]
    cmd += ["--options", json.dumps(spec.options)]
    if spec.source is not None:
        cmd.append("--stdin")
    return cmd


async def run_check(
    spec: JobSpec,
    on_progress: Optional[ProgressCallback] = None,
    on_stderr: Optional[StderrCallback] = None,
) -> dict:
    """The check's result; never raises except ``CancelledError`` (after killing the worker)."""
    started = time.monotonic()
    spec.file = os.path.abspath(spec.file)  # the worker runs in another folder
    problem = _precheck(spec)
    if problem is not None:
        return problem
    python = resolve_interpreter(spec.python) or spec.python
    try:
        proc = await _spawn(python, spec)
    except OSError as exc:
        return _err(
            spec,
            R.ERR_NO_INTERPRETER,
            f"cannot start the interpreter {python}: {exc.strerror or exc}. Set torchDoctor.python to a Python with torch.",
        )
    tail: collections.deque = collections.deque(maxlen=STDERR_TAIL)
    box: dict = {}
    tasks = [
        asyncio.ensure_future(_feed(proc, spec.source)),
        asyncio.ensure_future(_read_events(proc, box, on_progress)),
        asyncio.ensure_future(_read_stderr(proc, tail, on_stderr)),
        asyncio.ensure_future(proc.wait()),
    ]
    try:
        _, pending = await asyncio.wait(tasks, timeout=spec.timeout)
    except asyncio.CancelledError:
        _stop(proc, tasks)
        try:  # reap it, so no transport outlives the event loop
            await asyncio.wait_for(proc.wait(), 5)
        except BaseException:
            pass
        raise
    if pending:
        _stop(proc, tasks)
        await asyncio.gather(*tasks, return_exceptions=True)
        await _reap(proc)
        return _timeout(spec, python, started)
    return _finish(spec, python, proc.returncode, box.get("result"), tail, started)


def _stop(proc, tasks: list) -> None:
    _kill(proc)
    for t in tasks:
        t.cancel()


def _precheck(spec: JobSpec) -> Optional[dict]:
    if spec.check not in R.CHECKS:
        return _err(spec, R.ERR_USAGE, f"unknown check {spec.check!r}: choose one of {', '.join(R.CHECKS)}")
    if spec.source is None and not os.path.isfile(spec.file):
        return _err(spec, R.ERR_USAGE, f"no such file: {spec.file}")
    if resolve_interpreter(spec.python) is None:
        return _err(
            spec,
            R.ERR_NO_INTERPRETER,
            f"the interpreter {spec.python} was not found: set torchDoctor.python to the Python of your project (one with torch).",
        )
    return None


async def _spawn(python: str, spec: JobSpec) -> asyncio.subprocess.Process:
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
    kwargs: dict = (
        {"start_new_session": True}
        if os.name == "posix"
        else {"creationflags": getattr(__import__("subprocess"), "CREATE_NEW_PROCESS_GROUP", 0)}
    )
    return await asyncio.create_subprocess_exec(
        *worker_command(python, spec),
        stdin=asyncio.subprocess.PIPE if spec.source is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=spec.cwd or os.path.dirname(os.path.abspath(spec.file)) or None,
        env=env,
        limit=MAX_LINE,
        **kwargs,
    )


async def _feed(proc, source: Optional[str]) -> None:
    if source is None or proc.stdin is None:
        return
    try:
        proc.stdin.write(source.encode("utf-8"))
        await proc.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the worker died early; its exit status tells why
    finally:
        proc.stdin.close()


async def _read_events(proc, box: dict, on_progress: Optional[ProgressCallback]) -> None:
    """Protocol lines from the worker; anything that is not our JSON is ignored."""
    assert proc.stdout is not None
    async for raw in proc.stdout:
        try:
            event = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        if event.get("event") == "progress" and on_progress is not None:
            on_progress(float(event.get("fraction", 0.0)), str(event.get("message", "")))
        elif event.get("event") == "result" and isinstance(event.get("result"), dict):
            box["result"] = event["result"]


async def _read_stderr(proc, tail: collections.deque, on_stderr: Optional[StderrCallback]) -> None:
    assert proc.stderr is not None
    async for raw in proc.stderr:
        line = raw.decode("utf-8", errors="replace").rstrip("\n")
        tail.append(line)
        if on_stderr is not None:
            on_stderr(line)


def _kill(proc) -> None:
    """The whole process group: a model may have started DataLoader workers of its own."""
    if proc.returncode is not None:
        return
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


async def _reap(proc) -> None:
    try:
        await asyncio.wait_for(proc.wait(), timeout=5)
    except asyncio.TimeoutError:
        pass


def _finish(spec: JobSpec, python: str, code: Optional[int], result: Optional[dict], tail, started: float) -> dict:
    if result is None:
        result = _crash(spec, python, code, tail)
    result = R.sanitize(result)
    result["python"] = result.get("python") or python
    result["durationSeconds"] = round(time.monotonic() - started, 3)
    return result


def _crash(spec: JobSpec, python: str, code: Optional[int], tail) -> dict:
    last = "\n".join(tail)
    if code == EXIT_TOO_OLD and TOO_OLD_MESSAGE in last:  # the user's code may exit 3 too
        return _err(
            spec,
            R.ERR_NO_INTERPRETER,
            f"{python} is too old: {last.strip()}. Set torchDoctor.python to Python 3.9 or newer with torch.",
            detail=last,
        )
    how = f"exit status {code}"
    if code is not None and code < 0:
        try:
            how = f"signal {signal.Signals(-code).name}"
        except ValueError:
            how = f"signal {-code}"
    lines = [ln for ln in tail if ln.strip()][-3:]
    return _err(
        spec,
        R.ERR_CRASH,
        f"The check worker ({python}) stopped without a result ({how})" + (f": {lines[-1].strip()}" if lines else "."),
        detail=last,
    )


def _timeout(spec: JobSpec, python: str, started: float) -> dict:
    seconds = fmt_num(spec.timeout, 6)
    result = _err(
        spec,
        R.ERR_TIMEOUT,
        f"The {R.TITLES[spec.check]} on {spec.class_name} did not finish within {seconds} s, so the worker was stopped. "
        "The model may hang (an endless loop, a DataLoader or lock waiting forever at import or in forward) or be too slow for this check: "
        "raise torchDoctor.checks.timeoutSeconds, or make the example batch smaller.",
    )
    result["python"] = python
    result["durationSeconds"] = round(time.monotonic() - started, 3)
    return result


def _err(spec: JobSpec, kind: str, message: str, detail: str = "") -> dict:
    result = R.error_result(spec.check, spec.class_name, os.path.abspath(spec.file), kind, message, detail=detail)
    result["durationSeconds"] = 0.0
    return result
