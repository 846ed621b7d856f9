"""Data checks over the real backend: the "Check data" lens, findData, runDataCheck with progress and cancel.

The server is ``python -m torchdoctor.server``; the check runs in a real worker of this interpreter
(which has torch) on the sample workspace's data files, or a hanging dataset written to tmp.
"""

from __future__ import annotations

import asyncio
import base64
import sys
import time
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from torchdoctor.server import protocol

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "sample_workspace" / "data"

HANGS = """\
import time
from torch.utils.data import Dataset


class Hangs(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        while True:
            time.sleep(0.05)
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "torchdoctor.server", "--stdio"]),
)
async def client(lsp_client: LanguageClient):
    lsp_client.set_configuration(
        {"torchDoctor": {"python": sys.executable, "dataChecks": {"timeoutSeconds": 90, "maxSamples": 300}}}
    )
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True),
                workspace=types.WorkspaceClientCapabilities(configuration=True),
            ),
            workspace_folders=[types.WorkspaceFolder(uri=(ROOT / "sample_workspace").as_uri(), name="ws")],
        )
    )
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text if text is not None else path.read_text()
            )
        )
    )
    return uri


async def _data_lenses(client: LanguageClient, uri: str) -> list:
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return [lens for lens in lenses if lens.command.command == protocol.RUN_DATA_CHECK_COMMAND]


async def test_check_data_lens_over_datasets_and_the_hook_beside_the_model_lenses(client: LanguageClient):
    uri = _open(client, DATA / "channels_last.py")
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    data = [lens for lens in lenses if lens.command.command == protocol.RUN_DATA_CHECK_COMMAND]
    assert [(lens.command.title, lens.command.arguments[0]["name"]) for lens in data] == [
        ("Check data", "PhotoPatches"),
        ("Check data", "torchdoctor_data"),
    ]
    assert all(lens.command.arguments[0]["uri"] == uri for lens in data)
    assert any(lens.command.command == protocol.RUN_CHECK_COMMAND for lens in lenses)  # SmallCNN keeps its own
    source = (DATA / "channels_last.py").read_text().splitlines()
    assert source[data[1].range.start.line].startswith("def torchdoctor_data")


async def test_find_data_names_the_target_at_the_cursor(client: LanguageClient):
    uri = _open(client, DATA / "blank_augmentation.py")
    line = next(
        i for i, t in enumerate((DATA / "blank_augmentation.py").read_text().splitlines()) if "def __len__" in t
    )
    found = await client.protocol.send_request_async(
        protocol.FIND_DATA, {"uri": uri, "position": {"line": line, "character": 4}}
    )
    assert found.containing == "ZoomedDigits" and [t.name for t in found.targets] == ["ZoomedDigits"]
    assert found.error is None and found.hasHook is False


async def test_run_data_check_finds_the_blank_augmentation_with_its_images(client: LanguageClient):
    uri = _open(client, DATA / "blank_augmentation.py")
    result = await client.protocol.send_request_async(protocol.RUN_DATA_CHECK, {"uri": uri, "name": "ZoomedDigits"})
    assert result.verdict == "FINDINGS", result.headline
    assert [f.kind for f in result.findings] == ["blank-augmentation"]
    (split,) = result.splits
    assert split.sampled == 300  # torchDoctor.dataChecks.maxSamples
    gallery = split.gallery
    assert gallery.channels == 1 and gallery.width == 28 and len(gallery.images) == 32
    assert any(im.blank for im in gallery.images) and not all(im.blank for im in gallery.images)
    assert all(len(base64.b64decode(im.pixels, validate=True)) == 28 * 28 for im in gallery.images)
    ((token, reports),) = list(client.progress_reports.items())
    assert reports[0].kind == "begin" and reports[0].cancellable and reports[-1].kind == "end"


async def test_cancelling_the_progress_stops_a_hanging_dataset(client: LanguageClient, tmp_path: Path):
    uri = _open(client, tmp_path / "hangs.py", HANGS)
    request = asyncio.ensure_future(
        client.protocol.send_request_async(protocol.RUN_DATA_CHECK, {"uri": uri, "name": "Hangs"})
    )
    deadline = time.monotonic() + 30
    token = None
    while token is None and time.monotonic() < deadline:
        token = next(iter(client.progress_reports), None)
        await asyncio.sleep(0.05)
    assert token is not None, "no work-done progress began"
    await asyncio.sleep(1.0)  # the worker is inside __getitem__ (or still importing: cancel works either way)
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(request, 30)
    assert result.verdict == "ERROR" and result.error.kind == "cancelled"
