"""Issue 16 E2E: Restricted Mode, then a workspace whose path has a space, in a real workbench.

These tests use a workbench of their own, with Workspace Trust on (the session's workbench runs
with ``--disable-workspace-trust``), on a small workspace copied to a folder whose path has a
space (``.../td e2e reliability/my project``). Its ``.vscode/settings.json`` names an interpreter
of its own (``my tools/python``: a script that leaves a marker file, then runs the project's
Python), which is what a hostile repository would do. In the tests' order:

1. Restricted Mode: lint squiggles come, the workspace's interpreter is never run (the user's
   ``torchDoctor.python`` is), and a check is refused with "Manage Workspace Trust".
2. The workspace is trusted in VS Code's trust editor: the backend restarts, now on the
   workspace's interpreter (the marker appears), and a shape trace on the file with the space in
   its path runs the editor's unsaved text (an edit that breaks a layer is what it reports).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from playwright.sync_api import Browser, FrameLocator, Page, expect

import vscode_ui
import workbench
from vscode_ui import ARTIFACTS
from windows import after_test, open_window

LOG = "reliability-code-server.log"
CHECK_TIMEOUT_MS = 120_000
MLP = "models/mlp.py"
LINT = "broken/lint_classifier.py"


@pytest.fixture(scope="module")
def spaced_workspace() -> Iterator[Path]:
    """``.../td e2e reliability/my project`` with two samples and a workspace interpreter setting."""
    root = Path(tempfile.mkdtemp(prefix="td e2e reliability "))
    ws = root / "my project"
    for rel in (MLP, LINT):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(workbench.SAMPLE_WORKSPACE / rel, ws / rel)
    tools = root / "my tools"
    tools.mkdir()
    wrapper = tools / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$$" >> "{root}/workspace-python-ran"\nexec "{workbench.VENV_PYTHON}" "$@"\n')
    wrapper.chmod(0o755)
    (ws / ".vscode").mkdir()
    (ws / ".vscode" / "settings.json").write_text(json.dumps({"torchDoctor.python": str(wrapper)}, indent=2))
    yield ws
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def trust_user_dir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="td-e2e-trust-"))
    workbench.write_user_settings(
        d,
        {
            "security.workspace.trust.enabled": True,
            "security.workspace.trust.startupPrompt": "never",  # open in Restricted Mode, no modal
            "security.workspace.trust.untrustedFiles": "open",
        },
    )
    yield d
    shutil.rmtree(d, ignore_errors=True)


@contextmanager
def _code_server_with_trust(user_data_dir: Path, folder: Path) -> Iterator[str]:
    """workbench.code_server's command without ``--disable-workspace-trust``."""
    port = workbench.free_port()
    cmd = [
        str(workbench.CODE_SERVER),
        *("--auth", "none", "--bind-addr", f"127.0.0.1:{port}"),
        *("--user-data-dir", str(user_data_dir), "--extensions-dir", str(workbench.EXTENSIONS_DIR)),
        *("--disable-telemetry", "--disable-update-check", "--disable-getting-started-override"),
        str(folder),
    ]
    with open(ARTIFACTS / LOG, "wb") as log:
        proc = subprocess.Popen(
            cmd, env=workbench.node_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        url = f"http://127.0.0.1:{port}"
        try:
            workbench._wait_healthy(url, proc, timeout=90)
            yield url
        finally:
            workbench._stop_group(proc)


@pytest.fixture(scope="module")
def trust_window(
    browser: Browser, server_url: workbench.Served, trust_user_dir: Path, spaced_workspace: Path
) -> Iterator[Page]:
    del server_url  # requested for the .vsix installation only (as test_first_run.py does)
    with _code_server_with_trust(trust_user_dir, spaced_workspace) as url:
        with open_window(browser, f"{url}/?folder={urllib.parse.quote(str(spaced_workspace))}") as pg:
            yield pg


@pytest.fixture
def window(request, trust_window: Page, trust_user_dir: Path) -> Iterator[Page]:
    yield trust_window
    after_test(request, trust_window, trust_user_dir, LOG)


def _marker(ws: Path) -> Path:
    return ws.parent / "workspace-python-ran"


def _result_view(page: Page) -> FrameLocator:
    return page.frame_locator("iframe.webview.ready").last.frame_locator("iframe#active-frame")


def test_restricted_mode_lints_but_refuses_checks_and_the_workspace_interpreter(
    window: Page, trust_user_dir: Path, spaced_workspace: Path
) -> None:
    expect(window.locator(".statusbar", has_text="Restricted Mode")).to_be_visible(timeout=60_000)
    vscode_ui.open_file(window, LINT)
    editor = window.locator(".editor-instance").first
    expect(editor.locator(".squiggly-warning").first).to_be_visible(timeout=90_000)
    problems = vscode_ui.open_problems(window)
    expect(problems).to_contain_text("TD001", timeout=30_000)
    log = vscode_ui.wait_for_log(trust_user_dir, lambda t: "Backend interpreter:" in t)
    assert f"Backend interpreter: {workbench.VENV_PYTHON}" in log, log[-2000:]
    assert not _marker(spaced_workspace).exists(), "the untrusted workspace's interpreter was run"

    vscode_ui.run_command(window, "View: Close All Editors")
    vscode_ui.open_file(window, MLP)
    lens = window.locator(".contentWidgets .codelens-decoration a", has_text="Overfit test").first
    expect(lens).to_be_visible(timeout=60_000)
    lens.click()
    toast = window.locator(".notification-toast", has_text="Restricted Mode")
    expect(toast).to_be_visible(timeout=15_000)
    expect(toast).to_contain_text("runs this workspace's code")
    expect(toast.get_by_role("button", name="Manage Workspace Trust")).to_be_visible()
    window.screenshot(path=str(ARTIFACTS / "reliability_restricted_mode_refusal.png"))
    assert not _marker(spaced_workspace).exists(), "the untrusted workspace's interpreter was run"


def test_trusted_check_on_a_path_with_a_space_runs_the_unsaved_text(
    window: Page, trust_user_dir: Path, spaced_workspace: Path
) -> None:
    vscode_ui.run_command(window, "Workspaces: Manage Workspace Trust")
    trust = window.locator(".workspace-trust-editor").get_by_role("button", name="Trust", exact=True)
    expect(trust.first).to_be_visible(timeout=30_000)
    trust.first.click()
    expect(window.locator(".statusbar", has_text="Restricted Mode")).to_have_count(0, timeout=30_000)
    deadline = time.monotonic() + 90
    while not _marker(spaced_workspace).exists() and time.monotonic() < deadline:
        time.sleep(0.5)  # trust granted: the backend restarts on the workspace's interpreter
    assert _marker(spaced_workspace).exists(), "the workspace's interpreter was not used once trusted"
    vscode_ui.run_command(window, "View: Close All Editors")

    vscode_ui.open_file(window, MLP)
    expect(window.locator(".codelens-decoration a", has_text="Overfit test").first).to_be_visible(timeout=90_000)
    time.sleep(5)  # a second backend started by a racing restart would add its lenses by now
    # One backend after the trust-grant restart: each of the four lenses once (a race between the
    # trust event and the configuration change it fires once started two language clients).
    expect(window.locator(".codelens-decoration a")).to_have_count(4)
    # An unsaved edit that breaks the second layer: the disk's file is healthy.
    line = vscode_ui.line_of(MLP, "nn.Linear(hidden, n_classes)")
    vscode_ui.go_to_line(window, line)
    window.keyboard.press("Home")
    window.keyboard.press("Shift+End")
    window.keyboard.insert_text("nn.Linear(hidden + 1, n_classes),")
    expect(window.locator(".tab.dirty", has_text="mlp.py")).to_be_visible()
    vscode_ui.go_to_line(window, vscode_ui.line_of(MLP, "def forward") + 1)
    window.keyboard.press("Shift+F10")
    item = window.locator(".context-view .action-item", has_text="Run Shape Trace")
    expect(item).to_be_visible(timeout=10_000)
    item.hover()
    window.keyboard.press("Enter")
    view = _result_view(window)
    expect(view.locator("body")).to_contain_text("net.2", timeout=CHECK_TIMEOUT_MS)
    expect(view.locator("body")).to_contain_text("expects 33 input features")
    window.screenshot(path=str(ARTIFACTS / "reliability_space_path_unsaved_check.png"))
    assert "hidden + 1" not in (spaced_workspace / MLP).read_text()  # it was the editor's text
    vscode_ui.run_command(window, "View: Focus Active Editor Group")
    vscode_ui.run_command(window, "File: Revert File")
