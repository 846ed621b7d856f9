"""Data checks in the editor: the "Check data" lenses, ``torchDoctor/findData``, ``torchDoctor/runDataCheck``.

- Lenses: ``data_lenses`` is called by the model checks' CodeLens handler (pygls takes one handler
  per method): one "Check data" lens over each target ``data_checks/discovery.py`` finds, carrying
  the client-side command ``torchDoctor.runDataCheck`` with ``{uri, name}``.
- ``torchDoctor/findData``: the targets of a file and the one at a position (the context menu).
- ``torchDoctor/runDataCheck``: runs the data check in a worker of the user's interpreter
  (``data_checks/jobs.py``, itself the model checks' job control) with the model checks'
  cancellable work-done progress (``checks_feature._Progress``), within
  ``torchDoctor.dataChecks.timeoutSeconds`` and on at most ``maxSamples`` / ``maxBatches``.

Payloads are documented in ``protocol.py``. No torch or numpy here.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..checks.discovery import SourceSyntaxError
from ..checks.safe_discovery import MAX_ANALYSIS_BYTES
from ..data_checks import findings as F
from ..data_checks import jobs as data_jobs
from ..data_checks.discovery import DataDiscovery, discover_data
from . import documents, protocol
from .checks_feature import (
    CONFIG_TIMEOUT,
    TIMEOUT_RANGE,
    _bounded,
    _expand,
    _position,
    _Progress,
    _version,
    _workspace_folder,
)
from .model_index import DiscoveryIndex
from .params import plain
from .settings import settings_for

log = logging.getLogger(__name__)

LENS_TITLE = "Check data"
ERR_CANCELLED = "cancelled"
SAMPLES_RANGE = (1, 1_000_000)
BATCHES_RANGE = (1, 100_000)


@dataclass
class DataSettings:
    python: str = ""
    timeout: float = data_jobs.DEFAULT_TIMEOUT
    max_samples: int = 2000
    max_batches: int = 20
    memory_limit_mb: int = 0


def _discover(source: str, path: str) -> Tuple[Optional[DataDiscovery], Optional[dict]]:
    """The data targets of ``source``, or why not; run in a thread, or by the discovery child for a large text."""
    if len(source) > MAX_ANALYSIS_BYTES:
        return None, {"message": "the file is too large to look for datasets in", "line": 0, "character": 0}
    try:
        return discover_data(source, path), None
    except SourceSyntaxError as exc:
        return None, {"message": exc.message, "line": exc.line, "character": exc.character}
    except (RecursionError, MemoryError, ValueError, UnicodeEncodeError) as exc:
        return None, {"message": f"cannot analyse this file ({type(exc).__name__})", "line": 0, "character": 0}


def _no_targets() -> DataDiscovery:
    return DataDiscovery([], False)


def _stopped(note: str) -> dict:
    return {"message": note, "line": 0, "character": 0}


# One discovery per document version, the last good one while the text does not parse, and a
# large document's in the discovery child process (``model_index.py``).
_INDEX: DiscoveryIndex[DataDiscovery, dict] = DiscoveryIndex(_discover, _no_targets, _stopped)


def forget(uri: str) -> None:
    """The document was closed: drop its data targets (``app.py``, on ``textDocument/didClose``)."""
    _INDEX.forget(uri)


async def data_lenses(ls: LanguageServer, uri: str, source: str) -> list:
    """A "Check data" lens over each data target of the document."""
    found, _ = await _INDEX.get(uri, documents.fs_path(uri), source, _version(ls, uri))
    lenses = []
    for t in found.targets:
        start, end = t.nameRange.start, t.nameRange.end
        lenses.append(
            types.CodeLens(
                range=types.Range(types.Position(start.line, start.character), types.Position(end.line, end.character)),
                command=types.Command(
                    title=LENS_TITLE, command=protocol.RUN_DATA_CHECK_COMMAND, arguments=[{"uri": uri, "name": t.name}]
                ),
            )
        )
    return lenses


def register(server: LanguageServer) -> None:
    """Attach ``torchDoctor/findData`` and ``torchDoctor/runDataCheck`` (the lenses come with the model checks')."""

    @server.feature(protocol.FIND_DATA)
    async def find_data(ls: LanguageServer, params: Any) -> dict:
        """The data targets of a file and the one containing ``position``."""
        p = plain(params) or {}
        uri = str(p.get("uri") or "") if isinstance(p, dict) else ""
        source, why = documents.source(ls, uri)
        if source is None:
            unread = {"message": why or f"cannot read {uri}", "line": 0, "character": 0}
            return {"targets": [], "containing": None, "hasHook": False, "error": unread}
        found, error = await _INDEX.get(uri, documents.fs_path(uri), source, _version(ls, uri))
        pos = _position(p.get("position"))
        inside = found.containing(pos) if pos is not None and not error else None
        return {
            "targets": [] if error else [t.to_json() for t in found.targets],
            "containing": inside.name if inside else None,
            "hasHook": found.hasHook,
            "error": error,
        }

    @server.feature(protocol.RUN_DATA_CHECK)
    async def run_data_check(ls: LanguageServer, params: Any) -> dict:
        """Run the data check with progress; the answer is the data-check result."""
        p = plain(params) or {}
        p = p if isinstance(p, dict) else {}
        try:
            return await _run(ls, p)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug of ours: an ERROR result that says so, never a JSON-RPC error
            log.exception("runDataCheck failed")
            return F.error_result(
                str(p.get("name", "")),
                documents.fs_path(str(p.get("uri", ""))) if p.get("uri") else "",
                "internal",
                f"Torch Doctor failed to run the data check ({type(exc).__name__}: {str(exc)[:300]}); the log has the details.",
            )


async def _run(ls: LanguageServer, p: dict) -> dict:
    uri, name = str(p.get("uri") or ""), str(p.get("name") or "")
    path = documents.fs_path(uri) if uri else ""
    if not uri or not name:
        return F.error_result(name, path, "usage", "runDataCheck needs uri and name")
    if os.environ.get(protocol.UNTRUSTED_ENV) == "1":
        return F.error_result(
            name,
            path,
            "usage",
            "This workspace is in Restricted Mode: the data check imports and runs its code. "
            "Trust the workspace (Manage Workspace Trust) to run it; lint works without trust.",
        )
    settings = await read_data_settings(ls)
    raw = p.get("options") or {}
    options = dict(raw) if isinstance(raw, dict) else {}
    options.setdefault("maxSamples", settings.max_samples)
    options.setdefault("maxBatches", settings.max_batches)
    timeout = options.pop("timeoutSeconds", settings.timeout)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
        return F.error_result(name, path, "usage", f"timeoutSeconds {timeout!r} is not a positive number of seconds")
    doc = documents.open_document(ls, uri)
    spec = data_jobs.DataJobSpec(
        file=path,
        name=name,
        python=settings.python,
        options=options,
        timeout=float(timeout),
        source=doc.source if doc is not None else None,
        cwd=_workspace_folder(ls, path),
        memory_limit_mb=settings.memory_limit_mb or None,
    )
    progress = await _Progress.start(ls, p.get("workDoneToken"), f"Torch Doctor: checking the data of {name}")
    job = asyncio.ensure_future(
        data_jobs.run_data_check(spec, on_progress=progress.report, on_stderr=_worker_log(name))
    )
    progress.on_cancel(job.cancel)
    try:
        result = await job
    except asyncio.CancelledError:
        if not progress.cancelled:  # $/cancelRequest: pygls answers RequestCancelled
            progress.end("cancelled")
            raise
        result = F.error_result(name, path, ERR_CANCELLED, "The data check was cancelled.")
    progress.end(result.get("headline") or str(result.get("verdict")))
    log.info("data check of %s: %s (%.1f s)", name, result.get("verdict"), result.get("durationSeconds") or 0.0)
    return result


def _worker_log(name: str):
    def forward(line: str) -> None:
        log.info("[data %s] %s", name, line)

    return forward


async def read_data_settings(ls: LanguageServer) -> DataSettings:
    """torchDoctor.python, .dataChecks.{timeoutSeconds,maxSamples,maxBatches} and .checks.memoryLimitMB;
    out-of-range values are clamped and wrong types ignored, as for the model checks."""
    shared = settings_for(ls)
    await shared.wait_ready(CONFIG_TIMEOUT)
    out = DataSettings()
    python = shared.get("python", "")
    out.python = _expand(python, ls) if isinstance(python, str) else ""
    out.timeout = float(_bounded("dataChecks.timeoutSeconds", shared, out.timeout, *TIMEOUT_RANGE))
    out.max_samples = int(_bounded("dataChecks.maxSamples", shared, out.max_samples, *SAMPLES_RANGE, integer=True))
    out.max_batches = int(_bounded("dataChecks.maxBatches", shared, out.max_batches, *BATCHES_RANGE, integer=True))
    out.memory_limit_mb = int(_bounded("checks.memoryLimitMB", shared, 0, 0, 1024 * 1024, integer=True))
    return out
