"""The user's ``torchdoctor_example()``: finding it, calling it, checking what it returned.

Two shapes are accepted (docs/checks.md, "Your own example"):

- a dict: ``{"model": m, "inputs": x or (x, hidden), "kwargs": {...}, "targets": y, "loss": fn or "model"}``,
  only ``model`` required; ``inputs``/``kwargs`` may nest tuples, lists and dicts of tensors; a
  ``loss`` function sees everything the forward returned; ``"model"`` means the forward returns
  its own loss;
- the tuple ``(model, (inputs, targets))`` or ``(model, (inputs, targets), loss_fn)``, where
  ``loss_fn`` sees the first output tensor (the first contract, kept as it was).

Without a loss, a forward that returns its own loss is used as such (``own.py`` decides).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
from types import ModuleType
from typing import Callable

from .. import result as R
from ..discovery import EXAMPLE_FUNCTION
from .construct import construct_kind
from .core import (
    ALL,
    EXAMPLE_FILE,
    MODEL,
    OUTPUT,
    Example,
    ExampleError,
    map_tensors,
    model_loss,
    pick_output,
    tensors_in,
)
from .load import user_traceback
from .own import adopt_own_loss
from .snippet import example_snippet

KEYS = ("model", "inputs", "kwargs", "targets", "loss")
CONTRACT = (
    "{fn}() in {where} must return a dict {{'model', 'inputs', 'kwargs', 'targets', 'loss'}} (only 'model' required), "
    "or (model, (inputs, targets)), or (model, (inputs, targets), loss_fn)"
)


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
    contract = CONTRACT.format(fn=EXAMPLE_FUNCTION, where=where)
    ex = _from_dict(returned, contract) if isinstance(returned, dict) else _from_tuple(returned, contract)
    if not isinstance(ex.model, cls):
        return None
    ex.source = EXAMPLE_FUNCTION
    ex.inferred.insert(0, f"Model and batch from {EXAMPLE_FUNCTION}() in {where}.")
    if ex.loss_sees == MODEL:
        adopt_own_loss(ex, required=True)
        return ex
    if ex.loss_fn is None and adopt_own_loss(ex):
        return ex
    if ex.loss_fn is not None:
        ex.loss_name = "custom"
        if ex.loss_sees == ALL:
            _settle_loss_input(ex)
        sees = "everything the forward returned" if ex.loss_sees == ALL else "the output tensor"
        ex.inferred.append(f"Loss: the loss given by {EXAMPLE_FUNCTION}(), on {sees}.")
    return ex


def _settle_loss_input(ex: Example) -> None:
    """A dict example's loss sees the whole return; a loss written for one tensor (``F.nll_loss`` on an
    RNN's ``(output, hidden)``) gets the first output tensor instead, found by one forward."""
    import torch

    try:
        with torch.no_grad():
            out = ex.forward()
    except Exception:
        return  # complete() runs the forward again and explains the failure
    if isinstance(out, torch.Tensor):
        ex.loss_sees = OUTPUT
        return
    try:
        with torch.no_grad():
            ex.loss_fn(out, ex.targets)  # type: ignore[misc]
        return
    except Exception:
        pass
    try:
        with torch.no_grad():
            ex.loss_fn(pick_output(out), ex.targets)  # type: ignore[misc]
    except Exception:
        return  # the check reports the loss's own error
    ex.loss_sees = OUTPUT


def _from_tuple(returned, contract: str) -> Example:
    """The first contract: ``(model, (inputs, targets))`` or ``(model, (inputs, targets), loss_fn)``."""
    if not isinstance(returned, (tuple, list)) or len(returned) not in (2, 3):
        raise ExampleError(
            R.ERR_BAD_EXAMPLE,
            f"{contract}; it returned {type(returned).__name__}",
            snippet=example_snippet("Net", [], ["x"]),
        )
    batch = returned[1]
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; its second item must be the pair (inputs, targets)")
    loss = returned[2] if len(returned) == 3 else None
    return _example(returned[0], batch[0], {}, batch[1], loss, contract, loss_sees=OUTPUT)


def _from_dict(returned: dict, contract: str) -> Example:
    unknown = [k for k in returned if k not in KEYS]
    if unknown:
        raise ExampleError(
            R.ERR_BAD_EXAMPLE,
            f"{contract}; unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}",
        )
    if "model" not in returned:
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; the dict has no 'model'")
    kwargs = returned.get("kwargs") or {}
    if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; 'kwargs' must be a dict of keyword arguments")
    return _example(
        returned["model"], returned.get("inputs", ()), dict(kwargs), returned.get("targets"), returned.get("loss"),
        contract, loss_sees=ALL,
    )  # fmt: skip


def _example(model, inputs, kwargs: dict, targets, loss, contract: str, *, loss_sees: str) -> Example:
    import torch

    if not isinstance(model, torch.nn.Module):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; the model is a {type(model).__name__}, not an nn.Module")
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    if not any(True for _ in tensors_in((inputs, kwargs))):
        raise ExampleError(
            R.ERR_BAD_EXAMPLE,
            f"{contract}; the inputs hold no tensor: give a tensor, a tuple of forward arguments "
            "(tuples, lists and dicts of tensors inside are fine), or keyword arguments in 'kwargs'",
        )
    if targets is not None and not any(True for _ in tensors_in(targets)):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; targets must be a tensor (or a nest of tensors) or None")
    # contiguous, as a DataLoader's batches are: a slice data[:, 1:] would trip a forward's .view()
    inputs, kwargs, targets = map_tensors((inputs, kwargs, targets), lambda t: t.contiguous())
    ex = Example(model=model, inputs=inputs, kwargs=kwargs, targets=targets, loss_sees=loss_sees)
    if isinstance(loss, str):
        if loss != MODEL:
            raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; 'loss' is a function or \"model\", not {loss!r}")
        ex.loss_sees, ex.loss_fn, ex.loss_name = MODEL, model_loss, "model"
        ex.inferred.append('Loss: the model\'s own, returned by its forward ("loss": "model").')
    elif loss is not None:
        if not callable(loss):
            raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; the loss must be callable")
        ex.loss_fn = loss
    else:
        ex.loss_sees = OUTPUT  # our loss, chosen later from the first output tensor
    return ex
