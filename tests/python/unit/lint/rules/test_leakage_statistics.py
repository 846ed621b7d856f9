"""TD011 written by hand: the whole array normalised with its own statistics, then sliced or
split into train and test (the same leakage as a scaler fitted before ``train_test_split``)."""

from __future__ import annotations

import pytest

from support.lint import hits

NUMPY = """
import numpy as np

data = np.loadtxt("houses.csv", delimiter=",")
X, y = data[:, :-1], data[:, -1]
X = (X - X.mean(axis=0)) / X.std(axis=0)
X_train, X_test = X[:800], X[800:]
"""


def test_normalised_with_its_own_mean_then_sliced():
    assert hits(NUMPY, "TD011") == [("TD011", 5)]


def test_through_names_and_torch_then_random_split():
    assert hits(
        """
import torch


def prepare(t):
    mean, std = t.mean(0), t.std(0)
    mu = torch.mean(t, dim=0)
    t = (t - mu) / std
    return torch.utils.data.random_split(t, [0.8, 0.2])
""",
        "TD011",
    ) == [("TD011", 6)]  # at the statistic: torch.mean(t, dim=0)


def test_random_split_of_a_dataset_built_from_the_normalised_tensor():
    assert hits(
        """
import torch
from torch.utils.data import TensorDataset, random_split

feats = torch.randn(500, 6)
labels = torch.randint(0, 3, (500,))
centre = feats.mean(dim=0)
feats = (feats - centre) / feats.std(dim=0)
parts = random_split(TensorDataset(feats, labels), [400, 100])
""",
        "TD011",
    ) == [("TD011", 6)]  # at the statistic: feats.mean(dim=0)


@pytest.mark.parametrize(
    "text",
    [
        # a dataset built from other rows than the normalised ones is split
        "import torch\nfrom torch.utils.data import TensorDataset, random_split\nX, R = torch.ones(9, 2), torch.ones(9, 2)\n"
        "X = X - X.mean(0)\nparts = random_split(TensorDataset(R), [5, 4])\n",
        # statistics of the training rows, applied to both
        "import numpy as np\ndef f(t, n):\n    train, test = t[:n], t[n:]\n    mu = train.mean(0)\n    return train - mu, test - mu\n",
        # normalised, never split in this scope
        "import numpy as np\nX = np.ones((4, 2))\nX = (X - X.mean(0)) / X.std(0)\nprint(X[:2])\n",
        # a statistic of another array
        "import numpy as np\nX, R = np.ones((4, 2)), np.ones((9, 2))\nX = X - R.mean(0)\na, b = X[:2], X[2:]\n",
    ],
)
def test_fine_shapes_are_silent(text):
    assert hits(text, "TD011") == []


@pytest.mark.parametrize(
    "body",
    [
        # each recording centred and scaled over its own time steps
        "import numpy as np\n\nwaves = np.load('ecg.npy')\n"
        "waves = (waves - waves.mean(axis=1, keepdims=True)) / waves.std(axis=1, keepdims=True)\n"
        "fit_w, held_w = waves[:900], waves[900:]\n",
        # each image standardised over its channels and pixels
        "import torch\n\nimgs = torch.load('imgs.pt', weights_only=True)\n"
        "imgs = (imgs - imgs.mean(dim=(1, 2, 3), keepdim=True)) / imgs.std(dim=(1, 2, 3), keepdim=True)\n"
        "a, b = imgs[:40000], imgs[40000:]\n",
        # the axis given by position, to a method and to a function
        "import numpy as np\n\nrows = np.load('rows.npy')\nrows = rows - rows.mean(1, keepdims=True)\n"
        "rows = rows / np.std(rows, -1, keepdims=True)\nhead, tail = rows[:70], rows[70:]\n",
    ],
)
def test_per_sample_statistics_do_not_mix_rows(body):
    assert hits(body, "TD011") == []


@pytest.mark.parametrize(
    "stat",
    ["X.mean(axis=(0, 1))", "X.mean(0)", "np.mean(X, 0)", "X.mean(axis=None)", "X.mean(axis=ax)", "X.mean()"],
)
def test_statistics_over_the_rows_still_leak(stat):
    body = f"import numpy as np\n\nX = np.load('x.npy')\nax = 0\nX = X - {stat}\nX_a, X_b = X[:80], X[80:]\n"
    assert hits(body, "TD011") == [("TD011", 5)]
