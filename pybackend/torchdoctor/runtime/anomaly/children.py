"""Every process of a ``torchdoctor run`` is watched, and the parent's exit status says so.

- Spawned children (``torch.multiprocessing`` spawn, hogwild ``mp.Process`` with the spawn
  context, ``spawn`` DataLoader workers) start a fresh interpreter: :func:`prepare_children`
  puts ``boot/`` (a ``sitecustomize``) and our package on their ``PYTHONPATH`` and the settings
  in ``TORCHDOCTOR_ANOMALY``; the child arms the same watch at its ``import torch``
  (:func:`start_in_child`).
- Forked children (``fork`` DataLoader workers, ``os.fork``) inherit the parent's watch;
  ``os.register_at_fork`` points their reports to the same place.
- Each child appends its reports, one JSON line each, to a file of its own in the folder named
  by ``TORCHDOCTOR_ANOMALY_REPORTS``; :func:`collect` reads them when the script ends.
- A DataLoader worker (``get_worker_info()``) reports once, with its worker id and the sample
  index when a ``__getitem__`` frame has one, and never stops: in break mode a worker that
  raised would die with a traceback of ours and take the main process down with "DataLoader
  worker exited unexpectedly"; the main process's exit status says it instead. Any other child
  in break mode prints the report and exits with status 1 (break stops the run). The parent's
  ``torch.multiprocessing.spawn`` then raises ``ProcessExitedException`` in the script; instead
  of that traceback, :func:`explain_child_stop` says in one line which child stopped, and why.
"""

from __future__ import annotations

import json
import os
import sys
from types import FrameType
from typing import Any, Dict, List, Optional

REPORTS_ENV = "TORCHDOCTOR_ANOMALY_REPORTS"
CONFIG_ENV = "TORCHDOCTOR_ANOMALY"
BOOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boot")
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

_STATE: Dict[str, Any] = {"parent": None, "folder": None}


def prepare_children(config_json: str, folder: str) -> None:
    """In ``torchdoctor run``, before the script: what its children inherit."""
    _STATE["parent"], _STATE["folder"] = os.getpid(), folder
    os.environ[CONFIG_ENV] = config_json
    os.environ[REPORTS_ENV] = folder
    paths = [BOOT, PACKAGE_ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork)


def forget_children() -> None:
    for name in (CONFIG_ENV, REPORTS_ENV):
        os.environ.pop(name, None)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != BOOT]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    _STATE["parent"] = _STATE["folder"] = None


def collect(folder: str) -> List[Dict[str, Any]]:
    """The reports every child wrote, in the order of their files."""
    found: List[Dict[str, Any]] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return found
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as lines:
                found += [json.loads(line) for line in lines if line.strip()]
        except (OSError, ValueError):
            continue
    return found


def start_in_child() -> None:
    """In a spawned child (``boot/sitecustomize.py``): arm the watch at ``import torch``."""
    from . import startup, watch

    watch.set_sink(_write)
    startup.activate(on_break=_child_break)


def _after_fork() -> None:
    from . import watch

    if _STATE["parent"] is not None and os.getpid() != _STATE["parent"]:
        watch.set_sink(_write)
        current = watch.current()
        if current is not None:
            current.on_break = _child_break


def _write(report: Dict[str, Any]) -> None:
    """Append one report to this process's file (the parent reads them at the end)."""
    folder = os.environ.get(REPORTS_ENV)
    if not folder:
        return
    report = dict(report, pid=os.getpid())
    worker = _worker()
    if worker is not None:
        report["worker_id"], report["process"] = worker, f"DataLoader worker {worker}"
    try:
        with open(os.path.join(folder, f"{os.getpid()}.jsonl"), "a", encoding="utf-8") as out:
            out.write(json.dumps(report) + "\n")
    except OSError:
        pass


write_report = _write  # public: a torchrun rank (distributed/rank_entry.py) adds its rank first


def _worker() -> Optional[int]:
    data = sys.modules.get("torch.utils.data")
    info = data.get_worker_info() if data is not None and hasattr(data, "get_worker_info") else None
    return getattr(info, "id", None)


def in_worker() -> bool:
    return _worker() is not None


def sample_index(frame: Optional[FrameType]) -> Optional[Any]:
    """The index a dataset's ``__getitem__`` on this stack was asked for."""
    while frame is not None:
        code = frame.f_code
        if code.co_name in ("__getitem__", "__getitems__") and code.co_argcount >= 2:
            value = frame.f_locals.get(code.co_varnames[1])
            return value if isinstance(value, (int, list, tuple)) else None
        frame = frame.f_back
    return None


def _child_break(report: Dict[str, Any]) -> None:
    """Break mode in a child: a worker goes on (its report is out); another child exits 1."""
    if in_worker():
        return
    from .render import render_report

    sys.stdout.flush()
    # One write (``print`` makes two when output is unbuffered): children share the parent's stderr.
    sys.stderr.write(render_report(report, with_sentence=False) + "\n")
    sys.stderr.flush()
    raise SystemExit(1)


def explain_child_stop(exc: BaseException, stream: Any = None) -> bool:
    """When the script died of ``exc`` after a child stopped at an anomaly (break mode), say so in
    one line, instead of the traceback of ``torch.multiprocessing``'s "process N terminated with
    exit code 1"; True if said. Any other failure: False (the caller prints its traceback)."""
    folder = _STATE.get("folder")
    if not folder or isinstance(exc, (KeyboardInterrupt, SystemExit)):
        return False
    stopped = [
        r for r in collect(folder) if r.get("action") == "break" and not r.get("advice") and "worker_id" not in r
    ]
    if not stopped:
        return False
    first = stopped[0]
    where = str(first.get("process") or f"child process {first.get('pid')}")
    print(
        f"torchdoctor run: the script stopped because {where} stopped at the anomaly reported above "
        f"(break mode); its parent then got {type(exc).__name__}: {str(exc).strip()[:200]}",
        file=stream if stream is not None else sys.stderr,
    )
    return True
