"""What must be unchanged for a tensor's cached statistics to still be true.

``_version`` catches every in-place op autograd sees. Writes that bypass the version counter
(``p.data.add_()``, a numpy array sharing memory via ``from_numpy``, custom kernels writing raw
pointers) are caught by a probe: the bytes of 64 evenly spaced elements. A bypassing write that
leaves all 64 probed elements alone goes unnoticed; whole-tensor updates (an SGD step written
``p.data -= lr * p.grad``) never do.
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Tuple

PROBE_ELEMENTS = 64


def fingerprint(t: Any) -> Optional[Tuple]:
    """A hashable key for the current contents of ``t``, or None when it cannot be trusted."""
    try:
        torch = sys.modules["torch"]
        if t.layout != torch.strided:
            values = t._values() if t.layout == torch.sparse_coo else t.values()
            return (
                "sparse",
                str(t.layout),
                t._version,
                values._version,
                tuple(t.shape),
                _storage_key(values),
                probe(values),
            )
        return ("dense", t._version, _storage_key(t), probe(t))
    except Exception:
        return None  # e.g. inference tensors have no version counter: do not cache them


def _storage_key(t: Any) -> Tuple:
    return (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.storage_offset(), str(t.dtype), str(t.device))


def probe(t: Any) -> Optional[Tuple[int, ...]]:
    """The raw bytes of up to 64 evenly spaced elements (bitwise, so NaN equals itself)."""
    torch = sys.modules["torch"]
    count = t.numel()
    if count == 0 or t.is_meta:
        return ()
    k = min(PROBE_ELEMENTS, count)
    positions = [i * (count - 1) // (k - 1) for i in range(k)] if k > 1 else [0]
    index = torch.tensor(positions, dtype=torch.long, device=t.device)
    picked = torch.take(t, index)
    return tuple(picked.view(torch.uint8).tolist())
