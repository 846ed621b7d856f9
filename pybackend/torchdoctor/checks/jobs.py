"""Run one check in a worker subprocess of the user's interpreter (backend side: no torch).

``run_check(spec, on_progress)`` starts the worker, streams its progress events,
enforces the time limit, and always returns a result (``result.py``'s shape):
the worker's own, or an ERROR result that says what went wrong in words a user
can act on: interpreter missing or too old, torch missing, time limit reached,
worker crash (exit status and the last lines of stderr), out of memory.
Cancelling the awaiting task kills the worker too.

- The result is taken the moment its line arrives. User code may leave a non-daemon thread or
  a child process that keeps the worker (or its pipes) alive: the run is over anyway, and the
  worker, its descendants and its process group are killed (``process_tree.py``).
- The worker dies with the backend: it watches a pipe only the backend can write to, and on
  Linux the kernel sends it SIGKILL when the backend exits (``worker_guard.py``).
- Bounded: options (``timeoutSeconds``, ``batchSize``, ``memoryLimitMB``) are validated with a
  message; the worker's memory is limited; its output is read in chunks with every line cut to a
  limit, the log gets a budget, and the result's prose is truncated (``worker_streams.py``).
- The result line carries a per-run nonce that user code cannot know, so it cannot forge one.

The worker imports *this* copy of ``torchdoctor`` by file location, without
putting our folder (which may also hold the bundled pygls and friends) on the
user's ``sys.path``.
"""

from __future__ import annotations

import asyncio
import collections
import json
import math
import os
import secrets
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..spelling import fmt_num
from . import process_tree, worker_guard
from . import result as R
from .worker_streams import STDERR_LINE, LogBudget, cut_note, read_lines

DEFAULT_TIMEOUT = R.DEFAULT_TIMEOUT
MAX_TIMEOUT = 24 * 3600.0
MAX_BATCH_SIZE = 4096  # package.json's maximum for torchDoctor.checks.batchSize
BUDGET_SHARE = 0.5  # of the time limit: the bounded checks' timeBudgetSeconds when the caller sets none
STDERR_TAIL = 30
MAX_LINE = 32 * 1024 * 1024  # the result is one JSON line; a shape trace of a big model is long
EXIT_TOO_OLD = 3
TOO_OLD_MESSAGE = "Torch Doctor checks need Python >= 3.9"
AFTER_RESULT_GRACE = 1.0  # seconds a worker gets to exit on its own once its result is in
DRAIN_SECONDS = 2.0  # after the worker exited: time for the last lines still in the pipes
MAX_HEADLINE = 600
MAX_MESSAGE = 2000
MAX_DETAIL = 64 * 1024

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
    memory_limit_mb: Optional[int] = None  # None or 0: default_memory_limit_mb()


def default_memory_limit_mb() -> int:
    """Three quarters of this machine's memory: generous for a check, short of the OOM killer."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0  # unknown: no limit
    return int(total * 0.75) // (1024 * 1024)


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


class _Run:
    """One worker process and what it has said so far."""

    def __init__(self, spec: JobSpec, on_progress: Optional[ProgressCallback], on_stderr: Optional[StderrCallback]):
        self.spec = spec
        self.nonce = secrets.token_hex(16)
        self.job_id = secrets.token_hex(8)
        self.result: Optional[dict] = None
        self.got_result = asyncio.Event()
        self.tail: collections.deque = collections.deque(maxlen=STDERR_TAIL)
        self.on_progress = on_progress
        self.log = LogBudget(on_stderr)
        self.proc: Optional[asyncio.subprocess.Process] = None
        self.control_w: Optional[int] = None

    def on_stdout(self, raw: bytes, cut: int) -> None:
        """Protocol lines; anything that is not our JSON (or a result without our nonce) is ignored."""
        if cut:
            return  # a cut line is not JSON: the worker never writes lines this long
        try:
            event = json.loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            return
        if not isinstance(event, dict):
            return
        if event.get("event") == "progress" and self.on_progress is not None:
            try:
                self.on_progress(float(event.get("fraction", 0.0)), str(event.get("message", ""))[:MAX_HEADLINE])
            except (TypeError, ValueError):
                pass
        elif event.get("event") == "result" and isinstance(event.get("result"), dict):
            if event.get("nonce") == self.nonce and self.result is None:
                self.result = event["result"]
                self.got_result.set()

    def on_stderr_line(self, raw: bytes, cut: int) -> None:
        line = raw.decode("utf-8", errors="replace").rstrip("\r") + cut_note(cut)
        self.tail.append(line)
        self.log(line)

    def kill(self) -> None:
        if self.proc is not None:
            process_tree.kill_tree(self.proc.pid, self.job_id, leader_alive=self.proc.returncode is None)

    def close_control(self) -> None:
        if self.control_w is not None:
            try:
                os.close(self.control_w)
            except OSError:
                pass
            self.control_w = None


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
    run = _Run(spec, on_progress, on_stderr)
    try:
        run.proc = await _spawn(python, run)
    except OSError as exc:
        run.close_control()
        return _err(
            spec,
            R.ERR_NO_INTERPRETER,
            f"cannot start the interpreter {python}: {exc.strerror or exc}. Set torchDoctor.python to a Python with torch.",
        )
    try:
        outcome = await _supervise(run)
    finally:
        run.close_control()  # the worker's watchdog sees end of file: nothing outlives the job
    run.log.close()
    if outcome == "timeout":
        return _timeout(spec, python, started)
    return _finish(spec, python, run.proc.returncode, run.result, run.tail, started)


async def _supervise(run: _Run) -> str:
    """Wait for the result, the worker's exit or the time limit; then stop everything. "done" or "timeout"."""
    proc = run.proc
    assert proc is not None and proc.stdout is not None and proc.stderr is not None
    feeder = asyncio.ensure_future(_feed(proc, run.spec.source))
    readers = [
        asyncio.ensure_future(read_lines(proc.stdout, run.on_stdout, MAX_LINE)),
        asyncio.ensure_future(read_lines(proc.stderr, run.on_stderr_line, STDERR_LINE)),
    ]
    exited = asyncio.ensure_future(proc.wait())
    result_in = asyncio.ensure_future(run.got_result.wait())
    tasks = [feeder, *readers, exited, result_in]
    try:
        await asyncio.wait([exited, result_in], timeout=run.spec.timeout, return_when=asyncio.FIRST_COMPLETED)
        if result_in.done():
            await asyncio.wait([exited], timeout=AFTER_RESULT_GRACE)  # let it exit and flush on its own
        elif exited.done():
            # the last lines (the result among them) may still be in the pipe; a child holding the
            # pipe open must not hold us past the drain time
            await asyncio.wait([readers[0], result_in], timeout=DRAIN_SECONDS, return_when=asyncio.FIRST_COMPLETED)
        outcome = "done" if result_in.done() or exited.done() else "timeout"
        run.kill()
        await asyncio.wait(readers, timeout=0.5)  # stderr written before the kill still counts
    except asyncio.CancelledError:
        run.kill()
        _cancel(tasks)
        try:  # reap it, so no transport outlives the event loop
            await asyncio.wait_for(proc.wait(), 5)
        except BaseException:
            pass
        raise
    _cancel(tasks)
    await asyncio.gather(*tasks, return_exceptions=True)
    await _reap(proc)
    return outcome


def _cancel(tasks: list) -> None:
    for t in tasks:
        if not t.done():
            t.cancel()


def _precheck(spec: JobSpec) -> Optional[dict]:
    if spec.check not in R.CHECKS:
        return _err(spec, R.ERR_USAGE, f"unknown check {spec.check!r}: choose one of {', '.join(R.CHECKS)}")
    bad = _bad_limits(spec) or _bad_text(spec)
    if bad is not None:
        return _err(spec, R.ERR_USAGE, bad)
    if spec.source is None and not os.path.isfile(spec.file):
        return _err(spec, R.ERR_USAGE, f"no such file: {spec.file}")
    if resolve_interpreter(spec.python) is None:
        return _err(
            spec,
            R.ERR_NO_INTERPRETER,
            f"the interpreter {spec.python} was not found: set torchDoctor.python to the Python of your project (one with torch).",
        )
    return None


def give_budget(options: dict, timeout: object) -> None:
    """``timeBudgetSeconds``: ``BUDGET_SHARE`` of the time limit unless the caller set one (the editor and the
    CLI), so that the bounded checks (overfit, LR finder, gradient check) report what they measured before
    the limit kills the worker; ``timeBudgetShare`` says that the budget is that share, for their advice
    (raise the time limit, not the option)."""
    options.pop("timeBudgetShare", None)
    if "timeBudgetSeconds" in options or isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        return
    if math.isfinite(timeout) and timeout > 0:
        options["timeBudgetSeconds"] = round(BUDGET_SHARE * float(timeout), 3)
        options["timeBudgetShare"] = BUDGET_SHARE


def _bad_limits(spec: JobSpec) -> Optional[str]:
    """What is wrong with the time limit, batch size or memory limit, or None."""
    t = spec.timeout
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
        return (
            f"the time limit {t!r} is not a positive number of seconds: "
            "set torchDoctor.checks.timeoutSeconds (or timeoutSeconds) to a value such as 120"
        )
    if t > MAX_TIMEOUT:
        return f"the time limit {fmt_num(float(t), 6)} s is above the maximum {fmt_num(MAX_TIMEOUT, 6)} s"
    batch = spec.options.get("batchSize")
    if batch is not None and (
        isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH_SIZE
    ):
        return f"batchSize {batch!r} is not an integer from 1 to {MAX_BATCH_SIZE}: set torchDoctor.checks.batchSize within that range"
    mem = spec.memory_limit_mb
    if mem is not None and (isinstance(mem, bool) or not isinstance(mem, int) or mem < 0):
        return f"the memory limit {mem!r} is not a whole number of megabytes (0: the default)"
    return None


def _bad_text(spec: JobSpec) -> Optional[str]:
    """A null byte cannot be passed to a process (a ``%00`` in a URI): say which value has one."""
    values = {"file path": spec.file, "class name": spec.class_name, "interpreter": spec.python, "folder": spec.cwd}
    for what, value in values.items():
        if value and "\0" in value:
            return f"the {what} {value.replace(chr(0), '%00')!r} contains a null byte: no such file can exist"
    return None


async def _spawn(python: str, run: _Run) -> asyncio.subprocess.Process:
    spec = run.spec
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
    env[process_tree.JOB_MARKER] = run.job_id
    env[worker_guard.PARENT_PID] = str(os.getpid())
    limit = spec.memory_limit_mb or default_memory_limit_mb()
    if limit:
        env[worker_guard.MEMORY_LIMIT_MB] = str(limit)
    kwargs: dict = (
        {"start_new_session": True}
        if os.name == "posix"
        else {"creationflags": getattr(__import__("subprocess"), "CREATE_NEW_PROCESS_GROUP", 0)}
    )
    if os.name == "posix":
        control_r, run.control_w = os.pipe()
        os.write(run.control_w, (run.nonce + "\n").encode("ascii"))
        env[worker_guard.CONTROL_FD] = str(control_r)
        kwargs["pass_fds"] = (control_r,)
    else:  # no fd passing: the nonce travels in the environment
        env[worker_guard.NONCE] = run.nonce
    try:
        return await asyncio.create_subprocess_exec(
            *worker_command(python, spec),
            stdin=asyncio.subprocess.PIPE if spec.source is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=spec.cwd or os.path.dirname(os.path.abspath(spec.file)) or None,
            env=env,
            **kwargs,
        )
    finally:
        if os.name == "posix":
            os.close(control_r)


async def _feed(proc, source: Optional[str]) -> None:
    if source is None or proc.stdin is None:
        return
    try:
        # surrogatepass: a lone surrogate reaches the worker, whose compile() names it
        proc.stdin.write(source.encode("utf-8", "surrogatepass"))
        await proc.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the worker died early; its exit status tells why
    finally:
        proc.stdin.close()


async def _reap(proc) -> None:
    try:
        await asyncio.wait_for(proc.wait(), timeout=5)
    except asyncio.TimeoutError:
        pass


def _finish(spec: JobSpec, python: str, code: Optional[int], result: Optional[dict], tail, started: float) -> dict:
    if result is None:
        result = _crash(spec, python, code, tail)
    result = _bounded(R.sanitize(result))
    result["python"] = result.get("python") or python
    result["durationSeconds"] = round(time.monotonic() - started, 3)
    return result


def _bounded(result: dict) -> dict:
    """Prose the view and the log can afford: a 10,000-line exception made a 1.2 MB headline."""
    if isinstance(result.get("headline"), str):
        result["headline"] = _cut(result["headline"], MAX_HEADLINE)
    if isinstance(result.get("sentences"), list):
        result["sentences"] = [_cut(s, MAX_MESSAGE) if isinstance(s, str) else s for s in result["sentences"][:50]]
    error = result.get("error")
    if isinstance(error, dict):
        if isinstance(error.get("message"), str):
            error["message"] = _cut(error["message"], MAX_MESSAGE)
        if isinstance(error.get("detail"), str) and len(error["detail"]) > MAX_DETAIL:
            cut = len(error["detail"]) - MAX_DETAIL
            error["detail"] = f"… ({cut} characters cut)\n" + error["detail"][-MAX_DETAIL:]  # the end says most
    return result


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 40] + f" … ({len(text) - limit + 40} characters cut)"


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
        f"The check worker ({python}) stopped without a result ({how})"
        + (f": {_cut(lines[-1].strip(), MAX_HEADLINE)}" if lines else ".")
        + _crash_hint(spec, code),
        detail=last,
    )


def _crash_hint(spec: JobSpec, code: Optional[int]) -> str:
    """What an exit status usually means, in a sentence."""
    if code is not None and code > 0:
        return (
            f" The model's code (or a library it imports) ended the process with exit status {code}, "
            "for example with os._exit() or in a C extension; a check needs the model to return."
        )
    if code == -signal.SIGKILL:
        limit = spec.memory_limit_mb or default_memory_limit_mb()
        return (
            " SIGKILL comes from outside the worker, most often the system's out-of-memory killer"
            + (f" (the worker's own limit is {limit} MB, torchDoctor.checks.memoryLimitMB)" if limit else "")
            + ": make the example batch smaller."
        )
    if code == -signal.SIGSEGV:
        return " A segmentation fault is a crash in native code (torch, a CUDA driver or a C extension), not in Python."
    return ""


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
