"""Running the user's model once on a zero sample to find its segmentation head (model_info.py):
bounded in time, and whatever the forward does (exits, never returns) the data check goes on."""

from __future__ import annotations

import threading
import time

import pytest
import torch
from torch import nn
from torch.utils.data import Dataset

from torchdoctor.data_checks import engine, model_info


class Scenes(Dataset):
    """3 x 24 x 24 images with an H x W class map per pixel, classes 0..12 in 4 x 4 blocks."""

    def __init__(self, classes=13, n=32):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 3, 24, 24, generator=g)
        self.masks = torch.randint(0, classes, (n, 6, 6), generator=g).repeat_interleave(4, 1).repeat_interleave(4, 2)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.masks[i]


class Segmenter(nn.Module):
    """A conv body and a 1 x 1 conv head for 12 classes, whose forward can be made to misbehave."""

    def __init__(self) -> None:
        super().__init__()
        self.body, self.head = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 12, 1)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.head(torch.relu(self.body(x)))


class Hanging(Segmenter):
    """Waits on an event (a lock, a server) before answering; released by the test."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def forward(self, x):
        self.release.wait(3.0)
        return super().forward(x)


class Exiting(Segmenter):
    def forward(self, x):
        if not x.any():
            raise SystemExit("no empty images")
        return super().forward(x)


class Cancelled(Segmenter):
    def forward(self, x):
        raise KeyboardInterrupt


@pytest.fixture
def quick(monkeypatch):
    """The wait for the model's answer cut to a fraction of a second; no thread left at the end."""
    monkeypatch.setattr(model_info, "PROBE_SECONDS", 0.2, raising=False)
    yield
    for thread in list(getattr(model_info, "_left", [])):
        thread.join(5.0)


def test_a_model_that_does_not_answer_in_time_is_given_up_on(quick):
    model = Hanging()
    info = model_info.inspect_model(model)
    started = time.perf_counter()
    assert model_info.output_conv(info, (3, 24, 24)) is None
    assert time.perf_counter() - started < 2.0
    assert "did not answer within" in model_info.not_run(info, (3, 24, 24))
    assert model_info.left_running()
    assert not model.training  # still in its forward: its flags are left alone meanwhile
    assert model_info.output_conv(info, (3, 32, 32)) is None and model.calls == 0  # not called again
    model.release.set()


def test_the_masks_fall_back_to_a_note_that_says_the_model_did_not_answer(quick):
    model = Hanging()
    r = engine.run({"train": Scenes()}, model, {}, loss=nn.CrossEntropyLoss())
    model.release.set()
    assert r["findings"] == []
    assert any("head" in n and "did not answer within" in n for n in r["notes"]), r["notes"]


def test_a_forward_that_exits_on_a_zero_sample_is_read_by_its_modules():
    model = Exiting()
    model.train()
    info = model_info.inspect_model(model)
    assert model_info.output_conv(info, (3, 24, 24)) is None
    assert "SystemExit" in model_info.not_run(info, (3, 24, 24)) and model.training
    r = engine.run({"train": Scenes()}, Exiting(), {}, loss=nn.CrossEntropyLoss())
    assert r["findings"] == [] and any("SystemExit" in n for n in r["notes"]), r["notes"]


def test_a_keyboard_interrupt_in_the_forward_is_the_users_cancel():
    model = Cancelled()
    model.train()
    before = torch.get_rng_state()
    with pytest.raises(KeyboardInterrupt):
        model_info.output_conv(model_info.inspect_model(model), (3, 24, 24))
    assert model.training and torch.equal(torch.get_rng_state(), before)
    assert all(not m._forward_hooks for m in model.modules())


def test_a_model_that_answers_is_put_back_as_it_was():
    model = Segmenter()
    model.train()
    info = model_info.inspect_model(model)
    assert model_info.output_conv(info, (3, 24, 24)) == ("head", 12, 12)
    assert model.training and model.calls == 1 and not model_info.left_running()
    assert model_info.output_conv(info, (3, 24, 24)) == ("head", 12, 12) and model.calls == 1  # once a shape
