"""Arming the monitor: ``TORCHDOCTOR_MONITOR=<json>`` in debug sessions, ``torchdoctor run --monitor``.

:func:`activate` registers the installer with :func:`runtime.startup.when_torch_imported` (like
the anomaly watch), so the recorder starts the moment the program's ``import torch`` has run.
The installer adds the channel to the view (when the settings name one) and the TensorBoard
writer (when they name a folder), and an ``atexit`` handler that reads the last steps, sends
the ``end`` line and closes the writer. Stdlib only until torch is there; never raises.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Any, Dict, List, Mapping, Optional

from .. import startup as runtime_startup
from .config import MonitorConfig, from_env

NAME = "monitor"
_STATE: Dict[str, Any] = {"activated": False, "problems": [], "channel": None, "board": None}


def activate(environ: Optional[Mapping[str, str]] = None, config: Optional[MonitorConfig] = None) -> bool:
    """Arrange for the monitor; True if it is (or will be, at ``import torch``) installed."""
    try:
        config = config or from_env(os.environ if environ is None else environ)
        if config is None or _STATE["activated"]:
            return False
        _STATE["activated"] = True
        _STATE["problems"] = list(config.problems)
        return runtime_startup.when_torch_imported(NAME, lambda torch: _install(config))
    except Exception as exc:
        _STATE["problems"].append(f"activation failed: {type(exc).__name__}: {exc}")
        return False


def problems() -> List[str]:
    return list(_STATE["problems"])


def board() -> Any:
    return _STATE["board"]


def channel() -> Any:
    return _STATE["channel"]


def finish() -> Any:
    """Stop recording: the last steps read, the channel's ``end`` sent, the writer closed.
    Returns the monitor (its series and findings stay readable), or None."""
    from . import recorder

    monitor = recorder.uninstall()
    for key in ("channel", "board"):
        part = _STATE[key]
        _STATE[key] = None
        if part is not None:
            try:
                part.close()
            except Exception as exc:
                _STATE["problems"].append(f"{key} could not close: {type(exc).__name__}: {exc}")
    return monitor


def reset() -> None:
    _STATE["activated"] = False
    runtime_startup.forget(NAME)


def _install(config: MonitorConfig) -> None:
    try:
        from . import recorder

        monitor = recorder.install(config)
    except Exception as exc:
        _STATE["problems"].append(f"the monitor could not start: {type(exc).__name__}: {exc}")
        return
    if config.channel:
        try:
            from .channel import Channel

            ch = config.channel
            _STATE["channel"] = Channel(ch.get("host", "127.0.0.1"), ch["port"], ch["token"]).start()
            monitor.listeners.append(_STATE["channel"].push)
        except Exception as exc:
            _STATE["problems"].append(f"the channel could not start: {type(exc).__name__}: {exc}")
    if config.tensorboard:
        from . import board as board_module

        writer, problem = board_module.open_writer(config.tensorboard, monitor)
        if problem:
            _STATE["problems"].append(problem)
            from ..anomaly.pause import announce

            announce(problem, prefix="[torchdoctor] ")
        _STATE["board"] = writer
    atexit.register(_at_exit)
    _chain_excepthook(monitor)


def _chain_excepthook(monitor: Any) -> None:
    """A debug session's uncaught ``torch.OutOfMemoryError`` gets its explanation (``cuda_oom``)."""
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        try:
            monitor.note_exception(value)
        finally:
            previous(kind, value, tb)

    sys.excepthook = excepthook


def _at_exit() -> None:
    try:
        from . import recorder

        if recorder.current() is not None:
            finish()
    except Exception:
        pass
