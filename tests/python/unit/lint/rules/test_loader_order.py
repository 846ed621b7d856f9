"""TD017 on graph loaders and on data shuffled once (``loader_order``, 2026-12-07, a fetched
project's graph examples): PyTorch Geometric's ``DataLoader`` and ``DenseDataLoader`` are
``DataLoader``s; a dataset shuffled once before its split (``dataset.shuffle()``,
``random_split``) is said as information, not a warning; a training set's loader read only with
gradients off trains nothing."""

from __future__ import annotations

from support.lint import code, findings

GRAPHS = """
import torch
import torch.nn.functional as F
from torch_geometric.datasets import TUDataset
from torch_geometric.loader import {loader}

dataset = TUDataset("data", name="PROTEINS"){once}
n = len(dataset) // 10
test_dataset = dataset[:n]
train_dataset = dataset[n:]
train_loader = {loader}(train_dataset, batch_size=20)
model = torch.nn.Linear(3, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

for epoch in range(10):
    for data in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data.x), data.y)
        loss.backward()
        optimizer.step()
"""


def td017(text: str):
    return [(f.severity, f.message) for f in findings(text, "TD017")]


def line_of(text: str, part: str) -> int:
    """The line the linter numbers ``part``'s at (``code`` drops the text's first newline)."""
    return next(i for i, line in enumerate(code(text).splitlines(), 1) if part in line)


def test_a_graph_loader_is_a_dataloader():
    for loader in ("DataLoader", "DenseDataLoader"):
        found = td017(GRAPHS.format(loader=loader, once=""))
        assert [severity for severity, _ in found] == ["warning"], loader
        assert "stored order" in found[0][1]
    # shuffled per epoch: nothing to say
    assert (
        td017(GRAPHS.format(loader="DataLoader", once="").replace("batch_size=20", "batch_size=20, shuffle=True")) == []
    )


NEIGHBOURS = """
import torch
from torch_geometric.loader import NeighborLoader

data = torch.load("graph.pt", weights_only=False)
kwargs = dict(batch_size=1024, num_workers=0)
train_loader = NeighborLoader(data, input_nodes=data.train_mask, num_neighbors=[10, 5]{order}, **kwargs)
model = torch.nn.Linear(3, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for batch in train_loader:
    optimizer.zero_grad()
    model(batch.x).sum().backward()
    optimizer.step()
"""


def test_a_neighbour_loader_over_the_training_nodes_is_checked_too():
    # the shape of a graph example's XPU variant, whose CUDA sibling passes shuffle=True
    found = [f.severity for f in findings(NEIGHBOURS.format(order=""), "TD017")]
    assert found == ["warning"]
    assert findings(NEIGHBOURS.format(order=", shuffle=True"), "TD017") == []


def test_data_shuffled_once_is_information_naming_the_line():
    text = GRAPHS.format(loader="DataLoader", once=".shuffle()")
    [(severity, message)] = td017(text)
    assert severity == "information"
    assert f"shuffled once (line {line_of(text, '.shuffle()')})" in message and "same order" in message


RANDOM_SPLIT = """
import torch
from torch.utils.data import DataLoader, TensorDataset, random_split

data = TensorDataset(torch.randn(100, 4), torch.arange(100) // 10)
train_set, val_set = random_split(data, [80, 20])
train_loader = DataLoader(train_set, batch_size=8)
"""


def test_a_random_split_is_a_shuffle_drawn_once():
    [(severity, message)] = td017(RANDOM_SPLIT)
    assert severity == "information" and f"(line {line_of(RANDOM_SPLIT, 'random_split(data')})" in message
    # a plain slice of stored data is still the warning
    sliced = RANDOM_SPLIT.replace("random_split(data, [80, 20])", "data[:80], data[80:]")
    assert [severity for severity, _ in td017(sliced)] == ["warning"]


SCORED = """
import torch
from torch.utils.data import DataLoader, TensorDataset

train_dataset = TensorDataset(torch.randn(100, 4), torch.arange(100) // 10)
train_loader = DataLoader(train_dataset, batch_size=8)
model = torch.nn.Linear(4, 10)


@torch.no_grad()
def encode(loader):
    return torch.cat([model(x) for x, _ in loader])


@torch.no_grad()
def test():
    return encode(train_loader)
{more}
"""

TRAINS = """
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in train_loader:
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
"""


def test_a_training_set_read_only_without_gradients_is_not_reported():
    assert td017(SCORED.format(more="")) == []
    assert [severity for severity, _ in td017(SCORED.format(more=TRAINS))] == ["warning"]
