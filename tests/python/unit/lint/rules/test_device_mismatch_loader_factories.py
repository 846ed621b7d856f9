"""TD014 through the script's own builders: ``make_loader(rows, size)`` returns the
``DataLoader`` it builds, and its ``collate_fn`` comes from ``padder(pad)``, which returns a
nested ``def pad_batch(items)`` that pads the items and moves nothing. A batch of that loader
is on the CPU, so tokens fed as they come to the moved model are reported; moved, they are
fine, and a nested collate function that moves the batch keeps the rule quiet."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch import nn
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def padder(pad):
    def pad_batch(items):
        tokens = nn.utils.rnn.pad_sequence([i["tokens"] for i in items], padding_value=pad, batch_first=True){collate_move}
        labels = torch.stack([i["label"] for i in items])
        return {{"tokens": tokens, "label": labels}}

    return pad_batch


def make_loader(rows, size, pad):
    loader = DataLoader(rows, batch_size=size, collate_fn=padder(pad), shuffle=True)
    return loader


def fit(model, rows, optimizer):
    for batch in make_loader(rows, 64, 0):
        tokens = batch["tokens"]{move}
        labels = batch["label"].to(device)
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(tokens), labels).backward()
        optimizer.step()


model = nn.Sequential(nn.Embedding(100, 16), nn.Flatten(), nn.LazyLinear(2)).to(device)
fit(model, [], torch.optim.SGD(model.parameters(), lr=0.1))
"""

VIA_NAME = SCRIPT.replace(
    "    loader = DataLoader(rows, batch_size=size, collate_fn=padder(pad), shuffle=True)",
    "    collate = padder(pad)\n    loader = DataLoader(rows, batch_size=size, collate_fn=collate, shuffle=True)",
)


def td014(text: str, move: str = "", collate_move: str = ""):
    return [rule for rule, _ in hits(text.format(move=move, collate_move=collate_move), "TD014")]


def test_a_batch_of_a_loader_built_by_a_function_of_the_script_is_a_cpu_batch():
    assert td014(VIA_NAME) == ["TD014"]


def test_the_collate_function_made_inline_is_read_too():
    assert td014(SCRIPT) == ["TD014"]
    assert td014(SCRIPT, collate_move=".to(device)") == []


def test_the_batch_moved_to_the_device_is_fine():
    assert td014(VIA_NAME, move=".to(device)") == []


def test_a_nested_collate_function_that_moves_the_batch_is_quiet():
    assert td014(VIA_NAME, collate_move=".to(device)") == []
