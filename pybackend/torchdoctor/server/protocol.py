"""Every custom LSP method and payload the extension and the backend share.

The TypeScript twin is ``extension/src/protocol.ts``; keep the two in step.
Nothing else spells a ``torchDoctor/*`` method name as a string.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass

from .. import __version__

SERVER_NAME = "torch-doctor"
SERVER_VERSION = __version__

# Request: the extension asks who the backend is (status bar tooltip, diagnostics).
SERVER_INFO = "torchDoctor/serverInfo"


@dataclass(frozen=True)
class ServerInfo:
    """Answer to ``torchDoctor/serverInfo``."""

    version: str
    pid: int
    python: str
    pythonVersion: str

    def to_json(self) -> dict:
        return asdict(self)


def current_server_info(pid: int) -> ServerInfo:
    return ServerInfo(
        version=SERVER_VERSION,
        pid=pid,
        python=sys.executable,
        pythonVersion=".".join(str(p) for p in sys.version_info[:3]),
    )
