"""A sample that raised while drawn (pure Python: the worker imports it before numpy is known to exist)."""

from __future__ import annotations

import os
import traceback
from typing import Any

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # torchdoctor/


class SampleError(Exception):
    """``dataset[index]`` raised: the worker names the split and the index (the bare exception
    said neither, and a dataset that fails on one file in thousands needs the index to be found)."""

    def __init__(self, split: str, index: Any, error: BaseException) -> None:
        super().__init__(f"{split}[{index!r}] raised {type(error).__name__}: {str(error)[:500]}")
        self.split, self.index, self.error = split, index, error


def user_frames(exc: BaseException) -> str:
    """The traceback of ``exc`` from the first frame of the user's code (the user's ``__getitem__``;
    a DataLoader's own frames before it are left out), else from the first frame outside Torch Doctor."""
    from .loader_errors import is_user_file

    frames = traceback.extract_tb(exc.__traceback__)
    first = next((i for i, f in enumerate(frames) if is_user_file(f.filename)), None)
    if first is None:
        first = next((i for i, f in enumerate(frames) if not os.path.abspath(f.filename).startswith(_PACKAGE)), 0)
    body = "".join(traceback.format_list(frames[first:]))
    return f"Traceback (most recent call last):\n{body}{type(exc).__name__}: {exc}"
