"""Foundation E2E: the extension activates, its backend answers, and survives being killed."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

from playwright.sync_api import Page, expect

import vscode_ui
import workbench

READY_TIMEOUT_MS = 60_000


def _backend_pids(server_url: workbench.Served) -> list[int]:
    """PIDs of the Torch Doctor backends started by this test's code-server (not any other)."""
    return [
        pid
        for pid, cmd in workbench.process_tree(server_url.pid).items()
        if "torchdoctor.server" in cmd and "--stdio" in cmd
    ]


def test_opening_python_file_starts_backend(page: Page, user_data_dir: Path, server_url: workbench.Served) -> None:
    vscode_ui.open_file(page, "train.py")
    expect(vscode_ui.status_item(page, "ready")).to_be_visible(timeout=READY_TIMEOUT_MS)
    assert _backend_pids(server_url), "the status says ready but no backend process runs"
    # Clicking the item opens our log. Its first lines say "Backend ready"; when earlier tests'
    # debug sessions have logged more than the panel shows, the visible end is their lines
    # ("Debug session ...", "Debug adapter ..."), which only our channel writes (\s: Monaco draws
    # spaces as no-break spaces, which a plain string would normalise but a regex must allow).
    vscode_ui.status_item(page, "ready").click()
    log_view = page.locator(".panel .view-lines").first
    expect(log_view).to_contain_text(re.compile(r"Backend\sready|Debug\s(session|adapter)"), timeout=15_000)
    assert "Backend ready" in vscode_ui.wait_for_log(user_data_dir, lambda t: "Backend ready" in t)


def test_killed_backend_is_restarted(page: Page, user_data_dir: Path, server_url: workbench.Served) -> None:
    vscode_ui.open_file(page, "train.py")
    expect(vscode_ui.status_item(page, "ready")).to_be_visible(timeout=READY_TIMEOUT_MS)
    before = _backend_pids(server_url)
    assert before, "no backend process to kill"
    for pid in before:
        os.kill(pid, signal.SIGKILL)
    # The extension notices, restarts it, and the status returns to ready on a new process.
    deadline = time.monotonic() + 60
    after: list[int] = []
    while time.monotonic() < deadline:
        after = [p for p in _backend_pids(server_url) if p not in before]
        if after:
            break
        time.sleep(0.5)
    assert after, "the backend was not restarted within 60 s"
    expect(vscode_ui.status_item(page, "ready")).to_be_visible(timeout=READY_TIMEOUT_MS)
    log = vscode_ui.wait_for_log(user_data_dir, lambda t: t.count("Backend ready:") >= 2)
    assert "The backend process exited unexpectedly; restarting it (1 of 5 in 3 minutes)." in log
    assert log.count("Backend ready:") >= 2, "no second 'ready' after the restart"
    vscode_ui.status_item(page, "ready").click()  # the screenshot shows the log after the restart
    expect(page.locator(".panel .view-lines").first).to_contain_text("Backend ready", timeout=15_000)


def test_missing_interpreter_explains_the_fix(page: Page, user_data_dir: Path) -> None:
    """A wrong torchDoctor.python gives a notification naming the setting, and the status says error."""
    vscode_ui.open_file(page, "train.py")
    expect(vscode_ui.status_item(page, "ready")).to_be_visible(timeout=READY_TIMEOUT_MS)
    settings_file = user_data_dir / "User" / "settings.json"
    original = json.loads(settings_file.read_text())["torchDoctor.python"]
    try:
        vscode_ui.set_user_setting(page, "torchDoctor.python", "/nonexistent/bin/python3", settings_file)
        toast = page.locator(
            ".notifications-toasts .notification-toast", has_text="could not run the Python interpreter"
        )
        expect(toast).to_be_visible(timeout=30_000)
        expect(toast).to_contain_text('"/nonexistent/bin/python3" (ENOENT)')
        expect(toast).to_contain_text('Set "torchDoctor.python"')
        expect(toast.get_by_role("button", name="Open Settings")).to_be_visible()
        expect(vscode_ui.status_item(page, "error")).to_be_visible()
        page.screenshot(path=str(vscode_ui.ARTIFACTS / "missing_interpreter_notification.png"))
    finally:
        vscode_ui.set_user_setting(page, "torchDoctor.python", original, settings_file)
    # Putting the setting back brings the backend back by itself.
    expect(vscode_ui.status_item(page, "ready")).to_be_visible(timeout=READY_TIMEOUT_MS)
