"""The check worker: ``python -m torchdoctor.checks.worker --check C --file F --class K [--options JSON]``.

Runs in the user's interpreter (the only place torch and the user's code are
imported), started by ``jobs.py``. Protocol on stdout, one JSON object per line:

    {"event": "progress", "fraction": 0.25, "message": "step 50/200: loss 0.31"}
    {"event": "result", "result": {...result.py's shape...}}       # exactly one, last

The user's code may print anything: before importing it the worker moves the real
stdout to a private file descriptor for the protocol and points fd 1 (and
``sys.stdout``) at stderr, so prints from Python or C land on stderr and never
corrupt the protocol. Exit status 0 whenever a result was written.

``--stdin``: read the file's source from stdin (the editor's unsaved text) instead of disk.
Without it the file is read as Python reads it (a UTF-8 BOM, a PEP 263 coding line:
``source_text.py``). ``worker_guard.install()`` runs first: the worker dies with the backend,
stays within its memory limit, and signs its result line with the run's nonce.

User code that calls ``sys.exit()`` or runs out of memory gets an ERROR result that says so; a
Python mistake raised in our own code (:func:`our_bug`) is an ``internal`` ERROR, never blamed
on the model.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import traceback
from typing import Any, Callable

from . import result as R
from . import worker_guard
from .source_text import SourceError, read_source

# Each check's module, imported only when it runs.
_MODULES = {R.OVERFIT: "overfit", R.LR_FIND: "lr_finder", R.GRADCHECK: "gradcheck", R.SHAPES: "shape_trace"}


def encode(obj: dict[str, Any]) -> str:
    """One protocol line's JSON (strict: NaN/Inf sanitised), as :meth:`Channel.send` writes it.

    Most results hold no NaN or Inf: the C encoder then writes them as they are, and only a result
    it refuses is walked by ``sanitize`` (the walk cost ~2.5 ms of a data check's ~130 ms: a gallery
    holds a thousand small dicts and lists)."""
    try:
        return json.dumps(obj, default=_jsonable, allow_nan=False)
    except ValueError:  # "Out of range float values are not JSON compliant": a NaN or an Inf
        return json.dumps(R.sanitize(obj), default=_jsonable, allow_nan=False)


class Channel:
    """The protocol stream: a private copy of the original stdout."""

    def __init__(self, nonce: str | None = None, encoder: Callable[[dict[str, Any]], str] | None = None) -> None:
        self.nonce = nonce
        self.encode = encoder or encode  # one protocol line's JSON (data checks: result_line.encode)
        sys.stdout.flush()
        self._out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        os.dup2(2, 1)  # C-level writes to fd 1 now reach stderr
        sys.stdout = sys.stderr

    def send(self, obj: dict[str, Any]) -> None:
        self._out.write(self.encode(obj) + "\n")
        self._out.flush()

    def result(self, result: dict[str, Any]) -> None:
        self.send({"event": "result", "nonce": self.nonce, "result": result})

    def progress(self, fraction: float, message: str) -> None:
        self.send({"event": "progress", "fraction": max(0.0, min(1.0, float(fraction))), "message": message})


def _jsonable(obj: Any) -> Any:
    """torch/numpy values that slipped into a result: lists and numbers, else text."""
    if hasattr(obj, "tolist"):
        return R.sanitize(obj.tolist())
    return str(obj)


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m torchdoctor.checks.worker")
    p.add_argument("--check", required=True, choices=R.CHECKS)
    p.add_argument("--file", required=True)
    p.add_argument("--class", dest="class_name", required=True)
    p.add_argument("--options", default="{}", help="JSON object of check options")
    p.add_argument("--csv", default=None, help="LR finder: write the sweep to this CSV file")
    p.add_argument("--stdin", action="store_true", help="read the source of --file from stdin")
    return p.parse_args(argv)


def run(args: argparse.Namespace, channel: Channel) -> dict:
    """Everything that can go wrong for the user's reasons becomes an ERROR result, never a crash."""
    file = os.path.abspath(args.file)
    options = json.loads(args.options or "{}")
    if args.csv:
        options["csv"] = args.csv
    try:
        import torch
    except ImportError as exc:
        return R.error_result(
            args.check,
            args.class_name,
            file,
            R.ERR_NO_TORCH,
            f"torch is not installed in {sys.executable}: pip install torch or set torchDoctor.python",
            detail=str(exc),
        )
    torch.manual_seed(int(options.get("seed", 0)))  # reproducible weight init in this throwaway process
    # One thread by default: the checks run batches of 8, where more threads only add
    # spin-waiting on a busy machine and make timings and float sums less reproducible.
    torch.set_num_threads(int(options.get("threads", 1)))
    from . import example as E

    result = R.new_result(args.check, args.class_name, file)
    try:
        # bytes, then surrogatepass: the editor's text may hold a lone surrogate, named below
        source = sys.stdin.buffer.read().decode("utf-8", "surrogatepass") if args.stdin else read_source(file)
        bad = _unrunnable(source, file)
        if bad is not None:
            return R.error_result(args.check, args.class_name, file, R.ERR_SYNTAX, bad)
        channel.progress(0.0, f"importing {os.path.basename(file)}")
        module = E.load_user_module(file, source)
        ex = E.build(module, args.class_name, options)
        if args.check != R.SHAPES:
            ex = E.complete(ex, options)
        result["inferred"], result["example"] = ex.inferred, ex.describe()
        check = __import__(f"{__package__}.{_MODULES[args.check]}", fromlist=["run"])
        return check.run(ex, options, channel.progress, result)
    except E.ExampleError as exc:
        return R.error_result(
            args.check,
            args.class_name,
            file,
            exc.kind,
            exc.message,
            detail=exc.detail,
            snippet=exc.snippet,
            inferred=exc.inferred,
        )
    except SourceError as exc:
        return R.error_result(args.check, args.class_name, file, R.ERR_USAGE, exc.message)
    except SystemExit as exc:  # sys.exit() in the user's module or forward: not a crash of ours
        return R.error_result(
            args.check,
            args.class_name,
            file,
            R.ERR_IMPORT,
            f"The model's code called sys.exit({exc.code!r}) during the {R.TITLES[args.check]}, so the check could not "
            'finish: keep sys.exit() under `if __name__ == "__main__":` (the checks import the file, they do not run it).',
            detail=traceback.format_exc(),
            inferred=result["inferred"],
        )
    except Exception as exc:  # the user's model raised inside a check: report, with the traceback
        return _raised(args, file, exc, result["inferred"])


def _raised(args: argparse.Namespace, file: str, exc: Exception, inferred: list) -> dict:
    """An exception that escaped the check: memory, a mistake of ours, or the model's error."""
    if _out_of_memory(exc):
        return _memory_result(args, file, f"{type(exc).__name__}: {str(exc)[:4000]}", inferred)
    ours = our_bug(exc)
    if ours is not None:
        message = (
            f"The {R.TITLES[args.check]} failed in Torch Doctor's own code, not in your model: "
            f"{type(exc).__name__} at {ours}: {str(exc)[:300]}. This is a bug of ours (or an input we do not "
            "handle yet): please report it with the traceback below."
        )
        return R.error_result(
            args.check, args.class_name, file, R.ERR_INTERNAL, message, detail=traceback.format_exc(), inferred=inferred
        )
    return R.error_result(
        args.check,
        args.class_name,
        file,
        R.ERR_FORWARD,
        f"The model raised {type(exc).__name__} during the {R.TITLES[args.check]}: {exc}",
        detail=traceback.format_exc(),
        inferred=inferred,
    )


# Exceptions that mean a mistake in the Python that raised them (a wrong type, a missing key),
# not a value torch rejected: raised in a frame of ours, they are our bug, not the model's.
_PYTHON_MISTAKES = (TypeError, AttributeError, NameError, KeyError, IndexError, AssertionError, ZeroDivisionError)
_ARITY = re.compile(r"positional argument|unexpected keyword argument|required (positional|keyword)")
_OUR_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def our_bug(exc: BaseException) -> str | None:
    """``file:line`` (relative to the package) when ``exc`` is a Python mistake raised by Torch
    Doctor's own code; None when it came from the user's code or torch (the model's doing).

    Only the innermost frame decides: our code calling the user's forward that raises is the
    model's error; torch rejecting what our code passed it (a RuntimeError) is not classed here.
    """
    if not isinstance(exc, _PYTHON_MISTAKES) or _ARITY.search(str(exc)[:500]):
        return None  # a wrong call of a callable the user gave us (a loss) raises in our frame too
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    path = os.path.abspath(tb.tb_frame.f_code.co_filename)
    if not path.startswith(_OUR_PACKAGE + os.sep):
        return None
    return f"torchdoctor/{os.path.relpath(path, _OUR_PACKAGE).replace(os.sep, '/')}:{tb.tb_lineno}"


def _unrunnable(source: str, file: str) -> str | None:
    """Text ``compile()`` rejects with something other than a SyntaxError: say where, in words."""
    name = os.path.basename(file)
    null = source.find("\0")
    if null >= 0:
        line, col = _line_col(source, null)
        return f"{name} contains a null byte at line {line}, column {col}: Python cannot run it. Remove the character."
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as exc:
        line, col = _line_col(source, exc.start)
        return (
            f"{name} contains a lone surrogate character (U+{ord(source[exc.start]):04X}) at line {line}, column {col}: "
            "it is not valid text, so Python cannot compile the file. Delete or retype that character."
        )
    return None


def _line_col(source: str, index: int) -> tuple[int, int]:
    line = source.count("\n", 0, index) + 1
    return line, index - (source.rfind("\n", 0, index) + 1) + 1


def _out_of_memory(exc: BaseException) -> bool:
    """Python's MemoryError, or torch's CPU allocator failing (a RuntimeError)."""
    return isinstance(exc, MemoryError) or "can't allocate memory" in str(exc)[:2000]


def _explain_memory(result: dict, args: argparse.Namespace) -> dict:
    """A check or the example builder that caught an allocation failure itself: say it was memory."""
    if result.get("verdict") not in (R.ERROR, R.FAIL) or (result.get("error") or {}).get("kind") == R.ERR_USAGE:
        return result
    error = result.get("error") or {}
    text = " ".join(str(x)[:20000] for x in (result.get("headline"), error.get("message"), error.get("detail")))
    text += " ".join(str(s)[:2000] for s in result.get("sentences") or [])
    if "MemoryError" not in text and "can't allocate memory" not in text:
        return result
    if "ran out of memory" in str(result.get("headline")):
        return result
    memory = _memory_result(
        args, result.get("file") or args.file, error.get("detail") or "", result.get("inferred") or []
    )
    memory["sentences"] = [str(result.get("headline") or "")] + list(result.get("sentences") or [])
    return memory


def _memory_result(args: argparse.Namespace, file: str, detail: str, inferred: list) -> dict:
    limit = worker_guard.memory_limit_mb
    where = (
        f"the worker's memory limit of {limit} MB (torchDoctor.checks.memoryLimitMB)"
        if limit
        else "the memory of this machine"
    )
    return R.error_result(
        args.check,
        args.class_name,
        file,
        R.ERR_FORWARD,
        f"The {R.TITLES[args.check]} on {args.class_name} ran out of memory: it needed more than "
        f"{where}. Make the example batch smaller (torchDoctor.checks.batchSize) or raise the limit.",
        detail=detail,
        inferred=inferred,
    )


def main(argv: list[str] | None = None) -> int:
    nonce = worker_guard.install()  # first: before torch or the user's code can get in the way
    args = _parse(sys.argv[1:] if argv is None else argv)
    channel = Channel(nonce)
    started = time.monotonic()
    result = _explain_memory(run(args, channel), args)
    result["durationSeconds"] = round(time.monotonic() - started, 3)
    result["python"] = sys.executable
    channel.result(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
