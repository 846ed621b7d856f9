"""Send the backend's log records to the client as ``window/logMessage``.

VS Code shows them in the "Torch Doctor" output channel at their real level
(info, warning, error). Anything written to stderr instead (a crash, a traceback
before the protocol is up) still reaches the same channel, marked as an error.
"""

from __future__ import annotations

import logging
import sys

from lsprotocol import types
from pygls.lsp.server import LanguageServer

_LEVELS = [
    (logging.ERROR, types.MessageType.Error),
    (logging.WARNING, types.MessageType.Warning),
    (logging.INFO, types.MessageType.Info),
]


def _message_type(levelno: int) -> types.MessageType:
    for threshold, kind in _LEVELS:
        if levelno >= threshold:
            return kind
    return types.MessageType.Log


class LspLogHandler(logging.Handler):
    """A logging handler that writes through the language server once it is connected."""

    def __init__(self, server: LanguageServer) -> None:
        super().__init__()
        self._server = server
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        # pygls logs every message it sends: forwarding those would loop forever.
        if record.name.startswith("pygls"):
            return
        if self._server.protocol.writer is None:  # not connected yet: stderr is all we have
            sys.stderr.write(self.format(record) + "\n")
            return
        try:
            params = types.LogMessageParams(type=_message_type(record.levelno), message=self.format(record))
            self._server.window_log_message(params)
        except Exception:  # the log must never take the server down
            self.handleError(record)


def install(server: LanguageServer, level: int) -> None:
    """Route ``torchdoctor.*`` logs to the client (pygls' own stay on stderr)."""
    handler = LspLogHandler(server)
    handler.setLevel(level)
    logging.getLogger("torchdoctor").addHandler(handler)
    logging.getLogger("torchdoctor").propagate = False
