"""Gradient flow and shape trace: ``torchDoctor/diagnoseSnapshot``.

The extension sends the snapshot the paused debuggee wrote (``runtime/collect/snapshot.py``); this
applies seed 002's rules with the thresholds of the ``torchDoctor.diagnosis.*`` settings and
answers both view models (``diagnosis/``). Payloads are documented in ``protocol.py``. No torch
here; a snapshot that is not one is an answer that says so, never an error.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pygls.lsp.server import LanguageServer

from ..diagnosis import Thresholds, diagnose
from . import protocol
from .params import plain
from .settings import settings_for

log = logging.getLogger(__name__)

CONFIG_TIMEOUT = 2.0  # seconds to wait for the first settings read
MAX_SNAPSHOT_CHARS = 64 * 1024 * 1024  # a snapshot sent as JSON text, at most


def register(server: LanguageServer) -> None:
    """Attach the ``torchDoctor/diagnoseSnapshot`` request."""
    settings = settings_for(server)

    @server.feature(protocol.DIAGNOSE_SNAPSHOT)
    async def diagnose_snapshot(ls: LanguageServer, params: Any) -> dict:
        """Both view models of one runtime snapshot."""
        await settings.wait_ready(CONFIG_TIMEOUT)
        thresholds, problems = Thresholds.from_settings(settings.get)
        for problem in problems:
            log.warning("%s", problem)
        snapshot = _field(params, "snapshot")
        if isinstance(snapshot, str):  # the snapshot as JSON text: skips pygls's namedtuples
            snapshot = _parse(snapshot)
        snapshot = plain(snapshot)
        result = diagnose(snapshot, thresholds)
        flow = result.get("gradientFlow") or {}
        log.info(
            "diagnoseSnapshot: %s, %d gradient rows, %d verdicts",
            result["status"],
            len(flow.get("rows", [])),
            len(flow.get("verdicts", [])),
        )
        return result


def _field(params: Any, name: str) -> Any:
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def _parse(text: str) -> Any:
    if len(text) > MAX_SNAPSHOT_CHARS:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: absurdly nested arrays, not a snapshot
        return None
