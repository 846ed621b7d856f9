"""TD017 and datasets that draw their own sample: a character-level language model's dataset
whose ``__getitem__`` takes a random window of one long text and never reads the index it is
asked for. Shuffling the indices would change nothing, so the unshuffled loader is fine; a
dataset that does read its index is still reported."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch.utils.data import DataLoader, Dataset


class {name}(Dataset):
    def __init__(self, text, window):
        self.text = text
        self.window = window

    def __getitem__(self, {param}):
{body}

    def __len__(self):
        return len(self.text) // self.window


def main(text, net, opt):
    train_loader = DataLoader({name}(text, 64), batch_size=4)
    for chunk in train_loader:
        loss = net(chunk).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
"""

RANDOM_WINDOW = """\
        first = torch.randint(0, len(self.text) - self.window - 1, (1,)).item()
        return self.text[first : first + self.window + 1].long()"""

INDEXED_WINDOW = """\
        first = position * self.window
        return self.text[first : first + self.window + 1].long()"""


def td017(name: str, param: str, body: str):
    return hits(SCRIPT.format(name=name, param=param, body=body), "TD017")


def test_a_dataset_drawing_a_random_window_needs_no_shuffle():
    assert td017("RandomWindows", "position", RANDOM_WINDOW) == []


def test_a_dataset_reading_its_index_is_still_reported():
    assert td017("Windows", "position", INDEXED_WINDOW) == [("TD017", 19)]
