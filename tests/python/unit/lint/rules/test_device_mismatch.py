"""TD014 across scopes: the model moved in one place, its CPU inputs made in another (the shapes
of pytorch/examples' dcgan and mnist, a Trainer class), and the cases that must stay silent."""

from __future__ import annotations

import time

from support.lint import hits

HEADER = """
import torch
from torch import nn
from torch.utils.data import DataLoader

device = torch.device("cuda")
"""


def td014(body: str):
    return hits(HEADER + body, "TD014")


def test_a_module_level_loader_and_model_used_inside_a_function():
    assert td014("""
netD = nn.Linear(4, 1).to(device)
loader = DataLoader(list(range(8)), batch_size=2, shuffle=True)


def train():
    for i, data in enumerate(loader, 0):
        real = data[0]
        out = netD(real)
""") == [("TD014", 14)]  # netD(real)


def test_the_model_passed_to_train_and_batches_unpacked_from_the_loader_parameter():
    assert td014("""
def train(model, loader, optimizer):
    for batch in loader:
        x, y = batch
        loss = (model(x) - y).pow(2).mean()
        loss.backward()


def main():
    model = nn.Linear(4, 1).to(device)
    train(model, DataLoader(list(range(8)), shuffle=True), None)
""") == [("TD014", 10)]  # model(x)


def test_a_trainer_moving_its_model_in_init():
    assert td014("""
class Trainer:
    def __init__(self, loader):
        self.model = nn.Linear(4, 1).to(device)
        self.loader = loader

    def fit(self):
        for x, y in self.loader:
            self.model(x)


Trainer(DataLoader(list(range(8)), shuffle=True)).fit()
""") == [("TD014", 14)]  # self.model(x)


def test_batches_moved_before_the_forward_are_fine():
    assert (
        td014("""
netD = nn.Linear(4, 1).to(device)
loader = DataLoader(list(range(8)), batch_size=2, shuffle=True)


def train(model):
    for data in loader:
        real = data[0].to(device)
        model(real)
        x, y = data
        x = x.to(device)
        netD(x)


train(netD)
""")
        == []
    )


def test_a_model_that_is_not_the_moved_one_is_not_reported():
    assert (
        td014("""
netD = nn.Linear(4, 1).to(device)
loader = DataLoader(list(range(8)), batch_size=2, shuffle=True)


def probe(model):
    for data in loader:
        model(data[0])


probe(nn.Linear(4, 1))
""")
        == []
    )


def test_linear_in_the_length_of_a_long_script():
    """Each block moves a model and feeds it: 4x the blocks must cost about 4x, not 16x."""
    block = """
model{i} = nn.Linear(4, 1).to(device)
x{i} = torch.randn(2, 4)
y{i} = model{i}(x{i})
"""

    def cost(blocks: int) -> float:
        text = "".join(block.format(i=i) for i in range(blocks))
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            found = td014(text)
            best = min(best, time.perf_counter() - start)
        assert len(found) == blocks
        return best

    # Two timings compared (~4x here): a load spike over all of one size's runs can break the
    # relation, so it must hold in one of three fresh trials (a quadratic walk fails all three).
    seen = []
    for _trial in range(3):
        small, large = cost(150), cost(600)
        seen.append((small, large))
        if large < 10 * small:
            break
    assert large < 10 * small, seen  # quadratic would be ~16x; linear ~4x


def test_a_device_chosen_in_two_branches_is_not_taken_for_the_cpu():
    """pytorch/examples' shape: ``device = accelerator`` in one branch, ``cpu`` in the other."""
    assert hits(
        """
import torch
from torch import nn
from torch.utils.data import DataLoader


def train(model, device, loader):
    for data, target in loader:
        model(data)


def main(use_accel):
    if use_accel:
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")
    model = nn.Linear(4, 1).to(device)
    train(model, device, DataLoader(list(range(8)), shuffle=True))
""",
        "TD014",
    ) == [("TD014", 8)]
    assert (
        hits(
            """
import torch
from torch import nn
device = torch.device("cpu")
model = nn.Linear(4, 1).to(device)
model(torch.randn(2, 4))
""",
            "TD014",
        )
        == []
    )  # only ever the CPU: nothing mixes


SIAMESE = """
class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 8)

    def forward(self, a, b):
        return self.enc(a), self.enc(b)


def fit(loader, net, opt, gpu):
    for i, (views, _) in enumerate(loader):
        views[0] = views[0].cuda(gpu, non_blocking=True)
        views[1] = views[1].cuda(gpu, non_blocking=True)
        za, zb = net(views[0], views[1])
        loss = -(za * zb).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def main(dataset, gpu):
    net = Siamese().cuda(gpu)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    for epoch in range(10):
        fit(loader, net, opt, gpu)
"""


def test_views_moved_item_by_item_before_the_forward_are_fine():
    # SimSiam's two augmented views: a list from the loader, each item replaced by its GPU copy
    assert td014(SIAMESE) == []


def test_views_used_before_they_are_moved_are_reported():
    late = SIAMESE.replace(
        "        views[0] = views[0].cuda(gpu, non_blocking=True)\n        views[1] = views[1].cuda(gpu, non_blocking=True)\n",
        "",
    ).replace("        loss = -(", "        views[0] = views[0].cuda(gpu)\n        loss = -(")
    found = td014(late)
    assert len(found) == 2 and {rule for rule, _ in found} == {"TD014"}
