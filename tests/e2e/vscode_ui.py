"""Small, named steps on the VS Code workbench, so tests read like what a user does."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from playwright.sync_api import FrameLocator, Locator, Page

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def run_command(page: Page, title: str, required: bool = True) -> None:
    """Open the command palette and run a command by its title.

    ``required=False``: a command that is not offered right now (its precondition is false,
    e.g. "Remove All Breakpoints" with none) is skipped instead of failing the test. It is
    skipped only when the palette says "No matching commands": a palette slow to list its
    commands under load is waited for (a skipped "Close All Editors" or "Remove All
    Breakpoints" leaves the next test a stale view or a stray stop).
    The palette can be closed under us when the workbench moves focus (a debugger stop,
    a view opening): then it is opened again, up to three times.
    """
    for attempt in range(3):
        rows = page.locator(".quick-input-list .monaco-list-row")
        row = rows.filter(has_text=title).first
        none = rows.filter(has_text="No matching commands").first
        try:
            _open_palette(page).fill(f">{title}", timeout=10_000)
            row.or_(none).first.wait_for(timeout=10_000)
            if not required and none.is_visible() and not row.is_visible():
                page.keyboard.press("Escape")
                return
            row.click(timeout=5_000)
            return
        except Exception:
            page.keyboard.press("Escape")
            if attempt == 2:
                if not required:
                    return
                raise


def _open_palette(page: Page) -> Locator:
    """Ctrl+Shift+P once the last quick input has closed: its input, still fading out, would
    take the text and then vanish (seen as "element is inert", then "not visible")."""
    widget = page.locator(".quick-input-widget").first
    try:
        widget.wait_for(state="hidden", timeout=5_000)
    except Exception:
        page.keyboard.press("Escape")
    page.keyboard.press("Control+Shift+P")
    box = page.locator(".quick-input-widget input")
    box.wait_for(timeout=10_000)
    return box


def open_file(page: Page, relative_path: str, tries: int = 3) -> None:
    """Quick Open (Ctrl+P) a workspace file and wait until its editor is the active tab.

    Right after the query is typed the list still shows the unfiltered "recently opened"
    rows, and its rows are reused as the results arrive: a row found then can show another
    file by the time it is clicked (``train.py`` found in the stale history at the third row
    opened ``monitor/leaking.py``, the third filtered result). So the row is clicked only once
    the list has settled on a highlighted row with exactly this name (and folder), and the
    active tab is checked; a wrong file is closed and the whole step tried again.
    """
    name = relative_path.rsplit("/", 1)[-1]
    folder = relative_path.rsplit("/", 1)[0] if "/" in relative_path else ""
    for attempt in range(tries):
        try:
            page.keyboard.press("Control+P")
            box = page.locator(".quick-input-widget input")
            box.wait_for(timeout=10_000)
            box.fill(relative_path)
            _settled_result(page, name, folder).click(timeout=5_000)
            _wait_for_active_tab(page, relative_path, timeout_s=10)
            return
        except Exception:
            page.keyboard.press("Escape")
            if attempt == tries - 1:
                raise


def _settled_result(page: Page, name: str, folder: str, timeout_s: float = 20) -> Locator:
    """The Quick Open row for ``name`` in ``folder`` once the filtered list has stopped changing."""
    read_rows = """() => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].map(r => [
        r.style.top,
        (r.querySelector('.label-name') || {}).textContent || '',
        (r.querySelector('.label-description') || {}).textContent || '',
        !!r.querySelector('.label-name .highlight')])"""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        rows = page.evaluate(read_rows)
        found = [r for r in rows if r[1].strip() == name and r[3] and r[2].strip() == folder]
        if found and rows == last:
            break
        last = rows
        time.sleep(0.25)
    else:
        raise AssertionError(f"Quick Open never settled on {name!r} in {folder!r}: last rows {last}")
    exact = re.compile(rf"^\s*{re.escape(name)}\s*$")
    row = page.locator(".quick-input-list .monaco-list-row").filter(has=page.locator(".label-name", has_text=exact))
    description = page.locator(".label-description", has_text=re.compile(r"\S"))
    if folder:
        exact_folder = re.compile(rf"^\s*{re.escape(folder)}\s*$")
        row = row.filter(has=page.locator(".label-description", has_text=exact_folder))
    else:
        row = row.filter(has_not=description)
    return row.first


def _wait_for_active_tab(page: Page, relative_path: str, timeout_s: float) -> None:
    """Wait until the active editor tab is this workspace file (its label's aria-label is the
    file's absolute path)."""
    label = page.locator(".editor-group-container.active .tab.active .monaco-icon-label").first
    deadline = time.monotonic() + timeout_s
    seen = None
    while time.monotonic() < deadline:
        if label.count():
            seen = label.get_attribute("aria-label") or ""
            if seen.endswith("/" + relative_path):
                return
        time.sleep(0.2)
    raise AssertionError(f"the active tab is {seen!r}, not {relative_path!r}")


def status_item(page: Page, state: str) -> Locator:
    """The Torch Doctor status bar item in a given state (its accessible label)."""
    item = page.locator('[id="torchdoctor.torch-doctor.torchDoctor.status"]')
    return item.and_(page.locator(f'[aria-label="Torch Doctor: {state}"]'))


def wait_for_log(user_data_dir: Path, predicate, timeout_s: float = 30.0) -> str:
    """Poll the output channel's log until ``predicate(text)`` holds; return the text."""
    deadline = time.monotonic() + timeout_s
    text = output_channel_log(user_data_dir)
    while not predicate(text) and time.monotonic() < deadline:
        time.sleep(0.3)
        text = output_channel_log(user_data_dir)
    return text


def output_channel_log(user_data_dir: Path) -> str:
    """Everything the "Torch Doctor" output channel holds (VS Code keeps it in a log file)."""
    logs = sorted((user_data_dir / "logs").rglob("*Torch Doctor*.log"), key=lambda p: p.stat().st_mtime)
    return logs[-1].read_text(errors="replace") if logs else ""


def reset_window(page: Page) -> None:
    """Stop debugging, drop breakpoints, close notifications, editors and the panel, show the
    Explorer at its usual width: the next test starts from a clean window."""
    page.keyboard.press("Escape")
    close_modal_editor(page)
    if page.locator(".debug-toolbar").is_visible():
        stop_debugging(page)
    for title in (
        "Remove All Breakpoints",
        "Notifications: Clear All Notifications",
        "View: Close All Editors",
        "View: Show Explorer",
    ):
        run_command(page, title, required=False)
    set_side_bar_width(page, 300)
    if page.locator(".part.panel").is_visible():
        page.keyboard.press("Control+J")  # toggles the panel: only pressed when it is open


def set_user_setting(page: Page, key: str, value: str, settings_file: Path) -> None:
    """Set a string setting in the Settings editor, as a user would; wait until it is saved."""
    run_command(page, "Preferences: Open User Settings")
    page.locator(".settings-editor").wait_for()
    page.keyboard.insert_text(key)  # the search box has the focus
    box = page.locator(f'.settings-editor .setting-item-control input[aria-label="{key}"]')
    box.fill(value)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (_read_json(settings_file) or {}).get(key) != value:
        time.sleep(0.2)
    assert (_read_json(settings_file) or {}).get(key) == value, f"{key} was not saved to {settings_file}"
    close_modal_editor(page)
    run_command(page, "View: Close All Editors")


def close_modal_editor(page: Page) -> None:
    """VS Code 1.139 may open settings in a modal editor, which keeps the keyboard: close it."""
    close = page.locator('.modal-editor-part [aria-label^="Close Modal Editor"]')
    if close.count() and close.first.is_visible():
        close.first.click()
        close.first.wait_for(state="hidden")


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def go_to_line(page: Page, line: int, column: int | None = None) -> None:
    page.keyboard.press("Control+G")
    box = page.locator(".quick-input-widget input")
    box.wait_for()
    box.fill(f":{line}:{column}" if column else f":{line}")
    page.locator(".quick-input-list .monaco-list-row", has_text=str(line)).first.wait_for()
    page.keyboard.press("Enter")
    box.wait_for(state="hidden")


def quick_fix_row(page: Page, line: int, column: int, has_text: str) -> Locator:
    """Put the cursor at line:column in the active editor, press Ctrl+. and return the quick-fix
    row that names ``has_text``.

    The editor is focused first: after the Problems panel was opened, Go to Line can hand the
    keyboard back to the panel, whose own Ctrl+. lists the fixes of its selected problem instead.
    A menu without the row (asked before the backend answered) is closed and asked again.
    """
    for attempt in range(3):
        run_command(page, "View: Focus Active Editor Group")
        go_to_line(page, line, column)
        page.keyboard.press("Control+.")
        row = page.locator(".action-widget .monaco-list-row", has_text=has_text).first
        try:
            row.wait_for(timeout=10_000)
            return row
        except Exception:
            page.keyboard.press("Escape")
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def start_debugging(page: Page, configuration: str) -> None:
    """Start a launch.json configuration by name, as from the Run and Debug picker."""
    run_command(page, "Debug: Select and Start Debugging")
    # The exact name: "Debug current file" must not pick "Debug current file with anomaly watch".
    name = page.locator(".label-name", has_text=re.compile(rf"^\s*{re.escape(configuration)}\s*$"))
    row = page.locator(".quick-input-list .monaco-list-row", has=name).first
    row.wait_for()
    row.click()


def pause_at_marked_line(page: Page, sample: str, timeout_ms: int = 60_000) -> None:
    """Open a sample, set a breakpoint on its "# Set a breakpoint here" line, debug it with the
    provided "Debug current file" configuration until it stops there."""
    open_file(page, sample)
    go_to_line(page, line_of(sample, "# Set a breakpoint here"))
    page.keyboard.press("F9")
    start_debugging(page, "Debug current file")
    wait_until_paused(page, timeout_ms=timeout_ms)


def wait_until_paused(page: Page, timeout_ms: int = 60_000) -> None:
    """The debugger stopped: the call stack shows a paused frame and the Variables view fills."""
    page.locator(".debug-toolbar").wait_for(timeout=timeout_ms)
    # VS Code opens the Run and Debug view only for a window's first session: show it.
    run_command(page, "View: Show Run and Debug")
    page.locator(".debug-call-stack .monaco-list-row .stack-frame").first.wait_for(timeout=timeout_ms)


def stop_debugging(page: Page, attempts: int = 4) -> None:
    """Shift+F5 until no session is left: with child sessions (the ranks of a torchrun job) one
    press may stop only the focused one."""
    toolbar = page.locator(".debug-toolbar")
    for attempt in range(attempts):
        page.keyboard.press("Shift+F5")
        try:
            toolbar.wait_for(state="hidden", timeout=30_000 if attempt == attempts - 1 else 15_000)
            return
        except Exception:
            if attempt == attempts - 1:
                raise


def expand_tree_row(row: Locator) -> None:
    """Expand a tree row (a scope, a variable) unless it already is."""
    row.wait_for()
    if row.get_attribute("aria-expanded") != "true":
        row.click()  # a click toggles a tree row open


def set_side_bar_width(page: Page, width: int) -> None:
    """Drag the side bar's edge, e.g. so long values fit (as a user would)."""
    box = page.locator(".part.sidebar").bounding_box()
    if not box:
        return
    edge_x, mid_y = box["x"] + box["width"], box["y"] + box["height"] / 2
    page.mouse.move(edge_x, mid_y)
    page.mouse.down()
    page.mouse.move(box["x"] + width, mid_y, steps=5)
    page.mouse.up()


def open_problems(page: Page) -> Locator:
    """Show the Problems panel (Ctrl+Shift+M) and return its tree."""
    run_command(page, "View: Focus Problems (Errors, Warnings, Infos)")
    tree = page.locator(".markers-panel .monaco-list").first
    tree.wait_for()
    return tree


def line_of(relative_path: str, text: str) -> int:
    """1-based line of the first line of a sample file that contains ``text``."""
    from workbench import SAMPLE_WORKSPACE

    lines = (SAMPLE_WORKSPACE / relative_path).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def webview_with(page: Page, selector: str, timeout_s: float = 60) -> FrameLocator:
    """The webview whose page contains ``selector`` (VS Code nests each page in two iframes).

    Found by what it shows, not by position: another view (a Training view opened by an earlier
    debug session) may come after it in the DOM.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        frame = find_webview(page, selector)
        if frame is not None:
            return frame
        time.sleep(0.5)
    raise AssertionError(f"no webview shows {selector!r} within {timeout_s:.0f} s")


def find_webview(page: Page, selector: str) -> FrameLocator | None:
    """The webview whose page contains ``selector`` now, or None (no waiting)."""
    outer = page.frame_locator("iframe.webview.ready")
    for i in range(page.locator("iframe.webview.ready").count()):
        frame = outer.nth(i).frame_locator("iframe#active-frame")
        if frame.locator(selector).count():
            return frame
    return None


def walkthrough(page: Page) -> Locator:
    """The Welcome editor's walkthrough page (VS Code's "Get started" editor)."""
    return page.locator(".gettingStartedContainer").first


DATA_RESULT = "body[data-state='result'] #verdict"  # the data page once it shows a result

# Every pixel of the canvas equal (a blank tile) or not: read back from what the page drew.
CANVAS_IS_FLAT = """canvas => {
  const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  for (let i = 4; i < d.length; i += 4) {
    if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2]) { return false; }
  }
  return true;
}"""

# The share of a canvas's pixels that have its most common colour: a blank sample (data_checks
# thresholds.BLANK_SHARE: 99% of its values at its min or max) may keep a few stroke pixels.
CANVAS_DOMINANT_SHARE = """canvas => {
  const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  const counts = new Map();
  let best = 0;
  for (let i = 0; i < d.length; i += 4) {
    const key = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
    const n = (counts.get(key) || 0) + 1;
    counts.set(key, n);
    best = Math.max(best, n);
  }
  return best / (d.length / 4);
}"""

# Whether some pixel's red, green and blue differ (a colour image drawn, not a grey one).
CANVAS_HAS_COLOUR = """canvas => {
  const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i] !== d[i + 1] || d[i + 1] !== d[i + 2]) { return true; }
  }
  return false;
}"""
