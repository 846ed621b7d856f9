"""The time budget of a check inside a paused program: a slow dataset is checked on fewer samples,
an even random subset, and the result says how many and how to check more; fast data is checked
in full, as the CLI would."""

from __future__ import annotations

import time

import torch
from torch.utils.data import DataLoader, Dataset

from support.data_checks import Images, kinds
from torchdoctor.data_checks.paused import check


class Slow(Dataset):
    """Three balanced classes stored sorted by class (the first third is all class 0), each
    sample taking ``delay`` seconds - after ``fast`` quick ones."""

    def __init__(self, n=600, delay=0.02, fast=0):
        g = torch.Generator().manual_seed(0)
        self._images = torch.rand(n, 3, 8, 8, generator=g)  # not a stored-rows attribute name
        self.delay, self.fast, self.calls = delay, fast, 0

    def __len__(self):
        return len(self._images)

    def __getitem__(self, i):
        self.calls += 1
        if self.calls > self.fast:
            time.sleep(self.delay)
        return self._images[i], i * 3 // len(self)


def test_a_slow_dataset_stops_at_the_budget_on_an_even_random_subset():
    ds = Slow()
    started = time.perf_counter()
    r = check(ds, "train_ds", options={"budgetSeconds": 1.0})
    elapsed = time.perf_counter() - started
    assert elapsed < 0.5 * len(ds) * ds.delay  # far from the time every sample takes
    assert r["budget"] == {"seconds": 1.0, "reached": True}
    split = r["splits"][0]
    assert 0 < split["sampled"] < len(ds)
    note = r["notes"][0]
    assert note.startswith("time budget of 1 s reached: samples looked at: train_ds ")
    assert f"train_ds {split['sampled']} of {len(ds)}" in note and "torchdoctor check data" in note
    # every class drawn: a random subset, not the first (sorted) samples - and no imbalance alarm
    assert len(split["labels"]) == 3, split["labels"]
    assert "label-imbalance" not in kinds(r)


def test_a_dataset_that_slows_down_after_the_timed_samples_stops_at_the_deadline():
    ds = Slow(n=400, delay=0.05, fast=8)  # the timed samples are quick: every one is planned
    started = time.perf_counter()
    r = check(ds, "train_ds", options={"budgetSeconds": 1.0})
    assert time.perf_counter() - started < 0.5 * len(ds) * ds.delay
    assert r["budget"]["reached"] and 0 < r["splits"][0]["sampled"] < len(ds)
    assert "samples planned were drawn" in r["notes"][0]
    assert "label-imbalance" not in kinds(r)


def test_a_slow_loader_stops_between_batches():
    loader = DataLoader(Slow(n=400, delay=0.01), batch_size=16)
    r = check(loader, "train_loader", options={"budgetSeconds": 0.5})
    assert r["budget"]["reached"] and "batches of the DataLoader were drawn" in r["notes"][0]
    assert 0 < r["splits"][0]["sampled"] < 320  # fewer than the 20 batches a loader gets


def test_fast_data_is_checked_in_full_and_the_budget_is_not_mentioned():
    r = check(Images(n=200), "train_ds")  # the paused default budget
    assert r["budget"]["reached"] is False and r["budget"]["seconds"] > 0
    assert r["splits"][0]["sampled"] == 200 and r["verdict"] == "PASS"
    assert not any("time budget" in n for n in r["notes"])


def test_few_labels_are_not_called_imbalanced_only_when_the_budget_left_samples_out():
    from torchdoctor.data_checks import labels
    from torchdoctor.data_checks.engine import build_context

    ds = Images(n=10)
    ds.y = torch.tensor([0] * 9 + [1])  # 90% one class, in 10 samples
    ctx = build_context({"train": ds})
    assert [f["kind"] for f in labels.check(ctx)] == ["label-imbalance"]  # all drawn: as before
    ctx.splits[0].draws.cut = True
    assert labels.check(ctx) == []


def test_a_budget_spent_before_the_first_batch_still_draws_one_and_leaves_randomness_undecided():
    loader = DataLoader(Slow(n=64, delay=0.1), batch_size=4)
    r = check(loader, "train_loader", options={"budgetSeconds": 0.3})
    split = r["splits"][0]
    assert split["sampled"] == 4 and split["random"] is None  # one batch; sample 0's redraws cut short
    assert "empty-split" not in kinds(r) and r["budget"]["reached"]
    assert "randomness of its transforms was not decided" in r["notes"][0]


def test_a_budget_that_is_not_a_number_of_seconds_is_named_as_the_options_fault():
    for wrong in ("5", -1, float("nan"), float("inf"), True, [5]):
        r = check(Images(n=40), "train_ds", options={"budgetSeconds": wrong})
        assert r["error"]["kind"] == "bad-options"
        message = r["error"]["message"]
        assert "budgetSeconds" in message and repr(wrong) in message and "pass e.g." in message


def test_a_budget_of_zero_means_none_and_whole_numbers_are_seconds():
    unlimited = check(Images(n=40), "train_ds", options={"budgetSeconds": 0})
    assert "error" not in unlimited or not unlimited["error"]
    assert "budget" not in unlimited
    whole = check(Images(n=40), "train_ds", options={"budgetSeconds": 30})
    assert whole["budget"] == {"seconds": 30.0, "reached": False}


def test_splits_share_the_budget_fairly():
    """The first split used to take the whole draws' share: val got a handful of samples."""
    from torchdoctor.data_checks import engine

    r = engine.run({"train": Slow(n=400, delay=0.01), "val": Slow(n=400, delay=0.01)}, options={"budgetSeconds": 2.0})
    drawn = {s["name"]: s["sampled"] for s in r["splits"]}
    assert drawn["val"] >= 0.5 * drawn["train"] and drawn["train"] < 400, drawn


def test_unused_share_flows_to_the_next_split():
    from torchdoctor.data_checks import engine

    def val_drawn(splits):
        r = engine.run(splits, options={"budgetSeconds": 2.0})
        return {s["name"]: s["sampled"] for s in r["splits"]}["val"]

    alone = val_drawn({"val": Slow(n=400, delay=0.01)})
    after_a_quick_split = val_drawn({"train": Slow(n=10, delay=0.0), "val": Slow(n=400, delay=0.01)})
    # the quick train leaves nearly all its half to val: not half of what val gets alone
    assert after_a_quick_split >= 0.7 * alone, (after_a_quick_split, alone)


class Copies(Slow):
    """Every sample is one of 20 images: duplicates everywhere, and no stored rows to hash."""

    def __getitem__(self, i):
        self.calls += 1
        time.sleep(self.delay)
        return self._images[i % 20], i % 3


def test_duplicates_under_a_budget_are_said_to_be_among_the_samples_drawn():
    r = check(Copies(n=600, delay=0.01), "train_ds", options={"budgetSeconds": 1.0})
    f = next(f for f in r["findings"] if f["kind"] == "duplicates-within-split")
    drawn = r["splits"][0]["sampled"]
    assert drawn < 600 and f"among the {drawn:,} train_ds samples drawn of 600" in f["message"], f["message"]


def test_duplicates_of_every_sample_say_nothing_about_a_subset():
    r = check(Copies(n=100, delay=0.0), "train_ds")
    f = next(f for f in r["findings"] if f["kind"] == "duplicates-within-split")
    assert "among" not in f["message"]
