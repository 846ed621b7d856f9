"""Foundation E2E: the extension activates, its backend answers, and survives being killed."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from playwright.sync_api import Page, expect

import vscode_ui

READY_TIMEOUT_MS = 60_000


def _backend_pids() -> list[int]:
    """PIDs of Torch Doctor backend processes (read from /proc: the real processes)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"torchdoctor.server" in cmdline and b"--stdio" in cmdline:
            pids.append(int(entry.name))
    return pids


def test_opening_python_file_starts_backend(page: Page) -> None:
    vscode_ui.open_file(page, "train.py")
    expect(vscode_ui.status_item(page, "ready")).to_be_visible(timeout=READY_TIMEOUT_MS)
    assert _backend_pids(), "the status says ready but no backend process runs"
    # Clicking the item opens the log, where the backend's own lines appear.
    vscode_ui.status_item(page, "ready").click()
    expect(page.locator(".panel .view-lines").first).to_contain_text("Backend ready", timeout=15_000)


def test_killed_backend_is_restarted(page: Page, user_data_dir: Path) -> None:
    vscode_ui.open_file(page, "train.py")
    expect(vscode_ui.status_item(page, "ready")).to_be_visible(timeout=READY_TIMEOUT_MS)
    before = _backend_pids()
    assert before, "no backend process to kill"
    for pid in before:
        os.kill(pid, signal.SIGKILL)
    # The extension notices, restarts it, and the status returns to ready on a new process.
    deadline = time.monotonic() + 60
    after: list[int] = []
    while time.monotonic() < deadline:
        after = [p for p in _backend_pids() if p not in before]
        if after:
            break
        time.sleep(0.5)
    assert after, "the backend was not restarted within 60 s"
    expect(vscode_ui.status_item(page, "ready")).to_be_visible(timeout=READY_TIMEOUT_MS)
    log = vscode_ui.output_channel_log(user_data_dir)
    assert "The backend process exited unexpectedly; restarting it (1 of 5 in 3 minutes)." in log
    assert log.count("Backend ready:") >= 2, "no second 'ready' after the restart"
    vscode_ui.status_item(page, "ready").click()  # the screenshot shows the log after the restart
    expect(page.locator(".panel .view-lines").first).to_contain_text("Backend ready", timeout=15_000)
