"""From ``FILE::NAME`` to the splits to check and the model, if any (worker side).

NAME may be a ``Dataset`` subclass (built with no arguments), a function (called with none)
returning a dataset, a DataLoader, several of them (a tuple: train, val, test) or a dict, a
module-level dataset or loader, or ``torchdoctor_data`` returning ``{"train": ..., "val": ...,
"test": ..., "model": ..., "loss": ...}`` (the loss, ``"criterion"`` too, only to check the labels'
form against it). Without NAME: ``torchdoctor_data`` when the file defines it, else
the file's only Dataset subclass. Tables (a DataFrame, a structured array) count as splits.
"""

from __future__ import annotations

import inspect
import os
from types import ModuleType
from typing import Any, Optional

from ..checks.example.core import ExampleError
from ..checks.example.load import user_traceback
from .sampling import is_loader, is_map_style
from .tables import from_object

ERR_NO_DATA = "no-data"
ERR_CONSTRUCT = "constructor-error"
ERR_BAD_DATA = "bad-data"
HOOK = "torchdoctor_data"
SPLIT_NAMES = ("train", "val", "test")
LOSS_KEYS = ("loss", "criterion")  # torchdoctor_data()'s key for the loss in use (label_form.py)

SNIPPET = '''def torchdoctor_data():
    """What Torch Doctor checks: datasets or DataLoaders per split, and the model (optional)."""
    return {"train": MyDataset(...), "val": MyDataset(...), "model": MyModel()}
'''


def snippet_for(name: str, required: list) -> str:
    """The hook to paste, building NAME itself with its required arguments left to fill in (the
    generic ``MyDataset(...)`` made users look up what to call)."""
    call = f"{name}({', '.join(f'{p}=...' for p in required)})"
    return SNIPPET.replace("MyDataset(...)", call)


def is_data(obj: Any) -> bool:
    if inspect.isclass(obj) or obj is None or isinstance(obj, (str, bytes, int, float)):
        return False
    if from_object(obj, "") is not None:
        return True
    return is_loader(obj) or is_map_style(obj) and not isinstance(obj, (dict, list, tuple)) or _is_iterable_ds(obj)


def _is_iterable_ds(obj: Any) -> bool:
    return any(c.__name__ == "IterableDataset" for c in type(obj).__mro__)


def _is_model(obj: Any) -> bool:
    return hasattr(obj, "named_modules") and hasattr(obj, "forward") and not inspect.isclass(obj)


def _dataset_classes(module: ModuleType) -> list:
    out = []
    for name, value in vars(module).items():
        if inspect.isclass(value) and value.__module__ == module.__name__:
            if any(c.__name__ in ("Dataset", "IterableDataset") and "torch" in c.__module__ for c in value.__mro__[1:]):
                out.append(name)
    return out


def default_name(module: ModuleType) -> str:
    if callable(getattr(module, HOOK, None)):
        return HOOK
    found = _dataset_classes(module)
    if len(found) == 1:
        return found[0]
    base = os.path.basename(getattr(module, "__file__", "") or "?")
    raise ExampleError(
        ERR_NO_DATA,
        f"name what to check as {base}::NAME (Dataset classes in the file: {', '.join(found) or 'none'}), or "
        f"define {HOOK}() returning the splits",
        snippet=SNIPPET,
    )


def origin(obj: Any) -> Optional[dict]:
    """Where NAME is defined: the line findings point at when the data itself has no Python source."""
    try:
        file = inspect.getsourcefile(obj)
        _, line = inspect.getsourcelines(obj)
    except (OSError, TypeError):
        return None
    return {"file": file, "line": int(line)} if file else None


def resolve(module: ModuleType, name: str) -> tuple[dict, Any, list]:
    """({split name: dataset/loader/table}, model or None, notes)."""
    name = name or default_name(module)
    obj: Any = module
    for part in name.split("."):
        obj = getattr(obj, part, None)
    if obj is None:
        raise ExampleError(ERR_NO_DATA, f"{name} is not defined in {os.path.basename(module.__file__ or '?')}")
    notes: list = []
    if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismethod(obj):
        notes.append({"origin": origin(obj)})
        value = _call(obj, name)
        notes.append(f"{name}() {'built' if inspect.isclass(obj) else 'called'} with no arguments")
    else:
        value = obj
    splits, model = _splits(value, name)
    hook = isinstance(value, dict) and not is_data(value)  # not a dict of columns, which may have a "loss" one
    loss = next((value[k] for k in LOSS_KEYS if k in value), None) if hook else None
    if loss is not None:
        notes.append({"loss": loss})
    if not splits:
        raise ExampleError(
            ERR_BAD_DATA,
            f"{name} gave {type(value).__name__}, not a Dataset, DataLoader, table, or a tuple/dict of them",
            snippet=SNIPPET,
        )
    return splits, model, notes


def _call(obj: Any, name: str) -> Any:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        required = [
            p.name
            for p in sig.parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        if required:
            raise ExampleError(
                ERR_CONSTRUCT,
                f"{name} needs arguments ({', '.join(required)}): define {HOOK}() in the file to say how to "
                "build the splits",
                snippet=snippet_for(name, required),
            )
    try:
        return obj()
    except Exception as exc:  # the user's constructor: report it with their traceback
        raise ExampleError(
            ERR_CONSTRUCT,
            f"{name}() raised {type(exc).__name__}: {exc}. Next step: fix it (the traceback ends in your code), or "
            f"define {HOOK}() building the splits as your training script does (after its setup: paths, "
            "a process group, a tokenizer)",
            detail=user_traceback(exc),
            snippet=SNIPPET,
        ) from None


def _splits(value: Any, name: str) -> tuple[dict, Optional[Any]]:
    if isinstance(value, dict) and not is_data(value):
        model = value.get("model")
        splits = {str(k): v for k, v in value.items() if k != "model" and k not in LOSS_KEYS and is_data(v)}
        return splits, model if _is_model(model) else None
    if isinstance(value, (tuple, list)) and not is_data(value):
        model = next((v for v in value if _is_model(v)), None)
        data = [v for v in value if is_data(v)]
        names = [SPLIT_NAMES[i] if i < len(SPLIT_NAMES) else f"split{i}" for i in range(len(data))]
        return dict(zip(names, data)), model
    if is_data(value):
        return {"train" if name == HOOK else name.split(".")[-1]: value}, None
    return {}, None
