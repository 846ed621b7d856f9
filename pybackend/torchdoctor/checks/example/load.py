"""Loading the user's file as a module, finding the class in it, and the user's part of a traceback."""

from __future__ import annotations

import inspect
import os
import sys
import traceback
from types import ModuleType
from typing import Any

from .. import result as R
from .core import ExampleError

# Frames from the checks package (the worker, these modules) are ours, not the user's.
_CHECKS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_user_module(path: str, source: str | None = None) -> ModuleType:
    """Import the user's file as a module named after it, so a sibling ``torchdoctor_example.py``
    that does ``from <stem> import Net`` gets the very same class objects."""
    path = os.path.abspath(path)
    if source is None:
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ExampleError(R.ERR_USAGE, f"cannot read {path}: {exc}") from None
    try:
        code = compile(source, path, "exec")
    except SyntaxError as exc:
        raise _syntax_error(exc, path, source) from None
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # sibling imports work as when the user runs the file
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else "torchdoctor_user_module"
    module = ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except Exception as exc:  # the user's module-level code raised: say where
        del sys.modules[name]
        raise ExampleError(
            R.ERR_IMPORT,
            f"importing {os.path.basename(path)} raised {type(exc).__name__}: {exc}",
            detail=user_traceback(exc),
        ) from None
    return module


def _syntax_error(exc: SyntaxError, path: str, source: str) -> ExampleError:
    """Line and column, and the line itself with a caret (from the text we compiled, not from disk)."""
    lines = source.splitlines()
    line = lines[exc.lineno - 1] if exc.lineno and 0 < exc.lineno <= len(lines) else ""
    caret = " " * max((exc.offset or 1) - 1, 0) + "^"
    where = f"line {exc.lineno}, column {exc.offset}" if exc.lineno else "an unknown position"
    return ExampleError(
        R.ERR_SYNTAX,
        f"{os.path.basename(path)} has a syntax error at {where}: {exc.msg}",
        detail=f"{line}\n{caret}" if line else "",
    )


def user_traceback(exc: BaseException) -> str:
    """The traceback without the worker's own frames above the user's code."""
    frames = traceback.extract_tb(exc.__traceback__)
    first_user = next((i for i, f in enumerate(frames) if not f.filename.startswith(_CHECKS_DIR)), 0)
    lines = traceback.format_list(frames[first_user:])
    return "Traceback (most recent call last):\n" + "".join(lines) + f"{type(exc).__name__}: {exc}"


def find_class(module: ModuleType, class_name: str):
    import torch

    obj: Any = module
    for part in class_name.split("."):
        obj = getattr(obj, part, None)
    if not (inspect.isclass(obj) and issubclass(obj, torch.nn.Module)):
        found = [
            n
            for n, v in vars(module).items()
            if inspect.isclass(v) and issubclass(v, torch.nn.Module) and v.__module__ == module.__name__
        ]
        raise ExampleError(
            R.ERR_NO_CLASS,
            f"{class_name} is not an nn.Module class of {os.path.basename(module.__file__ or '?')}"
            + (f" (module classes there: {', '.join(found)})" if found else ""),
        )
    return obj
