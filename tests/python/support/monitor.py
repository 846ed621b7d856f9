"""Shared helper for the recorder's tests: a monitor installed in this process, its events kept."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator


@contextlib.contextmanager
def recording(**config: Any) -> Iterator[Any]:
    """``recorder.install(MonitorConfig(**config))``, every event appended to ``monitor.events``
    as ``(kind, payload)``; uninstalled on the way out."""
    from torchdoctor.runtime.monitor import recorder
    from torchdoctor.runtime.monitor.config import MonitorConfig

    m = recorder.install(MonitorConfig(**config))
    events: list = []
    m.listeners.append(lambda kind, payload: events.append((kind, payload)))
    m.events = events
    try:
        yield m
    finally:
        recorder.uninstall()
