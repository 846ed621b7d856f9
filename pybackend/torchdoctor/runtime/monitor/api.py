"""``torchdoctor.log(name, value, step=None)``: a series of your own beside the monitor's.

Without a running monitor (a plain ``python train.py``) it does nothing, so the call can stay in
the script. ``value``: a number or a one-element tensor (read with ``.item()``, as
``SummaryWriter.add_scalar`` would); ``step``: the first optimizer's step count by default.
"""

from __future__ import annotations

from typing import Any, Optional


def log(name: str, value: Any, step: Optional[int] = None) -> None:
    from . import recorder

    monitor = recorder.current()
    if monitor is None:
        return
    try:
        monitor.user_value(str(name), value, step)
    except Exception as exc:
        monitor._error(exc)
