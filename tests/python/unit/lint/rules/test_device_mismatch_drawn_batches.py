"""TD014 for a batch drawn by hand (``x, _ = next(iter(loader))``, as a VQ-VAE notebook trains
for a number of updates rather than epochs): it is a CPU batch of the loader like one from
``for x, _ in loader``; moved with ``.to(device)`` it is fine."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch import nn
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def fit(dataset, updates):
    loader = DataLoader(dataset, batch_size=32, shuffle=True, pin_memory=True)
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.ConvTranspose2d(8, 3, 3)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(updates):
        {draw}
{move}
        optimizer.zero_grad()
        loss = (model(images) - images).pow(2).mean()
        loss.backward()
        optimizer.step()
"""


def td014(draw: str, move: str):
    return hits(SCRIPT.format(draw=draw, move=move), "TD014")


def test_a_batch_drawn_with_next_iter_is_a_cpu_batch():
    assert td014("(images, _) = next(iter(loader))", "") == [("TD014", 16)]


def test_a_whole_batch_drawn_with_next_iter_and_indexed_is_followed_too():
    assert td014("batch = next(iter(loader))\n        images = batch[0]", "") == [("TD014", 17)]


def test_the_drawn_batch_moved_to_the_device_is_fine():
    assert td014("(images, _) = next(iter(loader))", "        images = images.to(device)") == []
