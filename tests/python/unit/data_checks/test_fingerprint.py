"""Row fingerprints (duplicates): the vectorised hash is the documented one (each word salted by
position and scrambled by fmix64, then two sums of products modulo 2**64), rows hash alike exactly
when their bytes (and layout) are alike - structured rows too, which a linear hash of the raw
words confused - and the stored rows of a dataset hash the same in order or through a Subset."""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import Subset, TensorDataset

from torchdoctor.data_checks import duplicates
from torchdoctor.data_checks.engine import build_context
from torchdoctor.data_checks.fingerprint import _constants, _tag, fingerprints, quick

MASK = 2**64 - 1


def fmix_by_definition(v: int) -> int:
    """murmur3's 64-bit finaliser with Python integers."""
    v ^= v >> 33
    v = (v * 0xFF51AFD7ED558CCD) & MASK
    v ^= v >> 33
    v = (v * 0xC4CEB9FE1A85EC53) & MASK
    return v ^ (v >> 33)


def by_definition(row: np.ndarray, x: np.ndarray) -> int:
    """One row's fingerprint computed with Python integers, word by word."""
    raw = row.tobytes()
    raw += b"\0" * ((-len(raw)) % 8)
    words = np.frombuffer(raw, np.uint64).tolist()
    salt, weights = _constants(len(words))
    mixed = [fmix_by_definition(a ^ s) for a, s in zip(words, salt.tolist())]
    hi = sum(m * w for m, w in zip(mixed, weights[:, 0].tolist())) & MASK
    lo = sum(m * w for m, w in zip(mixed, weights[:, 1].tolist())) & MASK
    return (hi << 64 | lo) ^ _tag(x)


def test_fingerprints_are_scrambled_words_summed_twice_modulo_2_to_the_64():
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


def structured_pairs() -> list:
    """Pairs of distinct rows whose raw 64-bit words differ only in their high bits, or by a
    multiple of 2**63 summed over two words: each pair summed alike under a linear hash."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(16)
    one = np.ones(16)
    flipped = one.copy()
    flipped[[2, 5]] = -1  # two sign bits (2**63 each): their sum vanishes modulo 2**64
    image = rng.integers(0, 120, (3, 8, 8), dtype=np.uint8)
    brighter = image.copy()
    brighter.reshape(-1)[[7, 15]] += 128  # +128 in the top byte of two words
    return [
        (x, -x),
        (one, flipped),
        (x, 2 * x),
        (image, brighter),
    ]


def test_rows_that_differ_only_in_high_bits_hash_apart():
    for a, b in structured_pairs():
        prints = fingerprints(np.stack([a, b]))
        assert prints[0] != prints[1]


def test_distinct_small_count_and_zero_one_rows_never_share_a_fingerprint():
    rng = np.random.default_rng(4)
    for x in (
        rng.integers(0, 10, (6000, 16)).astype(np.float64),  # counts of a table, as float64
        rng.integers(0, 2, (6000, 32)).astype(np.float64),  # one-hot / binary features
        rng.choice([-1.0, 1.0], (3000, 16)),
        rng.integers(0, 2, (6000, 32)).astype(np.float32),
    ):
        distinct = np.unique(x, axis=0)
        assert len(set(fingerprints(distinct))) == len(distinct)


def test_disjoint_splits_of_structured_rows_report_no_duplicates():
    rng = np.random.default_rng(5)
    rows = np.unique(rng.integers(0, 10, (4000, 16)).astype(np.float64), axis=0)
    rows = rows[rng.permutation(len(rows))]
    half = len(rows) // 2
    splits = {
        name: TensorDataset(torch.from_numpy(part), torch.zeros(len(part), dtype=torch.long))
        for name, part in (("train", rows[:half]), ("val", rows[half:]))
    }
    ctx = build_context(splits, options={"galleryImages": 0})
    assert duplicates.check(ctx) == []


def test_quick_digests_shared_by_distinct_stored_rows_are_fingerprinted_again():
    """duplicates hash the stored rows with ``quick`` (one linear pass) and fingerprint again only the
    rows whose quick digest is shared: structured rows that collide under the linear hash (two sign
    bits of float64 rows) are then told apart, and a real copy across splits is still found."""
    rng = np.random.default_rng(6)
    one = rng.integers(1, 5, 16).astype(np.float64)
    flipped = one.copy()
    flipped[[2, 5]] *= -1  # two sign bits (2**63 each): their weighted sum vanishes modulo 2**64
    assert quick(np.stack([one, flipped]))[0] == quick(np.stack([one, flipped]))[1]  # a linear collision
    rows = rng.standard_normal((40, 16))
    train = np.concatenate([rows[:20], one[None], flipped[None]])
    val = np.concatenate([rows[20:], rows[3:4]])  # val's last row copies train's row 3
    splits = {
        name: TensorDataset(torch.from_numpy(part), torch.zeros(len(part), dtype=torch.long))
        for name, part in (("train", train), ("val", val))
    }
    ctx = build_context(splits, options={"galleryImages": 0})
    found = duplicates.check(ctx)
    assert [(f["kind"], f["indices"]) for f in found] == [("duplicates-across-splits", [20])]
    hashes = duplicates._raw(ctx.splits[0])
    assert hashes is not None and hashes[20] == hashes[21]  # the quick digests alone would call them copies
