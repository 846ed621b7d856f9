"""Making an anomaly seen: the stderr line, and the debugger stop at the user's frame.

**The line.** ``[torchdoctor] anomaly: <sentence>``, one line, plain text. Under debugpy it
reaches VS Code as a DAP ``output`` event (category ``stderr``) sent by pydevd just before the
``stopped`` event; elsewhere (``torchdoctor run``, no client connected) it is written to stderr.

**The stop.** pydevd can suspend the current thread on a traceback of our choosing
(``PyDB.trigger_exception_handler(excinfo, as_uncaught=False)``, debugpy >= 1.8.22; older
pydevd: ``do_stop_on_unhandled_exception``, which it wraps). We hand it a one-entry traceback
whose frame is the user's frame (the call site in their ``forward``, or their
``loss.backward()`` / ``optimizer.step()`` line) and an exception object that carries the
sentence. So:

- the ``stopped`` event has ``reason: "exception"``, ``text: "torchdoctor.Anomaly"`` and
  ``description: <sentence>``; VS Code shows "Paused on exception" and opens its exception
  widget on the user's line with the sentence in it;
- the stack starts at the user's frame: our hook and torch's ``_call_impl`` are not in it, and
  every user frame below it is live (locals, evaluate, hover);
- ``exceptionInfo`` answers ``exceptionId: "torchdoctor.Anomaly"`` and the sentence;
- the thread is really suspended inside our hook: Continue returns from the hook and the
  program goes on exactly as it would have (nothing is raised into user code).

Stepping from this stop is not supported by pydevd (it treats it like a post-mortem stop);
Continue is. Outside a debug session (no client connected) nothing pauses.
"""

from __future__ import annotations

import sys
import threading
import types
from typing import Any, Dict, Optional

LINE_PREFIX = "[torchdoctor] anomaly: "
ADVICE_PREFIX = "[torchdoctor] advice: "  # a loss trend: a note, never a stop


class TorchDoctorAnomaly(Exception):
    """What the debugger shows for a stop: its text is the sentence; ``report`` has the rest.

    Never raised: it only rides in the ``excinfo`` pydevd displays.
    """

    def __init__(self, sentence: str, report: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(sentence)
        self.report = report or {}


TorchDoctorAnomaly.__module__ = "torchdoctor"


def announce(sentence: str, stream: Any = None, prefix: str = LINE_PREFIX) -> None:
    """Write the one-line form; never raises (a closed stderr loses the line, nothing else).

    Under a connected debugger the line goes through pydevd's own channel as a DAP ``output``
    event (category ``stderr``) rather than through the process's stderr: it then reaches VS Code
    whatever the ``console`` setting (an integrated terminal would swallow stderr), exactly once,
    and before the ``stopped`` event (same queue), not racing it through the launcher's pipe.
    """
    line = prefix + " ".join(sentence.split()) + "\n"
    if stream is None and debugger_attached() and _to_debugger(line):
        return
    try:
        if stream is None:
            sys.stdout.flush()  # the script's own prints come first when both go to one file
        out = stream if stream is not None else sys.stderr
        out.write(line)
        out.flush()
    except Exception:
        pass


def _to_debugger(line: str) -> bool:
    try:
        py_db = sys.modules["pydevd"].get_global_debugger()
        py_db.writer.add_command(py_db.cmd_factory.make_io_message(line, 2))  # 2: stderr
        return True
    except Exception:
        return False


def debugger_attached() -> bool:
    """A pydevd debugger is running in this process and a client (VS Code) is connected."""
    debugpy = sys.modules.get("debugpy")
    pydevd = sys.modules.get("pydevd")
    if debugpy is None or pydevd is None:
        return False
    try:
        return bool(debugpy.is_client_connected()) and pydevd.get_global_debugger() is not None
    except Exception:
        return False


def pause(frame: types.FrameType, sentence: str, report: Optional[Dict[str, Any]] = None) -> bool:
    """Suspend this thread at ``frame`` until the user continues. False if it could not."""
    pydevd = sys.modules.get("pydevd")
    py_db = pydevd.get_global_debugger() if pydevd is not None else None
    if py_db is None or frame is None:
        return False
    exc = TorchDoctorAnomaly(sentence, report)
    excinfo = (TorchDoctorAnomaly, exc, types.TracebackType(None, frame, frame.f_lasti, frame.f_lineno))
    try:
        try:
            _suspend_as_caught(py_db, frame, excinfo)
        except (ImportError, AttributeError):  # a pydevd without the pieces we use: its public way
            py_db.trigger_exception_handler(excinfo, as_uncaught=False)
        return True
    except Exception:
        return False
    finally:
        exc.__traceback__ = None  # drop the frame reference (the stop is over)


def _suspend_as_caught(py_db: Any, frame: types.FrameType, excinfo) -> None:
    """pydevd's own stop on a caught exception ("raised" exception breakpoints), at ``frame``.

    Why not ``trigger_exception_handler``: it stops as on an *unhandled* exception, which marks
    the outermost frame (``runpy``'s, under ``justMyCode: false``) as the "current frame" and
    appends "(note: full exception trace is shown but execution is paused at: ...)" to the
    exception name. A caught-exception stop marks no frame: the user's frame is the top one.
    Like ``trigger_exception_handler``, tracing of this thread is held off while suspended so
    that evaluations in the Debug Console do not re-enter the tracer.
    """
    from _pydevd_bundle.pydevd_comm_constants import CMD_STEP_CAUGHT_EXCEPTION  # type: ignore[import-not-found]
    from _pydevd_bundle.pydevd_constants import (  # type: ignore[import-not-found]
        EXCEPTION_TYPE_HANDLED,
        PYDEVD_USE_SYS_MONITORING,
    )

    monitoring: Any = None
    if PYDEVD_USE_SYS_MONITORING:
        from _pydevd_sys_monitoring import pydevd_sys_monitoring  # type: ignore[import-not-found]

        monitoring = pydevd_sys_monitoring
    thread = threading.current_thread()
    info = py_db.set_additional_thread_info(thread)
    held = bool(monitoring and monitoring.suspend_current_thread_tracing())
    info.is_tracing += 1
    try:
        py_db.set_suspend(thread, CMD_STEP_CAUGHT_EXCEPTION)
        py_db.do_wait_suspend(thread, frame, "exception", excinfo, EXCEPTION_TYPE_HANDLED)
    finally:
        info.is_tracing -= 1
        if held:
            monitoring.resume_current_thread_tracing()
