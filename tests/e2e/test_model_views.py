"""Issue 5 E2E: gradient-flow and shape-trace views beside the editor while paused."""

from __future__ import annotations

import time

from playwright.sync_api import FrameLocator, Page, expect

import vscode_ui

VIEW_TIMEOUT_MS = 60_000


def _view_with(page: Page, selector: str, timeout_s: float = 60) -> FrameLocator:
    """The webview whose page contains ``selector`` (VS Code nests each page in two iframes)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        outer = page.locator("iframe.webview.ready")
        for i in range(outer.count()):
            frame = page.frame_locator("iframe.webview.ready").nth(i).frame_locator("iframe#active-frame")
            if frame.locator(selector).count():
                return frame
        time.sleep(0.5)
    raise AssertionError(f"no webview shows {selector!r} within {timeout_s:.0f} s")


def _pause_at_marked_line(page: Page, sample: str) -> None:
    vscode_ui.open_file(page, sample)
    vscode_ui.go_to_line(page, vscode_ui.line_of(sample, "# Set a breakpoint here"))
    page.keyboard.press("F9")
    vscode_ui.start_debugging(page, "Debug current file")
    vscode_ui.wait_until_paused(page)


def test_views_show_the_sample_model_after_backward(page: Page) -> None:
    _pause_at_marked_line(page, "views_demo.py")
    vscode_ui.run_command(page, "Torch Doctor: Show Gradient Flow")
    flow = _view_with(page, "#gradient-table tr.row")
    expect(flow.locator("#gradient-table tr.row").first).to_be_visible(timeout=VIEW_TIMEOUT_MS)
    assert flow.locator("#gradient-table tr.row").count() >= 3
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_gradient_flow.png"))

    vscode_ui.run_command(page, "Torch Doctor: Show Shape Trace")
    trace = _view_with(page, "tr.row[data-key]:not([data-key^='g:'])")
    expect(trace.locator("body")).to_contain_text("Conv2d", timeout=VIEW_TIMEOUT_MS)
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_shape_trace.png"))
    vscode_ui.stop_debugging(page)


def test_gradient_flow_flags_the_dead_relu_layer(page: Page) -> None:
    _pause_at_marked_line(page, "broken/dead_relu_views.py")
    vscode_ui.run_command(page, "Torch Doctor: Show Gradient Flow")
    flow = _view_with(page, "#gradient-table tr.row")
    flagged = flow.locator("#gradient-table tr.row.flagged")
    expect(flagged.first).to_be_visible(timeout=VIEW_TIMEOUT_MS)
    expect(flow.locator("body")).to_contain_text("dead", timeout=VIEW_TIMEOUT_MS)
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_gradient_flow_dead_relu.png"))
    vscode_ui.stop_debugging(page)


def test_shape_trace_marks_the_failing_module(page: Page) -> None:
    vscode_ui.open_file(page, "broken/shape_error_views.py")
    vscode_ui.start_debugging(page, "Debug current file")
    vscode_ui.wait_until_paused(page)  # stops at the uncaught RuntimeError
    vscode_ui.run_command(page, "Torch Doctor: Show Shape Trace")
    trace = _view_with(page, "tr.row.failed")
    expect(trace.locator("tr.row.failed")).to_contain_text("fc1", timeout=VIEW_TIMEOUT_MS)
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_shape_trace_failure.png"))
    vscode_ui.stop_debugging(page)
