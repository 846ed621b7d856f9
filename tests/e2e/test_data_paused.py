"""Issue 18 E2E: **Show as Images** from the Variables view's context menu while paused.

sample_workspace/inspect_tensors.py stops at its marked line with ``images``, a batch of 64 random
3x32x32 images. Right-clicking its row in the Variables view offers Torch Doctor's items; "Show as
Images" has the paused program draw the batch (data_checks/paused.py) and the data panel shows it
as a grid of colour tiles, 32 a page, each captioned with its index, drawn on canvases from the
result's pixels. The program is still paused afterwards, at the same line.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

import vscode_ui

SAMPLE = "inspect_tensors.py"
SHOW_TIMEOUT_S = 180  # the paused program draws 64 images; a loaded 2-core machine is slow


def test_show_as_images_from_the_variables_view_draws_the_paused_batch(page: Page) -> None:
    vscode_ui.run_command(page, "View: Close All Editors", required=False)
    vscode_ui.pause_at_marked_line(page, SAMPLE)

    variables = page.locator(".debug-pane .monaco-list[aria-label='Debug Variables']")
    vscode_ui.expand_tree_row(variables.locator(".monaco-list-row", has_text="Locals").first)
    row = variables.locator(".monaco-list-row", has_text=re.compile(r"^\s*images\s*=")).first
    expect(row).to_contain_text("tensor[64, 3, 32, 32] f32 cpu", timeout=30_000)
    row.click(button="right")
    menu = page.locator(".context-view .action-item")
    expect(menu.filter(has_text="Check Data")).to_be_visible(timeout=15_000)
    menu.filter(has_text="Show as Images").hover()  # VS Code's menus act on the highlighted item: a click
    page.keyboard.press("Enter")  # right after the menu opened was once taken for a hover only

    view = vscode_ui.webview_with(page, vscode_ui.DATA_RESULT, timeout_s=SHOW_TIMEOUT_S)
    grid = view.locator(".grid[data-split='images']")
    expect(grid.locator(".tile canvas").first).to_be_visible()
    expect(grid.locator(".tile")).to_have_count(32)  # the first page of the 64 images
    expect(view.locator(".pager .page-label").first).to_have_text("Images 1–32 of 64")
    expect(grid.locator(".tile figcaption").first).to_contain_text("#0")
    # the page speaks of the tensor's own values: no dataset and no transform ran
    expect(view.locator(".check-title")).to_have_text("Images")
    caption = view.locator(".gallery-caption").first
    expect(caption).to_contain_text("64 of the 64 images in images")
    expect(caption).to_contain_text("as the variable holds them")
    expect(caption).not_to_contain_text("transforms")
    assert grid.locator(".tile canvas").first.evaluate(vscode_ui.CANVAS_IS_FLAT) is False  # noise, drawn
    # colour: three channels, so a tile's red, green and blue differ somewhere
    assert grid.locator(".tile canvas").first.evaluate(vscode_ui.CANVAS_HAS_COLOUR) is True
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "data_show_as_images_paused.png"))

    # Still paused at the marked line: drawing the batch did not resume the program.
    expect(page.locator(".debug-toolbar")).to_be_visible()
    expect(page.locator(".debug-call-stack .monaco-list-row .stack-frame").first).to_contain_text(SAMPLE)
    vscode_ui.stop_debugging(page)
