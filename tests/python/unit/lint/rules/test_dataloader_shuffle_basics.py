"""TD017: training DataLoader without shuffle (basics) (moved from test_lint_misc_rules.py)."""

import pytest

from support.lint import fixed, hits

T = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


# -- TD017 --------------------------------------------------------------------------------

DL = "from torch.utils.data import DataLoader\n"


def test_training_loader_without_shuffle():
    text = DL + "train_loader = DataLoader(dataset, batch_size=32)\n"
    assert hits(text) == [("TD017", 2)]
    assert fixed(text, "TD017").splitlines()[1] == "train_loader = DataLoader(dataset, batch_size=32, shuffle=True)"


def test_training_dataset_name_is_enough():
    assert hits(DL + "loader = DataLoader(train_ds, 64)\n") == [("TD017", 2)]


@pytest.mark.parametrize(
    "line",
    [
        "train_loader = DataLoader(ds, batch_size=32, shuffle=True)",
        "train_loader = DataLoader(ds, batch_size=32, shuffle=False)",
        "train_loader = DataLoader(ds, batch_size=32, sampler=sampler)",
        "train_loader = DataLoader(ds, 32, True)",
        "val_loader = DataLoader(train_ds, batch_size=32)",
        "test_loader = DataLoader(test_ds)",
        "train_loader = DataLoader(train_stream, batch_size=4)",
        "train_loader = DataLoader(ds, **loader_kwargs)",
    ],
)
def test_shuffled_explicit_or_not_training_loaders_are_fine(line):
    assert hits(DL + line + "\n") == []


ONE_BATCH = (
    DL
    + """
def plot_activations(net):
    small_loader = DataLoader(train_set, batch_size=1024)
    imgs, labels = next(iter(small_loader))
    {more}
    return net(imgs)
"""
)


def test_a_loader_read_for_its_first_batch_only_is_fine():
    # the UvA deep-learning course's activation plots: one batch of the training set, no epoch
    assert hits(ONE_BATCH.format(more="pass")) == []


@pytest.mark.parametrize("more", ["for x, y in small_loader: net(x)", "print(len(small_loader))"])
def test_a_loader_also_used_otherwise_is_still_reported(more):
    assert hits(ONE_BATCH.format(more=more)) == [("TD017", 4)]


def test_every_loader_of_a_zip_is_followed_into_the_training_loop():
    # PixelDA/CoGAN: two domains' loaders drawn together; neither name says "train"
    text = (
        DL
        + """
loader_a = DataLoader(domain_a, batch_size=32, shuffle=True)
loader_b = DataLoader(domain_b, batch_size=32)
for i, ((xa, _), (xb, _)) in enumerate(zip(loader_a, loader_b)):
    loss = model(xa, xb)
    loss.backward()
"""
    )
    assert hits(text) == [("TD017", 4)]


def test_one_batch_of_a_loader_named_for_training_is_still_reported():
    # pytorch/examples' forward-forward MNIST trains on ``next(iter(train_loader))``
    text = ONE_BATCH.format(more="pass").replace("small_loader", "train_loader")
    assert hits(text) == [("TD017", 4)]
