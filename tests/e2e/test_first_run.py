"""Issue 20 E2E, first run: a fresh workbench opens the "Get started" walkthrough, an interpreter
without torch puts the status item in its warning state with the fix one click away, each
walkthrough button does its step, and the Extensions page shows the user-facing README.

These tests use a workbench of their own (a fresh user-data-dir, so the extension's "first run"
really is one, and VS Code's `walkthroughs.openOnInstall` left on), with `torchDoctor.python` set
to an interpreter that has no torch, on a copy of the sample workspace that has a `.venv` of its
own (a real virtual environment that sees the project's torch through a .pth file). The picker
writes the copy's settings, so the repository's sample is never changed. The session's
workbench (conftest.py) installs the .vsix; its window is not opened here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from playwright.sync_api import Browser, FrameLocator, Locator, Page, expect

import vscode_ui
import workbench
from vscode_ui import ARTIFACTS
from windows import after_test, open_window

READY_TIMEOUT_MS = 90_000
PAUSE_TIMEOUT_MS = 90_000
CHECK_TIMEOUT_MS = 120_000


def _python_without_torch() -> str:
    """An interpreter of this machine that runs but has no torch (checked, not assumed)."""
    candidates = ["/usr/bin/python3", *sorted(map(str, Path.home().glob(".pyenv/versions/3.1*/bin/python")))]
    for py in candidates:
        if not os.access(py, os.X_OK):
            continue
        r = subprocess.run([py, "-c", "import torch"], capture_output=True, timeout=60)
        if r.returncode != 0:
            return py
    pytest.skip("no interpreter without torch on this machine")


@pytest.fixture(scope="module")
def no_torch_python() -> str:
    return _python_without_torch()


@pytest.fixture(scope="module")
def first_run_user_dir(no_torch_python: str) -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="td-e2e-first-run-"))
    workbench.write_user_settings(
        d,
        {
            "torchDoctor.python": no_torch_python,
            # VS Code's defaults; the shared E2E settings turn start pages off to keep windows tidy.
            "workbench.welcomePage.walkthroughs.openOnInstall": True,
            "workbench.startupEditor": "welcomePage",
        },
    )
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def first_run_workspace() -> Iterator[Path]:
    """A copy of the sample workspace with a `.venv` whose Python sees the project's torch."""
    root = Path(tempfile.mkdtemp(prefix="td-e2e-first-run-ws-"))
    ws = root / "sample_workspace"
    shutil.copytree(
        workbench.SAMPLE_WORKSPACE, ws, ignore=shutil.ignore_patterns("__pycache__", "settings.json", ".venv")
    )
    subprocess.run(
        [str(workbench.VENV_PYTHON), "-m", "venv", "--without-pip", str(ws / ".venv")], check=True, timeout=120
    )
    site = subprocess.run(
        [str(workbench.VENV_PYTHON), "-c", "import torch, pathlib; print(pathlib.Path(torch.__file__).parents[1])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout.strip()
    (ws_site,) = (ws / ".venv" / "lib").glob("python3*/site-packages")
    (ws_site / "project_torch.pth").write_text(site + "\n")
    yield ws
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def first_run_server(first_run_user_dir: Path, server_url: workbench.Served) -> Iterator[workbench.Served]:
    """A second code-server on the same extensions folder (the session's fixture installed the .vsix)."""
    del server_url  # requested for the installation only
    with workbench.code_server(first_run_user_dir, ARTIFACTS / "first-run-code-server.log") as url:
        yield url


@pytest.fixture(scope="module")
def first_run_window(browser: Browser, first_run_server: workbench.Served, first_run_workspace: Path) -> Iterator[Page]:
    with open_window(browser, f"{first_run_server}/?folder={first_run_workspace}") as pg:
        yield pg


@pytest.fixture
def window(request, first_run_window: Page, first_run_user_dir: Path) -> Iterator[Page]:
    """The first-run window; a screenshot after each test, the logs on failure, then tidied."""
    yield first_run_window
    after_test(request, first_run_window, first_run_user_dir, "first-run-code-server.log")


def _open_step(page: Page, title: str) -> Locator:
    """Expand one step of the walkthrough (opened if it is not on screen) and return the page."""
    walkthrough = vscode_ui.walkthrough(page)
    if not walkthrough.is_visible():
        vscode_ui.run_command(page, "Torch Doctor: Get Started")
    expect(walkthrough).to_contain_text("Get started with Torch Doctor", timeout=30_000)
    step = walkthrough.locator(".getting-started-step", has_text=title).first
    if step.get_attribute("aria-expanded") != "true":
        step.locator(".step-title", has_text=title).click()
    expect(step).to_have_attribute("aria-expanded", "true")
    return step


def _click_step_button(page: Page, step_title: str, button: str) -> None:
    step = _open_step(page, step_title)
    step.get_by_role("button", name=button).click()


def test_walkthrough_opens_on_first_run(window: Page) -> None:
    walkthrough = vscode_ui.walkthrough(window)
    expect(walkthrough).to_be_visible(timeout=READY_TIMEOUT_MS)
    expect(walkthrough).to_contain_text("Get started with Torch Doctor")
    for title in (
        "Choose the interpreter",
        "Open the sample workspace",
        "Hover a tensor",
        "Pause on a NaN",
        "Run the overfit test",
        "Read a squiggle",
    ):
        # The Welcome page is drawn first and lists "Get started with Torch Doctor" too; our
        # walkthrough replaces it once the extension has activated (seconds on a loaded machine).
        expect(walkthrough).to_contain_text(title, timeout=READY_TIMEOUT_MS)
    # The first step is open, with its button.
    expect(walkthrough.get_by_role("button", name="Select Interpreter")).to_be_visible()
    # The interpreter has no torch: a notification says so once, with the fix as a button.
    toast = window.locator(".notifications-toasts .notification-toast", has_text="torch is not installed")
    expect(toast).to_be_visible(timeout=READY_TIMEOUT_MS)
    expect(toast.get_by_role("button", name="Select Interpreter")).to_be_visible()
    window.screenshot(path=str(ARTIFACTS / "first_run_walkthrough.png"))
    # The first step's button opens the interpreter picker (chosen from in the next tests).
    walkthrough.get_by_role("button", name="Select Interpreter").click()
    expect(window.locator(".quick-input-widget")).to_contain_text("Torch Doctor: Select Interpreter")
    window.keyboard.press("Escape")


def test_interpreter_without_torch_is_a_warning_with_the_fix(window: Page) -> None:
    item = vscode_ui.status_item(window, "warning")
    expect(item).to_be_visible(timeout=READY_TIMEOUT_MS)
    expect(item.locator(".codicon-warning")).to_be_visible()
    # Coloured as VS Code colours warnings in the status bar (statusBarItem.warningBackground).
    window.mouse.move(700, 400)
    background = item.evaluate("e => getComputedStyle(e.closest('.statusbar-item')).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent"), background
    window.locator(".part.statusbar").screenshot(path=str(ARTIFACTS / "first_run_status_warning_item.png"))
    # The tooltip: what the interpreter has, and the fix.
    item.hover()
    tooltip = window.locator(".monaco-hover, .workbench-hover").filter(has_text="Torch Doctor: warning").first
    expect(tooltip).to_be_visible(timeout=15_000)
    expect(tooltip).to_contain_text("torch is not installed in")
    expect(tooltip).to_contain_text("numpy")
    expect(tooltip).to_contain_text("debugpy")
    expect(tooltip).to_contain_text("Select Interpreter")
    window.screenshot(path=str(ARTIFACTS / "first_run_status_warning_tooltip.png"))


def test_select_interpreter_lists_interpreters_and_one_click_fixes(window: Page, first_run_workspace: Path) -> None:
    # The warning item's click is the fix: the picker.
    window.mouse.move(700, 400)
    vscode_ui.status_item(window, "warning").click()
    picker = window.locator(".quick-input-widget")
    expect(picker).to_contain_text("Torch Doctor: Select Interpreter")
    rows = picker.locator(".quick-input-list .monaco-list-row")
    expect(rows.filter(has_text="Enter interpreter path")).to_have_count(1)
    expect(rows.filter(has_text="pyenv 3.12.1")).to_have_count(1, timeout=15_000)
    # Each row says what its interpreter can do once probed (torch or not); torch first.
    expect(rows.filter(has_text="no torch").first).to_be_visible(timeout=30_000)
    venv = first_run_workspace / ".venv" / "bin" / "python"
    venv_row = rows.filter(has_text=".venv in sample_workspace").first
    expect(venv_row).to_contain_text(str(venv))
    expect(venv_row).to_contain_text("torch 2.", timeout=30_000)
    window.screenshot(path=str(ARTIFACTS / "first_run_select_interpreter.png"))
    venv_row.click()
    # Saved in the workspace settings; the backend restarts on it and the warning is gone.
    expect(vscode_ui.status_item(window, "ready")).to_be_visible(timeout=READY_TIMEOUT_MS)
    saved = json.loads((first_run_workspace / ".vscode" / "settings.json").read_text())
    assert saved["torchDoctor.python"] == str(venv), saved


def test_open_the_sample_button_shows_its_readme(window: Page) -> None:
    _click_step_button(window, "Open the sample workspace", "Open the Sample")
    tab = window.locator(".tab", has_text="README.md")
    expect(tab.first).to_be_visible(timeout=30_000)
    preview = _result_view(window)
    expect(preview.locator("body")).to_contain_text("Torch Doctor's sample workspace", timeout=30_000)
    expect(preview.locator("body")).to_contain_text("The anomaly watch: pause where the NaN is born")
    window.screenshot(path=str(ARTIFACTS / "first_run_step_open_sample.png"))
    window.locator(".part.sidebar .pane-header").first.click()  # the keyboard back from the preview


def test_read_a_squiggle_button_shows_a_finding(window: Page) -> None:
    _click_step_button(window, "Read a squiggle", "Show Me a Squiggle")
    expect(window.locator(".tab.active", has_text="lint_classifier.py")).to_be_visible(timeout=30_000)
    hover = window.locator(".monaco-hover", has_text="TD003").first
    expect(hover).to_be_visible(timeout=60_000)
    expect(hover).to_contain_text("Softmax applied before CrossEntropyLoss")
    window.screenshot(path=str(ARTIFACTS / "first_run_step_squiggle.png"))


def test_overfit_button_runs_the_check(window: Page) -> None:
    _click_step_button(window, "Run the overfit test", "Run the Overfit Test")
    view = _result_view(window)
    expect(view.locator("body")).to_contain_text("PASS", timeout=CHECK_TIMEOUT_MS)
    expect(view.locator("body")).to_contain_text("TinyMLP")
    window.screenshot(path=str(ARTIFACTS / "first_run_step_overfit.png"))


def test_hover_a_tensor_button_pauses_at_the_marked_line(window: Page) -> None:
    _click_step_button(window, "Hover a tensor", "Debug and Pause")
    vscode_ui.wait_until_paused(window, timeout_ms=PAUSE_TIMEOUT_MS)
    expect(window.locator(".debug-call-stack .monaco-list-row").first).to_contain_text("main")
    variables = window.locator(".debug-pane .monaco-list[aria-label='Debug Variables']")
    vscode_ui.expand_tree_row(variables.locator(".monaco-list-row", has_text="Locals").first)
    logits = variables.locator('.monaco-list-row[aria-label^="logits, value"]')
    expect(logits).to_contain_text("tensor[64, 10] f32 cpu", timeout=30_000)
    # What the step asks for: hover a tensor in the editor.
    token = window.locator(".editor-instance .view-line span span", has_text=re.compile(r"^\s*broken\s*$")).first
    token.hover()
    hover = window.locator(".debug-hover-widget")
    expect(hover).to_be_visible(timeout=15_000)
    expect(hover).to_contain_text("NaN×1")
    window.screenshot(path=str(ARTIFACTS / "first_run_step_hover_tensor.png"))
    vscode_ui.stop_debugging(window)


def test_pause_on_a_nan_button_stops_in_the_layer(window: Page) -> None:
    _click_step_button(window, "Pause on a NaN", "Run with the Anomaly Watch")
    vscode_ui.wait_until_paused(window, timeout_ms=PAUSE_TIMEOUT_MS)
    widget = window.locator(".exception-widget")
    expect(widget).to_be_visible(timeout=30_000)
    expect(widget).to_contain_text("NaN in the output of `model.fc1` (Linear)")
    window.screenshot(path=str(ARTIFACTS / "first_run_step_pause_on_nan.png"))
    vscode_ui.stop_debugging(window)


def test_walkthrough_marks_the_steps_done(window: Page) -> None:
    vscode_ui.run_command(window, "Torch Doctor: Get Started")
    walkthrough = vscode_ui.walkthrough(window)
    expect(walkthrough).to_contain_text("Get started with Torch Doctor", timeout=30_000)
    done = walkthrough.locator(".getting-started-step .codicon-getting-started-step-checked")
    expect(done).to_have_count(6, timeout=15_000)
    window.screenshot(path=str(ARTIFACTS / "first_run_walkthrough_done.png"))


def test_extensions_page_shows_the_user_readme(window: Page) -> None:
    vscode_ui.run_command(window, "Extensions: Show Installed Extensions")
    row = window.locator(".extensions-viewlet .monaco-list-row", has_text="Torch Doctor").first
    row.click()
    editor = window.locator(".extension-editor")
    expect(editor.locator(".name").first).to_contain_text("Torch Doctor", timeout=30_000)
    readme = _result_view(window)
    expect(readme.locator("body")).to_contain_text("Find the PyTorch training bugs that never crash", timeout=30_000)
    expect(readme.locator("body")).to_contain_text("Privacy")
    expect(readme.locator("body")).not_to_contain_text("make run")  # the developer README is not this page
    window.screenshot(path=str(ARTIFACTS / "first_run_extension_page.png"))


def _result_view(page: Page) -> FrameLocator:
    """The newest webview's page (VS Code nests each in two iframes)."""
    return page.frame_locator("iframe.webview.ready").last.frame_locator("iframe#active-frame")
