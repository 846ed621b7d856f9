"""Run the data check in a worker subprocess of the user's interpreter (backend side: no numpy, no torch).

The model checks' job control is reused as it is (``checks/jobs.py``'s run supervision with the
time limit, the nonce-signed result line, bounded streams and killing the whole process tree);
only the command differs: the bootstrap starts ``data_checks/worker.py``. Always returns a result
(``findings.py``'s shape): the worker's, or an ERROR that says why there is none.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Optional

from ..checks import jobs as checks_jobs
from ..checks import process_tree, worker_guard
from . import findings as F

DEFAULT_TIMEOUT = 120.0
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


def command(python: str, spec: DataJobSpec) -> list:
    cmd = [python, "-c", _BOOTSTRAP, checks_jobs._PACKAGE_DIR, "--file", spec.file, "--name", spec.name]
    cmd += ["--options", json.dumps(spec.options)]
    if spec.source is not None:
        cmd.append("--stdin")
    return cmd


async def run_data_check(spec: DataJobSpec, on_progress=None, on_stderr=None) -> dict:
    spec.file = os.path.abspath(spec.file)
    target = spec.name or os.path.basename(spec.file)
    python = checks_jobs.resolve_interpreter(spec.python)
    if python is None:
        return F.error_result(target, spec.file, "no-interpreter", f"the interpreter {spec.python} was not found")
    run = checks_jobs._Run(spec, on_progress, on_stderr)  # type: ignore[arg-type]
    try:
        run.proc = await _spawn(python, run, spec)
    except OSError as exc:
        run.close_control()
        return F.error_result(target, spec.file, "no-interpreter", f"cannot start {python}: {exc}")
    try:
        outcome = await checks_jobs._supervise(run)
    finally:
        run.close_control()
    run.log.close()
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
            f"the data-check worker stopped without a result (exit status {run.proc.returncode}): {last[0][:300]}",
            tail,
        )
    result = run.result
    result["python"] = result.get("python") or python
    return result


async def _spawn(python: str, run, spec: DataJobSpec) -> asyncio.subprocess.Process:
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
            *command(python, spec),
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
