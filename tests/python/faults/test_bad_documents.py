"""Bad documents against the real backend: every feature answers, none with an internal error.

Texts the parser cannot take (100,000-term sums, long attribute and unary chains, thousands of
``elif``), a lone surrogate, a null byte in the URI, a 2 MB file, ``/dev/zero`` and a FIFO as
documents. For each: didOpen (diagnostics), codeLens, hover, codeAction, findModels answer with a
result or a clear message, and the server still answers ``serverInfo`` afterwards. The backend runs
under the suite's memory limit (conftest.py).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from support.faults import server_command
from torchdoctor.server import protocol

N = 100_000
HOSTILE = {
    "sum of 100,000 terms": "x = " + "+".join(["a"] * N) + "\n",
    "attribute chain of 100,000": "x = a" + ".b" * N + "\n",
    "elif x3000": "if a:\n    pass\n" + "elif a:\n    pass\n" * 3000,
    "not x100,000": "x = " + "not " * N + "a\n",
    "unary minus x100,000": "x = " + "-" * N + "a\n",
    "nested calls x5000": "x = " + "f(" * 5000 + ")" * 5000 + "\n",
    "lone surrogate": 'import torch.nn as nn\n\n\nclass M(nn.Module):\n    name = "\ud800"\n',
    "null byte": "import torch.nn as nn\nx = 1\x00\n",
    "2 MB file": "import torch.nn as nn\n" + "x = 1  # padding padding padding padding\n" * 50_000,
    "10 MB single line": "x = '" + "a" * (10 * 1024 * 1024) + "'\n",
}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=server_command()))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


async def _every_feature(client: LanguageClient, uri: str) -> dict:
    """Ask each document feature about ``uri``; what came back (an exception fails the test)."""
    doc = types.TextDocumentIdentifier(uri=uri)
    here = types.Position(line=0, character=0)
    out = {
        "codeLens": await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc)),
        "hover": await client.text_document_hover_async(types.HoverParams(text_document=doc, position=here)),
        "codeAction": await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=doc,
                range=types.Range(start=here, end=here),
                context=types.CodeActionContext(diagnostics=[]),
            )
        ),
        "findModels": await client.protocol.send_request_async(
            protocol.FIND_MODELS, {"uri": uri, "position": {"line": 0, "character": 0}}
        ),
        "findData": await client.protocol.send_request_async(
            protocol.FIND_DATA, {"uri": uri, "position": {"line": 0, "character": 0}}
        ),
    }
    info = await client.protocol.send_request_async(protocol.SERVER_INFO, {})
    assert info.pid > 0  # still alive and answering
    return out


def _open(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )


@pytest.mark.parametrize("name", list(HOSTILE))
async def test_hostile_text_gets_an_answer_from_every_feature(client: LanguageClient, tmp_path: Path, name: str):
    uri = (tmp_path / "hostile.py").as_uri()
    _open(client, uri, HOSTILE[name])
    out = await asyncio.wait_for(_every_feature(client, uri), 120)
    found = out["findModels"]
    assert found.models == [] or name == "lone surrogate"
    assert out["findData"].targets == [] and (out["findData"].error is None or out["findData"].error.message)
    if name in ("2 MB file", "10 MB single line"):
        assert "file too large for analysis" in found.error.message
    elif name != "lone surrogate":
        assert found.error is not None and found.error.message  # the reason, not an internal error


async def test_a_null_byte_in_the_uri(client: LanguageClient, tmp_path: Path):
    uri = (tmp_path / "a.py").as_uri() + "%00b.py"
    _open(client, uri, "import torch.nn as nn\n\n\nclass M(nn.Module):\n    pass\n")
    await _every_feature(client, uri)
    unopened = (tmp_path / "never.py").as_uri() + "%00"
    found = (await _every_feature(client, unopened))["findModels"]
    assert "null byte" in found.error.message
    run = await client.protocol.send_request_async(
        protocol.RUN_CHECK, {"uri": uri, "className": "M", "check": "shapes"}
    )
    assert run.verdict == "ERROR" and "null byte" in run.headline


@pytest.mark.skipif(not os.path.exists("/dev/zero") or not hasattr(os, "mkfifo"), reason="POSIX devices")
async def test_devices_and_fifos_are_not_read(client: LanguageClient, tmp_path: Path):
    fifo = tmp_path / "model.py"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        found = (await asyncio.wait_for(_every_feature(client, Path(path).as_uri()), 30))["findModels"]
        assert "not a regular file" in found.error.message


async def test_a_file_too_large_to_lint_says_so_in_one_note(client: LanguageClient, tmp_path: Path):
    uri = (tmp_path / "big.py").as_uri()
    _open(client, uri, HOSTILE["2 MB file"])
    deadline = time.monotonic() + 60  # a ceiling: 2 MB to read, then a large file's 2 s debounce
    while not client.diagnostics.get(uri) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    (note,) = client.diagnostics[uri]
    assert note.severity == types.DiagnosticSeverity.Information
    assert "file too large for analysis" in note.message and "MB limit" in note.message


@pytest.mark.parametrize("encoding", ["latin-1 coding cookie", "UTF-8 BOM"])
async def test_unopened_files_are_read_as_python_reads_them(client: LanguageClient, tmp_path: Path, encoding: str):
    body = "import torch.nn as nn\nNAME = 'caf\xe9'\n\n\nclass Cafe(nn.Module):\n    pass\n"
    path = tmp_path / "cafe.py"
    if encoding == "UTF-8 BOM":
        path.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    else:
        path.write_bytes(("# -*- coding: latin-1 -*-\n" + body).encode("latin-1"))
    found = await client.protocol.send_request_async(protocol.FIND_MODELS, {"uri": path.as_uri()})
    assert found.error is None and [m.name for m in found.models] == ["Cafe"]


DEEP_JSON = "[" * 100_000 + "]" * 100_000
BAD_PARAMS = [
    (protocol.DIAGNOSE_SNAPSHOT, {"snapshot": DEEP_JSON}),
    (protocol.DIAGNOSE_SNAPSHOT, {"snapshot": 5}),
    (protocol.DIAGNOSE_SNAPSHOT, {"snapshot": {"layers": "not a list", "step": "x"}}),
    (protocol.DIAGNOSE_SNAPSHOT, {}),
    (protocol.FIND_MODELS, {"uri": 7, "position": "here"}),
    (protocol.FIND_MODELS, {"uri": "file:///x.py", "position": {"line": "a", "character": None}}),
    (protocol.RUN_CHECK, {"uri": "file:///x.py", "className": "M", "check": "shapes", "options": [1, 2]}),
    (
        protocol.RUN_CHECK,
        {"uri": "file:///x.py", "className": "M", "check": "shapes", "options": {"timeoutSeconds": "soon"}},
    ),
]


@pytest.mark.parametrize(
    "method, params", BAD_PARAMS, ids=[f"{m.split('/')[1]}-{i}" for i, (m, _) in enumerate(BAD_PARAMS)]
)
async def test_malformed_custom_requests_get_an_answer(client: LanguageClient, method: str, params: dict):
    answer = await asyncio.wait_for(client.protocol.send_request_async(method, params), 60)
    assert answer is not None
    info = await client.protocol.send_request_async(protocol.SERVER_INFO, {})
    assert info.pid > 0
