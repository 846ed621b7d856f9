"""Browser windows on a workbench, and what every test leaves behind: one place for both the
session's window (conftest.py) and the first-run window (test_first_run.py)."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from playwright.sync_api import Browser, Page

import vscode_ui
from vscode_ui import ARTIFACTS

VIEWPORT = {"width": 1400, "height": 860}  # the default editor split in every screenshot


@contextmanager
def open_window(browser: Browser, url: str) -> Iterator[Page]:
    """A browser window on ``url`` at the default size, once the workbench is drawn."""
    context = browser.new_context(viewport=VIEWPORT)
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    pg.goto(url, timeout=120_000)  # a loaded machine serves the workbench slowly
    pg.locator(".monaco-workbench").wait_for(timeout=60_000)
    try:
        yield pg
    finally:
        context.close()


def after_test(request, pg: Page, user_data_dir: Path, server_log: str = "code-server.log") -> None:
    """A screenshot of the test's window, the logs that explain a failure, then the window tidied."""
    name = request.node.name
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    if getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed:
        keep_logs(name, user_data_dir, server_log)
    try:
        vscode_ui.reset_window(pg)
    except Exception as exc:  # noqa: BLE001 - any failure: the window is in an unknown state
        # A reset that cannot finish (a palette closed under it, a dialog) would fail a test that
        # passed and leave the next one a dirty window: reload the workbench and reset again.
        pg.screenshot(path=str(ARTIFACTS / f"{name}.reset-failed.png"))
        print(f"reset after {name} failed ({type(exc).__name__}: {str(exc)[:200]}); reloading the window")
        pg.reload(timeout=120_000)
        pg.locator(".monaco-workbench").wait_for(timeout=60_000)
        vscode_ui.reset_window(pg)


def keep_logs(name: str, user_data_dir: Path, server_log: str = "code-server.log") -> None:
    """On failure keep what explains it: the code-server log and our output channel."""
    shutil.copy(ARTIFACTS / server_log, ARTIFACTS / f"{name}.code-server.log")
    for i, log in enumerate(sorted((user_data_dir / "logs").rglob("*Torch Doctor*.log"))):
        shutil.copy(log, ARTIFACTS / f"{name}.torch-doctor-{i}.log")
