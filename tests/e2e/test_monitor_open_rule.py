"""Issue 17 E2E: the Training view does not pop up for a script that only inspects tensors.

sample_workspace/inspect_tensors.py calls ``loss.backward()`` once and has no optimizer: the
recorder sends one ``backward`` step, a one-point chart. The view opens by itself only once a run
has a curve (an optimizer stepped, or a second backward; extension/src/monitor/openRule.ts), so
neither at the breakpoint after the backward nor after the program ended is there a Training
view. "Torch Doctor: Show Training Monitor" still opens it, with that run's one step: the step did
reach the extension, so the old rule (open at the first step) would have opened the view.

Nor does such a run take the place of the last training run the extension keeps for the next
window (monitor.ts saves the shown run at its end only when it had a curve): after a healthy run,
the inspecting script, and a reload of the window, the command shows the healthy run again.
"""

from __future__ import annotations

import time

from playwright.sync_api import Locator, Page, expect

import vscode_ui

SAMPLE = "inspect_tensors.py"
TRAINING_TITLE = "Torch Doctor: Training"  # the panel's tab (monitorPanel.ts MONITOR_TITLE)
STATE = ".td-state"
QUIET_S = 6  # the recorder sends every 0.25 s; the extension opens the view as a batch comes
VIEW_TIMEOUT_S = 60


def _training_tabs(page: Page) -> Locator:
    return page.locator(".tab", has_text=TRAINING_TITLE)


def _training_view_open(page: Page) -> bool:
    return _training_tabs(page).count() > 0 or vscode_ui.find_webview(page, STATE) is not None


def _assert_stays_closed(page: Page, seconds: float, when: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert not _training_view_open(page), f"the Training view opened by itself {when}"
        time.sleep(0.25)


def test_one_backward_without_an_optimizer_does_not_open_the_training_view(page: Page) -> None:
    vscode_ui.open_file(page, SAMPLE)
    vscode_ui.go_to_line(page, vscode_ui.line_of(SAMPLE, "# Set a breakpoint here"))
    page.keyboard.press("F9")
    vscode_ui.start_debugging(page, "Debug current file")
    vscode_ui.wait_until_paused(page, timeout_ms=240_000)  # a loaded machine: torch imports
    _assert_stays_closed(page, QUIET_S, "at the breakpoint after loss.backward()")
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "monitor_inspect_no_view_at_pause.png"))

    vscode_ui.run_command(page, "Remove All Breakpoints")
    vscode_ui.run_command(page, "Debug: Continue")
    page.locator(".debug-toolbar").wait_for(state="hidden", timeout=120_000)
    # The recorder's last batch and end line come at exit; the extension ends the run 1.5 s later.
    _assert_stays_closed(page, QUIET_S, "after the program ended")

    # The command opens it any time: the run is there, one backward step, ended.
    vscode_ui.run_command(page, "Torch Doctor: Show Training Monitor")
    view = vscode_ui.webview_with(page, STATE, VIEW_TIMEOUT_S)
    header = view.locator("header.td-header")
    expect(header).to_have_attribute("data-steps", "1", timeout=VIEW_TIMEOUT_S * 1000)
    expect(view.locator(STATE)).to_have_attribute("data-state", "ended")
    expect(_training_tabs(page)).to_have_count(1)
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "monitor_inspect_opened_by_command.png"))


def _run_to_end(page: Page, sample: str) -> None:
    vscode_ui.open_file(page, sample)
    vscode_ui.start_debugging(page, "Debug current file")
    page.locator(".debug-toolbar").wait_for(timeout=240_000)  # a loaded machine: torch imports
    page.locator(".debug-toolbar").wait_for(state="hidden", timeout=240_000)


def test_a_run_without_a_curve_does_not_replace_the_kept_training_run(page: Page) -> None:
    _run_to_end(page, "monitor/healthy.py")
    view = vscode_ui.webview_with(page, STATE, VIEW_TIMEOUT_S)  # opened by itself: the run has a curve
    expect(view.locator(STATE)).to_have_attribute("data-state", "ended", timeout=VIEW_TIMEOUT_S * 1000)
    steps = view.locator("header.td-header").get_attribute("data-steps")
    assert steps is not None and int(steps) > 1, steps

    _run_to_end(page, SAMPLE)  # one backward, no optimizer: no curve
    time.sleep(QUIET_S)  # its end: the extension ends a run 1.5 s after its session

    page.reload(timeout=120_000)  # a new window: the view comes from what the extension kept
    page.locator(".monaco-workbench").wait_for(timeout=60_000)
    vscode_ui.run_command(page, "Torch Doctor: Show Training Monitor")
    kept = vscode_ui.webview_with(page, STATE, VIEW_TIMEOUT_S)
    header = kept.locator("header.td-header")
    expect(header).to_have_attribute("data-steps", steps, timeout=VIEW_TIMEOUT_S * 1000)
    expect(header.locator(".td-facts")).to_contain_text("healthy.py")
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "monitor_kept_run_after_reload.png"))
