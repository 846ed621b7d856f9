"""Issue 6 E2E: CodeLens and context-menu checks run in a worker and draw their result beside the editor."""

from __future__ import annotations

from playwright.sync_api import FrameLocator, Page, expect

import vscode_ui

CHECK_TIMEOUT_MS = 120_000


def _result_view(page: Page) -> FrameLocator:
    """The check-result webview, found by its page's script (not as the last webview: a view
    left by an earlier test may come after it)."""
    return vscode_ui.webview_with(page, "script[src*='checkResult']", timeout_s=CHECK_TIMEOUT_MS / 1000)


def test_overfit_codelens_passes_on_the_healthy_mlp(page: Page) -> None:
    vscode_ui.open_file(page, "models/mlp.py")
    lens = page.locator(".contentWidgets .codelens-decoration a", has_text="Overfit test").first
    expect(lens).to_be_visible(timeout=60_000)
    expect(page.locator(".codelens-decoration").first).to_contain_text("LR finder")
    lens.click()
    progress = page.locator(".notification-toast", has_text="Overfit test of TinyMLP")
    expect(progress).to_be_visible(timeout=15_000)
    view = _result_view(page)
    expect(view.locator("body")).to_contain_text("PASS", timeout=CHECK_TIMEOUT_MS)
    expect(view.locator("body")).to_contain_text("TinyMLP")
    expect(view.locator("svg").first).to_be_visible()  # the loss curve
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "check_overfit_pass.png"))


def test_gradient_check_names_the_wrong_custom_backward(page: Page) -> None:
    vscode_ui.open_file(page, "models/custom_autograd.py")
    lens = page.locator(".codelens-decoration a", has_text="Gradient check")
    expect(lens.first).to_be_visible(timeout=60_000)
    # The lens above SwishNet, the model that uses the broken SwishFn.
    vscode_ui.go_to_line(page, vscode_ui.line_of("models/custom_autograd.py", "class SwishNet"))
    page.locator(".codelens-decoration", has_text="Gradient check").last.locator("a", has_text="Gradient check").click()
    view = _result_view(page)
    expect(view.locator("body")).to_contain_text("FAIL", timeout=CHECK_TIMEOUT_MS)
    expect(view.locator("body")).to_contain_text("act.beta")
    expect(view.locator("body")).to_contain_text("SwishFn")
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "check_gradcheck_fail.png"))


def test_shape_trace_from_context_menu_marks_the_failing_layer(page: Page) -> None:
    vscode_ui.open_file(page, "models/shape_mismatch.py")
    vscode_ui.go_to_line(page, vscode_ui.line_of("models/shape_mismatch.py", "def forward") + 1)
    page.keyboard.press("Shift+F10")  # the editor context menu, at the cursor
    item = page.locator(".context-view .action-item", has_text="Run Shape Trace")
    expect(item).to_be_visible(timeout=10_000)
    item.hover()  # VS Code's menus act on the highlighted item
    page.keyboard.press("Enter")
    view = _result_view(page)
    expect(view.locator("body")).to_contain_text("fc1", timeout=CHECK_TIMEOUT_MS)
    expect(view.locator("body")).to_contain_text("expects 400 input features")
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "check_shape_trace_error.png"))


def test_lr_finder_marks_both_suggestions(page: Page) -> None:
    vscode_ui.open_file(page, "models/cnn.py")
    lens = page.locator(".codelens-decoration a", has_text="LR finder").first
    expect(lens).to_be_visible(timeout=60_000)
    lens.click()
    view = _result_view(page)
    expect(view.locator("body[data-state='result']")).to_be_visible(timeout=CHECK_TIMEOUT_MS)
    expect(view.locator("#chart svg path.series").first).to_be_visible()
    # Both of Smith's suggestions are drawn on the sweep, and the sweep can be exported.
    expect(view.locator("#chart")).to_contain_text("steepest")
    expect(view.locator("#export-csv")).to_be_visible()
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "check_lr_finder.png"))
