"""The data check on a value of a paused program (the Variables view's **Check Data** and **Show as
Images**), inside the debuggee.

The extension evaluates, in the paused frame::

    __import__('torchdoctor.data_checks.paused', fromlist=['_']).dump(<variable>, "<private file>", "data")

which runs the same checks as ``torchdoctor check data`` on the value (``engine.run``; the global
RNG states are restored, so the program goes on as it would have), writes the result as JSON to
the file and answers a one-line status (``ok: ...`` or ``error: ...``); it never raises into the
program. What a value becomes:

- a Dataset, a DataLoader, a table: one split, as in the CLI;
- a batch, ``mode="data"``: a tensor or array is its samples along the first dimension; a dict or a
  ``(features, labels, ...)`` tuple pairs the features' samples with the labels';
- ``mode="images"``: an image tensor or array as images: N x C x H x W and N x H x W x C are N
  images, C x H x W, H x W x C and H x W one (float or uint8).

The result of a tensor, array or batch says ``"asHeld": true``: its samples are the values the
variable holds (the page says so, not "after the dataset's transforms": none ran).

A slow ``__getitem__`` or a huge dataset must not hold the program for long: the check has a time
budget (``PAUSED_SECONDS``); when it runs out, the result says how many samples were looked at.
A ``__getitem__`` or DataLoader batch that never returns is given up on at the budget plus a grace
(``stuck.py``): the result names it, and the stuck call keeps running in a background thread.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from . import findings as F
from .collate_errors import CollateError
from .errors import SampleError, user_frames
from .loader_errors import LoaderWorkerError

MODES = ("data", "images")
# The program cannot be killed at a time limit as the CLI's worker is: the draws stop after this
# many seconds instead (budget.py), between two samples; options={"budgetSeconds": S} changes it
PAUSED_SECONDS = 20.0


def _samples(value: Any, mode: str) -> Any:
    from .arrays import split_xy, to_array
    from .load import is_data

    if is_data(value) and not _is_array(value):
        return value
    x, y, _ = split_xy(value) if isinstance(value, (dict, tuple, list)) else (value, None, "")
    arr = to_array(x)
    if arr is None:
        raise TypeError(f"a {type(value).__name__} is not a Dataset, DataLoader, tensor, array or batch of them")
    if mode == "images":
        if arr.ndim == 2 or (arr.ndim == 3 and (arr.shape[0] <= 4 or arr.shape[2] <= 4)):
            arr = arr[None]  # one image
        if arr.ndim != 4 and arr.ndim != 3:
            raise TypeError(f"a tensor of shape {tuple(arr.shape)} is not an image or a batch of images")
    elif arr.ndim == 0:
        raise TypeError("a scalar is not a batch of samples")
    labels = to_array(y) if y is not None else None
    if labels is not None and labels.ndim and len(labels) == len(arr):
        return [(arr[i], labels[i]) for i in range(len(arr))]
    return [arr[i] for i in range(len(arr))]


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def check(value: Any, name: str = "value", mode: str = "data", options: dict | None = None) -> dict:
    """The data-check result for ``value`` (see the module docstring); an ERROR result for what
    cannot be checked."""
    from . import budget, engine

    problem = budget.option_error((options or {}).get("budgetSeconds"))
    if problem is not None:  # the caller's option, not the data: said before anything is drawn
        return F.error_result(name, "", "bad-options", problem)
    try:
        data = _samples(value, mode if mode in MODES else "data")
        opts = {"budgetSeconds": PAUSED_SECONDS, **(options or {})}
        result = engine.run({name: data}, None, opts, target=name, file="")
    except (LoaderWorkerError, CollateError) as exc:  # a loader's worker or collate failed: as the CLI says it
        result = F.error_result(name, "", "dataset-error", str(exc), exc.traceback_text())
        result["error"].update(exc.to_error())
        return result
    except SampleError as exc:  # the value is data, but one of its samples raised: not "not a dataset"
        return F.error_result(
            name, "", "dataset-error", f"{exc}: fix the dataset's __getitem__", user_frames(exc.error)
        )
    except Exception as exc:  # noqa: BLE001 - a paused program must never see our exception
        return F.error_result(name, "", "bad-data", f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
    if data is not value:  # a tensor, an array or a batch: its values as held, no transform ran
        result["asHeld"] = True
    if mode == "images":
        result["notes"].insert(0, f"{name} shown as images")
    return result


def _finite(obj: Any) -> Any:
    """JSON has no NaN/Inf: such numbers become null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def dump(value: Any, path: str, mode: str = "data", name: str = "value", options: dict | None = None) -> str:
    """Write ``check(value)`` as JSON to ``path``; the status line the extension reads."""
    try:
        result = check(value, name, mode, options)
        tmp = f"{path}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(_finite(result), f, allow_nan=False, default=str)
        os.replace(tmp, path)
    except Exception as exc:  # noqa: BLE001 - never raise into the paused program
        return f"error: {type(exc).__name__}: {str(exc)[:300]}"
    if result.get("error"):
        return f"error: {result['headline']}"
    return f"ok: {len(result['findings'])} findings in {name}"
