"""TD017 through a function that builds and returns the loader (``loader_returned``,
2026-12-07, a fetched object detector's ``_create_data_loader``): the loader is judged by what
its callers do with it."""

from __future__ import annotations

from support.lint import hits

FACTORY = """
import torch
from torch.utils.data import DataLoader, TensorDataset


def _create_data_loader(path, batch_size):
    dataset = TensorDataset(torch.load(path, weights_only=True), torch.zeros(100, dtype=torch.long))
    dataloader = DataLoader(dataset, batch_size=batch_size{order})
    return dataloader


def run():
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    {name} = _create_data_loader({path}, 8)
    for epoch in range(10):
        for x, y in {name}:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


run()
"""


def td017(order="", name="dataloader", path='"train.pt"'):
    text = FACTORY.format(order=order, name=name, path=path)
    return [line for rule, line in hits(text) if rule == "TD017"]


def test_a_returned_loader_a_caller_trains_on_is_reported_where_it_is_built():
    assert td017() == [7]
    assert td017(name="loader", path='"data.pt"') == [7]  # iterated by the training loop
    assert td017(order=", shuffle=True") == []


def test_a_returned_loader_its_callers_evaluate_with_is_not():
    text = FACTORY.format(order="", name="val_loader", path='"val.pt"')
    assert [rule for rule, _ in hits(text) if rule == "TD017"] == []
