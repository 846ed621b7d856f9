"""Issue 4 E2E: the anomaly watch pauses at the layer that made the NaN and says so; anomaly breakpoints."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

import vscode_ui

PAUSE_TIMEOUT_MS = 90_000


def test_watch_pauses_in_the_layer_that_made_the_nan(page: Page) -> None:
    vscode_ui.open_file(page, "broken/zero_std_norm.py")
    vscode_ui.start_debugging(page, "Debug current file with anomaly watch")
    vscode_ui.wait_until_paused(page, timeout_ms=PAUSE_TIMEOUT_MS)
    # VS Code's exception widget on the user's line carries the runtime's sentence.
    widget = page.locator(".exception-widget")
    expect(widget).to_be_visible(timeout=30_000)
    expect(widget).to_contain_text("NaN in the output of `model.norm` (Standardize)")
    expect(widget).to_contain_text("its inputs were finite")
    # The paused line is the user's call of the module, in their forward.
    expect(page.locator(".debug-call-stack .monaco-list-row").first).to_contain_text("forward")
    toast = page.locator(".notification-toast", has_text="Torch Doctor: NaN in the output")
    expect(toast).to_be_visible(timeout=15_000)
    # The paused frame's values read as summaries: the layer's input, finite, one line.
    variables = page.locator(".debug-pane .monaco-list[aria-label='Debug Variables']")
    vscode_ui.expand_tree_row(variables.locator(".monaco-list-row", has_text="Locals").first)
    expect(variables.locator(".monaco-list-row", has_text="x =").first).to_contain_text(
        "tensor[64, 12] f32 cpu", timeout=30_000
    )
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "anomaly_pause_nan.png"))
    vscode_ui.stop_debugging(page)


def test_add_anomaly_breakpoint_creates_a_conditional_breakpoint(page: Page) -> None:
    sample = "train.py"
    vscode_ui.open_file(page, sample)
    vscode_ui.go_to_line(page, vscode_ui.line_of(sample, "loss.backward()"))
    vscode_ui.run_command(page, "Torch Doctor: Add Anomaly Breakpoint")
    page.locator(".quick-input-list .monaco-list-row", has_text="Any tensor in scope has NaN or Inf").first.click()
    vscode_ui.run_command(page, "Run and Debug: Focus on Breakpoints View")
    row = page.locator(".debug-pane .monaco-list-row", has_text="train.py").last
    expect(row).to_be_visible(timeout=15_000)
    expect(page.locator(".editor-instance .codicon-debug-breakpoint-conditional").first).to_be_visible()
    # The Breakpoints view lists it like any other, with its condition (editable there).
    expect(row).to_have_attribute(
        "aria-label", re.compile(r"Condition: __import__\('torchdoctor\.runtime\.conditions'.*\.any_nonfinite\(\)")
    )
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "anomaly_breakpoint_added.png"))
    page.keyboard.press("F9")  # the cursor is still on that line: remove it again
