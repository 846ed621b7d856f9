"""Hostile models through the real backend (under the suite's memory limit): each run ends with a
result that says what happened, the log stays bounded, and nothing the model started survives."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from support.faults import server_command
from torchdoctor.server import protocol

MODEL = """
import os, subprocess, sys, threading, time
import torch
import torch.nn as nn

{prelude}


class Hostile(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        {forward}
        return self.fc(x)
"""

LOUD = 'sys.stderr.write("x" * (40 * 1024 * 1024) + "\\n")\nfor _ in range(50):\n    print("y" * (1024 * 1024))'
LINGERS = (
    "threading.Thread(target=time.sleep, args=(3600,)).start()\n"
    'subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])'
)
GREEDY = "torch.zeros(2 * 1024**3, dtype=torch.uint8).sum()"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=server_command()))
async def client(lsp_client: LanguageClient):
    lsp_client.set_configuration({"torchDoctor": {"python": sys.executable, "checks": {"batchSize": 10**9}}})
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(configuration=True))
        )
    )
    yield
    await lsp_client.shutdown_session()


async def _run(client: LanguageClient, tmp_path: Path, prelude: str = "", forward: str = "pass", **options):
    path = tmp_path / "hostile.py"
    path.write_text(MODEL.format(prelude=prelude, forward=forward))
    params = {"uri": path.as_uri(), "className": "Hostile", "check": "shapes", "options": options}
    return await client.protocol.send_request_async(protocol.RUN_CHECK, params)


async def test_huge_output_reaches_the_log_bounded(client: LanguageClient, tmp_path: Path):
    result = await _run(client, tmp_path, prelude=LOUD)
    assert result.verdict == "PASS", result.headline
    logged = sum(len(m.message) for m in client.log_messages)
    assert logged < 2 * 1024 * 1024  # was 52 MB of log messages
    assert any("dropped" in m.message and "more bytes" in m.message for m in client.log_messages)


async def test_a_lingering_thread_and_child_do_not_turn_a_pass_into_a_timeout(client: LanguageClient, tmp_path: Path):
    # A limit far above any worker start (importing torch can take 20 s+ cold or loaded), that
    # the run must end well before: the lingering thread and child did not hold it to its limit.
    result = await _run(client, tmp_path, prelude=LINGERS, timeoutSeconds=240)
    assert result.verdict == "PASS", result.headline
    assert result.durationSeconds < 240 - 60, result.durationSeconds


async def test_batch_size_setting_is_clamped_and_said(client: LanguageClient, tmp_path: Path):
    result = await _run(client, tmp_path)
    assert result.verdict == "PASS", result.headline
    assert any(f"batchSize = {10**9}" in m.message and "using 4096" in m.message for m in client.log_messages)
    asked = await _run(client, tmp_path, batchSize=10**9)
    assert asked.verdict == "ERROR" and asked.error.kind == "usage" and "4096" in asked.headline


async def test_the_memory_limit_is_named_when_a_model_passes_it(client: LanguageClient, tmp_path: Path):
    result = await _run(client, tmp_path, forward=GREEDY, memoryLimitMB=1500, batchSize=2)
    assert result.verdict == "ERROR"
    assert "ran out of memory" in result.headline and "1500 MB" in result.headline
