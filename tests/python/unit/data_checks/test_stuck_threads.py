"""What the threaded draw of stuck.py must not do to healthy data (review of issue 18): a dataset
whose objects belong to the thread that made them (sqlite), grad mode, a healthy but slow batch,
an "empty" split beside the stuck finding, and an abandoned draw that goes on calling the user's
code or writing into the next check's notes. Real datasets, short budgets."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset

from support.data_checks import kinds
from torchdoctor.data_checks import engine
from torchdoctor.data_checks.jobs import DataJobSpec, run_data_check


class Sq(Dataset):
    """Healthy images in an in-memory sqlite database opened in __init__: the connection works only
    in the thread that made it."""

    def __init__(self, n=60):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("create table t(i int, x blob)")
        rng = np.random.default_rng(0)
        for i in range(n):
            self.db.execute("insert into t values(?,?)", (i, rng.random((3, 8, 8), dtype=np.float32).tobytes()))
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        b = self.db.execute("select x from t where i=?", (i,)).fetchone()[0]
        return torch.from_numpy(np.frombuffer(b, dtype=np.float32).reshape(3, 8, 8).copy()), i % 3


def test_a_dataset_bound_to_its_thread_is_drawn_again_in_the_calling_thread():
    r = engine.run({"train": Sq()}, options={"budgetSeconds": 20})
    assert r["error"] is None and r["findings"] == [], kinds(r)
    assert r["splits"][0]["sampled"] == 60
    assert any("drawn again in this thread" in n and "ProgrammingError" in n for n in r["notes"])


def test_a_sample_that_fails_in_every_thread_is_still_the_datasets_error():
    class Fails(Sq):
        def __getitem__(self, i):
            if i == 7:
                raise ValueError("bad row 7")
            return super().__getitem__(i)

    with pytest.raises(Exception, match="bad row 7"):
        engine.run({"train": Fails()}, options={"budgetSeconds": 20})


def test_the_draw_thread_has_the_callers_grad_mode():
    class Grad(Sq):
        def __getitem__(self, i):
            self.modes.add(torch.is_grad_enabled())
            return super().__getitem__(i)

    ds = Grad()
    ds.db.close()
    ds.db = sqlite3.connect(":memory:", check_same_thread=False)
    ds.db.execute("create table t(i int, x blob)")
    for i in range(ds.n):
        ds.db.execute("insert into t values(?,?)", (i, np.zeros((3, 8, 8), np.float32).tobytes()))
    ds.modes = set()
    with torch.no_grad():
        engine.run({"train": ds}, options={"budgetSeconds": 20})
    assert ds.modes == {False}


class Slow(Dataset):
    """Healthy: every sample takes ``pause`` seconds, with a random brightness (the randomness probe
    stops at its first redraw)."""

    def __init__(self, n=200, pause=0.3):
        self.x, self.pause = torch.rand(n, 3, 8, 8, generator=torch.Generator().manual_seed(0)), pause

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        time.sleep(self.pause)
        return self.x[i] * (0.5 + torch.rand(())), i % 3


def test_a_healthy_batch_slower_than_the_grace_past_the_stop_is_waited_for():
    """Budget 3 s: the first batch (16 x 0.3 s) ends past the split's stop plus the 1 s grace, where
    the old code gave up on it as stuck; a batch of the timed per-sample cost is waited for."""
    r = engine.run({"train": DataLoader(Slow(), batch_size=16)}, options={"budgetSeconds": 3})
    assert "draw-did-not-return" not in kinds(r)
    assert r["splits"][0]["sampled"] >= 16


class FirstBlocks(Dataset):
    """The first call of __getitem__ waits on an Event (until the test sets it)."""

    def __init__(self):
        self.x, self.ev, self.calls = torch.rand(300, 3, 8, 8), threading.Event(), 0

    def __len__(self):
        return 300

    def __getitem__(self, i):
        self.calls += 1
        if self.calls == 1:
            self.ev.wait()
        return self.x[i], i % 3


def test_a_split_whose_first_sample_never_returns_is_not_also_called_empty():
    ds = FirstBlocks()
    try:
        r = engine.run({"train": ds, "val": FirstBlocks()}, options={"budgetSeconds": 1})
        assert "draw-did-not-return" in kinds(r) and "empty-split" not in kinds(r)
    finally:
        ds.ev.set()


def test_an_abandoned_draw_calls_no_more_user_code_and_writes_nothing_into_the_next_check():
    ds = FirstBlocks()
    r1 = engine.run({"cats": ds}, options={"budgetSeconds": 1})
    assert "draw-did-not-return" in kinds(r1)
    calls = ds.calls
    threading.Timer(0.5, ds.ev.set).start()  # the stuck call returns during the next check
    r2 = engine.run({"train": Slow(pause=0.01)}, options={"budgetSeconds": 3})
    time.sleep(0.5)
    assert ds.calls == calls  # no __getitem__ after the stuck one
    assert not [n for n in r2["notes"] if "cats" in n]
    assert "draw-did-not-return" not in kinds(r2)


SQLITE_FILE = """
    import sqlite3

    import numpy as np
    import torch
    from torch.utils.data import Dataset


    class Sq(Dataset):
        def __init__(self, n=40):
            self.db = sqlite3.connect(":memory:")
            self.db.execute("create table t(i int, x blob)")
            for i in range(n):
                self.db.execute("insert into t values(?,?)", (i, np.full((3, 8, 8), i, np.float32).tobytes()))
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            b = self.db.execute("select x from t where i=?", (i,)).fetchone()[0]
            return torch.from_numpy(np.frombuffer(b, dtype=np.float32).reshape(3, 8, 8).copy() / 40), i % 2


    def data():
        return {"train": Sq()}
"""


@pytest.mark.skipif(os.name != "posix", reason="the worker's process handling")
def test_the_worker_draws_a_thread_bound_dataset_in_its_main_thread(tmp_path: Path):
    path = tmp_path / "data.py"
    path.write_text(textwrap.dedent(SQLITE_FILE))
    spec = DataJobSpec(str(path), "data", options={"budgetSeconds": 20}, timeout=60.0, cwd=str(tmp_path))
    r = asyncio.run(run_data_check(spec))
    assert r["error"] is None, r["headline"]
    assert r["splits"][0]["sampled"] == 40
    assert not any("drawn again in this thread" in n for n in r["notes"])  # never drawn in a thread


LOADER_FILE = """
    import threading

    import torch
    from torch.utils.data import DataLoader, Dataset

    NEVER = threading.Event()


    class Blocks(Dataset):
        def __len__(self):
            return 100

        def __getitem__(self, i):
            if i == 35:
                NEVER.wait()  # no timeout
            return torch.rand(3, 8, 8), i % 2


    def data():
        return {"train": DataLoader(Blocks(), batch_size=10), "val": Blocks()}
"""


@pytest.mark.skipif(os.name != "posix", reason="the worker's process handling")
def test_the_workers_watchdog_gives_up_on_a_loader_batch_and_keeps_the_batches_before(tmp_path: Path):
    path = tmp_path / "data.py"
    path.write_text(textwrap.dedent(LOADER_FILE))
    spec = DataJobSpec(str(path), "data", options={"budgetSeconds": 2}, timeout=40.0, cwd=str(tmp_path))
    r = asyncio.run(run_data_check(spec))
    assert r["error"] is None, r["headline"]
    f = next(f for f in r["findings"] if f["kind"] == "draw-did-not-return")
    assert f["indices"] == [35] and "(val)" in f["message"] and "empty-split" not in kinds(r)
    assert [s["name"] for s in r["splits"]] == ["train"] and r["splits"][0]["sampled"] == 30
