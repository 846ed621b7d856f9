"""Loading the user's file as a module, finding the class in it, and the user's part of a traceback.

The file is imported the way the user's project runs it:

- inside a package (folders with ``__init__.py`` up to a root), as its dotted name with the root
  on ``sys.path``, as ``python -m pkg.mod`` would: ``mingpt/model.py`` doing
  ``from mingpt.utils import CfgNode`` works, its relative imports work, and a sibling example
  doing ``from mingpt.model import GPT`` gets the very same class object;
- a plain file, under its own name with its folder on ``sys.path``, as ``python file.py`` would
  (minus ``__main__``: the ``if __name__ == "__main__":`` block does not run).

``sys.argv`` is ``[path]`` while the module body runs, so a module-level ``argparse`` reads no
arguments of ours; one that exits (a required option) raises ``SystemExit``, which becomes an
import error saying so. The source that runs (the editor's unsaved text) is put in ``linecache``,
so a traceback quotes the line the user sees, not the one on disk.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import linecache
import os
import sys
import traceback
from types import ModuleType
from typing import Any

from .. import result as R
from ..source_text import SourceError, read_source
from .core import ExampleError

# Frames from the checks package (the worker, these modules) are ours, not the user's.
_CHECKS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FALLBACK_NAME = "torchdoctor_user_module"


def module_name_and_root(path: str) -> tuple[str, str]:
    """``("mingpt.model", "/repo")`` for /repo/mingpt/model.py when mingpt/ has an ``__init__.py``;
    ``("model", folder)`` for a file outside any package."""
    folder, file = os.path.split(os.path.abspath(path))
    parts = [os.path.splitext(file)[0]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        if not package.isidentifier():
            break
        parts.insert(0, package)
    return ".".join(parts), folder


def load_user_module(path: str, source: str | None = None) -> ModuleType:
    """Import the user's file (see the module docstring); ``source`` replaces the text on disk."""
    path = os.path.abspath(path)
    from_disk = source is None
    if source is None:
        try:  # as Python reads it: a UTF-8 BOM, a PEP 263 coding line (the data worker's path)
            source = read_source(path)
        except SourceError as exc:
            raise ExampleError(R.ERR_USAGE, exc.message) from None
    try:
        code = compile(source, path, "exec")
    except SyntaxError as exc:
        raise _syntax_error(exc, path, source) from None
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)  # mtime None: kept
    name, root = module_name_and_root(path)
    if root not in sys.path:
        sys.path.insert(0, root)  # imports work as when the user runs the file (or -m the module)
    if not all(part.isidentifier() for part in name.split(".")) or _taken(name, path):
        name = FALLBACK_NAME
    before = sys.modules.get(name)
    _protected(lambda: _import_parents(name), path)
    existing = sys.modules.get(name)
    if from_disk and existing is not None and existing is not before and _same_file(existing, path):
        return existing  # the package's __init__ imported it already: one module, one set of classes
    module = ModuleType(name)
    module.__file__ = path
    module.__package__ = name.rpartition(".")[0]
    sys.modules[name] = module
    try:
        _protected(lambda: exec(code, module.__dict__), path)
    except ExampleError:
        del sys.modules[name]
        raise
    return module


def _same_file(module: ModuleType, path: str) -> bool:
    return os.path.abspath(getattr(module, "__file__", "") or "") == path


def _taken(name: str, path: str) -> bool:
    """``name`` is already another module (``main`` of an installed package, the stdlib's ``model``?)."""
    other = sys.modules.get(name)
    return other is not None and not _same_file(other, path)


def _import_parents(name: str) -> None:
    """Import the packages above a dotted module, so ``from .utils import x`` and
    ``from pkg.utils import x`` inside it find them."""
    parts = name.split(".")[:-1]
    for i in range(1, len(parts) + 1):
        importlib.import_module(".".join(parts[:i]))


class _Tee(io.TextIOBase):
    """stderr that is also kept, so an argparse error can be quoted in the result."""

    def __init__(self, real) -> None:
        self.real, self.kept = real, io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.real.write(text)

    def flush(self) -> None:
        self.real.flush()


def _protected(run, path: str) -> None:
    """``run()`` with ``sys.argv == [path]``; what the user's code raises or exits with becomes an
    :class:`ExampleError` that says where."""
    argv = sys.argv
    tee = _Tee(sys.stderr)
    sys.argv = [path]  # a module-level argparse must not read the worker's arguments
    try:
        with contextlib.redirect_stderr(tee):
            run()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit included: argparse exits on a missing option
        raise _import_error(exc, path, tee.kept.getvalue()) from None
    finally:
        sys.argv = argv


def _import_error(exc: BaseException, path: str, stderr_text: str = "") -> ExampleError:
    base = os.path.basename(path)
    if isinstance(exc, SystemExit):
        said = [line for line in stderr_text.strip().splitlines() if line.strip()]
        why = f": {said[-1].strip()}" if said else ""
        return ExampleError(
            R.ERR_IMPORT,
            f"importing {base} exited (SystemExit {exc.code!r}){why}. Its module-level code parses the command line or "
            "exits (argparse with a required option?): Torch Doctor imports the file with no arguments. Move that code "
            'under `if __name__ == "__main__":`, or put the model class in a module the script imports.',
            detail=user_traceback(exc),
        )
    return ExampleError(
        R.ERR_IMPORT,
        f"importing {base} raised {type(exc).__name__}: {exc}",
        detail=user_traceback(exc),
    )


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
