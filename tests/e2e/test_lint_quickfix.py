"""Issue 7 E2E: a broken sample shows squiggles; the zero_grad quick fix clears its finding."""

from __future__ import annotations

from playwright.sync_api import Page, expect

import vscode_ui
import workbench

SAMPLE = "broken/lint_classifier.py"


def _line_of(text: str) -> int:
    lines = (workbench.SAMPLE_WORKSPACE / SAMPLE).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_squiggles_and_zero_grad_quick_fix(page: Page) -> None:
    vscode_ui.open_file(page, SAMPLE)
    editor = page.locator(".editor-instance").first
    expect(editor.locator(".squiggly-warning").first).to_be_visible(timeout=60_000)

    problems = vscode_ui.open_problems(page)
    expect(problems).to_contain_text("TD001", timeout=30_000)
    expect(problems).to_contain_text("TD003")
    expect(problems).to_contain_text("never calls `optimizer.zero_grad()`")
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "lint_squiggles_problems.png"))

    # Cursor on the flagged optimizer.step(), Ctrl+. and the quick fix.
    fix = vscode_ui.quick_fix_row(page, _line_of("optimizer.step()"), 9, "zero_grad")
    expect(fix).to_be_visible()
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "lint_quick_fix_menu.png"))
    fix.click()

    expect(editor).to_contain_text("optimizer.zero_grad()", timeout=15_000)
    expect(problems).not_to_contain_text("TD001", timeout=30_000)
    expect(problems).to_contain_text("TD003")  # the other findings stay
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "lint_after_quick_fix.png"))
    # Leave the sample as it was for the next run: revert the unsaved edit.
    vscode_ui.run_command(page, "File: Revert File")
    expect(problems).to_contain_text("TD001", timeout=30_000)
