"""The real-model corpus (models.py) importable as ``real_models`` by every test in this folder.

pytest's importlib mode puts no test folder on ``sys.path``; registering models.py under a name
of its own (not ``models``, which a user's file or another folder could also be called) lets
``import real_models as M`` work in these tests, and ``M.HERE`` is the folder for worker runs.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

if "real_models" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("real_models", Path(__file__).with_name("models.py"))
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["real_models"] = _module  # before exec: dataclasses look their module up
    _spec.loader.exec_module(_module)


@pytest.fixture(autouse=True)
def one_thread():
    """Torch on one thread, as the worker runs the checks: on a busy machine more threads only spin."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
