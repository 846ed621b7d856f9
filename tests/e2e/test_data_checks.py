"""Issue 18 E2E: "Check data" from the CodeLens draws the batch with the blank augmentations outlined.

sample_workspace/data/blank_augmentation.py crops a random 5-100 % of each digit image, so a few
percent of the draws are all background. The lens above ``ZoomedDigits`` runs the data check in a
worker; the panel beside the editor shows the verdict card about blank draws and the grid of the
first images, drawn on canvases from the result's pixels, 32 a page, the blank ones outlined
(later blank draws are kept at the end: the test pages until it sees one), and the histogram of
the images' one channel.
"""

from __future__ import annotations

import re
import time

from playwright.sync_api import FrameLocator, Locator, Page, expect

import vscode_ui

LENS_TIMEOUT_MS = 120_000  # the backend starts with the window; a loaded 2-core machine is slow
CHECK_TIMEOUT_MS = 240_000  # importing torch in the worker and drawing 600 samples, 9 times for the blank ones

CAPTION = re.compile(r"^#\d+ · \d$")  # "#<index> · <label>", labels are digit classes 0-9
PAGE_LABEL = re.compile(r"^Images (\d+)–(\d+) of (\d+)$")

RESULT = vscode_ui.DATA_RESULT


def _data_view(page: Page, timeout_ms: int = CHECK_TIMEOUT_MS) -> FrameLocator:
    return vscode_ui.webview_with(page, RESULT, timeout_s=timeout_ms / 1000)


def _saw_progress_or_result(page: Page, progress: Locator, timeout_ms: int = 30_000) -> bool:
    """True once the cancellable progress toast shows; False if the result came first (a fast
    machine can finish the check before the toast is drawn)."""
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        if progress.is_visible():
            return True
        if vscode_ui.find_webview(page, RESULT) is not None:
            return False
        time.sleep(0.1)
    raise AssertionError("neither the progress toast nor a result within 30 s")


def test_check_data_lens_outlines_the_blank_augmented_samples(page: Page) -> None:
    vscode_ui.open_file(page, "data/blank_augmentation.py")
    lens = page.locator(".codelens-decoration a", has_text="Check data").first
    expect(lens).to_be_visible(timeout=LENS_TIMEOUT_MS)
    lens.click()
    progress = page.locator(".notification-toast", has_text="checking the data of ZoomedDigits")
    _saw_progress_or_result(page, progress)  # the cancellable progress, unless the check was quicker

    view = _data_view(page)
    expect(view.locator("#verdict")).to_have_attribute("data-verdict", "FINDINGS")
    card = view.locator(".card[data-kind='blank-augmentation']")
    expect(card).to_be_visible()
    expect(card).to_contain_text("are blank after the dataset's own transforms")
    expect(card).to_contain_text("Next step")
    expect(card.locator("button.source")).to_contain_text("blank_augmentation.py:")

    grid = view.locator(".grid[data-split='ZoomedDigits']")
    expect(grid.locator(".tile canvas").first).to_be_visible()
    expect(grid.locator(".tile")).to_have_count(32)
    # The label under each image: "#index · label".
    expect(grid.locator(".tile figcaption .caption").first).to_have_text(CAPTION)
    gallery = view.locator("section.gallery", has=grid)
    blank = _page_to_a_blank_tile(gallery, grid)
    expect(blank.first.locator("figcaption")).to_contain_text("blank")
    assert 0 < blank.count() < grid.locator(".tile").count()
    # What was drawn: a blank tile is one colour but for at most 1% of its pixels (the check's own
    # rule: a crop may keep a few stroke pixels), a digit is not flat.
    assert blank.first.locator("canvas").evaluate(vscode_ui.CANVAS_DOMINANT_SHARE) >= 0.99
    assert grid.locator(".tile:not(.blank) canvas").first.evaluate(vscode_ui.CANVAS_IS_FLAT) is False
    blank.first.scroll_into_view_if_needed()
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "data_check_blank_tiles.png"))  # the outlined tiles, paged
    expect(view.locator(".label-chart .bar-row").first).to_be_visible()
    expect(view.locator("#split-table")).to_contain_text("ZoomedDigits")

    # The histogram of the one (grey) channel: 32 bars drawn from the counts.
    hist = view.locator("#histograms .split-histograms[data-split='ZoomedDigits'] .histogram")
    expect(hist).to_have_count(1)
    expect(hist.locator(".hist-bar")).to_have_count(32)
    expect(hist.locator("figcaption")).to_contain_text("channel 0")
    assert hist.locator(".hist-bar.nonzero").count() >= 2  # background and strokes
    tallest = max(hist.locator(".hist-bar").evaluate_all("bars => bars.map(b => b.getBoundingClientRect().height)"))
    assert tallest > 40  # the tallest bin fills the chart (80 px tall)

    view.locator("#headline").scroll_into_view_if_needed()
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "data_check_blank_augmentation.png"))  # the verdict card
    hist.scroll_into_view_if_needed()
    page.screenshot(path=str(vscode_ui.ARTIFACTS / "data_check_histograms.png"))  # the histogram


def _page_to_a_blank_tile(gallery: Locator, grid: Locator) -> Locator:
    """Page through the grid with Next to its last page (each page's label and new tiles checked),
    then back with Previous to the first page that shows a blank tile; its blank tiles."""
    label = gallery.locator(".pager .page-label")
    expect(label).to_have_text(PAGE_LABEL)
    first, last, total = map(int, PAGE_LABEL.match(label.inner_text()).groups())  # type: ignore[union-attr]
    assert (first, last) == (1, 32) and 32 < total <= 256
    pages = -(-total // 32)
    assert gallery.locator(".pager").get_attribute("data-pages") == str(pages)
    expect(gallery.locator(".pager .page-prev")).to_be_disabled()
    seen: set = set()
    with_blank = []
    for k in range(pages):
        if k:
            gallery.locator(".pager .page-next").click()
        expect(grid).to_have_attribute("data-page", str(k))
        expect(label).to_have_text(f"Images {32 * k + 1}–{min(total, 32 * k + 32)} of {total}")
        indices = grid.locator(".tile").evaluate_all("tiles => tiles.map(t => t.dataset.index)")
        assert len(indices) == min(32, total - 32 * k) and not seen & set(indices)  # new images each page
        seen |= set(indices)
        if grid.locator(".tile.blank").count():
            with_blank.append(k)
    expect(gallery.locator(".pager .page-next")).to_be_disabled()
    assert with_blank, f"no blank tile on any of the {pages} pages"
    for _ in range(pages - 1 - with_blank[0]):
        gallery.locator(".pager .page-prev").click()
    expect(grid).to_have_attribute("data-page", str(with_blank[0]))
    return grid.locator(".tile.blank")
