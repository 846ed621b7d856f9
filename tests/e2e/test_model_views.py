"""Issue 5 E2E: gradient-flow and shape-trace views beside the editor while paused."""

from __future__ import annotations

import re
import time

from playwright.sync_api import FrameLocator, Page, expect

import vscode_ui

VIEW_TIMEOUT_MS = 60_000


def test_views_show_the_sample_model_after_backward(page: Page) -> None:
    vscode_ui.pause_at_marked_line(page, "views_demo.py")
    vscode_ui.run_command(page, "Torch Doctor: Show Gradient Flow")
    flow = vscode_ui.webview_with(page, "#gradient-table tr.row")
    expect(flow.locator("#gradient-table tr.row").first).to_be_visible(timeout=VIEW_TIMEOUT_MS)
    assert flow.locator("#gradient-table tr.row").count() >= 3
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_gradient_flow.png"))

    vscode_ui.run_command(page, "Torch Doctor: Show Shape Trace")
    trace = vscode_ui.webview_with(page, "tr.row[data-key]:not([data-key^='g:'])")
    expect(trace.locator("body")).to_contain_text("Conv2d", timeout=VIEW_TIMEOUT_MS)
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_shape_trace.png"))
    vscode_ui.stop_debugging(page)


def test_gradient_flow_flags_the_dead_relu_layer(page: Page) -> None:
    vscode_ui.pause_at_marked_line(page, "broken/dead_relu_views.py")
    vscode_ui.run_command(page, "Torch Doctor: Show Gradient Flow")
    flow = vscode_ui.webview_with(page, "#gradient-table tr.row")
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
    trace = vscode_ui.webview_with(page, "tr.row.failed")
    expect(trace.locator("tr.row.failed")).to_contain_text("fc1", timeout=VIEW_TIMEOUT_MS)
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_shape_trace_failure.png"))
    vscode_ui.stop_debugging(page)


# -- issue 20: the views on a real model (a 12-block GPT), at the default editor split -------------

_FITS_JS = """(body) => {
  const width = document.documentElement.clientWidth;
  const wrap = document.querySelector('.table-wrap');
  const cut = [];
  for (const el of document.querySelectorAll('tr:not([hidden]) .name-wrap, tr:not([hidden]) td.col-module')) {
    if (el.scrollWidth > el.clientWidth + 1) cut.push(el.textContent);
  }
  const heads = Array.from(document.querySelectorAll('thead th')).filter((th) => th.offsetParent !== null);
  return {
    width,
    overflow: wrap ? wrap.scrollWidth - wrap.clientWidth : null,
    cut,
    heads: heads.map((th) => ({ text: th.textContent.trim(), right: th.getBoundingClientRect().right })),
  };
}"""


def _assert_fits(view: FrameLocator, must_show: list[str]) -> dict:
    got = view.locator("body").evaluate(_FITS_JS)
    assert got["overflow"] is not None and got["overflow"] <= 1, got  # no horizontal scroll: nothing cut off
    assert not got["cut"], got  # no name truncated
    shown = {h["text"]: h["right"] for h in got["heads"]}
    for column in must_show:
        assert column in shown and shown[column] <= got["width"] + 1, (column, got)
    return got


_FOLD_REPORT_JS = """() => [...document.querySelectorAll('#gradient-table tbody tr')]
  .filter((tr) => !tr.hidden).slice(0, 40)
  .map((tr) => tr.className + ' | ' + (tr.getAttribute('aria-expanded') || '-') + ' | '
    + tr.innerText.replace(/\\s+/g, ' ').slice(0, 160))"""


def _fold_report(view: FrameLocator) -> str:
    """What a failed fold assertion saw: the visible group headers, flagged and ungrouped rows."""
    lines = view.locator("body").evaluate(_FOLD_REPORT_JS)
    summary = view.locator("#summary").inner_text()
    return "summary: " + summary + "\n" + "\n".join(lines)


def _no_webview_left(page: Page) -> None:
    """Close every editor and wait until no webview is left: a panel kept from a failed first
    attempt would hold that attempt's fold choices (this test opens block 3)."""
    vscode_ui.run_command(page, "View: Close All Editors", required=False)
    expect(page.locator("iframe.webview")).to_have_count(0, timeout=30_000)


def test_views_fold_a_twelve_block_transformer_and_fit_the_split(page: Page) -> None:
    _no_webview_left(page)
    vscode_ui.pause_at_marked_line(page, "tiny_gpt_views.py", timeout_ms=300_000)  # a loaded machine: torch, 3 steps
    vscode_ui.run_command(page, "View: Hide Panel", required=False)  # the editor area's full height

    # Variables: the model's line counts the tied head once and says what it counts; expanding it
    # lists curated children, the raw attributes folded under one entry.
    variables = page.locator(".debug-pane .monaco-list[aria-label='Debug Variables']")
    vscode_ui.expand_tree_row(variables.locator(".monaco-list-row", has_text="Locals").first)
    model_row = variables.locator(".monaco-list-row", has_text="model =").first
    expect(model_row).to_contain_text("TinyGPT 12 blocks", timeout=30_000)
    expect(model_row).not_to_contain_text("layers")
    vscode_ui.expand_tree_row(model_row)
    rows = variables.locator(".monaco-list-row")
    for child in ("transformer", "lm_head", "mode", "device", "raw attributes"):
        expect(rows.filter(has_text=re.compile(rf"^\s*{child} =")).first).to_be_visible(timeout=30_000)
    assert rows.filter(has_text="T_destination").count() == 0
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "debug_variables_model.png"))
    model_row.click()  # folded again (a click toggles)
    vscode_ui.run_command(page, "Torch Doctor: Show Gradient Flow")
    flow = vscode_ui.webview_with(page, "#gradient-table tr.group-row")
    groups = flow.locator("#gradient-table tr.group-row")
    expect(groups).to_have_count(12, timeout=VIEW_TIMEOUT_MS)
    expect(groups.first).to_contain_text("transformer.h.0")
    expect(groups.last).to_contain_text("transformer.h.11")
    # Folded: the 148 parameter rows read as the embeddings, 12 blocks and the final norm.
    visible_rows = flow.locator("#gradient-table tr.row:not(.group-row):visible")
    deadline = time.monotonic() + 15  # the page folds the blocks just after it draws the rows
    while visible_rows.count() >= 10 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert visible_rows.count() < 10, _fold_report(flow)
    expect(flow.locator("#moment")).to_contain_text("after", timeout=VIEW_TIMEOUT_MS)  # after the clipping
    _assert_fits(flow, ["Parameter", "mean |g|"])
    groups.first.scroll_into_view_if_needed()
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_gradient_flow_gpt_folded.png"))

    groups.nth(3).click()
    expect(groups.nth(3)).to_have_attribute("aria-expanded", "true")
    assert visible_rows.count() >= 12
    _assert_fits(flow, ["Parameter", "mean |g|"])
    groups.nth(3).scroll_into_view_if_needed()
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_gradient_flow_gpt_block_open.png"))

    vscode_ui.run_command(page, "Torch Doctor: Show Shape Trace")
    trace = vscode_ui.webview_with(page, "#shape-table tr.block-row")
    blocks = trace.locator("#shape-table tr.block-row")
    expect(blocks).to_have_count(12, timeout=VIEW_TIMEOUT_MS)
    expect(trace.locator("#summary")).not_to_contain_text("change")  # Embedding: ints in, floats out
    assert trace.locator("#shape-table tr.row.changed").count() == 0
    _assert_fits(trace, ["Module", "Input", "Output", "Params"])
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_shape_trace_gpt_folded.png"))
    blocks.nth(0).locator(".fold-toggle").click()
    expect(trace.locator("#shape-table tr.row[data-path='transformer.h.0.attn.qkv']")).to_be_visible()
    _assert_fits(trace, ["Module", "Input", "Output", "Params"])
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "view_shape_trace_gpt_block_open.png"))
    vscode_ui.stop_debugging(page)
