"""Issue 3 E2E: debug the sample with the provided configuration; hover and Variables show summaries."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

import vscode_ui
import workbench

SAMPLE = "inspect_tensors.py"


def _breakpoint_line() -> int:
    lines = (workbench.SAMPLE_WORKSPACE / SAMPLE).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if "# Set a breakpoint here" in line)


def test_hover_and_variables_show_tensor_summaries(page: Page) -> None:
    vscode_ui.open_file(page, SAMPLE)
    vscode_ui.go_to_line(page, _breakpoint_line())
    page.keyboard.press("F9")
    expect(page.locator(".editor-instance .codicon-debug-breakpoint").first).to_be_visible()

    vscode_ui.start_debugging(page, "Debug current file")
    vscode_ui.wait_until_paused(page)
    vscode_ui.set_side_bar_width(page, 720)  # room for the summaries in the screenshot

    # The Variables view: one line per tensor instead of a wall of numbers.
    variables = page.locator(".debug-pane .monaco-list[aria-label='Debug Variables']")
    vscode_ui.expand_tree_row(variables.locator(".monaco-list-row", has_text="Locals").first)
    broken = variables.locator(".monaco-list-row", has_text="broken")
    expect(broken).to_contain_text("tensor[64, 10] f32 cpu", timeout=30_000)
    expect(broken).to_contain_text("NaN×1")
    expect(variables.locator(".monaco-list-row", has_text="labels")).to_contain_text("tensor[64] i64 cpu")
    expect(variables.locator(".monaco-list-row", has_text="features")).to_contain_text("tensor[64, 32] f32 cpu")
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "debug_variables_view.png"))

    # Hover a tensor in the editor: the debug hover shows the same summary.
    token = page.locator(".editor-instance .view-line span span", has_text=re.compile(r"^\s*broken\s*$")).first
    token.hover()
    hover = page.locator(".debug-hover-widget")
    expect(hover).to_be_visible(timeout=15_000)
    expect(hover).to_contain_text("tensor[64, 10] f32 cpu")
    expect(hover).to_contain_text("NaN×1")
    expect(hover).to_contain_text("Inf×1")
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "debug_hover_tensor.png"))

    vscode_ui.stop_debugging(page)


def test_variables_show_the_training_loops_optimizer_model_and_loss(page: Page) -> None:
    """Paused after the first ``optimizer.step()`` of the sample training script: the optimizer
    reads as its settings and state, the model and the criterion as modules, not their reprs."""
    vscode_ui.open_file(page, "train.py")
    vscode_ui.go_to_line(page, vscode_ui.line_of("train.py", "loss_value = loss.item()"))
    page.keyboard.press("F9")
    expect(page.locator(".editor-instance .codicon-debug-breakpoint").first).to_be_visible()

    vscode_ui.start_debugging(page, "Debug current file")
    vscode_ui.wait_until_paused(page)
    vscode_ui.set_side_bar_width(page, 1000)  # the optimizer's whole line, up to its state

    variables = page.locator(".debug-pane .monaco-list[aria-label='Debug Variables']")
    vscode_ui.expand_tree_row(variables.locator(".monaco-list-row", has_text="Locals").first)
    optimizer = variables.locator(".monaco-list-row", has_text=re.compile(r"^\s*optimizer\b"))
    expect(optimizer).to_contain_text("Adam lr=0.001 betas=(0.9, 0.999)", timeout=30_000)
    expect(optimizer).to_contain_text("6 params (5.76K values) · step 1")
    expect(variables.locator(".monaco-list-row", has_text=re.compile(r"^\s*model\b"))).to_contain_text(
        "MLP 6 modules, 5.76K params cpu train"
    )
    expect(variables.locator(".monaco-list-row", has_text=re.compile(r"^\s*criterion\b"))).to_contain_text(
        "CrossEntropyLoss"
    )
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "debug_training_objects.png"))

    vscode_ui.stop_debugging(page)
