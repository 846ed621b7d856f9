"""context.source_of: the line a finding points at, the dataset's ``__getitem__`` (else its class)."""

from __future__ import annotations

import functools
import inspect

import torch
from torch.utils.data import DataLoader, Subset

from torchdoctor.data_checks.context import source_of


def _logged(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)

    return wrapper


class Plain(torch.utils.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return torch.zeros(2)


class Decorated(Plain):
    @_logged
    def __getitem__(self, i):
        return torch.ones(2)


class Inherited(Plain):
    pass


class Lambda(Plain):
    __getitem__ = lambda self, i: torch.zeros(2)  # noqa: E731 - the shape under test


def _line(text: str) -> int:
    lines, _ = inspect.findsource(inspect.getmodule(Plain))
    return next(n for n, line in enumerate(lines, 1) if text in line)


def test_the_line_of_getitem_through_loaders_subsets_decorators_and_inheritance():
    here = __file__.replace(".pyc", ".py")
    getitem = _line("return torch.zeros(2)") - 1
    assert source_of(Plain()) == {"file": here, "line": getitem}
    assert source_of(DataLoader(Subset(Plain(), [0, 1]), batch_size=2)) == {"file": here, "line": getitem}
    assert source_of(Inherited()) == {"file": here, "line": getitem}  # where the method is, not the class
    assert source_of(Decorated()) == {"file": here, "line": _line("@_logged")}  # as getsourcelines says
    assert source_of(Lambda()) == {"file": here, "line": _line("__getitem__ = lambda")}


def test_no_line_for_code_without_python_source():
    assert source_of([torch.zeros(2)]) is None  # a list: its __getitem__ is C and its class is a builtin
    assert source_of(torch.utils.data.TensorDataset(torch.zeros(3, 2))) is None  # torch's own
