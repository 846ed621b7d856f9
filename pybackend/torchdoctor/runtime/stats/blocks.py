"""Walk a tensor or ndarray in bounded blocks, so extra memory stays fixed whatever its size.

Works on anything with ``.shape`` and basic slicing (torch tensors, numpy arrays); every block
is a view, never a copy. Expanded (stride-0) dimensions are folded away first so an
``expand()``-ed tensor of 10**12 logical elements costs what its real data costs.
"""

from __future__ import annotations

from typing import Any, Iterator, Tuple

from .budget import checkpoint


def numel_of(shape) -> int:
    count = 1
    for dim in shape:
        count *= int(dim)
    return count


def _strides(x: Any) -> Tuple[int, ...]:
    stride = getattr(x, "stride", None)
    if callable(stride):  # torch: elements
        return tuple(stride())
    return tuple(getattr(x, "strides", ()))  # numpy: bytes (only zero-ness matters here)


def collapse_expanded(x: Any) -> Tuple[Any, int]:
    """Drop repeated (stride 0) dimensions: ``(view, multiplicity)``.

    Each element of the view stands for ``multiplicity`` equal elements of ``x``, so counts and
    sums scale by it while min, max and mean stay the same.
    """
    multiplicity = 1
    index = []
    for size, stride in zip(tuple(x.shape), _strides(x)):
        if stride == 0 and size > 1:
            multiplicity *= int(size)
            index.append(slice(0, 1))
        else:
            index.append(slice(None))
    if multiplicity == 1:
        return x, 1
    return x[tuple(index)], multiplicity


def iter_blocks(x: Any, limit: int) -> Iterator[Any]:
    """Yield views of ``x`` of at most ``limit`` elements each that together cover it once."""
    shape = tuple(x.shape)
    total = numel_of(shape)
    if total <= limit or not shape:
        yield x
        return
    per_row = total // int(shape[0])
    if per_row <= limit:
        rows = max(1, limit // per_row)
        for start in range(0, int(shape[0]), rows):
            checkpoint()  # a debugger request past its deadline stops here (the line says stats…)
            yield x[start : start + rows]
    else:
        for row in range(int(shape[0])):
            yield from iter_blocks(x[row], limit)


def memory_order(x: Any) -> Any:
    """The same values as ``x``, with its dimensions in storage order (largest stride first).

    Statistics do not depend on the order of the values; reading a transposed or permuted view
    in its logical order jumps through memory (19× slower than the same data read in order).
    A view that is then contiguous is flattened to 1-D, so blocks are plain runs of memory.
    """
    shape = tuple(x.shape)
    if len(shape) < 2:
        return x
    if _contiguous(x):
        return x.reshape(-1)  # storage order already: a view
    strides = _strides(x)
    order = sorted(range(len(shape)), key=lambda d: (-abs(int(strides[d])), -int(shape[d])))
    if order != list(range(len(shape))):
        x = x.permute(order) if hasattr(x, "permute") else x.transpose(order)
    return x.reshape(-1) if _contiguous(x) else x


def _contiguous(x: Any) -> bool:
    return bool(x.is_contiguous() if callable(getattr(x, "is_contiguous", None)) else x.flags.c_contiguous)
