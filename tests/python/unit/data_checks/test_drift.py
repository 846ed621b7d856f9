"""The two-sample KS statistic and the drift finding: a shifted split is named, a split from the
same distribution is silent over many seeds."""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import TensorDataset

from support.data_checks import Images, Vectors, check, kinds
from torchdoctor.data_checks.drift import ks_2samp


def test_ks_statistic_and_p_value():
    a = np.arange(100.0)
    assert ks_2samp(a, a) == (0.0, 1.0)
    d, p = ks_2samp(a, a + 1000)
    assert d == 1.0 and p < 1e-20
    rng = np.random.default_rng(0)
    d, p = ks_2samp(rng.normal(size=500), rng.normal(size=400))
    assert d < 0.1 and p > 0.01
    d, _ = ks_2samp(np.array([0.0, 1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0, 5.0]))
    assert d == 0.5  # by hand: the CDFs differ most between 1 and 2


def test_shifted_validation_images():
    r = check({"train": Images(300, seed=0), "val": Images(100, seed=1, shift=0.3)})
    assert kinds(r) == ["drift"]
    f = r["findings"][0]
    assert f["split"] == "val" and len(f["details"]["features"]) == 3 and f["details"]["features"][0]["shift"] > 0.5


def test_shifted_features():
    r = check({"train": Vectors(400, seed=0), "test": Vectors(200, seed=1, offset=1.5)})
    assert kinds(r) == ["drift"]


def test_scale_drift():
    g = torch.Generator().manual_seed(0)
    train = TensorDataset(torch.randn(400, 4, generator=g), torch.arange(400) % 2)
    val = TensorDataset(torch.randn(200, 4, generator=g) * 3, torch.arange(200) % 2)
    assert kinds(check({"train": train, "val": val})) == ["drift"]


def test_same_distribution_is_silent():
    for seed in range(5):
        r = check({"train": Vectors(500, seed=seed), "val": Vectors(100, seed=seed + 100)})
        assert r["findings"] == [], r["findings"]
