"""What one sample is made of: its features and its label as numpy arrays (worker side).

A sample may be a tensor, an array, a PIL image, a number, a ``(features, label, ...)`` tuple or
a dict (``{"image": ..., "label": ...}``, ``{"input_ids": ..., "labels": ...}``). The features are
the first element (or the first of ``FEATURE_KEYS``); the label the second (or the first of
``LABEL_KEYS``). Text and other objects that are not numbers give ``None``: not checked, and said so.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np

ATTENTION_MASK = "attention_mask"  # Hugging Face tokenizers' mask of the real (not padding) tokens
MASKED = f", with sample[{ATTENTION_MASK!r}]"
FEATURE_KEYS = ("image", "images", "pixel_values", "input", "inputs", "input_ids", "x", "features", "data", "img")
_HALF: tuple = ()


def _half_dtypes() -> tuple:
    torch = sys.modules.get("torch")
    return (torch.float16, torch.bfloat16) if torch is not None else ()


LABEL_KEYS = ("label", "labels", "target", "targets", "y", "class", "mask")


def _masks_some(mask: Any) -> bool:
    """An attention_mask that hides a position: one of all ones (``torch.ones_like(input_ids)`` beside
    padded ids) attends to the padding, which padding-share must still report (review, 2026-12-06)."""
    values = to_array(mask)
    return values is not None and values.size > 0 and bool((values == 0).any())


def split_xy(sample: Any, describe: bool = True) -> tuple[Any, Any, str]:
    """(features, label or None, how they were found). ``describe=False``: the caller keeps no
    description (a split keeps its first sample's), so the attention mask is not read for it."""
    if isinstance(sample, dict):
        keys = list(sample)
        fx = next((k for k in FEATURE_KEYS if k in sample), None)
        fy = next((k for k in LABEL_KEYS if k in sample and k != fx), None)
        if fx is None:
            fx = next((k for k in keys if k != fy and to_array(sample[k]) is not None), None)
        if fx is None:
            return None, None, "a dict without array values"
        return (
            sample[fx],
            (sample[fy] if fy is not None else None),
            f"sample[{fx!r}]"
            + (f", label sample[{fy!r}]" if fy is not None else "")
            + (MASKED if describe and _masks_some(sample.get(ATTENTION_MASK)) else ""),  # sequences.py
        )
    if isinstance(sample, (tuple, list)) and sample and not _is_number(sample[0]):
        if len(sample) >= 3 and _named_first(sample):
            last = f", label sample[{len(sample) - 1}] (sample[0] is text)"
            return _views(sample[1], sample[-1], "sample[1]", last)
        if len(sample) >= 2:
            return _views(sample[0], sample[1], "sample[0]", ", label sample[1]")
        return sample[0], None, "sample[0]"
    return sample, None, "the whole sample (no label)"


def _views(x: Any, y: Any, where: str, rest: str) -> tuple:
    """(features, label, how): the first of two or more views of one image (MoCo's
    ``[q, k]``, SimCLR's pair: a list of same-shape arrays with one label, or in a DataLoader's batch
    of same-shape batches as long as the batch's labels) is the features; counted as one sample, not
    as a stack of images nor as two samples. A tuple of one image per sample beside as many labels
    (a detection collate's ``tuple(zip(*batch))``) is a batch of images, not views."""
    if type(x) in (list, tuple) and len(x) >= 2:
        shape = getattr(x[0], "shape", None)
        if shape is not None and len(shape) >= 1 and all(getattr(v, "shape", None) == shape for v in x[1:]):
            if _view_label(x, y, shape):
                return x[0], y, f"{where}[0] (the first of {len(x)} views){rest}"
    return x, y, where + rest


def _view_label(x: Any, y: Any, shape: tuple) -> bool:
    """Views of same ``shape`` fit the label ``y``: one label (a number, a 0-d array, a dict), or labels of
    a batch (n of them) when each view is a batch of n (2 dimensions at least) and the views are not
    one per label of a per-sample tuple of labels (``zip(*batch)``'s)."""
    if type(y) in (list, tuple):
        n: Optional[int] = len(y)
    else:
        dims = getattr(y, "shape", None)
        n = int(dims[0]) if dims is not None and len(dims) >= 1 else None
    if n is None:
        return True
    return len(shape) >= 2 and shape[0] == n and not (type(y) in (list, tuple) and len(x) == n)


def _named_first(sample: Any) -> bool:
    """A ``(path, image, label)`` sample (or its batch: a list of paths first): text first, then an
    image (2 dimensions at least, H x W or C x H x W, or a PIL image; a batch's: 3 at least) and a
    label after it. ``(text, label vector)`` and ``(text, token ids)`` keep their text as features."""
    first = sample[0]
    if isinstance(first, (str, bytes)):
        least = 2
    elif type(first) in (list, tuple) and first and isinstance(first[0], (str, bytes)):
        least = 3
    else:
        return False
    shape = getattr(sample[1], "shape", None)
    if shape is None and hasattr(sample[1], "__array_interface__"):  # a PIL image
        return True
    return shape is not None and len(shape) >= least


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, bool, np.number))


def to_array(value: Any) -> Optional[np.ndarray]:
    """A numeric numpy array, or None for text and other objects."""
    if value is None or isinstance(value, (str, bytes)):
        return None
    global _HALF
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        if not _HALF:
            _HALF = _half_dtypes()
        t = value.detach()
        if t.dtype in _HALF:
            t = t.float()  # numpy has no bfloat16
        elif t.dtype.is_complex:
            return None
        try:
            return t.numpy()
        except (TypeError, RuntimeError):  # not on the CPU
            return t.cpu().numpy()
    if isinstance(value, np.ndarray):
        arr = value
    elif hasattr(value, "__array_interface__") or hasattr(value, "__array__") or _is_number(value):
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):
            return None
    elif isinstance(value, (list, tuple)):
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):
            return None
    else:
        return None
    if arr.dtype.kind not in "biuf":
        return None
    return arr


def dtype_name(value: Any) -> str:
    """``torch.float64`` for a tensor, ``float64`` for an array: what the user wrote."""
    dt = getattr(value, "dtype", None)
    if dt is None:
        return type(value).__name__
    return str(dt)


BOX_KEYS = ("boxes", "bbox", "bboxes")
BOX_LABEL_KEYS = ("labels", "label", "class", "category_id")


class BoxLabels:
    """The class ids of one image's boxes (a detection target), kept without the boxes themselves."""

    __slots__ = ("ids",)

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids


def box_labels(target: Any) -> Optional[BoxLabels]:
    """The per-box class ids of a detection target, or None when ``target`` is not one: a dict with
    a box key (``boxes``/``bbox``) and a 1-D integer ``labels`` (``label``/``class``/``category_id``)
    array (DETR, torchvision detection), or a list of annotation dicts each with a box key and one
    integer id (COCO's raw annotations)."""
    if isinstance(target, dict):
        if not any(k in target for k in BOX_KEYS):
            return None
        key = next((k for k in BOX_LABEL_KEYS if k in target), None)
        ids = to_array(target[key]) if key is not None else None
        if ids is None or ids.ndim != 1 or ids.dtype.kind not in "iub":
            return None
        return BoxLabels(ids.astype(np.int64))
    if isinstance(target, (list, tuple)) and target and all(isinstance(a, dict) for a in target):
        ids_list = []
        for a in target:
            key = next((k for k in BOX_LABEL_KEYS if k in a), None)
            one = to_array(a[key]) if key is not None and any(k in a for k in BOX_KEYS) else None
            if one is None or one.size != 1 or one.dtype.kind not in "iub":
                return None
            ids_list.append(int(one.reshape(-1)[0]))
        return BoxLabels(np.asarray(ids_list, dtype=np.int64))
    return None
