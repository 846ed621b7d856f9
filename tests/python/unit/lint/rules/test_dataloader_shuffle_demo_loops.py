"""TD017 and a dataset file's demo under ``if __name__ == "__main__":``: a loader named for
training is iterated only to show a few samples (``plt.imshow``), with no model, no backward and
no step. Nothing trains on it, so its order does not matter. A training loop over the same
unshuffled loader, or the loader handed to another function, is still reported."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import matplotlib.pyplot as plt
import torch
from torch.utils import data


class Scenes(data.Dataset):
    def __init__(self, root):
        self.files = sorted(root)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return torch.load(self.files[i], weights_only=True)

    def colorize(self, label):
        return label.float() / 20


if __name__ == "__main__":
    ds = Scenes("/data/scenes")
    train_loader = data.DataLoader(ds, batch_size=4)
    for i, (imgs, labels) in enumerate(train_loader):
        fig, axes = plt.subplots(4, 2)
        for j in range(4):
            axes[j][0].imshow(imgs[j].permute(1, 2, 0).numpy())
            axes[j][1].imshow(ds.colorize(labels[j]).numpy())
        plt.show()
        if i == 2:
            break
"""


def found(text: str):
    return [rule for rule, _ in hits(text) if rule == "TD017"]


def test_a_loader_only_shown_is_quiet():
    assert found(SCRIPT) == []


def test_a_loop_that_trains_on_it_is_reported():
    training = SCRIPT.replace(
        "        plt.show()\n",
        "        plt.show()\n        loss = net(imgs).mean()\n        loss.backward()\n        opt.step()\n",
    ).replace(
        '    ds = Scenes("/data/scenes")\n',
        '    ds = Scenes("/data/scenes")\n    net = torch.nn.Conv2d(3, 1, 1)\n    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n',
    )
    assert found(training) == ["TD017"]


def test_a_loader_handed_elsewhere_is_reported():
    handed = SCRIPT.replace(
        "        if i == 2:\n            break\n", "        if i == 2:\n            break\n    fit(train_loader)\n"
    )
    assert found(handed) == ["TD017"]
