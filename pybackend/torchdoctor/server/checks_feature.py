"""Model checks in the editor: CodeLenses, ``torchDoctor/findModels``, ``torchDoctor/runCheck``.

- ``textDocument/codeLens``: four lenses above every ``nn.Module`` class (found
  statically by ``checks.discovery``), each carrying the client-side command
  ``torchDoctor.runCheck`` with ``{uri, className, check}``.
- ``torchDoctor/findModels``: the classes of a file and the one at a position.
- ``torchDoctor/runCheck``: runs a check in a worker process of the user's
  interpreter (``checks.jobs``) with cancellable work-done progress, and answers the
  result view model.

Payloads are documented in ``protocol.py``. No torch here.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import uuid
from dataclasses import dataclass
from typing import Any, Optional

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from ..checks import jobs
from ..checks import result as R
from ..checks.discovery import Position
from . import documents, protocol
from .model_index import ModelIndex
from .params import plain
from .settings import settings_for

log = logging.getLogger(__name__)

LENS_TITLES = [
    (R.OVERFIT, "Overfit test"),
    (R.LR_FIND, "LR finder"),
    (R.GRADCHECK, "Gradient check"),
    (R.SHAPES, "Shape trace"),
]
CONFIG_TIMEOUT = 5.0  # seconds to wait for the first settings read / progress creation


@dataclass
class CheckSettings:
    python: str = ""
    timeout: float = protocol.DEFAULT_CHECK_TIMEOUT
    batch_size: int = protocol.DEFAULT_CHECK_BATCH_SIZE
    memory_limit_mb: int = 0  # 0: the default (jobs.default_memory_limit_mb)


def register(server: LanguageServer) -> ModelIndex:
    """Attach the CodeLens provider and the two custom requests; the model classes' index, whose
    ``forget`` ``app.py`` calls on ``textDocument/didClose``."""
    cache = ModelIndex()
    settings_for(server)  # wire the shared settings reader now, before the client initializes

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def code_lens(ls: LanguageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        """Overfit test · LR finder · Gradient check · Shape trace, above each model class."""
        uri = params.text_document.uri
        source, _ = documents.source(ls, uri)
        if source is None:
            return []
        found, _ = await cache.get(uri, documents.fs_path(uri), source, _version(ls, uri))
        targets = found.models + found.constructed  # imported classes built here, the example's class
        lenses = [lens for model in targets for lens in _lenses(params.text_document.uri, model)]
        from .data_feature import data_lenses  # "Check data" (issue 18): one CodeLens handler per server

        return lenses + await data_lenses(ls, uri, source)

    @server.feature(protocol.FIND_MODELS)
    async def find_models(ls: LanguageServer, params: Any) -> dict:
        """The module classes of a file and the one containing ``position``."""
        p = plain(params) or {}
        uri = str(p.get("uri") or "")
        source, why = documents.source(ls, uri)
        if source is None:
            return protocol.FindModelsResult(
                [], None, False, {"message": why or f"cannot read {uri}", "line": 0, "character": 0}
            ).to_json()
        found, error = await cache.get(uri, documents.fs_path(uri), source, _version(ls, uri))
        pos = _position(p.get("position"))
        inside = found.containing(pos) if pos is not None else None
        err = error.to_json() if error else None
        models = [] if error else [m.to_json() for m in found.models]
        return protocol.FindModelsResult(
            models, inside.qualname if inside and not error else None, found.hasExample, err
        ).to_json()

    @server.feature(protocol.RUN_CHECK)
    async def run_check(ls: LanguageServer, params: Any) -> dict:
        """Run one check with progress; the answer is the result view model."""
        p = plain(params) or {}
        try:
            return await _run_check(ls, p if isinstance(p, dict) else {})
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug of ours: an ERROR result that says so, never a JSON-RPC error
            log.exception("runCheck failed")
            return R.error_result(
                str(p.get("check", "")) if isinstance(p, dict) else "",
                str(p.get("className", "")) if isinstance(p, dict) else "",
                "",
                R.ERR_INTERNAL,
                f"Torch Doctor failed to run the check ({type(exc).__name__}: {str(exc)[:300]}); the log has the details.",
            )

    return cache


def _lenses(uri: str, model) -> list[types.CodeLens]:
    start, end = model.nameRange.start, model.nameRange.end
    rng = types.Range(types.Position(start.line, start.character), types.Position(end.line, end.character))
    return [
        types.CodeLens(
            range=rng,
            command=types.Command(
                title=title,
                command=protocol.RUN_CHECK_COMMAND,
                arguments=[protocol.RunCheckArgs(uri, model.qualname, check).to_json()],
            ),
        )
        for check, title in LENS_TITLES
    ]


def _version(ls: LanguageServer, uri: str) -> object:
    """The open document's version (None for a file on disk: read afresh each time)."""
    doc = documents.open_document(ls, uri)
    return doc.version if doc is not None else None


def _position(pos: Any) -> Optional[Position]:
    """The request's ``position``, or None when absent or not two integers."""
    try:
        return Position(int(pos["line"]), int(pos["character"])) if pos else None
    except (TypeError, KeyError, ValueError):
        return None


async def _run_check(ls: LanguageServer, p: dict) -> dict:
    uri, class_name, check = str(p.get("uri", "")), str(p.get("className", "")), str(p.get("check", ""))
    path = documents.fs_path(uri)
    if check not in R.CHECKS or not class_name or not uri:
        return R.error_result(
            check,
            class_name,
            path,
            R.ERR_USAGE,
            f"runCheck needs uri, className and check (one of {', '.join(R.CHECKS)})",
        )
    if os.environ.get(protocol.UNTRUSTED_ENV) == "1":
        return R.error_result(
            check,
            class_name,
            path,
            R.ERR_USAGE,
            "This workspace is in Restricted Mode: a check imports and runs its code. "
            "Trust the workspace (Manage Workspace Trust) to run checks; lint works without trust.",
        )
    settings = await read_check_settings(ls)
    options = dict(p.get("options") or {}) if isinstance(p.get("options") or {}, dict) else {}
    options.setdefault("batchSize", settings.batch_size)
    timeout = options.pop("timeoutSeconds", settings.timeout)
    jobs.give_budget(options, timeout)  # bounded checks report before the limit
    memory = options.pop("memoryLimitMB", settings.memory_limit_mb)
    doc = documents.open_document(ls, uri)
    spec = jobs.JobSpec(
        check=check,
        file=path,
        class_name=class_name,
        python=settings.python,
        options=options,
        timeout=timeout,  # jobs.py says what is wrong with a value that is not a positive number
        source=doc.source if doc is not None else None,
        cwd=_workspace_folder(ls, path),
        memory_limit_mb=memory,
    )
    progress = await _Progress.start(ls, p.get("workDoneToken"), f"Torch Doctor: {R.TITLES[check]} on {class_name}")
    job = asyncio.ensure_future(
        jobs.run_check(spec, on_progress=progress.report, on_stderr=_worker_log(class_name, check))
    )
    progress.on_cancel(job.cancel)
    try:
        result = await job
    except asyncio.CancelledError:
        if not progress.cancelled:  # $/cancelRequest: pygls answers RequestCancelled
            progress.end("cancelled")
            raise
        result = R.cancelled_result(check, class_name, path)
    progress.end(result.get("headline") or str(result.get("verdict")))
    _log_result(result)
    return result


def _worker_log(class_name: str, check: str):
    """The worker's stderr (user prints, tracebacks) goes to the output channel."""

    def forward(line: str) -> None:
        log.info("[%s %s] %s", check, class_name, line)

    return forward


def _log_result(result: dict) -> None:
    error = result.get("error")
    if error:
        log.warning(
            "%s on %s: %s%s",
            result["check"],
            result["className"],
            error["message"],
            ("\n" + error["detail"]) if error.get("detail") else "",
        )
    else:
        log.info(
            "%s on %s: %s (%.1f s)",
            result["check"],
            result["className"],
            result["verdict"],
            result.get("durationSeconds") or 0.0,
        )


def _workspace_folder(ls: LanguageServer, path: str) -> Optional[str]:
    """The workspace folder holding the file: user code often opens data relative to it."""
    folders = [to_fs_path(f.uri) for f in ls.workspace.folders.values()] if ls.workspace.folders else []
    if ls.workspace.root_path:
        folders.append(ls.workspace.root_path)
    hits = [f for f in folders if f and os.path.abspath(path).startswith(os.path.abspath(f) + os.sep)]
    return max(hits, key=len) if hits else None


async def read_check_settings(ls: LanguageServer) -> CheckSettings:
    """torchDoctor.python, .checks.timeoutSeconds, .checks.batchSize and .checks.memoryLimitMB from
    the shared settings reader (``settings.py``: pulled at start, refreshed on didChangeConfiguration).

    Workspace settings can hold any value (VS Code only warns about package.json's bounds): a value
    out of range is clamped to the nearest bound, one of the wrong type is ignored, and the log
    says which, once per value.
    """
    shared = settings_for(ls)
    await shared.wait_ready(CONFIG_TIMEOUT)
    result = CheckSettings()
    python = shared.get("python", "")
    result.python = _expand(python, ls) if isinstance(python, str) else ""
    result.timeout = float(_bounded("checks.timeoutSeconds", shared, result.timeout, *TIMEOUT_RANGE))
    result.batch_size = int(_bounded("checks.batchSize", shared, result.batch_size, *BATCH_RANGE, integer=True))
    result.memory_limit_mb = int(_bounded("checks.memoryLimitMB", shared, 0, *MEMORY_RANGE, integer=True))
    return result


TIMEOUT_RANGE = (5.0, 3600.0)  # package.json's minimum and maximum
BATCH_RANGE = (1, jobs.MAX_BATCH_SIZE)
MEMORY_RANGE = (0, 1024 * 1024)  # MB; 0: three quarters of the machine's memory
_warned: set = set()


def _bounded(key: str, shared, default, low, high, integer: bool = False):
    value = shared.get(key, default)
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not number or (integer and value != int(value)):
        _warn_once(f"torchDoctor.{key} = {value!r} is not {'a whole' if integer else 'a'} number: using {default}")
        return default
    if value < low or value > high:
        clamped = low if value < low else high
        _warn_once(f"torchDoctor.{key} = {value!r} is outside {low}..{high}: using {clamped}")
        return clamped
    return value


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


def _expand(python: str, ls: LanguageServer) -> str:
    """``~`` and ``${workspaceFolder}`` in the interpreter setting."""
    root = ls.workspace.root_path or ""
    return os.path.expanduser(python.replace("${workspaceFolder}", root).strip())


class _Progress:
    """LSP work-done progress for one run: begin, reports, end; notices client cancels."""

    def __init__(self, ls: LanguageServer, token: Any) -> None:
        self._ls = ls
        self._token = token
        self._last = -1
        self.cancelled = False

    @classmethod
    async def start(cls, ls: LanguageServer, client_token: Any, title: str) -> "_Progress":
        token = client_token
        if token is None and _supports_progress(ls):
            token = f"torchdoctor-check-{uuid.uuid4()}"
            try:
                await asyncio.wait_for(ls.work_done_progress.create_async(token), CONFIG_TIMEOUT)
            except Exception as exc:
                log.debug("window/workDoneProgress/create failed (%s): no progress", exc)
                token = None
        progress = cls(ls, token)
        if token is not None:
            ls.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(title=title, cancellable=True, percentage=0, message="starting the worker"),
            )
        return progress

    def on_cancel(self, stop) -> None:
        future = self._ls.work_done_progress.tokens.get(self._token) if self._token is not None else None
        if future is None:
            return

        def cancelled(f) -> None:
            if f.cancelled():
                self.cancelled = True
                stop()

        future.add_done_callback(cancelled)

    def report(self, fraction: float, message: str) -> None:
        if self._token is None:
            return
        percentage = max(self._last, min(100, int(fraction * 100)))  # never backwards
        self._last = percentage
        self._ls.work_done_progress.report(
            self._token, types.WorkDoneProgressReport(message=message, percentage=percentage, cancellable=True)
        )

    def end(self, message: str) -> None:
        if self._token is None:
            return
        self._ls.work_done_progress.end(self._token, types.WorkDoneProgressEnd(message=message))
        future = self._ls.work_done_progress.tokens.pop(self._token, None)
        if future is not None and not future.done():
            future.set_result(None)  # later callbacks (a late cancel) see a finished run
        self._token = None


def _supports_progress(ls: LanguageServer) -> bool:
    caps = ls.client_capabilities.window if ls.client_capabilities else None
    return bool(caps and caps.work_done_progress)
