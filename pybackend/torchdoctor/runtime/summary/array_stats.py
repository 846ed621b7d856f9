"""``stats()`` of a numpy array: the same exact, bounded-memory algorithm as for tensors.

Caching lives in :mod:`aggregates`. Object, string, structured and datetime arrays get their
shape and dtype and a note instead of statistics. A masked array (``numpy.ma``) is described by
its unmasked values only, as ``numpy.ma`` itself computes them; arrays are read in memory order.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Dict, List, Tuple

from ...spelling import short_dtype
from ..stats.blocks import collapse_expanded, iter_blocks, memory_order
from ..stats.guard import quiet
from ..stats.moments import (
    EXACT_IN_FLOAT64,
    combine,
    moments_overflowed,
    peak_exponent,
    repeat,
    scaled_back,
    shifted_back,
)

BLOCK = 1 << 20
SMALL_VALUES = 8


def describe_array(a: Any) -> Dict[str, object]:
    np = sys.modules["numpy"]
    info: Dict[str, object] = {
        "kind": "ndarray",
        "type": type(a).__name__,
        "shape": [int(d) for d in a.shape],
        "dtype": _dtype_label(a.dtype),
        "device": None,
        "numel": int(a.size),
        "nbytes": int(a.size * a.itemsize),
    }
    masked = _mask_of(np, a)
    data = np.ma.getdata(a) if masked is not None else a
    # An empty array has stride 0 on every axis (numpy's choice): nothing is repeated.
    base, multiplicity = collapse_expanded(data) if masked is None and a.size else (data, 1)
    if multiplicity > 1:
        info["expanded"] = multiplicity
        info["stored_nbytes"] = int(base.size * base.itemsize)
    if masked is not None:
        info["source"] = f"masked: statistics of {int(a.size - np.count_nonzero(masked))} unmasked of {a.size}"
    if a.size == 0:
        info["note"] = "empty"
    elif a.dtype.kind not in "biufc":
        info["note"] = f"no statistics for dtype {info['dtype']}"
    else:
        with np.errstate(all="ignore"), quiet():  # inf - inf inside a block must not warn in user code
            blocks = _masked_blocks(np, base, masked) if masked is not None else None
            info.update(_value_stats(np, memory_order(base), multiplicity, blocks))
        if a.size <= SMALL_VALUES and masked is None:
            values = np.asarray(a).reshape(-1).tolist()
            info.update({"value": values[0]} if a.ndim == 0 else {"values": values})
    return info


def _mask_of(np, a: Any) -> Any:
    """The boolean mask of a masked array with anything masked, else None."""
    if not isinstance(a, np.ma.MaskedArray):
        return None
    mask = np.ma.getmaskarray(a)
    return mask if mask.any() else None


def _masked_blocks(np, data: Any, mask: Any):
    """The unmasked values, a bounded block at a time (each block a small copy)."""
    for values, hidden in zip(iter_blocks(data, BLOCK), iter_blocks(mask, BLOCK)):
        kept = np.asarray(values)[~np.asarray(hidden)]
        if kept.size:
            yield kept


def _dtype_label(dtype: Any) -> str:
    if dtype.fields:
        return "struct{" + ",".join(dtype.names) + "}"
    names = {"O": "object", "U": "str", "S": "bytes", "V": "void"}
    if dtype.kind in names:
        return names[dtype.kind]
    return short_dtype(dtype.name)


def _value_stats(np, base: Any, multiplicity: int, blocks=None) -> Dict[str, object]:
    parts = list(blocks) if blocks is not None else list(iter_blocks(base, BLOCK))
    if base.dtype.kind == "b":
        true = sum(int(np.count_nonzero(b)) for b in parts) * multiplicity
        count = sum(int(np.size(b)) for b in parts) * multiplicity
        return {"count": count, "true": true, "zeros": count - true, "nan": 0, "posinf": 0, "neginf": 0, "exact": True}
    work = np.float64 if base.dtype.kind in "iu" or base.dtype.itemsize >= 8 else np.float32
    out = _moments(np, parts, work, multiplicity, lambda b: b)
    if moments_overflowed(out):  # float64 beyond ~1e154: again with the values scaled near 1
        exponent = peak_exponent(out)
        scaled_back(_moments(np, parts, work, multiplicity, lambda b: _scaled(np, b, exponent)), exponent, out)
    if base.dtype.kind == "c":
        out["of"] = "abs"
    if base.dtype.kind in "iu" and parts:  # exact beyond 2**53
        out["min"] = min(int(np.min(b)) for b in parts)
        out["max"] = max(int(np.max(b)) for b in parts)
        _wide_int_moments(np, parts, multiplicity, out)
    out["exact"] = True
    return out


def _moments(np, parts: List[Any], work: Any, multiplicity: int, change) -> Dict[str, object]:
    """``combine`` of the blocks read through ``change`` (one changed block alive at a time)."""
    rows = [repeat(row, multiplicity) for b in parts for row in _rows(np, [change(np.asarray(b))], work)]
    return combine(rows)


def _scaled(np, block: Any, exponent: int) -> Any:
    values = np.abs(block) if block.dtype.kind == "c" else block
    return np.ldexp(values.astype(np.float64), -exponent)


def _wide_int_moments(np, parts: List[Any], multiplicity: int, out: Dict[str, object]) -> None:
    """64-bit integers beyond 2**53 whose spread is not: the moments of ``x - min``, taken in the
    block's own integers (exact while the spread is below 2**63) before the float64 conversion,
    so the std is not the rounding of ``2**62 + 1`` and ``2**62 + 3`` to one float."""
    low, high = int(out["min"]), int(out["max"])  # type: ignore[call-overload]
    if max(-low, high) <= EXACT_IN_FLOAT64 or high - low >= 1 << 63 or parts[0].dtype.itemsize != 8:
        return
    dtype = parts[0].dtype
    unsigned = np.dtype(dtype.str.replace("i", "u"))  # the difference fits: no overflow to wrap

    def change(b: Any) -> Any:
        return (b.view(unsigned) - np.array(low, dtype=dtype).view(unsigned)).astype(np.float64)

    shifted_back(_moments(np, parts, np.float64, multiplicity, change), low, out)


def _convert(np, block: Any, work: Any) -> Any:
    if block.dtype.kind == "c":
        return np.abs(block).astype(work, copy=False)
    return block.astype(work, copy=False)


def _rows(np, blocks: List[Any], work: Any) -> List[Tuple[float, ...]]:
    scratch = np.empty(max((int(np.size(b)) for b in blocks), default=0), dtype=work)
    rows = []
    for block in blocks:
        values = _convert(np, np.asarray(block), work)
        row = _fast_block(np, values, scratch)
        if not (math.isfinite(row[3]) and math.isfinite(row[4])):
            row = _careful_block(np, values)
        elif not math.isfinite(row[2]):  # float32 squares overflowed (|x| ~ 1e20): again in float64
            row = _fast_block(np, values.astype(np.float64), np.empty(values.size, dtype=np.float64))
        rows.append(row)
    return rows


def _fast_block(np, values: Any, scratch: Any) -> Tuple[float, ...]:
    count = values.size
    mean = float(values.sum(dtype=np.float64)) / count
    centred = scratch[:count].reshape(values.shape)
    np.subtract(values, mean, out=centred, casting="unsafe")
    n, total, m2 = _centred(np, count, mean, centred)
    zeros = count - int(np.count_nonzero(values))
    return (n, total, m2, float(values.min()), float(values.max()), 0, 0, 0, zeros)


def _careful_block(np, values: Any) -> Tuple[float, ...]:
    finite = np.isfinite(values)
    n = int(np.count_nonzero(finite))
    posinf = int(np.count_nonzero(values == np.inf))
    neginf = int(np.count_nonzero(values == -np.inf))
    nan = int(values.size) - n - posinf - neginf
    mean = float(np.where(finite, values, 0).sum(dtype=np.float64)) / max(n, 1)
    if not math.isfinite(mean):  # finite values summing past the float range (1e308 twice):
        mean = float(values[finite].max())  # a centre inside [min, max]; the caller rescales
    zeros = int(np.count_nonzero(values == 0))
    filled = np.where(finite, values, mean)  # non-finite slots deviate by zero
    low, high = float(filled.min()), float(filled.max())
    filled -= mean
    _, total, m2 = _centred(np, n, mean, filled)
    return (n, total, m2, low, high, nan, posinf, neginf, zeros)


def _centred(np, n: int, mean: float, centred: Any) -> Tuple[int, float, float]:
    """Corrected two-pass: the deviations' own sum repairs a rounded mean (see tensor_stats)."""
    drift = float(centred.sum(dtype=np.float64))
    flat = centred.reshape(-1)
    squares = (
        float(np.dot(flat, flat))
        if flat.dtype == np.float64
        else float(np.square(flat, out=flat).sum(dtype=np.float64))
    )
    return n, mean * n + drift, squares - drift * drift / max(n, 1)
