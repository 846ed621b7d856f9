"""128-bit fingerprints of array rows in one vectorised pass (duplicates).

Each row's bytes are read as 64-bit words. Every word is first XORed with a random constant for
its position and scrambled by murmur3's finaliser (``fmix64``, a bijection on 64-bit words whose
every output bit depends on every input bit); the scrambled words are then summed with two
independent vectors of random odd weights modulo 2**64, giving two 64-bit halves.

Why the scramble: a plain weighted sum of the raw words is linear, and structured rows break it -
whole-number or 0/1 float64 values differ only in their top bits, so ``x`` and ``-x``, rows of
+-1, ``x`` and ``2x`` summed to the same value (false duplicates). After ``fmix64`` the words fed
to the sum are pseudo-random whatever the data's structure.

Collisions: rows that differ in one word never collide (``fmix64`` is a bijection and an odd
weight is invertible modulo 2**64). Rows that differ in several collide only if both halves do,
about 2**-128 per pair for data not built against these fixed constants (this is not a
cryptographic hash). The shape and dtype are mixed in, so rows of different layouts never match.
A few vectorised operations per 8 bytes: hashing each row with hashlib or ``hash(bytes)`` cost
more than a dataset's own ``__getitem__``.
"""

from __future__ import annotations

import hashlib

import numpy as np

_CONSTANTS: dict = {}
_TAGS: dict = {}
CHUNK_WORDS = 16_384  # 128 KB of words scrambled at a time: fits a core's L2 cache
_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)


def _constants(words: int) -> tuple:
    """(per-position XOR constants, a (words, 2) matrix of odd weights), fixed for a row length."""
    found = _CONSTANTS.get(words)
    if found is None:
        rng = np.random.default_rng(0x7D0C)
        salt = rng.integers(0, 2**63, size=words, dtype=np.uint64) * np.uint64(2)
        w = rng.integers(0, 2**63, size=(words, 2), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        found = _CONSTANTS[words] = (salt, w)
    return found


def fmix64(x: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """murmur3's 64-bit finaliser, in place on a uint64 array (returned); ``scratch``, as large,
    holds the shifts (no new array per step). Array integer products wrap modulo 2**64 without a
    warning (only numpy scalar arithmetic warns), so no errstate: it cost as much as a small row."""
    for m in (_M1, _M2, None):
        np.right_shift(x, _S33, out=scratch)
        x ^= scratch
        if m is not None:
            np.multiply(x, m, out=x)
    return x


def _tag(x: np.ndarray) -> int:
    key = (x.shape[1:], x.dtype.str)
    tag = _TAGS.get(key)
    if tag is None:  # cached: one sample at a time is hashed thousands of times with one layout
        tag = _TAGS[key] = int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=16).digest(), "little")
    return tag


def _words(x: np.ndarray) -> np.ndarray:
    """(rows, 64-bit words) of ``x``'s bytes, each row zero-padded to whole words."""
    k = x.shape[0]
    raw = np.ascontiguousarray(x).reshape(k, -1).view(np.uint8)
    pad = (-raw.shape[1]) % 8
    if pad:
        raw = np.concatenate([raw, np.zeros((k, pad), np.uint8)], 1)
    return raw.view(np.uint64)


def quick(x: np.ndarray) -> np.ndarray:
    """A 64-bit linear hash per row of ``x`` (uint64): the raw words times odd weights, summed modulo
    2**64, in one pass (an integer matrix-vector product; ~1/12 of ``fingerprints``' time). Equal rows
    always hash alike; distinct rows collide by chance about 2**-64 a pair, but structured rows far
    more often (see the module docstring), so a shared value only says "maybe equal": duplicates.py
    fingerprints those rows again with ``fingerprints``. The layout is not mixed in (the same)."""
    if not x.shape[0]:
        return np.zeros(0, np.uint64)
    words = _words(x)
    return words @ _constants(words.shape[1])[1][:, 0]


def fingerprints(x: np.ndarray) -> list:
    """One 128-bit fingerprint (a Python int) per row of ``x`` (rows along the first axis)."""
    k = x.shape[0]
    if not k:
        return []
    words = _words(x)
    salt, weights = _constants(words.shape[1])
    if k * words.shape[1] <= CHUNK_WORDS:  # one block (one sample drawn): no loop to set up
        sums = fmix64(words ^ salt, np.empty_like(words)) @ weights  # words ^ salt: a new array
    else:
        sums = _blocks(words, salt, weights)
    tag = _tag(x)
    return [(hi << 64 | lo) ^ tag for hi, lo in sums.tolist()]


def _blocks(words: np.ndarray, salt: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The (rows, 2) sums, scrambling a cache-sized block of rows at a time: the eight passes of
    ``fmix64`` then stay in cache (2-3x faster than passing over a whole 4 MB part each time)."""
    k, n = words.shape
    step = max(1, CHUNK_WORDS // n)
    block = np.empty((min(step, k), n), np.uint64)
    scratch = np.empty_like(block)
    sums = np.empty((k, 2), np.uint64)
    for start in range(0, k, step):
        part = words[start : start + step]
        mixed = np.bitwise_xor(part, salt, out=block[: len(part)])  # the caller's rows untouched
        fmix64(mixed, scratch[: len(part)])
        # numpy's integer matmul wraps modulo 2**64 like a sum does
        np.matmul(mixed, weights, out=sums[start : start + len(part)])
    return sums
