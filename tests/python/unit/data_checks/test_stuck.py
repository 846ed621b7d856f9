"""A draw that never returns, under a time budget (stuck.py): the check gives up on it at the
split's share of the budget plus a grace, names the split, the sample and the stuck line, keeps
what was measured before it, and leaves the program's RNG as it was; the data-check worker draws
in its main thread instead, watched by a thread that sends the result and ends the process. Real blocking datasets (an Event nobody sets), short budgets."""

from __future__ import annotations

import asyncio
import os
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader, Dataset

from support.data_checks import kinds
from torchdoctor.data_checks import budget, engine, paused, stuck
from torchdoctor.data_checks.jobs import DataJobSpec, run_data_check

BUDGET = 1.0
WAIT = 30.0  # seconds the test waits for the check: the old code never returned


class Blocks(Dataset):
    """Images; sample ``at`` waits on an Event nobody sets (until the test releases it); sample 2
    holds a NaN, so a finding about the samples drawn before the hang exists."""

    def __init__(self, n=100, at=30):
        g = torch.Generator().manual_seed(0)
        self.x = torch.rand(n, 3, 8, 8, generator=g)
        self.x[2, 0, 0, 0] = float("nan")
        self.at, self.release = at, threading.Event()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if i == self.at:
            self.release.wait()  # the stuck line
        return self.x[i], i % 3


def run_bounded(splits, seconds=BUDGET) -> dict:
    """engine.run in a thread of its own, so that a check that never returns fails the test."""
    box: dict = {}
    t = threading.Thread(
        target=lambda: box.update(r=engine.run(splits, options={"budgetSeconds": seconds})), daemon=True
    )
    t.start()
    t.join(WAIT)
    assert "r" in box, f"the check did not return within {WAIT} s"
    return box["r"]


def test_a_getitem_that_never_returns_is_named_and_what_was_drawn_is_kept():
    ds = Blocks()
    started = time.perf_counter()
    r = run_bounded({"train": ds})
    try:
        assert time.perf_counter() - started < WAIT / 2
        found = [f for f in r["findings"] if f["kind"] == "draw-did-not-return"]
        assert len(found) == 1 and found[0]["severity"] == "error" and found[0]["split"] == "train"
        f = found[0]
        assert f["indices"] == [30] and f["details"]["index"] == 30 and f["details"]["stage"] == "__getitem__"
        assert (
            "sample 30" in f["message"] and "in __getitem__ (`self.release.wait()  # the stuck line`)" in f["message"]
        )
        assert f["source"]["file"] == __file__ and "background thread" in f["message"]
        assert f["details"]["drawn"] == 30 and f"the {f['details']['drawn']} train samples drawn" in f["message"]
        assert f["details"]["waitedSeconds"] <= BUDGET + budget.GRACE + 1.0  # the share plus the grace, not more
        assert "nonfinite" in kinds(r)  # measured before the hang: not lost
        assert r["splits"][0]["sampled"] == 30
        assert any("time budget" in n and "did not return" in n for n in r["notes"])
    finally:
        ds.release.set()


def test_the_rng_is_put_back_and_the_stuck_call_changes_nothing_when_it_returns():
    ds = Blocks(at=5)
    torch.manual_seed(123)
    before = torch.get_rng_state()
    r = run_bounded({"train": ds})
    assert torch.equal(torch.get_rng_state(), before)
    running = [t for t in stuck._running if t.is_alive()]
    assert running  # the stuck call still runs in the background
    ds.release.set()  # it returns now: the thread stops at its next change of the draws
    for t in running:
        t.join(10)
    assert not any(t.is_alive() for t in running)
    assert torch.equal(torch.get_rng_state(), before)  # no late restore from the abandoned thread
    assert r["splits"][0]["sampled"] == 5


def test_a_dataloader_batch_that_never_comes_names_the_sample_and_leaves_the_other_splits_undrawn():
    ds = Blocks(at=25)
    r = run_bounded({"train": DataLoader(ds, batch_size=10), "val": Blocks(at=-1)})
    try:
        found = [f for f in r["findings"] if f["kind"] == "draw-did-not-return"]
        assert len(found) == 1 and found[0]["indices"] == [25] and "(val)" in found[0]["message"]
        assert [s["name"] for s in r["splits"]] == ["train"] and r["splits"][0]["sampled"] == 20
    finally:
        ds.release.set()


def test_a_paused_check_reports_the_stuck_sample_instead_of_holding_the_program():
    ds = Blocks(at=7)
    box: dict = {}
    t = threading.Thread(
        target=lambda: box.update(r=paused.check(ds, "train_ds", options={"budgetSeconds": BUDGET})), daemon=True
    )
    t.start()
    t.join(WAIT)
    try:
        assert "r" in box, "the paused check held the program"
        r = box["r"]
        assert r["error"] is None and "draw-did-not-return" in kinds(r)
        f = next(f for f in r["findings"] if f["kind"] == "draw-did-not-return")
        assert "keeps running in a background thread" in f["message"] and f["indices"] == [7]
    finally:
        ds.release.set()


def test_without_a_budget_the_samples_are_drawn_in_the_calling_thread():
    class Where(Blocks):
        def __getitem__(self, i):
            self.threads.add(threading.current_thread())
            return super().__getitem__(i)

    ds = Where(at=-1)
    ds.threads = set()
    r = engine.run({"train": ds})
    assert "draw-did-not-return" not in kinds(r) and r["splits"][0]["sampled"] == 100
    assert ds.threads == {threading.current_thread()}


BLOCKING_FILE = """
    import threading

    import torch
    from torch.utils.data import Dataset

    NEVER = threading.Event()


    class Blocks(Dataset):
        def __len__(self):
            return 50

        def __getitem__(self, i):
            if i == 20:
                NEVER.wait()  # no timeout
            return torch.rand(3, 8, 8), i % 2


    def data():
        return {"train": Blocks()}
"""


@pytest.mark.skipif(os.name != "posix", reason="the worker's process handling")
def test_the_worker_reports_the_stuck_sample_with_what_it_measured_then_ends(tmp_path: Path):
    """The worker draws in its main thread; its watchdog thread gives up on the draw, sends the
    result with what was measured, and ends the process."""
    path = tmp_path / "data.py"
    path.write_text(textwrap.dedent(BLOCKING_FILE))
    spec = DataJobSpec(str(path), "data", options={"budgetSeconds": 2}, timeout=40.0, cwd=str(tmp_path))
    started = time.perf_counter()
    r = asyncio.run(run_data_check(spec))
    assert r["error"] is None, r["headline"]  # not the time limit's ERROR: the check's own finding
    assert time.perf_counter() - started < 35.0
    f = next(f for f in r["findings"] if f["kind"] == "draw-did-not-return")
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "NEVER.wait()" in text)
    assert f["indices"] == [20] and f["source"] == {"file": str(path), "line": line}
    assert "worker process is ended" in f["message"] and r["splits"][0]["sampled"] == 20


class BlocksTheSecondTime(Blocks):
    """Random (a flip half the time, so the check draws samples again for duplicates), and sample
    ``at`` blocks only when it is drawn again."""

    def __init__(self, n=60, at=10):
        super().__init__(n, at)
        self.seen: set = set()
        self._kept = self.x  # not a stored-rows name: duplicates draw the samples again (seeded)
        del self.x

    def __len__(self):
        return len(self._kept)

    def __getitem__(self, i):
        if i == self.at and i in self.seen:
            self.release.wait()
        self.seen.add(i)
        x = self._kept[i]
        return (x.flip(-1) if torch.rand(()) < 0.5 else x), i % 3


def test_a_sample_that_blocks_when_drawn_again_for_a_check_is_named_too():
    ds = BlocksTheSecondTime()
    r = run_bounded({"train": ds}, seconds=2.0)
    try:
        found = [f for f in r["findings"] if f["kind"] == "draw-did-not-return"]
        assert len(found) == 1 and found[0]["indices"] == [10] and r["splits"][0]["sampled"] == 60
        assert "nonfinite" in kinds(r)
    finally:
        ds.release.set()
