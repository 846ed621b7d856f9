"""Child processes the script starts for its own work, counted so that a run that trained in them
is not summed up as "0 training steps" without a reason.

The monitor records the process it was started in. pytorch/examples' mnist_hogwild trains in
``torch.multiprocessing`` workers, so its report has no step: the end of the run then says that
the training ran in N child processes. DataLoader workers (``_worker_loop``) are not counted: they
load data, the steps stay in this process. Stdlib only; the count is read once, at the end.
"""

from __future__ import annotations

from typing import Any, Dict

_STATE: Dict[str, Any] = {"started": 0, "original": None}
_LOADER_WORKER = "_worker_loop"  # torch.utils.data._utils.worker._worker_loop


def watch() -> None:
    """Count the ``multiprocessing`` processes started from now on (``Process.start``)."""
    try:
        from multiprocessing import process
    except ImportError:
        return
    if _STATE["original"] is not None:
        return
    original = process.BaseProcess.start

    def start(self: Any) -> None:
        if getattr(getattr(self, "_target", None), "__name__", "") != _LOADER_WORKER:
            _STATE["started"] += 1
        return original(self)

    _STATE["original"] = original
    process.BaseProcess.start = start  # type: ignore[method-assign]


def stop() -> int:
    """Put ``Process.start`` back; the number of processes counted."""
    original, _STATE["original"] = _STATE["original"], None
    if original is not None:
        from multiprocessing import process

        process.BaseProcess.start = original  # type: ignore[method-assign]
    started, _STATE["started"] = _STATE["started"], 0
    return started
