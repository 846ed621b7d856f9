"""Issue 19 E2E: the provided torchrun configuration debugs each rank as its own session.

A breakpoint in the DDP sample's loop stops both ranks; the Call Stack names them `rank 0` and
`rank 1` (from each process's RANK); Torch Doctor: Continue All Ranks resumes both, and both stop
at the breakpoint again on the next step.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

import vscode_ui

SAMPLE = "distributed/ddp_train.py"
CONFIGURATION = "Debug with torchrun (2 processes)"
CURRENT_FILE = "Debug current file with torchrun (2 processes)"  # the anomaly watch in break mode
START_MS = 180_000  # torchrun, then two ranks that each import torch under debugpy, on 2 cores


def _both_ranks_paused(page: Page):
    """The status item while rank 0 and rank 1 are both paused and nothing runs."""
    return page.locator(".statusbar-item").filter(has_text=re.compile(r"rank [01], rank [01] paused\s*$"))


def _paused_on_exception(page: Page, sample: str):
    """Debug ``sample`` with the current-file torchrun configuration until a rank pauses on an
    exception; VS Code's exception widget, shown."""
    vscode_ui.open_file(page, sample)
    vscode_ui.start_debugging(page, CURRENT_FILE)
    vscode_ui.wait_until_paused(page, timeout_ms=START_MS)
    widget = page.locator(".exception-widget")
    expect(widget).to_be_visible(timeout=60_000)
    return widget


def test_both_ranks_stop_and_continue_all_ranks_resumes_them(page: Page) -> None:
    vscode_ui.open_file(page, SAMPLE)
    vscode_ui.go_to_line(page, vscode_ui.line_of(SAMPLE, "a breakpoint here stops every rank"))
    page.keyboard.press("F9")
    expect(page.locator(".editor-instance .codicon-debug-breakpoint").first).to_be_visible()

    vscode_ui.start_debugging(page, CONFIGURATION)
    vscode_ui.wait_until_paused(page, timeout_ms=START_MS)
    # Our status item names the paused sessions: both ranks, none running. (The Call Stack is a
    # virtual list: with one rank's frames expanded the other's row can be out of the DOM.)
    both = _both_ranks_paused(page)
    expect(both).to_have_count(1, timeout=START_MS)
    stack = page.locator(".debug-call-stack")
    expect(stack.locator(".monaco-list-row", has_text=re.compile(r"rank \d")).first).to_be_visible()
    vscode_ui.set_side_bar_width(page, 520)
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "torchrun_both_ranks_paused.png"))

    variables = page.locator(".debug-pane .monaco-list[aria-label='Debug Variables']")
    loss_row = variables.locator(".monaco-list-row", has_text="loss =").first
    expect(loss_row).to_contain_text("tensor[]", timeout=60_000)
    loss_before = loss_row.inner_text()

    vscode_ui.run_command(page, "Torch Doctor: Continue All Ranks")
    # Both ranks run one step (their all-reduce needs both) and stop at the breakpoint again:
    # the focused rank's loss is the next step's.
    expect(loss_row).not_to_have_text(loss_before, timeout=120_000)
    expect(both).to_have_count(1, timeout=120_000)
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "torchrun_after_continue_all_ranks.png"))
    vscode_ui.stop_debugging(page)  # the whole job: torchrun and both ranks


def test_a_rank_pauses_on_the_forward_whose_parameters_got_no_gradient(page: Page) -> None:
    # ddp_unused_parameters.py: an auxiliary head the loss never uses. Before DDP raises its
    # "Expected to have finished reduction" at the next forward, the rank pauses on the user's
    # `model(x)` line with the parameters named in the exception widget; the other rank follows.
    widget = _paused_on_exception(page, "distributed/ddp_unused_parameters.py")
    expect(widget).to_contain_text("got no gradient: module.aux.weight, module.aux.bias")
    expect(_both_ranks_paused(page)).to_have_count(1, timeout=START_MS)
    vscode_ui.set_side_bar_width(page, 520)
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "torchrun_unused_parameters_pause.png"))
    vscode_ui.stop_debugging(page)


def test_the_rank_with_the_nan_pauses_and_the_status_says_the_others_wait(page: Page) -> None:
    # ddp_nan_on_rank1.py under the anomaly watch in break mode: rank 1 pauses in the layer that
    # made the NaN (step 5) before its backward; the extension asks the other rank to pause too,
    # and rank 0, which waits in the all-reduce of that step, is said to wait, not to hang.
    widget = _paused_on_exception(page, "distributed/ddp_nan_on_rank1.py")
    expect(widget).to_contain_text("NaN in the output of `model.module.0` (Linear)")
    # Rank 1 paused; rank 0, inside the all-reduce of step 5, cannot be paused until it returns:
    # the status item counts it as running (its tooltip says it waits in a collective).
    expect(page.locator(".statusbar-item").filter(has_text=re.compile(r"rank 1 paused · 1 running"))).to_have_count(
        1, timeout=60_000
    )
    vscode_ui.set_side_bar_width(page, 520)
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "torchrun_nan_rank1_pause.png"))
    vscode_ui.stop_debugging(page)
