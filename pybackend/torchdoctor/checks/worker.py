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
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from typing import Any

from . import result as R

# Each check's module, imported only when it runs.
_MODULES = {R.OVERFIT: "overfit", R.LR_FIND: "lr_finder", R.GRADCHECK: "gradcheck", R.SHAPES: "shape_trace"}


class Channel:
    """The protocol stream: a private copy of the original stdout."""

    def __init__(self) -> None:
        sys.stdout.flush()
        self._out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        os.dup2(2, 1)  # C-level writes to fd 1 now reach stderr
        sys.stdout = sys.stderr

    def send(self, obj: dict[str, Any]) -> None:
        self._out.write(json.dumps(R.sanitize(obj), default=_jsonable, allow_nan=False) + "\n")
        self._out.flush()

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
        source = sys.stdin.read() if args.stdin else None
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
    except Exception as exc:  # the user's model raised inside a check: report, with the traceback
        return R.error_result(
            args.check,
            args.class_name,
            file,
            R.ERR_FORWARD,
            f"The model raised {type(exc).__name__} during the {R.TITLES[args.check]}: {exc}",
            detail=traceback.format_exc(),
            inferred=result["inferred"],
        )


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    channel = Channel()
    started = time.monotonic()
    result = run(args, channel)
    result["durationSeconds"] = round(time.monotonic() - started, 3)
    result["python"] = sys.executable
    channel.send({"event": "result", "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
