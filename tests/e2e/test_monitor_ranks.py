"""Issue 19 E2E: the Training view of a 2-rank torchrun job, one rank drawn, a rank picker, the straggler.

sample_workspace/distributed/ddp_straggler.py under "Debug current file with torchrun (2
processes)" with the monitor on (the default): rank 1 sleeps every step, so rank 0 waits for it
in the all-reduce. The view opens with the first step and draws rank 0; its toolbar's rank
picker lists rank 0 and rank 1; the slowest-rank sentence names rank 1; picking rank 1 redraws
the view for rank 1 (the picker says rank 1, the cross-rank chart's legend has "rank 1
(shown)"), and the picker keeps that choice through the redraws that follow. Screenshots
monitor_ranks_rank1.png (the picker and the sentence) and monitor_ranks_step_time.png (rank 1's
step time and the cross-rank chart).
"""

from __future__ import annotations

import re
import time

from playwright.sync_api import FrameLocator, Page, expect

import vscode_ui

SAMPLE = "distributed/ddp_straggler.py"
CONFIGURATION = "Debug current file with torchrun (2 processes)"
START_S = 300  # torchrun, then two ranks that each import torch under debugpy, on 2 cores


def _training_view(page: Page, timeout_s: float = START_S) -> FrameLocator:
    """The Training webview, once it draws a run."""
    return vscode_ui.webview_with(page, ".td-state", timeout_s)


def test_the_rank_picker_switches_to_rank_1_and_the_slowest_rank_is_named(page: Page) -> None:
    vscode_ui.open_file(page, SAMPLE)
    vscode_ui.start_debugging(page, CONFIGURATION)
    view = _training_view(page)

    picker = view.locator("select#td-rank")
    expect(picker).to_be_visible(timeout=START_S * 1000)
    expect(picker.locator("option")).to_have_text(["rank 0", "rank 1"], timeout=START_S * 1000)
    expect(picker).to_have_value("0")  # rank 0 by default

    slowest = view.locator("#td-slowest")
    expect(slowest).to_contain_text(re.compile(r"^Slowest: rank 1 \("), timeout=START_S * 1000)
    across = view.locator(".td-chart[data-chart=rank_step_time]")
    expect(across.locator(".u-legend")).to_contain_text("rank 0 (shown)")

    picker.select_option("1")
    expect(across.locator(".u-legend")).to_contain_text("rank 1 (shown)", timeout=30_000)
    # Rank 1's own step time holds the sleep: the step-time chart is rank 1's now.
    expect(view.locator(".td-chart[data-chart=step_time]")).to_be_visible()
    renders = int(view.locator("body").get_attribute("data-renders") or 0)
    # The choice survives the redraws that follow (the job still runs, or its end redraws).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and int(view.locator("body").get_attribute("data-renders") or 0) <= renders:
        time.sleep(0.5)
    expect(picker).to_have_value("1")
    expect(across.locator(".u-legend")).to_contain_text("rank 1 (shown)")
    expect(slowest).to_contain_text("Slowest: rank 1")
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "monitor_ranks_rank1.png"))
    # Rank 1's stacked step time (the sleep is its "other") and the cross-rank chart right under it.
    order = view.locator(".td-chart").evaluate_all("(boxes) => boxes.map((b) => b.dataset.chart)")
    assert order[order.index("step_time") + 1] == "rank_step_time", order
    across.scroll_into_view_if_needed()
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "monitor_ranks_step_time.png"))
    vscode_ui.stop_debugging(page)
