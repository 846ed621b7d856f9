"""The user's ``torchdoctor_example()``: finding it, calling it, checking what it returned."""

from __future__ import annotations

import importlib.util
import inspect
import os
from types import ModuleType
from typing import Callable

from .. import result as R
from ..discovery import EXAMPLE_FUNCTION
from .construct import construct_kind
from .core import EXAMPLE_FILE, Example, ExampleError
from .load import user_traceback
from .snippet import example_snippet


def user_example_function(module: ModuleType) -> tuple[Callable | None, str]:
    """``torchdoctor_example`` from the file, else from a sibling ``torchdoctor_example.py``."""
    fn = getattr(module, EXAMPLE_FUNCTION, None)
    if callable(fn):
        return fn, os.path.basename(module.__file__ or "")
    sibling = os.path.join(os.path.dirname(module.__file__ or "."), EXAMPLE_FILE)
    if not os.path.isfile(sibling):
        return None, ""
    spec = importlib.util.spec_from_file_location("torchdoctor_example", sibling)
    if spec is None or spec.loader is None:  # not for a .py file that exists: importlib's types allow it
        return None, ""
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:
        raise ExampleError(
            R.ERR_IMPORT, f"importing {EXAMPLE_FILE} raised {type(exc).__name__}: {exc}", detail=user_traceback(exc)
        ) from None
    fn = getattr(mod, EXAMPLE_FUNCTION, None)
    return (fn, EXAMPLE_FILE) if callable(fn) else (None, "")


def from_user_function(fn: Callable, where: str, cls, options: dict) -> Example | None:
    """Call the user's function; None when it builds a different class (then we infer)."""
    try:
        takes_name = len(inspect.signature(fn).parameters) >= 1
        returned = fn(cls.__name__) if takes_name else fn()
    except Exception as exc:
        raise ExampleError(
            construct_kind(exc),
            f"{EXAMPLE_FUNCTION}() in {where} raised {type(exc).__name__}: {exc}",
            detail=user_traceback(exc),
        ) from None
    model, inputs, targets, loss_fn = _unpack_user_example(returned, where)
    if not isinstance(model, cls):
        return None
    inferred = [f"Model and batch from {EXAMPLE_FUNCTION}() in {where}."]
    ex = Example(
        model=model, inputs=inputs, targets=targets, loss_fn=loss_fn, source=EXAMPLE_FUNCTION, inferred=inferred
    )
    if loss_fn is not None:
        ex.loss_name = "custom"
        inferred.append(f"Loss: the loss_fn returned by {EXAMPLE_FUNCTION}().")
    return ex


def _unpack_user_example(returned, where: str):
    import torch

    contract = (
        f"{EXAMPLE_FUNCTION}() in {where} must return (model, (inputs, targets)) or (model, (inputs, targets), loss_fn)"
    )
    if not isinstance(returned, (tuple, list)) or len(returned) not in (2, 3):
        raise ExampleError(
            R.ERR_BAD_EXAMPLE,
            f"{contract}; it returned {type(returned).__name__}",
            snippet=example_snippet("Net", [], ["x"]),
        )
    model, batch = returned[0], returned[1]
    loss_fn = returned[2] if len(returned) == 3 else None
    if not isinstance(model, torch.nn.Module):
        raise ExampleError(
            R.ERR_BAD_EXAMPLE, f"{contract}; its first item is a {type(model).__name__}, not an nn.Module"
        )
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; its second item must be the pair (inputs, targets)")
    inputs, targets = batch
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    if not all(isinstance(x, torch.Tensor) for x in inputs):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; inputs must be a tensor or a tuple of tensors")
    if targets is not None and not isinstance(targets, torch.Tensor):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; targets must be a tensor or None")
    if loss_fn is not None and not callable(loss_fn):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; loss_fn must be callable")
    return model, inputs, targets, loss_fn
