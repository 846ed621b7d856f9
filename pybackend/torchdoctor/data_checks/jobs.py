"""Run the data check in a worker subprocess of the user's interpreter (backend side: no numpy, no torch).

The model checks' job control is reused as it is (``checks/jobs.py``'s run supervision with the
time limit, the nonce-signed result line, bounded streams and killing the whole process tree);
only the command differs: the bootstrap starts ``data_checks/worker.py``. Always returns a result
(``findings.py``'s shape): the worker's, or an ERROR that says why there is none.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Optional

from ..checks import jobs as checks_jobs
from ..checks import process_tree, worker_guard
from . import ended, watch
from . import findings as F
from .loader_errors import exit_cause

DEFAULT_TIMEOUT = 120.0
STACK_WAIT = 1.5  # seconds the stacks get to be written at the time limit
STACK_POLL = 0.05
BACKSTOP = 5.0  # the job layer's own limit comes this long after that, should our stop fail
_BOOTSTRAP = checks_jobs._BOOTSTRAP.replace(
    "from torchdoctor.checks.worker import main", "from torchdoctor.data_checks.worker import main"
)
assert "data_checks.worker" in _BOOTSTRAP


@dataclass
class DataJobSpec:
    file: str
    name: str = ""
    python: str = ""
    options: dict = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    source: Optional[str] = None
    cwd: Optional[str] = None
    memory_limit_mb: Optional[int] = None


def command(python: str, spec: DataJobSpec, watch_folder: str = "") -> list:
    cmd = [python, "-c", _BOOTSTRAP, checks_jobs._PACKAGE_DIR, "--file", spec.file, "--name", spec.name]
    cmd += ["--options", json.dumps(spec.options)]
    if spec.source is not None:
        cmd.append("--stdin")
    if watch_folder:
        cmd += ["--watch", watch_folder]
    return cmd


async def run_data_check(spec: DataJobSpec, on_progress=None, on_stderr=None) -> dict:
    """The worker's result, or an ERROR that says why there is none: a crash or a hang in the data's
    code is named with what it was drawing and where (``ended.py``, from the worker's notes in a
    folder of ours, removed afterwards)."""
    folder = tempfile.mkdtemp(prefix="torchdoctor-data-")
    try:
        return await _run(spec, folder, on_progress, on_stderr)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def _run(spec: DataJobSpec, folder: str, on_progress, on_stderr) -> dict:
    spec.file = os.path.abspath(spec.file)
    target = spec.name or os.path.basename(spec.file)
    python = checks_jobs.resolve_interpreter(spec.python)
    if python is None:
        return F.error_result(target, spec.file, "no-interpreter", f"the interpreter {spec.python} was not found")
    # the job layer's own limit is a backstop: at ours the stacks are asked for, then the tree is killed
    backstop = dataclasses.replace(spec, timeout=spec.timeout + STACK_WAIT + BACKSTOP)
    run = checks_jobs._Run(backstop, on_progress, on_stderr)  # type: ignore[arg-type]
    try:
        run.proc = await _spawn(python, run, spec, folder)
    except OSError as exc:
        run.close_control()
        return F.error_result(target, spec.file, "no-interpreter", f"cannot start {python}: {exc}")
    pid = run.proc.pid
    asked: dict = {}
    limit = asyncio.ensure_future(_at_limit(run, folder, spec.timeout, asked))
    try:
        outcome = await checks_jobs._supervise(run)
    finally:
        limit.cancel()
        run.close_control()
    run.log.close()
    if run.result is None and limit.done() and not limit.cancelled():
        outcome = "timeout"  # stopped at the limit, after its stacks were written
    said = None
    if outcome == "timeout":
        said = ended.timed_out(target, spec.file, spec.timeout, folder, pid, asked)
    elif run.result is None:
        said = ended.crashed(target, spec.file, run.proc.returncode, folder, pid)
    if said is not None:
        return said
    if outcome == "timeout":
        return F.error_result(
            target,
            spec.file,
            "timeout",
            f"the data check did not finish within {spec.timeout:g} s, so the worker was stopped: the dataset "
            "may hang (a DataLoader worker, a lock) or be slow to draw; raise --timeout or lower maxSamples "
            "(--options '{\"maxSamples\": 500}').",
        )
    if run.result is None:
        tail = "\n".join(run.tail)
        last = [ln for ln in run.tail if ln.strip()][-1:] or [""]
        return F.error_result(
            target,
            spec.file,
            "worker-crash",
            f"the data-check worker stopped without a result: {exit_cause(run.proc.returncode)}"
            + (f". Its last words: {last[0][:300]}" if last[0] else ""),
            tail,
        )
    result = run.result
    result["python"] = result.get("python") or python
    return result


async def _at_limit(run, folder: str, timeout: float, asked: dict) -> None:
    """At the time limit: have the worker and its watched forks write their Python stacks, give
    them up to ``STACK_WAIT`` seconds, then stop the whole tree (``_supervise`` then sees it end)."""
    await asyncio.sleep(timeout)
    asked.update(ended.ask_for_stacks(folder, run.proc.pid))
    waiting = [p for p, state in asked.items() if state not in ("T", "t")]  # a stopped process cannot answer
    sizes: dict = {}
    for _ in range(int(STACK_WAIT / STACK_POLL)):
        now = {p: watch.stack_size(folder, p) for p in waiting}
        if all(now[p] and now[p] == sizes.get(p) for p in waiting):
            break  # every stack written, and no longer growing
        sizes = now
        await asyncio.sleep(STACK_POLL)
    run.kill()


async def _spawn(python: str, run, spec: DataJobSpec, watch_folder: str = "") -> asyncio.subprocess.Process:
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
    env[process_tree.JOB_MARKER] = run.job_id
    env[worker_guard.PARENT_PID] = str(os.getpid())
    limit = spec.memory_limit_mb or checks_jobs.default_memory_limit_mb()
    if limit:
        env[worker_guard.MEMORY_LIMIT_MB] = str(limit)
    kwargs: dict = {"start_new_session": True} if os.name == "posix" else {}
    control_r = None
    if os.name == "posix":
        control_r, run.control_w = os.pipe()
        os.write(run.control_w, (run.nonce + "\n").encode("ascii"))
        env[worker_guard.CONTROL_FD] = str(control_r)
        kwargs["pass_fds"] = (control_r,)
    else:
        env[worker_guard.NONCE] = run.nonce
    try:
        return await asyncio.create_subprocess_exec(
            *command(python, spec, watch_folder),
            stdin=asyncio.subprocess.PIPE if spec.source is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=spec.cwd or os.path.dirname(spec.file) or None,
            env=env,
            **kwargs,
        )
    finally:
        if control_r is not None:
            os.close(control_r)
