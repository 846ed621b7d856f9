"""``stats()`` of a numpy array: the same exact, bounded-memory algorithm as for tensors.

numpy has no version counter, so nothing here is cached: a writable array can change behind
any fingerprint we could afford. Object, string, structured and datetime arrays get their
shape and dtype and a note instead of statistics.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Dict, List, Tuple

from ...spelling import short_dtype
from ..stats.blocks import collapse_expanded, iter_blocks
from ..stats.moments import combine, repeat

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
    base, multiplicity = collapse_expanded(a)
    if multiplicity > 1:
        info["expanded"] = multiplicity
    if a.size == 0:
        info["note"] = "empty"
    elif a.dtype.kind not in "biufc":
        info["note"] = f"no statistics for dtype {info['dtype']}"
    else:
        with np.errstate(all="ignore"):  # inf - inf inside a block must not warn in user code
            info.update(_value_stats(np, base, multiplicity))
        if a.size <= SMALL_VALUES:
            values = np.asarray(a).reshape(-1).tolist()
            info.update({"value": values[0]} if a.ndim == 0 else {"values": values})
    return info


def _dtype_label(dtype: Any) -> str:
    if dtype.fields:
        return "struct{" + ",".join(dtype.names) + "}"
    names = {"O": "object", "U": "str", "S": "bytes", "V": "void"}
    if dtype.kind in names:
        return names[dtype.kind]
    return short_dtype(dtype.name)


def _value_stats(np, base: Any, multiplicity: int) -> Dict[str, object]:
    if base.dtype.kind == "b":
        true = int(np.count_nonzero(base)) * multiplicity
        return {"count": int(base.size) * multiplicity, "true": true, "nan": 0, "posinf": 0, "neginf": 0, "exact": True}
    work = np.float64 if base.dtype.kind in "iu" or base.dtype.itemsize >= 8 else np.float32
    rows = [repeat(row, multiplicity) for row in _rows(np, base, work)]
    out = combine(rows)
    if base.dtype.kind == "c":
        out["of"] = "abs"
    if base.dtype.kind in "iu":
        out["min"], out["max"] = int(base.min()), int(base.max())  # exact beyond 2**53
    out["exact"] = True
    return out


def _convert(np, block: Any, work: Any) -> Any:
    if block.dtype.kind == "c":
        return np.abs(block).astype(work, copy=False)
    return block.astype(work, copy=False)


def _rows(np, base: Any, work: Any) -> List[Tuple[float, ...]]:
    scratch = np.empty(min(BLOCK, base.size), dtype=work)
    rows = []
    for block in iter_blocks(base, BLOCK):
        values = _convert(np, np.asarray(block), work)
        row = _fast_block(np, values, scratch)
        if not (math.isfinite(row[3]) and math.isfinite(row[4])):
            row = _careful_block(np, values)
        rows.append(row)
    return rows


def _fast_block(np, values: Any, scratch: Any) -> Tuple[float, ...]:
    count = values.size
    mean = float(values.sum(dtype=np.float64)) / count
    centred = scratch[:count].reshape(values.shape)
    np.subtract(values, mean, out=centred, casting="unsafe")
    n, total, m2 = _centred(np, count, mean, centred)
    return (n, total, m2, float(values.min()), float(values.max()), 0, 0, 0)


def _careful_block(np, values: Any) -> Tuple[float, ...]:
    finite = np.isfinite(values)
    n = int(np.count_nonzero(finite))
    posinf = int(np.count_nonzero(values == np.inf))
    neginf = int(np.count_nonzero(values == -np.inf))
    nan = int(values.size) - n - posinf - neginf
    mean = float(np.where(finite, values, 0).sum(dtype=np.float64)) / max(n, 1)
    filled = np.where(finite, values, mean)  # non-finite slots deviate by zero
    low, high = float(filled.min()), float(filled.max())
    filled -= mean
    _, total, m2 = _centred(np, n, mean, filled)
    return (n, total, m2, low, high, nan, posinf, neginf)


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
