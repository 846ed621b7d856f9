"""The seeded draws of an augmented split, and the rows of a store that is a list, are digested together
(``duplicates._digests``), exactly as one at a time: blank, non-finite, too small and missing features
included."""

from __future__ import annotations

import numpy as np

from torchdoctor.data_checks import thresholds as T
from torchdoctor.data_checks.duplicates import DIGEST_ROWS, _digests, _listed_digests
from torchdoctor.data_checks.fingerprint import fingerprints, quick
from torchdoctor.data_checks.reduce import blank_rows, is_blank


def _digest(x, how=fingerprints):
    """One array's digest, as the duplicates check took it one sample at a time."""
    if x is None or x.size < T.DUP_MIN_ELEMENTS or is_blank(x):
        return None
    return int(how(x[None])[0])


def _mixed(n: int) -> list:
    rng = np.random.default_rng(0)
    makers = (
        lambda s: rng.standard_normal(s).astype(np.float32),
        lambda s: np.full(s, 0.3, np.float32),  # blank: constant
        lambda s: (rng.random(s) < 0.995).astype(np.float64),  # blank: 99% at the max
        lambda s: rng.integers(0, 256, s).astype(np.uint8),
        lambda s: np.where(rng.random(s) < 0.1, np.nan, rng.standard_normal(s)),  # NaN: tested on the finite values
        lambda s: np.full(s, np.inf, np.float32),
        lambda s: rng.standard_normal(s).astype(np.float16),
        lambda s: None,
    )
    shapes = ((3, 16, 16), (100,), (2, 9), (4,))  # (4,): too small to compare
    xs: list = [makers[k % len(makers)](shapes[k % len(shapes)]) for k in range(n)]
    xs += [xs[k] for k in range(0, n, 7)]  # copies: equal digests
    return xs


def test_digests_together_are_the_digests_one_at_a_time():
    xs = _mixed(2 * DIGEST_ROWS + 40)  # several stacks of one shape
    together = _digests(xs)
    assert together == [_digest(x) for x in xs]
    assert sum(h is not None for h in together) > 100 and len(set(h for h in together if h is not None)) < len(xs)
    assert _digests(xs, quick) == [_digest(x, quick) for x in xs]


def test_a_listed_store_is_digested_a_block_at_a_time():
    store = _mixed(3 * DIGEST_ROWS)
    rows = list(range(len(store) - 1, -1, -2))
    assert _listed_digests(store, rows, quick) == [_digest(store[r], quick) for r in rows]


def test_blank_rows_is_is_blank_of_each_row():
    xs = [x for x in _mixed(400) if x is not None and x.shape == (100,)]
    for dtype in (np.float64, np.float32, np.uint8):
        rows = np.stack([x if dtype != np.uint8 else np.nan_to_num(x, posinf=255) for x in xs]).astype(dtype)
        for layout in ("chw", "vector", "tokens"):
            assert blank_rows(rows, layout).tolist() == [is_blank(r, layout) for r in rows]
