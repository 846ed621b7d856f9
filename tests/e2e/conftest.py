"""E2E fixtures: one code-server per session, a fresh browser page per test.

Each test gets a throwaway user-data-dir (settings, logs) shared across the session's
workbench, the project-local extensions dir with the freshly built .vsix installed,
and Debian's Chromium driven by Playwright (never a browser downloaded by a tool).
After every test a screenshot lands in tests/e2e/artifacts/<test>.png; on failure the
code-server log and the "Torch Doctor" output channel are copied beside it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

import workbench
from vscode_ui import ARTIFACTS
from windows import after_test, open_window

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def user_data_dir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="td-e2e-user-"))
    workbench.write_user_settings(d)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def server_url(user_data_dir: Path) -> Iterator[workbench.Served]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    workbench.install_extension(user_data_dir)
    with workbench.code_server(user_data_dir, ARTIFACTS / "code-server.log") as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
    if report.when == "call" and report.failed:
        _say_why(item, report)


# Lines of a failed attempt's traceback kept in its artifact.
FAILURE_LINES = 60


def _say_why(item, report) -> None:
    """A failed attempt's reason, in the log and in ``<test>.failure.txt``: a test that passes on
    its rerun (``--reruns``) shows only as RERUN in pytest's summary, and the CI's clone with its
    artifacts is gone by the time someone asks what failed."""
    text = report.longreprtext or ""
    lines = text.splitlines()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"{item.name}.failure.txt").write_text("\n".join(lines[-FAILURE_LINES:]) + "\n")
    errors = [line for line in lines if line.startswith("E ")]
    reason = (errors[0] if errors else (lines[-1] if lines else "no traceback"))[:300]
    terminal = item.config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        terminal.write_line(f"\nE2E attempt failed: {item.nodeid}: {reason}")


@pytest.fixture(scope="session")
def workbench_page(browser: Browser, server_url: str) -> Iterator[Page]:
    """One window for the whole session: code-server keeps a closed window's extension
    host (and its backend) alive for a reconnection grace period, so a window per test
    would leave several backends running side by side."""
    with open_window(browser, workbench.workspace_url(server_url)) as pg:
        yield pg


@pytest.fixture
def page(request, workbench_page: Page, user_data_dir: Path) -> Iterator[Page]:
    """The shared window, tidied for this test; screenshot (and logs on failure) after it."""
    yield workbench_page
    after_test(request, workbench_page, user_data_dir)
