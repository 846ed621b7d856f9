"""The real backend over stdio: lifecycle, serverInfo, and logs reaching the client."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcMethodNotFound
from pytest_lsp import ClientServerConfig, LanguageClient

from torchdoctor import __version__
from torchdoctor.server import protocol


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "torchdoctor.server", "--stdio"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


async def test_initialize_reports_name_and_version(client: LanguageClient):
    info = client.server_info if hasattr(client, "server_info") else None
    result = await client.protocol.send_request_async(protocol.SERVER_INFO, {})
    assert result.version == __version__
    assert result.pid > 0
    assert result.python
    assert result.pythonVersion.startswith(f"{sys.version_info.major}.")
    if info is not None:
        assert info.name == protocol.SERVER_NAME


async def test_ready_line_reaches_the_client_log(client: LanguageClient):
    deadline = time.monotonic() + 60  # a ceiling for a loaded machine (was 50 polls, ~5 s)
    while not any("ready" in m.message for m in client.log_messages) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    ready = [m for m in client.log_messages if "ready" in m.message]
    assert ready, f"no 'ready' log message; got {[m.message for m in client.log_messages]}"
    assert ready[0].type == types.MessageType.Info
    assert f"backend {__version__} ready" in ready[0].message


@pytest.mark.parametrize("method", ["torchDoctor/doesNotExist"])
async def test_unknown_custom_method_is_an_error_not_a_crash(client: LanguageClient, method: str):
    with pytest.raises(JsonRpcMethodNotFound):
        await client.protocol.send_request_async(method, {})
    # The server still answers afterwards.
    result = await client.protocol.send_request_async(protocol.SERVER_INFO, {})
    assert result.pid > 0
