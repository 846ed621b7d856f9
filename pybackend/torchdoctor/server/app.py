"""Build the language server: one object, every feature registered on it.

Each feature lives in a module of its own with a ``register(server)`` function;
this module only assembles them, so adding a capability is adding one line here.
"""

from __future__ import annotations

import logging
import os

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from . import checks_feature, data_feature, diagnosis_feature, lint_feature, protocol

log = logging.getLogger(__name__)


class TorchDoctorServer(LanguageServer):
    """The Torch Doctor backend. Features attach to it in ``build_server``."""


def _register_lifecycle(server: TorchDoctorServer) -> None:
    @server.feature(types.INITIALIZED)
    def on_initialized(ls: TorchDoctorServer, params: types.InitializedParams) -> None:
        """The client is ready: say so in the log, which the extension shows."""
        info = protocol.current_server_info(os.getpid())
        log.info("backend %s ready: pid %d, Python %s at %s", info.version, info.pid, info.pythonVersion, info.python)

    @server.feature(protocol.SERVER_INFO)
    def server_info(ls: TorchDoctorServer, params: object) -> dict:
        """Who is answering: version, pid and interpreter of this backend."""
        return protocol.current_server_info(os.getpid()).to_json()


def build_server() -> TorchDoctorServer:
    server = TorchDoctorServer(protocol.SERVER_NAME, protocol.SERVER_VERSION)
    _register_lifecycle(server)
    models = checks_feature.register(server)
    data_feature.register(server)
    lint = lint_feature.register(server)
    diagnosis_feature.register(server)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchDoctorServer, params: types.DidCloseTextDocumentParams) -> None:
        """Every feature lets go of the document (pygls takes one handler per notification): its
        diagnostics are cleared, and its model classes and data targets forgotten (reopened, its
        versions start at 1 again, and a kept result of the old text would be taken for the new)."""
        uri = params.text_document.uri
        lint.close(uri)
        models.forget(uri)
        data_feature.forget(uri)

    return server
