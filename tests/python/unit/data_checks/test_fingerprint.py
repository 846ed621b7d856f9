"""Row fingerprints (duplicates): the vectorised hash is the documented sum of products modulo
2**64, rows hash alike exactly when their bytes (and layout) are alike, and the stored rows of a
dataset hash the same whether read in order or through a Subset."""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import Subset, TensorDataset

from torchdoctor.data_checks import duplicates
from torchdoctor.data_checks.engine import build_context
from torchdoctor.data_checks.fingerprint import _tag, _weights, fingerprints


def by_definition(row: np.ndarray, x: np.ndarray) -> int:
    """One row's fingerprint computed with Python integers, word by word."""
    raw = row.tobytes()
    raw += b"\0" * ((-len(raw)) % 8)
    words = np.frombuffer(raw, np.uint64).tolist()
    w = _weights(len(words)).tolist()
    return (sum(a * b for a, b in zip(words, w)) % 2**64) ^ int(_tag(x))


def test_fingerprints_are_the_sum_of_products_modulo_2_to_the_64():
    rng = np.random.default_rng(1)
    for x in (
        rng.integers(0, 256, (5, 3, 4, 4), dtype=np.uint8),
        rng.integers(0, 256, (4, 7), dtype=np.uint8),  # 7 bytes a row: padded to one word
        rng.standard_normal((6, 3, 5)).astype(np.float32),
        rng.integers(-(2**62), 2**62, (3, 9), dtype=np.int64),  # products overflow 64 bits
    ):
        assert fingerprints(x) == [by_definition(row, x) for row in x]


def test_equal_rows_hash_alike_and_one_changed_byte_does_not():
    x = np.random.default_rng(2).integers(0, 256, (4, 3, 8, 8), dtype=np.uint8)
    x[3] = x[0]
    x[2] = x[0]
    x[2, 1, 4, 4] ^= 1
    prints = fingerprints(x)
    assert prints[3] == prints[0] and prints[2] != prints[0] and len(set(prints)) == 3
    assert fingerprints(x.astype(np.int16))[0] != prints[0]  # another dtype never matches


def raw_hashes(ds) -> dict:
    ctx = build_context({"train": ds}, options={"galleryImages": 0})
    found = duplicates._raw(ctx.splits[0])
    assert found is not None
    return found


def test_stored_rows_hash_the_same_in_order_and_through_a_subset():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 256, (300, 3, 8, 8), dtype=torch.uint8, generator=g)
    x[7] = 0  # a blank row: not compared (None)
    full = TensorDataset(x, torch.zeros(300, dtype=torch.long))
    whole = raw_hashes(full)
    order = list(range(299, -1, -1))
    reversed_ = raw_hashes(Subset(full, order))
    assert whole[7] is None and reversed_[299 - 7] is None
    assert all(reversed_[k] == whole[i] for k, i in enumerate(order))
    assert len({h for h in whole.values() if h is not None}) == 299
